"""The report in a real headless browser (Debian's chromium): every image loads and the page
renders. Skipped only where chromium is not installed (.ci/run installs it)."""

import os
import re
import shutil
import subprocess

import matplotlib.image
import pytest

from test_report import fixture_report

CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium is not installed (apt-get install chromium; .ci/run does it as root)"
    + (f": {os.environ['LINEARLENS_CHROMIUM_INSTALL_ERROR']}"
       if os.environ.get("LINEARLENS_CHROMIUM_INSTALL_ERROR") else ""))
WINDOW = (1280, 1800)


def chromium(page, profile, *args):
    """Run headless chromium on a local page, offline and with a throw-away profile."""
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
               *args, page.as_uri()]
    result = subprocess.run(command, capture_output=True, text=True, timeout=180,
                            env={**os.environ, "HOME": str(profile)})
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def loaded_dom(page, profile):
    """The DOM once the page's load event has run (its script marks <body data-images=...>)."""
    return chromium(page, profile, "--virtual-time-budget=10000", "--dump-dom")


def test_every_image_loads_and_the_page_renders(tmp_path):
    page = fixture_report(tmp_path / "run")
    dom = loaded_dom(page, tmp_path / "profile")
    assert 'data-images="loaded"' in dom, dom[-2000:]
    assert len(re.findall(r"<img ", dom)) == 2 and 'class="broken"' not in dom

    screenshot = tmp_path / "report.png"
    chromium(page, tmp_path / "profile", f"--screenshot={screenshot}", f"--window-size={WINDOW[0]},{WINDOW[1]}")
    pixels = matplotlib.image.imread(screenshot)
    assert pixels.shape[:2] == (WINDOW[1], WINDOW[0])
    grey = pixels[..., :3].mean(axis=2)
    assert grey.std() > 0.05 and (grey < 0.3).mean() > 0.002  # text and figures, not a blank page


def test_a_missing_image_is_caught(tmp_path):
    """The check itself: an image that cannot load is marked, and named on the page."""
    page = fixture_report(tmp_path / "run")
    (tmp_path / "run" / "results" / "telescoping" / "figures" / "fig_10.png").unlink()
    dom = loaded_dom(page, tmp_path / "profile")
    assert 'data-images="broken"' in dom
    assert "1 image(s) failed to load: ../telescoping/figures/fig_10.png" in dom
