"""Thomas George, PhD thesis (Université de Montréal, 2023): every figure, in the thesis numbering.

The thesis has 47 figures and no tables. Its captions restart per chapter ("Figure 3." inside
chapter 4 is Fig 4.3), and its extracted List of Figures misses 16 of them, so this list follows the
captions in the body. Appendix figures sit with their chapter in the code: A with chapter 4, B with
chapter 6, C with chapter 5.
"""

import re

from .. import paths
from ..analysis.george_thesis.ch5 import (
    ANALYTIC_EXAMPLES,
    difficulty_claim_runs,
    difficulty_figure_runs,
    spurious_configured,
    spurious_params,
    spurious_runs_read,
)
from ..analysis.george_thesis.ch6 import complexity_runs, ordered_panels
from .entries import ClaimSet, Entry
from .george_thesis_runs import (
    BIN_CSCORES,
    FAMILIES,  # noqa: F401 (rules/families.smk generates their rules)
    FISHER_QUALITY,
    NAMING_KEYS,
    NTK_PAIR,
    RUN_ALIGNMENT,
    RUN_ANALYTIC,
    RUN_COMPLEXITY,
    RUN_DIFFICULTY,
    RUN_DISK,
    RUN_EASY_DIFFICULT,
    RUN_FREQUENCY,
    RUN_MLP_CLASSIFIER,
    RUN_PERTURBATION,
    RUN_RBF_CAPACITY,
    RUN_SEARCH,
    RUN_SPECTRAL_BIAS,
    RUN_SPECTRUM,
    RUN_SUPERNAT,
    RUN_TOY,
    RUN_TWOLAYER,
    SUMMARISE_ALIGNMENT,
    family_seeds,
    group_files,
    kernel_runs,
    spurious_file,
)

TITLE = ("Thomas George (PhD thesis, 2023): Deep networks training and generalization, insights "
         "from linearization")

FIGURES = "linearlens.figures.george_thesis"  # the chapters' figure modules: FIGURES.ch<N>


# --- Figure groups: a chapter's ``george_thesis: ch<N>: <group>`` configs -------------------------

APPENDIX_CHAPTER = {"A": "4", "B": "6", "C": "5"}  # where each appendix's figures live in the code


def chapter_of(figure_id: str) -> str:
    part = figure_id.split("_")[1]
    return f"ch{APPENDIX_CHAPTER.get(part, part)}"


def plot_of(figure_id: str, function: str) -> str:
    """The plot function ``function`` of the figure's chapter's module (an appendix's: the chapter
    whose code it shares)."""
    return f"{FIGURES}.{chapter_of(figure_id)}:{function}"


def chapter_group(config: dict, chapter: str, group: str) -> dict | None:
    """The ``george_thesis: <chapter>: <group>`` config, None when the group is not configured."""
    return (config.get(chapter) or {}).get(group)


def _configured(group: str, chapter: str = "ch6"):
    return lambda config: chapter_group(config, chapter, group) is not None


def group_figure(figure_id: str, title: str, section: str, group: str, inputs_of, *, plot: str,
                 caption: str = "", data_source: str = "") -> Entry:
    """A figure of a group of its chapter whose plot, the function ``plot`` of the chapter's figure
    module, reads the group's files (``inputs_of(spec)``) and takes the group's config as its params."""
    chapter = chapter_of(figure_id)
    return Entry(figure_id, title, section, plot=plot_of(figure_id, plot),
                 caption=caption, inputs=lambda config: inputs_of(chapter_group(config, chapter, group)),
                 params=lambda config: chapter_group(config, chapter, group),
                 configured=_configured(group, chapter), data_source=data_source)


def threshold_params(config: dict, name: str | None) -> dict:
    """``{"thresholds": the name mapping of claim_thresholds}`` (the fields of a claims module's
    *Thresholds class); empty for a claim set without thresholds (``name`` None)."""
    return {} if name is None else {"thresholds": config["claim_thresholds"][name]}


def group_claims(function: str, group: str, inputs_of, chapter: str = "ch6", thresholds: str | None = None) -> ClaimSet:
    return ClaimSet(f"linearlens.claims.george_thesis.{chapter}:{function}",
                    lambda config: inputs_of(chapter_group(config, chapter, group)),
                    params=lambda config: {**threshold_params(config, thresholds),
                                           "spec": chapter_group(config, chapter, group)},
                    configured=_configured(group, chapter))


# --- Chapter 2: the closed-form run of Fig 2.1 --------------------------------------------------

GAUSSIANS_PATH = paths.runs("george_thesis", "ch2", "gaussians.npz")


def gaussians_inputs(spec: dict) -> dict[str, list[str]]:
    return {"run": [GAUSSIANS_PATH]}


