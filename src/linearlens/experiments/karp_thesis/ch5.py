"""Chapter 5 and Appendix C, landscape-aware growing of language models: the runs behind Figs
5.2-5.4 and Tables 5.1, 5.2, C.2 (Fig 5.1 is a drawing, in figures.karp_thesis.ch5).

A growing setting (config ``karp_thesis.ch5.growing.<name>``) pretrains an L-layer language model
(or starts from a checkpoint the config names), grows it by every operator of its space and trains
each grown model for ``train_steps`` on the same batches, recording the validation loss right after
growing, at the window's steps, at the lag steps and at the end (what Sec 5.3 measures). Stacking
(``karp_thesis.ch5.stacking``) trains one model in stages, growing it at each stage by "stack the
last block on top" or by the best of a set of operators after a short probe (LAG@k, App. C.1.3).

Steps are counted globally, as the thesis does (growing at step 500,000): the learning rate's
warm-up reads the global step, and the batch of step t after growing is the same for every operator.

At paper size every model trains through ``train.session.Session`` (``Trainer`` is its learner), on
the configured device, a batch in micro-batches (``micro_batch_size``: ``peak_memory_estimate``
says what fits), so that pretraining, each grown model and each stacking segment resume inside
their steps after a kill, bit for bit.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np
import torch

from ...data.text import token_stream
from ...growth.apply import carry_optimiser_state, grow, parameter_sources
from ...growth.operators import GrowthOperator, operator_space, stack_on_top
from ...models.transformer import transformer_lm
from ...models.zoo import build_model
from ...train.batches import seeded_generator
from ...train.language_modelling import (
    VOCABULARY,
    accumulate_gradients,
    training_batch,
    validation_batches,
    validation_loss,
)
from ...train.learners import keep_initial_learning_rates, set_learning_rates
from ...train.optimisers import build_optimiser
from ...train.progress import Progress
from ...train.runtime import load_checkpoint, save_checkpoint
from ...train.schedules import AtSteps, Warmup, WarmupCosine
from ...train.session import Checkpoint, Session, run_key

log = logging.getLogger(__name__)
PRETRAIN, GROWN, STAGE = 0, 1, 2  # batch-stream phases: each draws its own batches
GIB = 2**30


def micro_batch_size(setting: dict) -> int:
    """Sequences per forward pass (``micro_batch_size``; default the whole batch): a batch is
    stepped in micro-batches and the validation set scored in chunks of this many."""
    micro = setting.get("micro_batch_size") or setting["batch_size"]
    if not 1 <= micro <= setting["batch_size"]:
        raise ValueError(f"micro_batch_size {micro} is not in 1..batch_size ({setting['batch_size']})")
    return micro


class Corpus:
    """A prepared text corpus: the training stream in its stored dtype (uint8 bytes) and the fixed
    validation set as int64 chunks."""

    def __init__(self, arrays, setting: dict):
        self.train = token_stream(arrays["train_tokens"], "train_tokens")
        self.validation = validation_batches(token_stream(arrays["validation_tokens"], "validation_tokens"),
                                             setting["objective"], setting["validation_batches"],
                                             setting["batch_size"], setting["model"]["context"],
                                             chunk=micro_batch_size(setting))


def model_spec(setting: dict, layers: int) -> dict:
    return {"name": "transformer_lm", "vocab_size": VOCABULARY, "layers": layers,
            "causal": setting["objective"] == "causal", **setting["model"]}


def growth_operators(setting: dict) -> list[GrowthOperator]:
    return operator_space(setting["grown_layers"], setting["starts"], setting["block_sizes"], setting["inits"])


def recorded_steps(setting: dict) -> list[int]:
    """Steps after growing with a validation loss: the window (continued half a smoothing window past
    its end, so the centred smoothing is full there), the lag steps and the end."""
    every = setting["window_every"]
    window_stop = setting["window_end"] + (setting["smoothing"] // 2) * every
    late = {key: setting[key] for key in ("window_end", "lag", "lag_k") if setting[key] > setting["train_steps"]}
    if window_stop > setting["train_steps"]:
        late["window_end + (smoothing // 2) * window_every"] = window_stop
    if late:
        raise ValueError(f"{late} lie past the {setting['train_steps']} steps trained after growing (train_steps)")
    window = range(0, window_stop + 1, every)
    return sorted({*window, setting["lag"], setting["lag_k"], setting["train_steps"]})


# --- memory at paper size ----------------------------------------------------------------------

def peak_memory_estimate(setting: dict, layers: int, fused_attention: bool = True) -> dict[str, float]:
    """GiB a training job of ``layers`` layers holds at its peak, by component: fp32 parameters,
    their gradients, AdamW's two moments, and the activations autograd keeps for one micro-batch.

    Per block and sequence of T tokens (width d, MLP h, H heads), the tensors saved for backward are
    the two LayerNorm inputs and outputs (4 Td), q, k, v and their contiguous copies for the kernel
    (6 Td), the attention output before and after its projection (2 Td), the MLP's hidden units
    before and after the GELU (2 Th); plain attention adds the scores and their softmax (2 H T²).
    The logits and their gradient add 2 T V per sequence."""
    model, micro = setting["model"], micro_batch_size(setting)
    d, h, heads, context = model["width"], model["hidden"], model["heads"], model["context"]
    per_block = 4 * d * d + 4 * d + 2 * d * h + h + d + 4 * d  # qkv, output, MLP, two LayerNorms
    parameters = layers * per_block + (2 * VOCABULARY + context) * d + VOCABULARY + 2 * d
    per_sequence = layers * (12 * context * d + 2 * context * h + (2 * heads * context**2 if not fused_attention else 0))
    per_sequence += 2 * context * VOCABULARY
    floats = {"parameters": parameters, "gradients": parameters, "adamw_moments": 2 * parameters,
              "activations": micro * per_sequence}
    estimate = {name: 4 * count / GIB for name, count in floats.items()}
    return {**estimate, "total": sum(estimate.values())}


# --- one model's training: a learner of the training session ------------------------------------

class Trainer:
    """One model and its AdamW, a learner of ``train.session.Session``: each step is the batch of
    the setting's stream in micro-batches, at warm-up then a constant (or cosine) rate of the
    *global* step (``global_step``: steps since the first model of the lineage, growing included).

    Not a ``SupervisedLearner``: that one steps a module on the rows of in-memory tensors, this one
    on a token stream's batch of the step, accumulated over micro-batches. Its resumable state is
    the session's; ``checkpoint`` is another thing, the pretrained model the growing jobs read (or
    one the config names), with the optimiser's moments by parameter name so that growing can
    carry them to the grown model's parameters."""

    def __init__(self, model: torch.nn.Module, setting: dict, global_step: int = 0, device="cpu"):
        self.device = torch.device(device)
        self.model, self.setting, self.global_step = model.to(self.device), setting, global_step
        self.optimiser = build_optimiser(setting["optimiser"], self.model.parameters())
        keep_initial_learning_rates(self.optimiser)
        self.micro_batch = micro_batch_size(setting)
        decay = setting.get("decay")
        self.rate = (WarmupCosine(setting["warmup_steps"], decay["until"], decay["final"]) if decay
                     else Warmup(setting["warmup_steps"]))

    def step(self, batch: tuple[torch.Tensor, torch.Tensor], step: int) -> torch.Tensor:
        self.global_step += 1
        set_learning_rates(self.optimiser, self.rate(self.global_step))
        inputs, targets = (part.to(self.device) for part in batch)
        self.optimiser.zero_grad(set_to_none=True)
        loss = accumulate_gradients(self.model, inputs, targets, self.micro_batch)
        self.optimiser.step()
        return loss

    def state_dict(self) -> dict:
        return {"model": self.model.state_dict(), "optimiser": self.optimiser.state_dict(),
                "global_step": self.global_step}

    def load_state_dict(self, state: dict) -> None:
        self.model.load_state_dict(state["model"])
        self.optimiser.load_state_dict(state["optimiser"])
        self.global_step = state["global_step"]

    def grown(self, operator: GrowthOperator, generator: torch.Generator) -> Trainer:
        """A trainer of the grown model, its optimiser state carried over (growth.apply)."""
        successor = Trainer(grow(self.model, operator, generator), self.setting, self.global_step, self.device)
        carry_optimiser_state(self.optimiser, self.model, successor.optimiser, successor.model,
                              parameter_sources(self.model, operator))
        return successor

    def checkpoint(self, spec: dict, **metadata) -> dict:
        """The model with its optimiser state by parameter name and its global step (what a growing
        setting's ``checkpoint`` holds)."""
        names = {p: name for name, p in self.model.named_parameters()}
        return {"model_spec": spec, "state_dict": self.model.state_dict(), "step": self.global_step,
                "optimiser_state": {names[p]: state for p, state in self.optimiser.state.items()}, **metadata}

    @classmethod
    def from_checkpoint(cls, state: dict, setting: dict, device="cpu") -> Trainer:
        model = build_model(state["model_spec"])
        model.load_state_dict(state["state_dict"])
        trainer = cls(model, setting, int(state["step"]), device)
        index = {name: i for i, (name, _) in enumerate(trainer.model.named_parameters())}
        # through the optimiser's own loading, which puts the moments on the parameters' device
        trainer.optimiser.load_state_dict({
            "state": {index[name]: entry for name, entry in state["optimiser_state"].items()},
            "param_groups": trainer.optimiser.state_dict()["param_groups"]})
        return trainer


