# Run rules generated from the run families (linearlens.families; each document's beside its
# manifest, in src/linearlens/manifests/<document>_runs.py): one rule per family this configuration
# runs, one job per run of its grid. Its outputs lie in the document's runs (linearlens.paths), its
# log and benchmark are named after its first output that names no expanded value (or its
# log_name); it asks a cluster for its budget's time and memory (linearlens.cluster); a family that
# computes on the device gets the configured device as a param (or inside one: device_in) and,
# under CUDA, a GPU; a job that reads a prepared image-index dataset gets the archive its photos lie
# in as an input.

from linearlens.families import RunFamily


def configured_families(document):
    """The document's families this configuration runs, each with its config group."""
    document_config = config.get(document, {})
    return [(family, group) for family in getattr(MANIFESTS[document], "FAMILIES", [])
            if (group := family.config_group(document_config)) is not None]


def run_spec(family: RunFamily, grid):
    """The spec of the run a job's wildcards name."""
    return lambda wildcards: grid[family.id_of(dict(wildcards.items()))]


# {prepared dataset: {"archive": its photos}}, for the image-index datasets (their prepared file
# holds the index, not the photos)
PHOTO_ARCHIVES = {paths.prepared(name): archive for name in DATASETS if (archive := photo_archive(name))}


def family_inputs(family: RunFamily, group, grid):
    """The job's named inputs: the photo archive of an image-index dataset it reads, then the family's own."""
    spec = run_spec(family, grid)

    def inputs(wildcards):
        named = family.inputs(group, dict(wildcards.items()), spec(wildcards))
        archive = next((PHOTO_ARCHIVES[path] for path in named.values()
                        if isinstance(path, str) and path in PHOTO_ARCHIVES), {})
        return {**archive, **named}
    return inputs


def family_code(family: RunFamily, grid):
    """The job's code inputs: its script's closure, and the zoo models its spec names."""
    spec = run_spec(family, grid)
    return lambda wildcards: script_code(family.script_file, spec(wildcards))


def family_param(family: RunFamily, group, grid, name):
    spec = run_spec(family, grid)

    def param(wildcards):
        value = family.params(group, dict(wildcards.items()), spec(wildcards))[name]
        return {**value, "device": config["device"]} if family.device and name == family.device_in else value
    return lambda wildcards: canonical(param(wildcards))


def script_param(family: RunFamily):
    """The script's name, as a param Snakemake records or, for a family that keeps the params of the
    rule it replaced, as one it derives (a function of the job's output) and does not record."""
    if family.records_script:
        return family.script_file
    return lambda wildcards, output, script=family.script_file: script


def family_params(family: RunFamily, group, grid):
    """The family's params (the same names for every run: checked here, when the rule is made), each
    in canonical form; its script; the device and the training state's path for the families that
    use them."""
    params = {name: family_param(family, group, grid, name) for name in family.param_names(group, grid)}
    # the script's name: Snakemake reads the `script:` path when the job runs, after this loop has
    # moved on, so the path takes it from the job's params
    params["script"] = script_param(family)
    if family.device and not family.device_in:
        params["device"] = config["device"]
    if family.resumable:
        # not an output: the state survives a killed job, and the next attempt resumes it
        params["state"] = lambda wildcards: family.state_path(dict(wildcards.items()))
    return params


def family_constraints(family: RunFamily, grid):
    return {name: alternatives(values) for name, values in family.wildcard_values(grid).items()}


for document in PAPERS:
    for family, group in configured_families(document):
        grid = family.grid(group)

        rule:
            name:
                family.rule
            input:
                unpack(family_inputs(family, group, grid)),
                code=family_code(family, grid),
            output:
                **family.output_patterns(group),
            params:
                **family_params(family, group, grid),
            log:
                family.log(),
            benchmark:
                family.benchmark()
            wildcard_constraints:
                **family_constraints(family, grid),
            threads: threads_for(family.threads) if family.threads else 1
            resources:
                **job_resources(family.budget, family.device),
            conda:
                f"../envs/{family.environment}.yaml"
            script:
                "../src/scripts/{params.script}"