GAUSSIANS_DATA = "four normal distributions in closed form (Example 4, §2.4.1; no data)"


# --- Chapter 3: the showcase's runs (Figs 3.3-3.7) -----------------------------------------------

def showcase_files(family, name: str, spec: dict) -> list[str]:
    """The file ``name`` of each of the family's runs, one per checkpoint of the showcase."""
    return family.outputs_of(name, family.grid(spec))


def showcase_quality(spec: dict) -> dict[str, list[str]]:
    return {"runs": showcase_files(FISHER_QUALITY, "quality", spec), "provenance": [paths.provenance(spec["dataset"])]}


def showcase_pairs(spec: dict) -> dict[str, list[str]]:
    return {"runs": showcase_files(NTK_PAIR, "pair", spec), "provenance": [paths.provenance(spec["dataset"])]}


# --- Chapter 4: the run of Fig 4.2 --------------------------------------------------------------

def mlp_classifier_runs(spec: dict) -> dict[str, list[str]]:
    return {name: [path] for name, path in RUN_MLP_CLASSIFIER.output_patterns(spec).items()}


def mlp_classifier_inputs(spec: dict) -> dict[str, list[str]]:
    return {**mlp_classifier_runs(spec), "provenance": [paths.provenance(spec["dataset"])]}


# --- Chapter 4: the training groups (Figs 4.3-4.6, A.1-A.5) --------------------------------------

def autoencoder_runs(spec: dict) -> dict[str, list[str]]:
    return {"runs": group_files(RUN_SEARCH, "autoencoder", spec),
            "frequency": group_files(RUN_FREQUENCY, "autoencoder", spec),
            "spectrum": group_files(RUN_SPECTRUM, "autoencoder", spec)}


def autoencoder_inputs(spec: dict) -> dict[str, list[str]]:
    return {**autoencoder_runs(spec), "provenance": [paths.provenance(spec["dataset"])]}


def cifar_runs(group: str):
    return lambda spec: {"runs": group_files(RUN_SEARCH, group, spec)}


def cifar_inputs(group: str):
    return lambda spec: {"runs": group_files(RUN_SEARCH, group, spec), "provenance": [paths.provenance(spec["dataset"])]}


def cifar_figure(figure_id: str, title: str, section: str, group: str, caption: str, *, plot: str) -> Entry:
    return group_figure(figure_id, title, section, group, cifar_inputs(group), plot=plot, caption=caption)


# --- Chapter 5: the runs of each figure group --------------------------------------------------

CLAIMS_CH5 = "linearlens.claims.george_thesis.ch5"


def ch5_group(config: dict, group: str) -> dict | None:
    """The ``george_thesis: ch5: <group>`` config, None when the group is not configured."""
    return chapter_group(config, "ch5", group)


def toy_inputs(spec: dict) -> dict[str, list[str]]:
    return {"runs": RUN_TOY.outputs_of("run", RUN_TOY.grid(spec))}


def analytic_inputs(spec: dict) -> dict[str, list[str]]:
    return {"runs": [RUN_ANALYTIC.output("run")]}


def twolayer_runs(spec: dict) -> list[str]:
    """Fig C.9's runs, one per example, in the thesis's order."""
    return RUN_TWOLAYER.outputs_of("run", [f"twolayer/{example}" for example in ANALYTIC_EXAMPLES
                                           if example in spec["examples"]])


def twolayer_inputs(spec: dict) -> dict[str, list[str]]:
    return {"runs": twolayer_runs(spec)}


def analytic_claim_inputs(spec: dict) -> dict[str, list[str]]:
    return {"closed_forms": [RUN_ANALYTIC.output("run")], "twolayer": twolayer_runs(spec)}


def difficulty_inputs(spec: dict, runs: list[dict]) -> dict[str, list[str]]:
    """The files a figure or the claims read: each run's log and summary, the C-score deciles and the
    dataset's provenance (which names the data on the figure)."""
    run_ids = [RUN_DIFFICULTY.id_of(run) for run in runs]
    return {"runs": RUN_DIFFICULTY.outputs_of("log_points", run_ids),
            "summaries": RUN_DIFFICULTY.outputs_of("summary", run_ids),
            "cscores": [BIN_CSCORES.output("table")], "provenance": [paths.provenance(spec["dataset"])]}


def difficulty_figure_inputs(spec: dict, figure: str) -> dict[str, list[str]]:
    return difficulty_inputs(spec, difficulty_figure_runs(spec, figure))


def difficulty_claim_inputs(spec: dict) -> dict[str, list[str]]:
    return difficulty_inputs(spec, difficulty_claim_runs(spec))