class StreamBatches:
    """The batch of step t of a stream (``key``: seed, phase, …): every model given the same key
    sees the same batches."""

    def __init__(self, corpus: Corpus, setting: dict, *key: int):
        self.corpus, self.setting, self.key = corpus, setting, key

    def __call__(self, step: int):
        return training_batch(self.corpus.train, self.setting["objective"], self.setting["batch_size"],
                              self.setting["model"]["context"], *self.key, step)


class ValidationLoss:
    """The probe: the learner's model's loss on the fixed validation set."""

    def __init__(self, corpus: Corpus):
        self.corpus = corpus

    def __call__(self, session: Session) -> dict:
        return {"validation_loss": validation_loss(session.learner.model, self.corpus.validation)}


def train(trainer: Trainer, corpus: Corpus, steps: int, key: tuple[int, ...], *, first: int = 1,
          recorded=(), checkpoint: Checkpoint | None = None, name: str = "") -> dict[int, float]:
    """Train on batches ``first``..``steps`` of stream ``key`` through a session (resumable from
    ``checkpoint``); the validation losses at the ``recorded`` steps and at the last one."""
    session = Session(trainer, StreamBatches(corpus, trainer.setting, *key), steps, probes=[ValidationLoss(corpus)],
                      evaluate_at=AtSteps(recorded), checkpoint=checkpoint, first_step=first - 1,
                      progress=Progress(steps, name=name))
    losses = {row["step"]: row["validation_loss"] for row in session.run().rows}
    if steps not in losses:  # nothing left to train: the session evaluated nothing
        losses[steps] = validation_loss(trainer.model, corpus.validation)
    return losses


