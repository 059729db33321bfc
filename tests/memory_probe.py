"""Peak resident memory of a piece of code, measured in a fresh interpreter (tests of the memory a
job needs against its rule's request).

The child runs ``setup`` (imports, inputs), resets its resident-memory high-water mark (VmHWM)
and runs ``measured``; it reports the mark above its resident memory before ``measured``.
``ru_maxrss`` would not do: it carries the parent's (pytest's) peak across fork and exec.

glibc's allocator moves its mmap threshold with the sizes freed, so a block freed before the reset
may sit on the heap and be reused (or not) by ``measured``: the same code measured 5.6-6.5 p x n
arrays from run to run. The child therefore allocates every block over 128 KiB with mmap (freed
blocks go back to the system at once) and trims the heap before the reset: resident memory then
follows the live tensors, and repeated measurements agree to 0.1%.
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
import ctypes as _ctypes
_ctypes.CDLL("libc.so.6").malloc_trim(0)  # hand freed heap pages back before the baseline
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
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
           "MALLOC_MMAP_THRESHOLD_": str(128 * 1024)}  # fixed: glibc's moving threshold is the noise
    done = subprocess.run([sys.executable, "-c", child, *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        raise AssertionError(f"the measured child failed:\n{done.stderr[-3000:]}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return report["peak_bytes"] - report["baseline_bytes"]