def spurious_inputs(spec: dict, figure: str) -> dict[str, list[str]]:
    """A figure's (or the claims') files: every run's log and summary, and its datasets' provenance."""
    runs = spurious_runs_read(spec, figure)
    datasets = sorted({spec["families"][run["family"]]["dataset"] for run in runs})
    inputs = {"runs": [spurious_file("rows", run) for run in runs],
              "summaries": [spurious_file("summaries", run) for run in runs],
              "provenance": [paths.provenance(dataset) for dataset in datasets]}
    if figure == "claims":  # the claims count each dataset's (label, group) cells, one per provenance
        inputs["data"] = [paths.prepared(dataset) for dataset in datasets]
    return inputs


def difficulty_figure(figure_id: str, title: str, section: str, note: str = "", *, plot: str) -> Entry:
    """Figs 5.2, C.1-C.6: the runs (and C-score bins) the figure reads; the data name themselves
    through their provenance, the plots add the C-scores' source."""
    return Entry(figure_id, title, section, note=note, plot=plot_of(figure_id, plot),
                 inputs=lambda config: difficulty_figure_inputs(ch5_group(config, "difficulty"), figure_id),
                 params=lambda config: ch5_group(config, "difficulty"), configured=_configured("difficulty", "ch5"))


def spurious_figure(figure_id: str, title: str, section: str, *, plot: str) -> Entry:
    """Figs 5.3, C.7, C.8: the runs of the figure's seeds; the stand-in data name themselves through
    their datasets' provenance."""
    return Entry(figure_id, title, section, plot=plot_of(figure_id, plot),
                 inputs=lambda config: spurious_inputs(ch5_group(config, "spurious"), figure_id),
                 params=lambda config: spurious_params(ch5_group(config, "spurious"), figure_id),
                 configured=lambda config: spurious_configured(ch5_group(config, "spurious"), figure_id))


SPURIOUS_CLAIMS = ClaimSet(
    f"{CLAIMS_CH5}:spurious_claims", lambda config: spurious_inputs(ch5_group(config, "spurious"), "claims"),
    params=lambda config: {**threshold_params(config, "spurious"),
                           **spurious_params(ch5_group(config, "spurious"), "claims")},
    configured=lambda config: spurious_configured(ch5_group(config, "spurious"), "claims"))


ANALYTIC_DATA = "the analytical datasets of §5.4 (Examples 1-3, eqs 5.4.9, 5.4.10, 5.4.12), generated by the run"
TOY_DATA = "synthetic binary yin-yang (the thesis's toy task; each seed's 100 training points drawn by the run)"


# --- Chapter 6: the runs of each figure group ---------------------------------------------------

CLAIMS_CH6 = "linearlens.claims.george_thesis.ch6"


def ch6_group(config: dict, group: str) -> dict | None:
    """The ``george_thesis: ch6: <group>`` config, None when the group is not configured."""
    return chapter_group(config, "ch6", group)


