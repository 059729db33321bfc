# The fixture mode (config key fixture_data: true, the rehearsal's): every file the configuration
# would download or read from resources/ is generated in its real format by one job, at the path the
# workflow reads, with a manifest of the files' SHA-256s and of the counts standing in for the
# published ones (linearlens.data.fixtures). Preparation then checks each file against that manifest
# instead of the published checksums, which the paper mode keeps and never reads the manifest for.
# In this mode the rules below win (ruleorder) over the ones they stand in for:
#   write_fixtures           for download_file, fetch_openml, karp_thesis_ch5_missing_checkpoint
#   prepare_fixture_dataset  for prepare_dataset, of the datasets read from those files

if config.get("fixture_data"):
    from linearlens.data import fixtures

    ruleorder: write_fixtures > download_file
    ruleorder: write_fixtures > fetch_openml
    ruleorder: write_fixtures > karp_thesis_ch5_missing_checkpoint
    ruleorder: prepare_fixture_dataset > prepare_dataset

    rule write_fixtures:
        input:
            code=script_code("write_fixtures.py"),
        output:
            manifest=fixtures.MANIFEST,
            files=sorted({*(path for name in DATASETS for path in raw_inputs(name)),
                          *fixtures.corpora_to_write(DATASETS), *fixtures.checkpoints_to_write(config)}),
        params:
            sources=canonical(fixtures.sources_to_write(DATASETS)),
            corpora=fixtures.corpora_to_write(DATASETS),
            checkpoints=canonical(fixtures.checkpoints_to_write(config)),
        log:
            paths.log("write_fixtures"),
        benchmark:
            paths.job_benchmark("write_fixtures")
        localrule: True
        threads: 1
        conda:
            "../envs/torch.yaml"
        script:
            "../src/scripts/write_fixtures.py"

    rule prepare_fixture_dataset:
        input:
            raw=lambda w: raw_inputs(w.name) + list(filter(None, [fixtures.corpus_path(DATASETS[w.name])])),
            manifest=fixtures.MANIFEST,
            code=lambda w: sorted({*script_code("prepare_fixture_dataset.py"), *source_code(DATASETS[w.name]["source"])}),
        output:
            arrays=paths.prepared("{name}"),
            provenance=paths.provenance("{name}"),
        wildcard_constraints:
            name=alternatives(fixtures.file_datasets(DATASETS)),  # offline sources stay with prepare_dataset
        params:
            spec=lambda w: canonical(DATASETS[w.name]),
            source=lambda w: canonical(get_source(DATASETS[w.name]["source"]).record()),
        log:
            paths.log("prepare_fixture_dataset", "{name}"),
        benchmark:
            paths.job_benchmark("prepare_fixture_dataset", "{name}")
        threads: threads_for("data")
        resources:
            **job_resources("data"),
        conda:
            "../envs/data.yaml"
        script:
            "../src/scripts/prepare_fixture_dataset.py"
