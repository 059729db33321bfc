# Rules generated from the manifests (src/linearlens/manifests/<document>.py): one rule per figure
# the configuration builds, drawn or plotted by the function its entry names from the files its
# entry lists, and one claims rule per document running its claim sets. Their code inputs are the
# import closure of those functions' modules, so editing one figure's code replots that figure.

for document in PAPERS:
    manifest, document_config = MANIFESTS[document], config.get(document, {})
    for entry in generated.built_entries(manifest, document_config):
        entry_inputs = entry.inputs(document_config) if entry.inputs else {}

        rule:
            name:
                generated.entry_rule_name(document, entry)
            input:
                **entry_inputs,
                code=function_code("plot_figure.py", entry.plot),
            output:
                entry.path(document),
            params:
                plot=entry.plot,
                figure=entry.id,
                input_names=list(entry_inputs),
                spec=canonical(entry.params(document_config)),
                caption=entry.caption,
                scale=config["scale"],
                **({"data_source": entry.data_source} if entry.data_source else {}),
            log:
                paths.log(document, f"plot_{entry.id}"),
            localrule: True
            threads: 1
            conda:
                f"../envs/{entry.environment}.yaml"
            script:
                "../src/scripts/plot_figure.py"

        FIGURES[document].append(entry.path(document))

    if claim_sets := generated.configured_claim_sets(manifest, document_config):

        rule:
            name:
                f"{document}_claims"
            input:
                **dict(generated.claim_set_files(manifest, document_config).values()),
                code=function_code("check_claims.py", *[claim_set.function for claim_set in claim_sets]),
            output:
                paths.claims(document),
            params:
                claim_sets=canonical(generated.claim_set_params(manifest, document_config)),
                document=document,
                scale=config["scale"],
            log:
                paths.log(document, "claims"),
            localrule: True
            threads: 1
            conda:
                f"../envs/{generated.claims_environment(manifest, document_config)}.yaml"
            script:
                "../src/scripts/check_claims.py"

        CLAIMS[document] = paths.claims(document)


# Each thesis chapter's target, <document>_<chapter>: every figure and table of the chapter and of
# its appendix this config builds (less those only paper_<document>_unreleased builds), and the
# thesis's claims file (which checks them).
def chapter_target(document, chapter):
    return lambda wildcards: released(document, [
        entry.path(document) for entry in built_entries(document) if generated.entry_chapter(entry) == chapter
    ]) + ([CLAIMS[document]] if CLAIMS[document] else [])


for document in PAPERS:
    for chapter in generated.chapters(MANIFESTS[document]):

        rule:
            name:
                f"{document}_{chapter}"
            input:
                chapter_target(document, chapter),
            localrule: True