def natural_order(name: str) -> tuple:
    """Names with numbers in numeric order: depth2 before depth10."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))


def kernel_run_list(group_config: dict, keep, families: list[str] | None = None) -> list[dict]:
    """The runs (family, setting, seed, label noise, lr) whose spec ``keep(family, run)`` accepts:
    what a figure or claim set reads, and how it names each file. Families in the order given
    (by name otherwise), settings in natural order, seeds ascending: never the config's key order,
    which must not count."""
    runs = kernel_runs(group_config)
    order = families if families is not None else sorted(group_config["families"])
    return [{"family": family, "setting": setting, "seed": seed, "label_noise": run.get("label_noise", 0.0),
             "lr": run["lr"]}
            for family in order
            for setting, run in sorted(((s, r) for (f, s), r in runs.items() if f == family),
                                       key=lambda item: natural_order(item[0]))
            if keep(family, run)
            for seed in sorted(family_seeds(group_config, family))]


def spectrum_runs(group_config: dict, which: str = "spectrum") -> list[dict]:
    """Figs 6.2, 6.3 (``spectrum``) or B.8 (``spectrum_appendix``): the family's runs at that
    learning rate, one per label-noise level."""
    chosen = group_config[which]
    runs = kernel_run_list(group_config, lambda family, run: run["lr"] == chosen["lr"], [chosen["family"]])
    return sorted(runs, key=lambda run: run["label_noise"])


def architecture_runs(group_config: dict) -> list[dict]:
    """Figs B.5, B.6: the runs listed as "family/setting", in the listed order."""
    runs = []
    for name in group_config["architectures"]:
        family, _, setting = name.partition("/")
        chosen = [run for run in kernel_run_list(group_config, lambda f, r: True, [family])
                  if run["setting"] == setting]
        if not chosen:
            raise ValueError(f"george_thesis.ch6.alignment.architectures: {name!r} names no configured run "
                             "(family/setting)")
        runs += chosen
    return runs


def family_names(group_config: dict) -> dict[str, dict]:
    return {family: {key: spec.get(key) for key in NAMING_KEYS} for family, spec in group_config["families"].items()}


def _kernel_inputs(group: str, runs_of, files: dict[str, str]):
    """Inputs of a figure or claim set of a kernel group: per input name, one file per run."""
    def inputs(config):
        group_config = ch6_group(config, group)
        runs = runs_of(group_config)
        datasets = sorted({group_config["families"][run["family"]]["dataset"] for run in runs})
        return {**{name: family.outputs_of(output, map(family.id_of, runs)) for name, (family, output) in files.items()},
                "provenance": [paths.provenance(dataset) for dataset in datasets]}
    return inputs


def _kernel_params(group: str, runs_of):
    return lambda config: {"runs": runs_of(ch6_group(config, group)),
                           "families": family_names(ch6_group(config, group)),
                           "models": run_models(ch6_group(config, group), runs_of),
                           "difficult": {family: spec["difficult"] for family, spec in
                                         ch6_group(config, group)["families"].items() if "difficult" in spec},
                           "centring": ch6_group(config, group)["centring"]}


def run_models(group_config: dict, runs_of) -> dict[str, dict]:
    """{"family/setting": the zoo model spec it trains}: what the figures name as the network."""
    specs = kernel_runs(group_config)
    return {f"{run['family']}/{run['setting']}": specs[run["family"], run["setting"]]["model"]
            for run in runs_of(group_config)}


# What a figure or claim set of a kernel group reads, by input name: (the family, its output).
ALIGNMENT_FILES = {"rows": (RUN_ALIGNMENT, "rows"), "layers": (RUN_ALIGNMENT, "layers"),
                   "spectra": (SUMMARISE_ALIGNMENT, "summary"), "trace_ratios": (SUMMARISE_ALIGNMENT, "trace_ratios")}
SPECTRUM_FILES = {"rows": (RUN_ALIGNMENT, "rows"), "spectra": (SUMMARISE_ALIGNMENT, "summary"),
                  "trace_ratios": (SUMMARISE_ALIGNMENT, "trace_ratios")}
EASY_DIFFICULT_FILES = {"rows": (RUN_EASY_DIFFICULT, "rows"), "layers": (RUN_EASY_DIFFICULT, "layers")}


def kernel_figure(figure_id: str, title: str, section: str, group: str, runs_of, files=None, *, plot: str,
                  caption: str = "") -> Entry:
    """A figure of a kernel group, plotted by the function ``plot`` of the chapter 6 figure module."""
    files = files or (ALIGNMENT_FILES if group == "alignment" else EASY_DIFFICULT_FILES)
    return Entry(figure_id, title, section, plot=plot_of(figure_id, plot), caption=caption,
                 inputs=_kernel_inputs(group, runs_of, files), params=_kernel_params(group, runs_of),
                 configured=_configured(group))


def hierarchy_runs(group_config: dict) -> list[dict]:
    return kernel_run_list(group_config, lambda family, run: True, group_config["hierarchy"])


def depth_runs(group_config: dict) -> list[dict]:
    return kernel_run_list(group_config, lambda family, run: True, [group_config["depths"]])


def _both_spectra(group_config: dict) -> list[dict]:
    return spectrum_runs(group_config) + spectrum_runs(group_config, "spectrum_appendix")


def family_files(family, spec: dict) -> list[str]:
    """The output of each run of a family whose runs write one file, in its grid's order."""
    (output,) = family.outputs
    return family.outputs_of(output, family.grid(spec))


def perturbation_inputs(spec: dict) -> dict[str, list[str]]:
    return {"runs": family_files(RUN_PERTURBATION, spec), "provenance": [paths.provenance(spec["dataset"])]}


def disk_inputs(spec: dict) -> dict[str, list[str]]:
    return {"runs": family_files(RUN_DISK, spec), "provenance": [paths.provenance(spec["dataset"])]}


def disk_data(spec: dict) -> dict[str, list[str]]:
    return {"data": [paths.prepared(spec["dataset"])], "provenance": [paths.provenance(spec["dataset"])]}


def single_run(family, input_name: str = "runs"):
    return lambda spec: {input_name: family_files(family, spec)}


SPECTRAL_BIAS_DATA = "50 equally spaced points of [0, 1] (the thesis's 1-D inputs; no dataset)"
SUPERNAT_DATA = "synthetic noisy linear regression (Φ = [φ, φ_noise], d = 10, σ² = 0.1, n = 50; the thesis's toy)"
RBF_DATA = "synthetic 1-D grid on [−a, a] with random RBF features (scikit-learn RBFSampler; the thesis's toy)"