def state_checkpoint(state_dir, run: dict, seed: int, version: str, every_s: float) -> Checkpoint | None:
    """Where a model's session saves its state inside ``state_dir`` (None: not resumable)."""
    if state_dir is None:
        return None
    key = run_key(run, seed, version)
    return Checkpoint(Path(state_dir) / f"{key}.pt", key, every_s)


def fresh_model(setting: dict, layers: int, seed: int) -> tuple[torch.nn.Module, dict]:
    spec = model_spec(setting, layers)
    torch.manual_seed(seed)
    return transformer_lm(**{k: v for k, v in spec.items() if k != "name"}), spec


def pretrain(setting: dict, corpus: Corpus, seed: int, device="cpu", state_dir=None, version: str = "",
             every_s: float = 1800.0) -> dict:
    """The L-layer model after ``pretrain_steps``, with its optimiser state and validation loss;
    resumable inside its steps from ``state_dir``."""
    model, spec = fresh_model(setting, setting["layers"], seed)
    trainer = Trainer(model, setting, device=device)
    checkpoint = state_checkpoint(state_dir, {"pretrain": setting}, seed, version, every_s)
    loss = train(trainer, corpus, setting["pretrain_steps"], (seed, PRETRAIN), checkpoint=checkpoint,
                 name="pretraining")[setting["pretrain_steps"]]
    log.info("pretrained %d layers for %d steps: validation loss %.4f", setting["layers"], trainer.global_step, loss)
    return trainer.checkpoint(spec, validation_loss=loss)


def read_pretrained(path: str | Path, setting: dict) -> dict:
    """A pretrained checkpoint, checked against the setting it is to be grown in."""
    state = load_checkpoint(path)
    missing = {"model_spec", "state_dict", "optimiser_state", "step"} - set(state)
    if missing:
        raise ValueError(f"{path} is no growing checkpoint: it lacks {sorted(missing)} (write one with "
                         "experiments.karp_thesis.ch5.Trainer.checkpoint, as rule karp_thesis_ch5_pretrain does)")
    layers = state["model_spec"]["layers"]
    if layers != setting["layers"]:
        raise ValueError(f"{path} holds a {layers}-layer model; the setting grows {setting['layers']} layers")
    return state


