"""Fault injection for tests/test_slurm.py, on PYTHONPATH only there.

With LINEARLENS_FAIL_ONCE="<rule>:<marker file>", the first Python process that runs the script of
<rule> creates the marker and exits with status 1; every later one finds the marker and runs as
usual. Snakemake runs a rule's script as .snakemake/scripts/tmpXXXX.<script name>, so <rule> is
matched against the script's name (here every rule's script is named after its rule); the marker
lives on the shared file system, so a retry on another node sees it.
"""

import os
import sys


def _fail_first_run_of_rule() -> None:
    rule, _, marker = os.environ.get("LINEARLENS_FAIL_ONCE", "").partition(":")
    script = os.path.basename(sys.argv[0]) if sys.argv else ""
    if not marker or not script.endswith(f".{rule}.py"):
        return
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return
    sys.stderr.write(f"injected failure: the first run of rule {rule} exits with status 1\n")
    os._exit(1)


_fail_first_run_of_rule()
