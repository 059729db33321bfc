"""Stefani Karp, PhD thesis (CMU-ML-24-111, 2024): 29 figures and 7 tables over chapters 2-5 and
appendices A-C, in the thesis's own numbering. Appendix A belongs to chapter 2, B to chapter 3 and
C to chapter 5; chapters 1 and 6 have none."""

from .. import paths
from ..analysis.karp_thesis.ch2 import configurations, kept_sizes, sweep_settings
from ..analysis.karp_thesis.ch3 import example_datasets, image_datasets, sparsity_settings
from .entries import BUILT, ILLUSTRATIVE, NOT_BUILT, ClaimSet, Entry
from .karp_thesis_runs import (  # noqa: F401 (FAMILIES: rules/families.smk generates their rules)
    EXAMPLES_PATH,
    FAMILIES,
    RUN_ONE_STEP,
    RUN_SPARSITY,
    RUN_TOY,
    growth_run_paths,
    image_run_paths,
    interpolation_path,
    pair_rows_paths,
    stacking_run_paths,
    sweep_inputs,
    toy_grid,
)

TITLE = "Stefani Karp (PhD thesis, 2024): Adapting to structure and using structure to adapt"

# The issue that builds each part; the note of every entry not built yet names it.
GROWING = "issue 29 (growing language models)"


def _todo(entry_id: str, title: str, section: str, issue: str, detail: str = "") -> Entry:
    """A data figure or table whose experiments have not landed yet."""
    note = f"{issue}: {detail}" if detail else issue
    return Entry(entry_id, title, section, NOT_BUILT, note)


# --- Chapter 2 and appendix A: the pair runs of each configuration -----------------------------

FIGURES_CH2 = "linearlens.figures.karp_thesis.ch2"
CLAIMS_CH2 = "linearlens.claims.karp_thesis.ch2"
NETWORKS = ("1a", "2a", "2b")  # Table 2.1's configurations (Figs 2.2-2.4, A.2-A.15)


def ch2_spec(config: dict) -> dict | None:
    return config.get("ch2")


def _has(*names: str):
    """Configured when the chapter has every named configuration."""
    return lambda config: bool(ch2_spec(config)) and all(n in configurations(ch2_spec(config)) for n in names)


def _provenance(spec: dict, names) -> list[str]:
    datasets = dict.fromkeys(configurations(spec)[name]["dataset"] for name in names)
    return [paths.provenance(dataset) for dataset in datasets]


def _pair_inputs(names, trials_of=lambda settings: settings["trials"]):
    def inputs(config: dict) -> dict[str, list[str]]:
        spec = ch2_spec(config)
        runs = [path for name in names
                for path in pair_rows_paths(spec, name, trials_of(configurations(spec)[name]))]
        return {"runs": runs, "provenance": _provenance(spec, names)}
    return inputs


def _interpolation_inputs(names, trials_of):
    def inputs(config: dict) -> dict[str, list[str]]:
        spec = ch2_spec(config)
        curves = [interpolation_path(name, trial) for name in names
                  for trial in trials_of(configurations(spec)[name]) if kept_sizes(configurations(spec)[name])]
        return {"curves": curves, "provenance": _provenance(spec, names)}
    return inputs


def _first_trial(settings: dict) -> list[int]:
    return settings["trials"][:1]


def _other_trials(settings: dict) -> list[int]:
    return settings["trials"][1:]


def _sweep_inputs(config: dict) -> dict[str, list[str]]:
    spec = ch2_spec(config)
    return {**sweep_inputs(spec), "provenance": _provenance(spec, [sweep_settings(spec)["configuration"]])}


def _sweep_configured(config: dict) -> bool:
    spec = ch2_spec(config)
    return bool(spec) and bool(sweep_settings(spec))


def _interpolations_configured(names, trials_of):
    def configured(config: dict) -> bool:
        spec = ch2_spec(config)
        return (_has(*names)(config) and bool(spec.get("interpolation"))
                and all(trials_of(configurations(spec)[n]) and kept_sizes(configurations(spec)[n]) for n in names))
    return configured


def ch2_figure(figure_id: str, title: str, section: str, names, inputs=None, configured=None, *, plot: str) -> Entry:
    """A figure of chapter 2 or appendix A drawn from the runs of the configurations ``names`` by the
    function ``plot`` of the chapter's figure module."""
    return Entry(figure_id, title, section, plot=f"{FIGURES_CH2}:{plot}",
                 inputs=inputs or _pair_inputs(names), params=ch2_spec, configured=configured or _has(*names))


