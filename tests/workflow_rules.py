"""The workflow's rules as Snakemake itself builds them, those generated in loops included (the run
families, the method benchmarks), for tests that check what the rules declare: run as a script, it
loads the workflow and writes one JSON line per rule; ``workflow_rules`` runs it once per session in
its own process, since loading the workflow sets environment variables and the import path.

usage: python tests/workflow_rules.py OUT.jsonl <snakemake --config values, as KEY=VALUE>"""

import functools
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from linearlens.families import declared_families

ROOT = Path(__file__).resolve().parents[1]


def described(rule) -> dict:
    """A rule's name, its params' names, the GPUs it asks for and its script's file name."""
    gpu = rule.resources["gpu"].value if "gpu" in rule.resources else 0
    return {"rule": rule.name, "params": list(rule.params.keys()), "gpu": gpu, "script": script_of(rule)}


def script_of(rule) -> str | None:
    """The file name of the rule's script. A rule generated in a loop names it in its `script` param
    (Snakemake reads the path when the job runs), a value or a function of the job's output."""
    if not rule.script:
        return None
    named = rule.params.get("script")
    if callable(named):
        named = named(wildcards=None, output=None)
    return Path(str(rule.script).replace("{params.script}", str(named))).name


def write_rules(out_path: str, config: dict) -> None:
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings, StorageSettings

    with tempfile.TemporaryDirectory() as workdir, SnakemakeApi(OutputSettings()) as api:
        workflow = api.workflow(resource_settings=ResourceSettings(), storage_settings=StorageSettings(),
                                config_settings=ConfigSettings(config=config), snakefile=ROOT / "Snakefile",
                                workdir=Path(workdir))
        # Snakemake's API has no public list of a loaded workflow's rules: this reads its private one
        # (as of the pinned snakemake==9.27.1), and says so where an upgrade moves it
        rules = getattr(getattr(workflow, "_workflow", None), "rules", None)
        if rules is None:
            raise RuntimeError("tests/workflow_rules.py: this Snakemake's workflow has no _workflow.rules; "
                               "find where the loaded rules live now")
        lines = [json.dumps(described(rule)) for rule in rules]
    Path(out_path).write_text("\n".join(lines) + "\n")


@functools.cache
def workflow_rules() -> dict[str, dict]:
    """{rule: its description (``described``)} at smoke scale under `device: cuda`. Smoke scale
    configures every rule (the SLURM tests plan each one that uses the device)."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "rules.jsonl"
        loaded = subprocess.run([sys.executable, __file__, str(out), "scale=smoke", "device=cuda"],
                                capture_output=True, text=True, cwd=ROOT)
        if loaded.returncode != 0:
            raise RuntimeError(f"loading the workflow failed:\n{loaded.stderr[-3000:]}")
        return {line["rule"]: line for line in map(json.loads, out.read_text().splitlines())}


def device_rules() -> set[str]:
    """The rules whose code runs on the configured device, so that `device: cuda` must get them a GPU:
    those handed the device as a param, or inside one (a run family's ``device_in``)."""
    inside_a_param = {family.rule for family in declared_families() if family.device and family.device_in}
    return {name for name, rule in workflow_rules().items() if "device" in rule["params"] or name in inside_a_param}


if __name__ == "__main__":
    write_rules(sys.argv[1], dict(setting.split("=", 1) for setting in sys.argv[2:]))