def pre_growth_loss(pretrained: dict, setting: dict, corpus: Corpus, device="cpu") -> float:
    """The pretrained model's validation loss, on this setting's validation set."""
    return validation_loss(Trainer.from_checkpoint(pretrained, setting, device).model, corpus.validation)


def grown_losses(pretrained: dict, operator: GrowthOperator, setting: dict, corpus: Corpus, seed: int,
                 device="cpu", checkpoint: Checkpoint | None = None) -> np.ndarray:
    """The validation loss of one grown model at the setting's recorded steps; resumable inside
    its steps from ``checkpoint``."""
    generator = seeded_generator(seed, 11, operator.start, operator.block_size)
    trainer = Trainer.from_checkpoint(pretrained, setting, device).grown(operator, generator)
    steps = recorded_steps(setting)
    losses = train(trainer, corpus, setting["train_steps"], (seed, GROWN), recorded=steps, checkpoint=checkpoint,
                   name=operator.name)
    return np.array([losses[t] for t in steps])


def growth_part(pretrained: dict, operators: list[GrowthOperator], setting: dict, corpus: Corpus, seed: int,
                state_dir: str | Path, version: str, device="cpu", every_s: float = 1800.0) -> np.ndarray:
    """(operators, recorded steps) losses. Under ``state_dir`` a finished operator's losses are
    kept, and an unfinished one's training state, so a killed job trains neither again."""
    rows = []
    for operator in operators:
        run = {"setting": setting, "operator": operator.name}
        saved = Path(state_dir) / f"{run_key(run, seed, version)}.npy"
        if saved.exists():
            rows.append(np.load(saved))
            log.info("%s: finished earlier (%s)", operator.name, saved)
            continue
        began = time.perf_counter()
        checkpoint = state_checkpoint(state_dir, {**run, "state": "training"}, seed, version, every_s)
        rows.append(grown_losses(pretrained, operator, setting, corpus, seed, device, checkpoint))
        saved.parent.mkdir(parents=True, exist_ok=True)
        np.save(saved, rows[-1])
        log.info("%s: loss %.4f at growth, %.4f at the end (%.1f s)", operator.name, rows[-1][0], rows[-1][-1],
                 time.perf_counter() - began)
    return np.stack(rows)


def growth_arrays(operators: list[GrowthOperator], losses: np.ndarray, setting: dict, pre_growth_loss: float) -> dict:
    """A growth run's arrays (layout: analysis.karp_thesis.ch5)."""
    return {"operator": np.array([op.name for op in operators]), "start": np.array([op.start for op in operators]),
            "block_size": np.array([op.block_size for op in operators]),
            "init": np.array([op.init for op in operators]), "steps": np.array(recorded_steps(setting)),
            "loss": losses, "pre_growth_loss": np.array(pre_growth_loss)}


# --- stacking (Table C.2) ----------------------------------------------------------------------

def stacking_candidates(spec: dict, layers: int, grown: int, stage: int) -> list[GrowthOperator]:
    """Adaptive stacking's operators at a stage: duplication, every ``start_strides[stage]``-th start."""
    stride = spec["start_strides"][stage - 1]
    return operator_space(grown, range(0, layers - grown + 1, stride), [b for b in spec["block_sizes"] if grown % b == 0],
                          ("duplicate",))


class StackingState:
    """What a stacking job has finished, saved after every segment (a stage of one strategy, or one
    probe) so that a killed job resumes after its last finished segment, and inside the unfinished
    one through that segment's session checkpoint: the losses of finished segments and the
    trainers they left ("adaptive", "last", and the best probe of the current stage)."""

    def __init__(self, spec: dict, corpus: Corpus, seed: int, device, state_dir, version: str, every_s: float):
        self.spec, self.corpus, self.seed, self.device = spec, corpus, seed, device
        self.state_dir, self.every_s = state_dir, every_s
        self.run = {"stacking": spec}
        self.key = run_key(self.run, seed, version)
        self.version = version
        self.losses: dict[str, float] = {}
        self.trainers: dict[str, Trainer] = {}
        self.specs: dict[str, dict] = {}
        self._resume()

    @property
    def path(self) -> Path | None:
        return Path(self.state_dir) / f"{self.key}-stages.pt" if self.state_dir is not None else None

    def train(self, segment: str, trainer: Trainer, steps: int, key: tuple[int, ...], first: int = 1) -> float:
        """Train ``trainer`` as the segment ``segment`` and return its final validation loss."""
        checkpoint = state_checkpoint(self.state_dir, {**self.run, "segment": segment}, self.seed, self.version,
                                      self.every_s)
        return train(trainer, self.corpus, steps, key, first=first, checkpoint=checkpoint, name=segment)[steps]

    def finish(self, segment: str, loss: float, **trainers: Trainer) -> None:
        self.losses[segment] = loss
        self.trainers.update(trainers)
        if self.path is not None:
            models = {name: trainer.checkpoint(model_spec(self.spec, len(trainer.model.blocks)))
                      for name, trainer in self.trainers.items()}
            save_checkpoint(self.path, key=self.key, losses=self.losses, trainers=models)

    def _resume(self) -> None:
        if self.path is None or not self.path.exists():
            return
        saved = load_checkpoint(self.path)
        if saved.get("key") != self.key:
            return
        self.losses = saved["losses"]
        self.trainers = {name: Trainer.from_checkpoint(state, self.spec, self.device)
                         for name, state in saved["trainers"].items()}
        log.info("stacking: resumed after %d finished segments (%s)", len(self.losses), self.path)

    def done(self) -> None:
        if self.path is not None:
            self.path.unlink(missing_ok=True)