def complexity_inputs(spec: dict) -> dict[str, list[str]]:
    """Fig 6.6: each panel's final measures (one file per run and seed), and the data named."""
    datasets = sorted({panel["dataset"] for panel in spec["panels"].values()})
    return {**{panel: complexity_measures(spec, panel) for panel in ordered_panels(spec)},
            "provenance": [paths.provenance(dataset) for dataset in datasets]}


def complexity_measures(spec: dict, panel: str) -> list[str]:
    """The final-measure files of one panel of Fig 6.6: one per run and seed."""
    return [RUN_COMPLEXITY.output("measures", RUN_COMPLEXITY.id_of({"run": run, "seed": seed}))
            for run in complexity_runs(spec)[panel] for seed in spec["seeds"]]


def drawing(figure_id: str, title: str, section: str, note: str, *, draw: str) -> Entry:
    """An illustrative figure drawn by the function ``draw`` of the chapter's figure module."""
    return Entry(figure_id, title, section, note=note, plot=plot_of(figure_id, draw))


ENTRIES = [
    # Chapter 2: background
    group_figure("fig_2_1", "Four normal distributions equally far apart in (μ, σ²) but not as distributions: "
                 "parameter plane, pdfs with 95% intervals", "Chapter 2", "gaussians", gaussians_inputs,
                 caption="Fig 2.1: four normal distributions f^A = f_(0,1), f^B = f_(0,2), f^C = f_(−1/2, 1−√(3/4)), "
                 "f^D = f_(1/2, 1−√(3/4)): (left) as points of the (μ, σ²) plane, (middle, right) their pdfs "
                 "with 95% central intervals.", data_source=GAUSSIANS_DATA, plot="plot_fig_2_1"),
    drawing("fig_2_2", "Tangent spaces, and different learning paths in the function manifold (a drawing)",
            "Chapter 2", "drawn from the caption and §2.4; the original's geometry is not in the text",
            draw="draw_fig_2_2"),
    # Chapter 3: NNGeometry
    drawing("fig_3_1", "One NNGeometry listing computes vᵀFv for a KFAC and a dense FIM (code listing, drawn)",
            "Chapter 3", "the listing typeset as text; kept true by a doctest running its computation with "
            "linearlens.curvature (experiments/george_thesis/ch3.py) and a test running it with NNGeometry 0.4",
            draw="draw_fig_3_1"),
    drawing("fig_3_2", "NNGeometry's main components: abstract objects, concrete representations, generators "
            "(a drawing)", "Chapter 3", "laid out from §3.3.2; the original's layout is not in the text",
            draw="draw_fig_3_2"),
    group_figure("fig_3_3", "Solve quality of diagonal, quasi-diagonal, KFAC and EKFAC FIMs against λ: residual "
                 "and cos(v, v′), ResNet50 on Tiny ImageNet over training", "Chapter 3", "showcase", showcase_quality,
                 caption="Fig 3.3:", plot="plot_fig_3_3"),
    group_figure("fig_3_4", "Fv against F_approx·v: residual and cosine per FIM approximation and checkpoint",
                 "Chapter 3", "showcase", showcase_quality, caption="Fig 3.4:", plot="plot_fig_3_4"),
    group_figure("fig_3_5", "Relative error of vᵀF_approx·v against vᵀFv per FIM approximation and checkpoint "
                 "(the caption's 'higher is better' is wrong: lower is better)", "Chapter 3", "showcase",
                 showcase_quality, caption="Fig 3.5:", plot="plot_fig_3_5"),
    group_figure("fig_3_6", "Relative error of the trace of each FIM approximation", "Chapter 3", "showcase",
                 showcase_quality, caption="Fig 3.6:", plot="plot_fig_3_6"),
    group_figure("fig_3_7", "NTK Gram of two classes and its kernel PCA over training: intra-class blocks and "
                 "separability emerge", "Chapter 3", "showcase", showcase_pairs, caption="Fig 3.7:",
                 plot="plot_fig_3_7"),
    # Chapter 4: EKFAC (appendix A below)
    drawing("fig_4_1", "Cartoon of the rescaling done by exact-FIM, diagonal, KFAC and EKFAC preconditioning "
            "(a drawing)", "Chapter 4", "drawn from the caption on a chosen 2-D covariance", draw="draw_fig_4_1"),
    group_figure("fig_4_2", "Gradient correlations in the parameter basis vs the KFE, and KFAC vs EKFAC error "
                 "against the exact Fisher over iterations (MNIST MLP)", "Chapter 4", "mlp_classifier",
                 mlp_classifier_inputs,
                 caption="Fig 4.2: (left) |correlation| of per-example loss gradients over a block of the second "
                 "layer's parameters, in the parameter basis and in the Kronecker-factored eigenbasis (KFE); "
                 "(right) relative Frobenius error of amortised KFAC and of EKFAC against the exact empirical "
                 "Fisher over training.", plot="plot_fig_4_2"),
    group_figure("fig_4_3", "MNIST deep auto-encoder: training loss per epoch and per second, validation, "
                 "sensitivity to η and ε", "Chapter 4", "autoencoder", autoencoder_inputs,
                 caption="Fig 4.3: deep auto-encoder trained by EKFAC, EKFAC-ra, KFAC (amortised), SGD + BN and Adam + "
                 "BN; (a) training loss per epoch, the per-epoch best run of each optimiser's search, and (b) per "
                 "second of training, the best run at each time (every run on its own clock); (c) validation loss of the run with the best overall validation loss; "
                 "(d) final training loss over the searched (η, ε).", plot="plot_fig_4_3"),
    group_figure("fig_4_4", "Auto-encoder: recomputation frequency of KFAC/EKFAC, and spectrum distance to the "
                 "empirical Fisher", "Chapter 4", "autoencoder", autoencoder_inputs,
                 caption="Fig 4.4: (a) training loss per epoch and (b) per second of KFAC and EKFAC recomputing their "
                 "factors or eigenbasis at several frequencies, at the hyper-parameters their search selected; (c) ℓ2 "
                 "distance between the eigenvalues of one layer's empirical Fisher and those of KFAC, EKFAC and "
                 "EKFAC-ra in a KFE computed once at the start.", plot="plot_fig_4_4"),
    cifar_figure("fig_4_5", "VGG11 on CIFAR-10: EKFAC, EKFAC-ra, KFAC, SGD; loss per epoch and per second, "
                 "validation error", "Chapter 4", "vgg",
                 "Fig 4.5: VGG11 trained by EKFAC, EKFAC-ra and KFAC without BatchNorm and by SGD with and without "
                 "it; (a) training loss per epoch, the per-epoch best run of each optimiser and batch size, and (b) "
                 "per second, the best run at each time (every run on its own clock); (c) validation error of the run with the best overall validation error.",
                 plot="plot_fig_4_5"),
    cifar_figure("fig_4_6", "ResNet34 without BatchNorm on CIFAR-10: EKFAC-ra, KFAC, SGD+BN; loss per epoch and "
                 "per second, validation error", "Chapter 4", "resnet",
                 "Fig 4.6: a residual network without BatchNorm (App. A.3's initialisation) trained by EKFAC-ra "
                 "and KFAC, and with BatchNorm by SGD, the thesis's three (the group's EKFAC runs are Figs A.3 and "
                 "A.5's); panels as Fig 4.5.", plot="plot_fig_4_6"),
    # Chapter 5: lazy vs hasty (appendix C below)
    group_figure("fig_5_1", "Yin-yang toy: training loss of non-linear and linearised runs, and Δloss maps at "
                 "three loss thresholds", "Chapter 5", "toy", toy_inputs, data_source=TOY_DATA, plot="plot_fig_5_1"),
    difficulty_figure("fig_5_2", "ResNet18 on CIFAR-10, α = 1 vs α = 100: loss per C-score group, clean vs "
                      "noisy-label loss, linearity metrics", "Chapter 5", plot="plot_fig_5_2"),
    spurious_figure("fig_5_3", "Spurious correlations on CelebA and Waterbirds: accuracy with and without the "
                    "spurious feature, α = 0.5, 1 and 100", "Chapter 5", plot="plot_fig_5_3"),
    group_figure("fig_5_4", "Quadratic model in closed form: learning order flipped, clean labels first, spurious "
                 "feature first", "Chapter 5", "analytic", analytic_inputs, data_source=ANALYTIC_DATA,
                 plot="plot_fig_5_4"),
    # Chapter 6: NTK alignment (appendix B below)
    group_figure("fig_6_1", "Eigenfunctions of the tangent kernel on the 2-D disk task over training",
                 "Chapter 6", "disk", disk_inputs, plot="plot_fig_6_1"),
    kernel_figure("fig_6_2", "VGG19 on CIFAR-10 with random labels: tangent-kernel spectrum, effective rank and "
                  "trace ratios over training", "Chapter 6", "alignment", spectrum_runs, SPECTRUM_FILES,
                  plot="plot_fig_6_2"),
    kernel_figure("fig_6_3", "Same runs: CKA of the tangent kernel with the class labels, whole kernel and per "
                  "layer", "Chapter 6", "alignment", spectrum_runs,
                  {"rows": (RUN_ALIGNMENT, "rows"), "layers": (RUN_ALIGNMENT, "layers")}, plot="plot_fig_6_3"),
    kernel_figure("fig_6_4", "Alignment on easy vs difficult examples: MNIST plus random-label MNIST or KMNIST",
                  "Chapter 6", "easy_difficult", hierarchy_runs, plot="plot_fig_6_4"),
    group_figure("fig_6_5", "SuperNat: its algorithm box, and test error of SuperNat vs gradient descent on noisy "
                 "linear regression", "Chapter 6", "supernat", single_run(RUN_SUPERNAT),
                 data_source=SUPERNAT_DATA, plot="plot_fig_6_5"),
    group_figure("fig_6_6", "Complexity measures against the generalisation gap over width, label corruption and "
                 "VGG19 channels", "Chapter 6", "complexity", complexity_inputs, plot="plot_fig_6_6"),
    # Appendix A: EKFAC supplementary
    cifar_figure("fig_A_1", "VGG11 on CIFAR-10: KFAC vs EKFAC training loss per epoch for several batch sizes",
                 "Appendix A", "vgg", "Fig A.1: KFAC and EKFAC (amortised) per epoch at each batch size, the "
                 "per-epoch best run of each.", plot="plot_fig_A_1"),
    cifar_figure("fig_A_2", "VGG11 on CIFAR-10: training loss per iteration and per second for several batch sizes",
                 "Appendix A", "vgg", "Fig A.2: KFAC and EKFAC at each batch size, (a) per iteration (the per-epoch "
                 "best run) and (b) per second (the best run at each time, every run on its own clock).",
                 plot="plot_fig_A_2"),
    cifar_figure("fig_A_3", "ResNet34 on CIFAR-10: KFAC vs EKFAC for several batch sizes", "Appendix A", "resnet",
                 "Fig A.3: as Fig A.1 for the residual network without BatchNorm.", plot="plot_fig_A_3"),
    cifar_figure("fig_A_4", "VGG11 on CIFAR-10 with a learning-rate schedule: loss per epoch and per second",
                 "Appendix A", "vgg", "Fig A.4: each optimiser at its batch size with η halved at fixed epochs; "
                 "(a) per epoch, the per-epoch best run; (b) per second, the best run at each time (every run on its "
                 "own clock).", plot="plot_fig_A_4"),
    cifar_figure("fig_A_5", "ResNet34 on CIFAR-10 with a learning-rate schedule: loss per epoch and per second",
                 "Appendix A", "resnet", "Fig A.5: as Fig A.4 for the residual network without BatchNorm.",
                 plot="plot_fig_A_5"),
    # Appendix B: NTK alignment supplementary
    group_figure("fig_B_1", "VGG11 on CIFAR-10: output change along the top-50 right singular vectors of the "
                 "Jacobian vs 50 random directions", "Appendix B", "perturbation", perturbation_inputs,
                 plot="plot_fig_B_1"),
    group_figure("fig_B_2", "Tangent kernel of a random MLP on 1-D data: Fourier content of the eigenvectors, "
                 "three eigenvectors, eigenvalue decay", "Appendix B", "spectral_bias",
                 single_run(RUN_SPECTRAL_BIAS, "run"), data_source=SPECTRAL_BIAS_DATA, plot="plot_fig_B_2"),
    group_figure("fig_B_3", "Random RBF features: spread of minimum-norm interpolators, and test loss against the "
                 "A = Id and optimised-A bounds", "Appendix B", "rbf_capacity", single_run(RUN_RBF_CAPACITY),
                 data_source=RBF_DATA, plot="plot_fig_B_3"),
    group_figure("fig_B_4", "The disk dataset: 500 training points and the 50×50 test grid", "Appendix B", "disk",
                 disk_data, plot="plot_fig_B_4"),
    kernel_figure("fig_B_5", "Centred alignment (CKA) with the labels on test data: MLP on MNIST, VGG19 and "
                  "ResNet18 on CIFAR-10", "Appendix B", "alignment", architecture_runs,
                  {"rows": (RUN_ALIGNMENT, "rows")}, plot="plot_fig_B_5"),
    kernel_figure("fig_B_6", "Uncentred alignment ⟨K, K_Y⟩ / (‖K‖ ‖K_Y‖) of the test tangent kernel with the labels, "
                  "neither centred: MLP on MNIST, VGG19 and ResNet18 on CIFAR-10", "Appendix B", "alignment",
                  architecture_runs,
                  {"spectra": (SUMMARISE_ALIGNMENT, "summary"), "grams": (RUN_ALIGNMENT, "grams")},
                  plot="plot_fig_B_6"),
    kernel_figure("fig_B_7", "Effect of depth on easy vs difficult alignment, MNIST with random-label examples, "
                  "several seeds", "Appendix B", "easy_difficult", depth_runs, plot="plot_fig_B_7"),
    kernel_figure("fig_B_8", "As Fig 6.2 with learning rate 0.003: spectrum, effective rank and trace ratios",
                  "Appendix B", "alignment", lambda group_config: spectrum_runs(group_config, "spectrum_appendix"), SPECTRUM_FILES,
                  plot="plot_fig_B_8"),
    # Appendix C: lazy vs hasty supplementary
    difficulty_figure("fig_C_1", "As Fig 5.2 (noisy labels) with α = 1 and learning rates from 0.01 to 1e-6: the "
                      "learning rate is not α", "Appendix C", plot="plot_fig_C_1"),
    difficulty_figure("fig_C_2", "As Fig 5.2 with other seeds (initialisation and batch order)", "Appendix C",
                      plot="plot_fig_C_2"),
    difficulty_figure("fig_C_3", "As Fig 5.2 with VGG11: noisy-label experiment", "Appendix C",
                      "caption identical to C.4; §C.6 says C.3 is the noisy-label one", plot="plot_fig_C_3"),
    difficulty_figure("fig_C_4", "As Fig 5.2 with VGG11: C-score experiment", "Appendix C",
                      "caption identical to C.3; §C.6 says C.4 is the C-score one", plot="plot_fig_C_4"),
    difficulty_figure("fig_C_5", "As Fig 5.2: non-linear minus linear loss per C-score group", "Appendix C",
                      plot="plot_fig_C_5"),
    difficulty_figure("fig_C_6", "Accuracy version of Fig 5.2: noisy-label memorisation and accuracy per C-score "
                      "group", "Appendix C", plot="plot_fig_C_6"),
    spurious_figure("fig_C_7", "As Fig 5.3 (spurious correlations, CelebA) with other seeds", "Appendix C",
                    plot="plot_fig_C_7"),
    spurious_figure("fig_C_8", "As Fig 5.3 (spurious correlations, Waterbirds) with other seeds", "Appendix C",
                    plot="plot_fig_C_8"),
    group_figure("fig_C_9", "Unconstrained 2-layer linear MLP on the three analytical datasets: per-group curves as "
                 "in Fig 5.4", "Appendix C", "analytic", twolayer_inputs, data_source=ANALYTIC_DATA,
                 plot="plot_fig_C_9"),
]


