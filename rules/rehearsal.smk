# The fixture mode (config key fixture_data: true, the rehearsal's): every file the configuration
# would download or read from resources/ is generated in its real format by one job, at the path the
# workflow reads, with a manifest of the files' SHA-256s and of the counts standing in for the
# published ones (linearlens.data.fixtures). Preparation then checks each file against that manifest
# instead of the published checksums, which the paper mode keeps and never reads the manifest for.
# In this mode the rules below win (ruleorder) over the ones they stand in for:
#   write_fixtures           for download_file, fetch_openml, karp_thesis_ch5_missing_checkpoint
#   prepare_fixture_dataset  for prepare_dataset, of the datasets read from those files

FIXTURE_MANIFEST = "resources/fixtures.json"


def fixture_corpus(name):
    """The text file a text_file dataset reads (its config path), or None."""
    spec = DATASETS[name]
    return (spec.get("source_options") or {}).get("path") if spec["source"] == "text_file" else None


def fixture_checkpoints():
    """The Karp ch. 5 checkpoints the config names: path -> what the fixture is pretrained as."""
    from linearlens.analysis.karp_thesis.ch5 import pretraining_setting

    growing = ((config.get("karp_thesis") or {}).get("ch5") or {}).get("growing") or {}
    checkpoints = {}
    for setting in growing.values():
        if setting.get("checkpoint"):
            corpus_options = DATASETS[setting["dataset"]]["source_options"]
            checkpoints[setting["checkpoint"]] = {"setting": pretraining_setting(setting),
                                                  "corpus": corpus_options["path"],
                                                  "validation_fraction": corpus_options["validation_fraction"]}
    return checkpoints


def fixture_datasets():
    """The datasets read from files: downloads, or a text corpus."""
    return [name for name, spec in DATASETS.items() if get_source(spec["source"]).needs_download or fixture_corpus(name)]


def fixture_sources():
    """Each data source with raw files that a configured dataset reads, with the options it is read
    with (SVHN writes its extra set only when a dataset asks for it)."""
    sources = {}
    for spec in DATASETS.values():
        if get_source(spec["source"]).needs_download:
            options = sources.setdefault(spec["source"], {})
            options.update({k: v for k, v in (spec.get("source_options") or {}).items() if v})
    return sources


if config.get("fixture_data"):

    ruleorder: write_fixtures > download_file
    ruleorder: write_fixtures > fetch_openml
    ruleorder: write_fixtures > karp_thesis_ch5_missing_checkpoint
    ruleorder: prepare_fixture_dataset > prepare_dataset

    rule write_fixtures:
        input:
            code=script_code("write_fixtures.py"),
        output:
            manifest=FIXTURE_MANIFEST,
            files=sorted({*(path for name in DATASETS for path in raw_inputs(name)),
                          *filter(None, map(fixture_corpus, DATASETS)), *fixture_checkpoints()}),
        params:
            sources=canonical(fixture_sources()),
            corpora=sorted(filter(None, map(fixture_corpus, DATASETS))),
            checkpoints=canonical(fixture_checkpoints()),
        log:
            "results/logs/write_fixtures.log",
        benchmark:
            "results/benchmarks/rules/write_fixtures.tsv"
        localrule: True
        threads: 1
        conda:
            "../envs/torch.yaml"
        script:
            "../src/scripts/write_fixtures.py"

    rule prepare_fixture_dataset:
        input:
            raw=lambda w: raw_inputs(w.name) + list(filter(None, [fixture_corpus(w.name)])),
            manifest=FIXTURE_MANIFEST,
            code=lambda w: sorted({*script_code("prepare_fixture_dataset.py"), *source_code(DATASETS[w.name]["source"])}),
        output:
            arrays="results/data/{name}.npz",
            provenance="results/data/{name}.json",
        wildcard_constraints:
            name=alternatives(fixture_datasets()),  # offline sources stay with prepare_dataset
        params:
            spec=lambda w: canonical(DATASETS[w.name]),
            source=lambda w: canonical(get_source(DATASETS[w.name]["source"]).record()),
        log:
            "results/logs/prepare_fixture_dataset/{name}.log",
        benchmark:
            "results/benchmarks/rules/prepare_fixture_dataset/{name}.tsv"
        threads: threads_for("data")
        resources:
            mem_mb=8000,
        conda:
            "../envs/data.yaml"
        script:
            "../src/scripts/prepare_fixture_dataset.py"
