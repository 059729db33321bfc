"""The README's "Add your own experiment" worked example, applied as written to a copy of the
workflow: the new figure builds on the smoke config from a generated rule, and its claim checks."""

import json
import re
import subprocess
import sys

import pytest

from test_workflow import ROOT, planned_rules, snakemake, workflow_copy

pytestmark = pytest.mark.workflow


def readme_blocks() -> dict[str, str]:
    """{path: code} of the section's Python blocks whose first line reads '# <path> (append)'."""
    section = (ROOT / "README.md").read_text().split("## Add your own experiment", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n# (\S+) \(append\)\n(.*?)```", section, re.DOTALL)
    return dict(blocks)


def test_the_readme_names_at_most_four_places_and_its_example_builds(tmp_path):
    section = (ROOT / "README.md").read_text().split("## Add your own experiment", 1)[1].split("\n## ", 1)[0]
    places = re.findall(r"^(\d)\. \*\*", section, re.MULTILINE)
    assert places == ["1", "2", "3", "4"]
    blocks = readme_blocks()
    assert set(blocks) == {"src/linearlens/manifests/telescoping_runs.py", "src/linearlens/figures/telescoping.py",
                           "src/linearlens/claims/telescoping.py", "src/linearlens/manifests/telescoping.py"}
    assert "four files" in section  # the example touches only the files its blocks name

    workdir = workflow_copy(tmp_path)
    for path, code in blocks.items():
        with open(workdir / path, "a") as module:
            module.write("\n\n" + code)
    figure = "results/telescoping/figures/fig_15.png"
    planned = planned_rules(workdir, figure)
    assert planned.get("telescoping_plot_fig_15") == 1 and planned.get("telescoping_run_half_batch", 0) > 0
    assert set(planned) <= {"telescoping_plot_fig_15", "telescoping_run_half_batch", "telescoping_approximation_run",
                            "prepare_dataset"}, planned

    result = snakemake(workdir, figure, "--cores", "2", "--configfile", "config/smoke.yaml")
    assert result.returncode == 0, result.stderr[-3000:]
    sidecar = json.loads((workdir / figure).with_suffix(".json").read_text())
    assert sidecar["caption"].startswith("Final test accuracy") and "digits" in sidecar["data_source"]

    # new runs: one per approximation run, each trained at half its batch
    new_runs = sorted((workdir / "results/telescoping/runs/half_batch").glob("*/*/*.csv"))
    old_runs = sorted((workdir / "results/telescoping/runs/approximation").glob("*/*/*.csv"))
    assert [run.relative_to(run.parents[2]) for run in new_runs] == [run.relative_to(run.parents[2]) for run in old_runs]
    assert len(new_runs) > 0

    claim = ("import glob\n"
             "from linearlens.claims.telescoping import half_batch_claims\n"
             "from linearlens.manifests.jobs import ClaimsJob\n"
             "runs = sorted(glob.glob('results/telescoping/runs/half_batch/*/*/*.csv'))\n"
             "[check] = half_batch_claims(ClaimsJob({'half_batch': runs}, None))\n"
             "print(check.claim_id, check.figure, isinstance(check.passed, bool), check.measured)\n"
             # a counter-example: f̃ right on half the test set where the network is right on all of it
             "open('apart.csv', 'w').write('step,setting,lr,seed,accuracy_network,accuracy_telescoping\\n'\n"
             "                             '0,sgd,0.1,0,0.5,0.5\\n12,sgd,0.1,0,1.0,0.5\\n')\n"
             "[apart] = half_batch_claims(ClaimsJob({'half_batch': ['apart.csv']}, None))\n"
             "print(apart.passed, apart.measured)\n")
    checked = subprocess.run([sys.executable, "-c", claim], cwd=workdir, capture_output=True, text=True,
                             env={"PYTHONPATH": str(workdir / "src")})
    assert checked.returncode == 0, checked.stderr
    claim_id, figure_id, verdict, measured, apart_passed, apart_measured = checked.stdout.split()
    assert (claim_id, figure_id, verdict) == ("X1", "fig_15", "True") and 0 <= float(measured) <= 1
    assert (apart_passed, float(apart_measured)) == ("False", 0.5)  # the check can fail

    # The claims rule now runs the new claim set too (its params and code changed); the finished runs
    # do not rerun.
    planned = planned_rules(workdir, "results/telescoping/claims.json")
    assert "telescoping_claims" in planned
    assert not {"telescoping_run_half_batch", "telescoping_approximation_run"} & set(planned), planned