def _claim_params(group: str, runs_of, thresholds: str | None = None):
    kernel_params = _kernel_params(group, runs_of)
    return lambda config: {**threshold_params(config, thresholds), **kernel_params(config)}


CLAIM_SETS = [
    group_claims("gaussians_claims", "gaussians", gaussians_inputs, "ch2", "gaussian"),
    group_claims("fisher_quality_claims", "showcase", lambda spec: {"runs": showcase_files(FISHER_QUALITY, "quality", spec)}, "ch3", "fisher_quality"),
    group_claims("ntk_pair_claims", "showcase", lambda spec: {"runs": showcase_files(NTK_PAIR, "pair", spec)}, "ch3"),
    group_claims("kfe_tracking_claims", "mlp_classifier", mlp_classifier_runs, "ch4", "kfe_tracking"),
    group_claims("autoencoder_claims", "autoencoder", autoencoder_runs, "ch4", "autoencoder"),
    group_claims("vgg_claims", "vgg", cifar_runs("vgg"), "ch4", "cifar"),
    group_claims("resnet_claims", "resnet", cifar_runs("resnet"), "ch4", "cifar"),
    group_claims("toy_claims", "toy", toy_inputs, "ch5", "toy"),
    group_claims("analytic_claims", "analytic", analytic_claim_inputs, "ch5", "analytic"),
    group_claims("difficulty_claims", "difficulty", difficulty_claim_inputs, "ch5", "difficulty"),
    SPURIOUS_CLAIMS,
    ClaimSet(f"{CLAIMS_CH6}:alignment_claims", _kernel_inputs("alignment", _both_spectra, ALIGNMENT_FILES),
             params=_claim_params("alignment", _both_spectra, "alignment"), configured=_configured("alignment")),
    ClaimSet(f"{CLAIMS_CH6}:easy_difficult_claims",
             _kernel_inputs("easy_difficult", lambda g: hierarchy_runs(g) + depth_runs(g), EASY_DIFFICULT_FILES),
             params=_claim_params("easy_difficult", lambda g: hierarchy_runs(g) + depth_runs(g)),
             configured=_configured("easy_difficult")),
    group_claims("disk_claims", "disk", lambda spec: {"runs": disk_inputs(spec)["runs"]}, thresholds="disk"),
    group_claims("spectral_bias_claims", "spectral_bias", single_run(RUN_SPECTRAL_BIAS, "run"), thresholds="spectral_bias"),
    group_claims("supernat_claims", "supernat", single_run(RUN_SUPERNAT), thresholds="supernat"),
    group_claims("rbf_capacity_claims", "rbf_capacity", single_run(RUN_RBF_CAPACITY), thresholds="rbf_capacity"),
    group_claims("perturbation_claims", "perturbation", perturbation_inputs, thresholds="perturbation"),
    group_claims("complexity_claims", "complexity", complexity_inputs, thresholds="complexity"),
]
