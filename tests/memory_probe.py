"""Peak resident memory of a piece of code, measured in a fresh interpreter (tests of the memory a
job needs against its rule's request).

The child runs ``setup`` (imports, inputs), resets its resident-memory high-water mark (VmHWM)
and runs ``measured``; it reports the mark above its resident memory before ``measured``.
``ru_maxrss`` would not do: it carries the parent's (pytest's) peak across fork and exec.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
AVAILABLE = Path("/proc/self/clear_refs").exists()  # Linux: the counters this reads
UNAVAILABLE_REASON = "needs Linux /proc memory counters (clear_refs, VmHWM)"

_STATUS = '''
def _status_bytes(field):
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith(field + ":"))
    return int(line.split()[1]) * 1024
'''
_RESET = '''
with open("/proc/self/clear_refs", "w") as _clear_refs:
    _clear_refs.write("5")  # resets VmHWM to the current resident size
_before = _status_bytes("VmRSS")
'''
_REPORT = '''
import json as _json
print(_json.dumps({"baseline_bytes": _before, "peak_bytes": _status_bytes("VmHWM")}))
'''


def peak_above_baseline(setup: str, measured: str, argv: list[str], cwd: Path) -> int:
    """Bytes by which ``measured`` raised the child's resident memory at its peak."""
    child = "\n".join([_STATUS, setup, _RESET, measured, _REPORT])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", child, *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        raise AssertionError(f"the measured child failed:\n{done.stderr[-3000:]}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return report["peak_bytes"] - report["baseline_bytes"]
