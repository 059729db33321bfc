# Raw data into resources/ (downloads run on the submit host, checksummed) and prepared
# datasets (arrays + provenance: paths.prepared, paths.provenance).


rule download_file:
    output:
        "resources/raw/{source}/{filename}",
    log:
        paths.log("download_file", "{source}", "{filename}"),
    localrule: True
    retries: 1
    threads: 1
    conda:
        "../envs/data.yaml"
    script:
        "../src/scripts/download_file.py"


rule fetch_openml:
    output:
        f"resources/raw/openml_{{dataset_id}}/{OPENML_MARKER}",
    log:
        paths.log("fetch_openml", "{dataset_id}"),
    localrule: True
    retries: 1
    threads: 1
    conda:
        "../envs/data.yaml"
    script:
        "../src/scripts/fetch_openml.py"


rule prepare_dataset:
    input:
        raw=lambda w: raw_inputs(w.name),
        code=lambda w: source_code(DATASETS[w.name]["source"]),
    output:
        arrays=paths.prepared("{name}"),
        provenance=paths.provenance("{name}"),
    params:
        spec=lambda w: canonical(DATASETS[w.name]),
        source=lambda w: canonical(get_source(DATASETS[w.name]["source"]).record()),
    log:
        paths.log("prepare_dataset", "{name}"),
    benchmark:
        paths.job_benchmark("prepare_dataset", "{name}")
    threads: threads_for("data")
    resources:
        **job_resources("data"),
    conda:
        "../envs/data.yaml"
    script:
        "../src/scripts/prepare_dataset.py"