def _appendix_trials(figure_id: str, configuration: str, iteration: str, rows: str, *, plot: str) -> Entry:
    return ch2_figure(figure_id, _all_trials(configuration, iteration, rows), "Appendix A", [configuration], plot=plot)


def _all_trials(config: str, iteration: str, rows: str) -> str:
    return f"All three trials of configuration {config} at iteration {iteration}: {rows} against m"


CE_GAP_AND_STABILITY = "cross-entropy gap and stability"
GAPS_AND_STABILITY = "0-1 gap, cross-entropy gap and stability"

CH2_CLAIMS = ClaimSet(
    f"{CLAIMS_CH2}:stability_claims",
    lambda config: {name: files for name, files in (
        ("logistic", _pair_inputs(["lr"])(config)["runs"] if _has("lr")(config) else []),
        ("networks", _pair_inputs([n for n in NETWORKS if _has(n)(config)])(config)["runs"]),
        ("curves", _interpolation_inputs([n for n in NETWORKS if _has(n)(config)],
                                         lambda settings: settings["trials"])(config)["curves"]
         if ch2_spec(config).get("interpolation") else []),
        ("sweep", _sweep_inputs(config)["sweep"] if _sweep_configured(config) else []),
        ("sweep_pairs", _sweep_inputs(config)["pairs"] if _sweep_configured(config) else []),
    ) if files},
    params=lambda config: {"thresholds": config["claim_thresholds"]["stability"], "spec": ch2_spec(config)},
    configured=lambda config: bool(ch2_spec(config)))

# --- Chapter 3 and appendix B: local signal adaptivity -------------------------------------------

FIGURES_CH3 = "linearlens.figures.karp_thesis.ch3"
CLAIMS_CH3 = "linearlens.claims.karp_thesis.ch3"


def ch3_spec(config: dict) -> dict:
    return config.get("ch3") or {}


# --- Fig 3.3: the LSA toy model (Sec 3.3, Algorithm 3.1) ---

TOY_DATA = "synthetic LSA data (Sec 3.3's model; fresh samples drawn by the run)"


def _toy_spec(config: dict) -> dict | None:
    return ch3_spec(config).get("toy")


def _toy_inputs(config: dict) -> dict[str, list[str]]:
    return {"runs": RUN_TOY.outputs_of("rows", toy_grid(_toy_spec(config)))}


# --- Figs 3.2, 3.4, 3.5, Tables 3.1, B.1: the network against its linearisation on noisy images ---

def _images_configured(config: dict) -> bool:
    return bool(ch3_spec(config).get("images"))


def _image_datasets(config: dict) -> list[str]:
    return [paths.provenance(name) for name in image_datasets(ch3_spec(config)["images"])]


def _image_runs(config: dict) -> dict[str, list[str]]:
    return {"runs": image_run_paths(ch3_spec(config)), "provenance": _image_datasets(config)}


def _image_params(config: dict) -> dict:
    spec = ch3_spec(config)
    return {key: spec[key] for key in ("images", "model", "network", "linearisation")}


def ch3_image_entry(entry_id: str, title: str, section: str, plot: str) -> Entry:
    """A figure or table of the noisy-image runs (Fig 3.4, Tables 3.1, B.1)."""
    return Entry(entry_id, title, section, plot=f"{FIGURES_CH3}:{plot}", inputs=_image_runs, params=_image_params,
                 configured=_images_configured)


def _sparsity_inputs(config: dict) -> dict[str, list[str]]:
    return {"runs": [RUN_SPARSITY.output("rows", "sparsity")],
            "provenance": [paths.provenance(ch3_spec(config)["sparsity"]["dataset"])]}


def _examples_inputs(config: dict) -> dict[str, list[str]]:
    images = ch3_spec(config)["images"]
    return {"examples": [EXAMPLES_PATH],
            "provenance": [paths.provenance(name) for name in example_datasets(images)]}


CH3_CLAIMS = ClaimSet(
    f"{CLAIMS_CH3}:local_signal_claims",
    lambda config: {name: files for name, files in (
        ("toy", _toy_inputs(config)["runs"] if _toy_spec(config) else []),
        ("runs", image_run_paths(ch3_spec(config)) if _images_configured(config) else []),
        ("sparsity", _sparsity_inputs(config)["runs"] if ch3_spec(config).get("sparsity") else []),
    ) if files},
    params=lambda config: {"thresholds": {name: config["claim_thresholds"][name] for name in ("toy", "local_signal")},
                           "spec": ch3_spec(config),
                           **({"toy": _toy_spec(config)} if _toy_spec(config) else {})},
    configured=lambda config: bool(ch3_spec(config)))