def stacking_run(spec: dict, corpus: Corpus, seed: int, device="cpu", state_dir=None, version: str = "",
                 every_s: float = 1800.0) -> dict:
    """Last and adaptive stacking from the same first stage (App. C.1.3). The probe steps of the
    chosen operator count toward its stage; the others' are the extra cost.
    Resumable from ``state_dir`` (``StackingState``)."""
    depths, steps = spec["stage_layers"], spec["stage_steps"]
    state = StackingState(spec, corpus, seed, device, state_dir, version, every_s)
    if "stage1" not in state.losses:
        first = Trainer(fresh_model(spec, depths[0], seed)[0], spec, device=device)
        state.finish("stage1", state.train("stage1", first, steps[0], (seed, STAGE, 0)), adaptive=first, last=first)
    record = {"chosen": [["", ""]], "stage_end_loss": [[state.losses["stage1"]] * 2], "candidates": [0]}
    for stage in range(1, len(depths)):
        grown, name = depths[stage] - depths[stage - 1], f"stage{stage + 1}"
        stream = (seed, STAGE, stage)
        on_top = stack_on_top(depths[stage - 1], grown)
        if f"{name}-last" not in state.losses:
            last = state.trainers["last"].grown(on_top, seeded_generator(seed, 12, stage))
            state.finish(f"{name}-last", state.train(f"{name}-last", last, steps[stage], stream), last=last)
        candidates = stacking_candidates(spec, depths[stage - 1], grown, stage)
        chosen = _best_after_probe(state, candidates, name, stream, stage)
        if f"{name}-adaptive" not in state.losses:
            adaptive = state.trainers.pop("probe")
            loss = state.train(f"{name}-adaptive", adaptive, steps[stage], stream, first=spec["probe_steps"] + 1)
            state.finish(f"{name}-adaptive", loss, adaptive=adaptive)
        record["chosen"].append([chosen.name, on_top.name])
        record["stage_end_loss"].append([state.losses[f"{name}-adaptive"], state.losses[f"{name}-last"]])
        record["candidates"].append(len(candidates))
        log.info("stage %d (%d layers): adaptive chose %s; losses %s", stage + 1, depths[stage], chosen.name,
                 record["stage_end_loss"][-1])
    state.done()
    return {"strategy": np.array(["adaptive", "last"]), "stage_layers": np.array(depths),
            "chosen": np.array(record["chosen"]).T, "candidates": np.array(record["candidates"]),
            "stage_end_loss": np.array(record["stage_end_loss"]).T}


def _best_after_probe(state: StackingState, candidates, name: str, stream: tuple[int, ...], stage: int):
    """The candidate with the lowest validation loss after ``probe_steps`` (LAG@probe_steps; the
    first on ties); the probe's batches are the stage's first ones, which the chosen model then
    carries on from (it is kept as the state's "probe" trainer)."""
    for operator in candidates:
        segment = f"{name}-probe-{operator.name}"
        if segment in state.losses:
            continue
        probe = state.trainers["adaptive"].grown(operator, seeded_generator(state.seed, 12, stage))
        loss = state.train(segment, probe, state.spec["probe_steps"], stream)
        earlier = [state.losses[s] for s in (f"{name}-probe-{c.name}" for c in candidates) if s in state.losses]
        state.finish(segment, loss, **({"probe": probe} if not earlier or loss < min(earlier) else {}))
    losses = [state.losses[f"{name}-probe-{operator.name}"] for operator in candidates]
    return candidates[int(np.argmin(losses))]
