# Rules generated from the manifests (src/linearlens/manifests/<document>.py): one rule per figure
# the configuration builds, drawn or plotted by the function its entry names from the files its
# entry lists, and one claims rule per document running its claim sets. Their code inputs are the
# import closure of those functions' modules, so editing one figure's code replots that figure.

from linearlens.manifests.entries import BUILT


def built_entries(document):
    """The entries of a document this configuration builds."""
    document_config = config.get(document, {})
    return [entry for entry in MANIFESTS[document].ENTRIES
            if entry.status == BUILT and entry.plot and entry.configured(document_config)]


def entry_rule_name(document, entry):
    """<document>_<chapter>_<verb>_<figure> for the theses (the chapter from the plot module), and
    <document>_<verb>_<figure> for the papers; the verb is draw (no data) or plot."""
    plot_module = entry.plot.split(":")[0].rsplit(".", 1)[-1]
    chapter = [plot_module] if re.fullmatch(r"ch\d+", plot_module) else []
    return "_".join([document, *chapter, "plot" if entry.inputs else "draw", entry.id])


def configured_claim_sets(document):
    document_config = config.get(document, {})
    return [claim_set for claim_set in getattr(MANIFESTS[document], "CLAIM_SETS", [])
            if claim_set.configured(document_config)]


def claim_sets(document):
    """The document's configured claim sets, each with its function's inputs and params."""
    document_config = config.get(document, {})
    return [{"function": claim_set.function, "inputs": claim_set.inputs(document_config),
             "params": claim_set.params(document_config)} for claim_set in configured_claim_sets(document)]


def claims_environment(document):
    """torch when any claim set needs it, else the lighter report environment."""
    environments = {claim_set.environment for claim_set in configured_claim_sets(document)}
    return "torch" if "torch" in environments else "report"


for document in PAPERS:
    for entry in built_entries(document):
        entry_inputs = entry.inputs(config.get(document, {})) if entry.inputs else {}

        rule:
            name:
                entry_rule_name(document, entry)
            input:
                **entry_inputs,
                code=function_code("plot_figure.py", entry.plot),
            output:
                entry.path(document),
            params:
                plot=entry.plot,
                figure=entry.id,
                input_names=list(entry_inputs),
                spec=canonical(entry.params(config.get(document, {}))),
                caption=entry.caption,
            log:
                f"results/logs/{document}/plot_{entry.id}.log",
            localrule: True
            threads: 1
            conda:
                f"../envs/{entry.environment}.yaml"
            script:
                "../src/scripts/plot_figure.py"

        FIGURES[document].append(entry.path(document))

    if claim_sets(document):

        rule:
            name:
                f"{document}_claims"
            input:
                runs=[path for claim_set in claim_sets(document) for paths in claim_set["inputs"].values()
                      for path in paths],
                code=function_code("check_claims.py", *[s["function"] for s in claim_sets(document)]),
            output:
                f"results/{document}/claims.json",
            params:
                claim_sets=canonical(claim_sets(document)),
                document=document,
                scale=config["scale"],
            log:
                f"results/logs/{document}/claims.log",
            localrule: True
            threads: 1
            conda:
                f"../envs/{claims_environment(document)}.yaml"
            script:
                "../src/scripts/check_claims.py"

        CLAIMS[document] = f"results/{document}/claims.json"