# --- Chapter 4: one gradient step of the transformer on decision lists ----------------------------

FIGURES_CH4 = "linearlens.figures.karp_thesis.ch4"
DECISION_LISTS_DATA = "synthetic: decision lists of Sec 4.3.4 (no dataset)"


def ch4_spec(config: dict) -> dict | None:
    return config.get("ch4")


def _one_step_inputs(config: dict) -> dict[str, list[str]]:
    return {"one_step": [RUN_ONE_STEP.output("run")]}


CH4_CLAIMS = ClaimSet(
    "linearlens.claims.karp_thesis.ch4:decision_list_claims", _one_step_inputs,
    params=lambda config: {"thresholds": config["claim_thresholds"]["structure"]},
    configured=lambda config: bool(ch4_spec(config)))


# --- Chapter 5 and appendix C: growth runs of each setting, and stacking ------------------------

FIGURES_CH5 = "linearlens.figures.karp_thesis.ch5"


def ch5_spec(config: dict) -> dict:
    return config.get("ch5") or {}


def _growing(name: str):
    return lambda config: (ch5_spec(config).get("growing") or {}).get(name)


def _growth_inputs(name: str):
    def inputs(config: dict) -> dict[str, list[str]]:
        dataset = _growing(name)(config)["dataset"]
        return {"runs": growth_run_paths(ch5_spec(config), name), "provenance": [paths.provenance(dataset)]}
    return inputs


def _stacking_inputs(config: dict) -> dict[str, list[str]]:
    dataset = ch5_spec(config)["stacking"]["dataset"]
    return {"runs": stacking_run_paths(ch5_spec(config)), "provenance": [paths.provenance(dataset)]}


def ch5_growth_entry(entry_id: str, title: str, section: str, setting: str, plot: str) -> Entry:
    """A figure or table of one growing setting's runs (bert: BERT-BASE; ul2: the UL2 decoder)."""
    return Entry(entry_id, title, section, plot=f"{FIGURES_CH5}:{plot}", inputs=_growth_inputs(setting),
                 params=_growing(setting), configured=lambda config: bool(_growing(setting)(config)))


def ch5_growth_claim_runs(config: dict, given_checkpoint: bool) -> dict[str, list[str]]:
    """The growth runs of the settings grown from a checkpoint the config gives (the thesis's
    unreleased models at paper scale: checked by the opt-in target paper_karp_thesis_unreleased),
    or of those pretrained here (checked with the document's claims)."""
    return {name: growth_run_paths(ch5_spec(config), name) for name in ("bert", "ul2")
            if _growing(name)(config) and bool(_growing(name)(config)["checkpoint"]) == given_checkpoint}


CH5_CLAIMS = ClaimSet(
    "linearlens.claims.karp_thesis.ch5:growing_claims",
    lambda config: {name: files for name, files in (
        *ch5_growth_claim_runs(config, given_checkpoint=False).items(),
        ("stacking", stacking_run_paths(ch5_spec(config))),
    ) if files},
    params=lambda config: {"thresholds": config["claim_thresholds"]["growing"]},
    configured=lambda config: bool(ch5_growth_claim_runs(config, given_checkpoint=False)
                                   or ch5_spec(config).get("stacking")))

FIGURES = [
    ch2_figure("fig_2_1", "Logistic regression on binary MNIST: logistic gap, logistic stability, parameter "
               "distance and 0-1 gap against m", "Chapter 2", ["lr"], plot="plot_fig_2_1"),
    ch2_figure("fig_2_2", "ResNet-20 configurations 1a, 2a, 2b: 0-1 gap, cross-entropy gap and cross-entropy "
               "stability against m", "Chapter 2", NETWORKS, _pair_inputs(NETWORKS, _first_trial), plot="plot_fig_2_2"),
    ch2_figure("fig_2_3", "‖A(S) − A(S′)‖₂ at t = 100,000 against m for the three network configurations",
               "Chapter 2", NETWORKS, _pair_inputs(NETWORKS, _first_trial), plot="plot_fig_2_3"),
    ch2_figure("fig_2_4", "Linear mode connectivity at t = 100,000: train and test accuracy along "
               "αW_S + (1 − α)W_S′, m = 15,000 (a) and 50,000 (b)", "Chapter 2", NETWORKS,
               _interpolation_inputs(NETWORKS, _first_trial), _interpolations_configured(NETWORKS, _first_trial),
               plot="plot_fig_2_4"),
    Entry("fig_3_1", "ImageNet photos (bicycle, canoe, school bus, balloon) whose label-determining "
          "object is one part of a large background", "Chapter 3", ILLUSTRATIVE,
          "four ImageNet-2012 photographs: not redistributable, and no data of ours to draw them from"),
    Entry("fig_3_2", "Sparsity of intermediate WRN layers during training on CIFAR-10: average "
          "percentage of active neurons per epoch", "Chapter 3", plot=f"{FIGURES_CH3}:plot_fig_3_2",
          inputs=_sparsity_inputs,
          params=lambda config: sparsity_settings(ch3_spec(config)),
          configured=lambda config: bool(ch3_spec(config).get("sparsity"))),
    Entry("fig_3_3", "The LSA model on synthetic data: b and w·w*, the ratio |b|/(w·w*) and test "
          "accuracy against the SGD step", "Chapter 3", plot=f"{FIGURES_CH3}:plot_fig_3_3",
          caption="The LSA model f(X) = Σ_i φ_b(⟨w, X_i⟩) trained by SGD on fresh synthetic samples "
          "(Algorithm 3.1): b and w·w* (left), |b|/(w·w*) (centre) and test accuracy (right) against the SGD step.",
          inputs=_toy_inputs, params=_toy_spec, configured=lambda config: bool(_toy_spec(config)),
          data_source=TOY_DATA),
    ch3_image_entry("fig_3_4", "WRN against its NTK: test accuracy as the background noise grows, in four "
                    "image settings", "Chapter 3", "plot_fig_3_4"),
    Entry("fig_3_5", "Example images of CIFAR-VEHICLES and of CIFAR-10 on ImageNet noise, background "
          "scaled to 0.75", "Chapter 3", plot=f"{FIGURES_CH3}:plot_fig_3_5", inputs=_examples_inputs,
          params=_image_params,
          configured=lambda config: _images_configured(config) and bool(ch3_spec(config)["images"].get("examples"))),
    Entry("fig_4_1", "Matrix V after one gradient step under uniform attention (L = 200, n = 25, "
          "η = L²): the permutation structure appears", "Chapter 4", plot=f"{FIGURES_CH4}:plot_fig_4_1",
          inputs=_one_step_inputs, params=ch4_spec, configured=lambda config: bool(ch4_spec(config)),
          data_source=DECISION_LISTS_DATA),
    Entry("fig_5_1", "Growth operators: k layers grown into 2k; interleaving (b = 1) and single-block "
          "copying (b = 3) of a 6-layer net (a drawing)", "Chapter 5", BUILT,
          "drawn from the caption and the examples of Sec 5.2.1; the random-initialisation "
          "variants are left out, as in the thesis",
          plot="linearlens.figures.karp_thesis.ch5:draw_fig_5_1"),
    ch5_growth_entry("fig_5_2", "BERT grown 12 → 16 layers, 30 operators: validation loss at 600K against the "
                     "loss at growth (left) and at 505K (right)", "Chapter 5", "bert", "plot_fig_5_2"),
    ch5_growth_entry("fig_5_3", "BERT growth, steps 500,000-500,200: Spearman heatmap, correlation with the "
                     "final loss, Recall@k and relative regret", "Chapter 5", "bert", "plot_fig_5_3"),
    ch5_growth_entry("fig_5_4", "UL2 growth, steps 300,000-302,000: Spearman heatmap and correlation with the "
                     "final loss", "Chapter 5", "ul2", "plot_fig_5_4"),
    ch2_figure("fig_A_1", "Configuration 1a, 20 samples per m over a wider range of m at 50,000 and 150,000 "
               "iterations, linear and log-log axes", "Appendix A", ["1a"], _sweep_inputs, _sweep_configured,
               plot="plot_fig_A_1"),
    _appendix_trials("fig_A_2", "1a", "100,000", GAPS_AND_STABILITY, plot="plot_fig_A_2"),
    _appendix_trials("fig_A_3", "2a", "100,000", GAPS_AND_STABILITY, plot="plot_fig_A_3"),
    _appendix_trials("fig_A_4", "2b", "100,000", GAPS_AND_STABILITY, plot="plot_fig_A_4"),
    _appendix_trials("fig_A_5", "1a", "50,000", CE_GAP_AND_STABILITY, plot="plot_fig_A_5"),
    _appendix_trials("fig_A_6", "2a", "50,000", CE_GAP_AND_STABILITY, plot="plot_fig_A_6"),
    _appendix_trials("fig_A_7", "2b", "50,000", CE_GAP_AND_STABILITY, plot="plot_fig_A_7"),
    _appendix_trials("fig_A_8", "1a", "150,000", CE_GAP_AND_STABILITY, plot="plot_fig_A_8"),
    _appendix_trials("fig_A_9", "2a", "150,000", CE_GAP_AND_STABILITY, plot="plot_fig_A_9"),
    _appendix_trials("fig_A_10", "2b", "150,000", CE_GAP_AND_STABILITY, plot="plot_fig_A_10"),
    ch2_figure("fig_A_11", "‖A(S) − A(S′)‖₂ at t = 100,000 against m, every configuration and trial",
               "Appendix A", NETWORKS, plot="plot_fig_A_11"),
    ch2_figure("fig_A_12", "‖A(S)‖₂ at t = 100,000 against m, every configuration and trial", "Appendix A", NETWORKS,
               plot="plot_fig_A_12"),
    ch2_figure("fig_A_13", "Distance ‖A(S) − A(S′)‖₂ normalised by the mean parameter norm at t = 100,000, "
               "every configuration and trial", "Appendix A", NETWORKS, plot="plot_fig_A_13"),
    ch2_figure("fig_A_14", "Linear mode connectivity in further trials, configuration 1a (SVHN)", "Appendix A",
               ["1a"], _interpolation_inputs(["1a"], _other_trials), _interpolations_configured(["1a"], _other_trials),
               plot="plot_fig_A_14"),
    ch2_figure("fig_A_15", "Linear mode connectivity in further trials, configuration 2a (CIFAR-10, no "
               "momentum)", "Appendix A", ["2a"], _interpolation_inputs(["2a"], _other_trials),
               _interpolations_configured(["2a"], _other_trials), plot="plot_fig_A_15"),
]

TABLES = [
    Entry("table_2_1", "The three ResNet-20 configurations: dataset, learning rate schedule, batch size, "
          "momentum", "Chapter 2", note="a configuration table (no data), emitted from the config",
          plot=f"{FIGURES_CH2}:table_2_1", inputs=lambda config: {"provenance": _provenance(ch2_spec(config), NETWORKS)},
          params=lambda config: {name: configurations(ch2_spec(config))[name] for name in NETWORKS},
          configured=_has(*NETWORKS)),
    ch3_image_entry("table_3_1", "Percentage of the zero-noise test accuracy the WRN and its NTK retain at the "
                    "maximum noise level, four image settings", "Chapter 3", "table_3_1"),
    ch5_growth_entry("table_5_1", "BERT 12 → 16: LAG@200 against the oracle, LAG@0 and stacking on top: final "
                     "validation loss, regret, relative regret", "Chapter 5", "bert", "table_5_1"),
    ch5_growth_entry("table_5_2", "UL2 12 → 16: LAG@2000 against the oracle, LAG@0 and stacking on top: final "
                     "validation loss, regret, relative regret", "Chapter 5", "ul2", "table_5_2"),
    Entry("table_B_1", "Test accuracy of WRN and NTK on CIFAR-2 with Gaussian noise: three placements, "
          "two image sizes, four noise levels", "Appendix B", plot=f"{FIGURES_CH3}:table_B_1", inputs=_image_runs,
          params=_image_params,
          configured=lambda config: _images_configured(config) and bool(ch3_spec(config)["images"].get("table_B_1"))),
    _todo("table_C_1", "UL2 12 → 16: one-shot TyDi QA, TriviaQA and LAMBADA scores of LAG@2000 against "
          "the other strategies", "Appendix C", GROWING,
          "not reproducible offline: it needs the TyDi QA (en), TriviaQA and LAMBADA evaluation sets and a "
          "1-shot prompting harness, which rule karp_thesis_ch5_evaluate_downstream names at paper scale; "
          "no proxy"),
    Entry("table_C_2", "BERT-LARGE: final validation loss of adaptive stacking against last stacking",
          "Appendix C", plot=f"{FIGURES_CH5}:table_C_2", inputs=_stacking_inputs,
          params=lambda config: ch5_spec(config).get("stacking"),
          configured=lambda config: bool(ch5_spec(config).get("stacking"))),
]

ENTRIES = FIGURES + TABLES
CLAIM_SETS = [CH2_CLAIMS, CH3_CLAIMS, CH4_CLAIMS, CH5_CLAIMS]
