"""Chapter 5 and Appendix C, landscape-aware growing of language models: the runs behind Figs
5.2-5.4 and Tables 5.1, 5.2, C.2 (Fig 5.1 is a drawing, in figures.karp_thesis.ch5).

A growing setting (config ``karp_thesis.ch5.growing.<name>``) pretrains an L-layer language model
(or starts from a checkpoint the config names), grows it by every operator of its space and trains
each grown model for ``train_steps`` on the same batches, recording the validation loss right after
growing, at the window's steps, at the lag steps and at the end (spec §4.2, §6.2 QS-Ch5). Stacking
(``karp_thesis.ch5.stacking``) trains one model in stages, growing it at each stage by "stack the
last block on top" or by the best of a set of operators after a short probe (LAG@k, App. C.1.3).

Steps are counted globally, as the thesis does (growing at step 500,000): the learning rate's
warm-up reads the global step, and the batch of step t after growing is the same for every operator.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np
import torch

from ...models.growth import (
    GrowthOperator,
    carry_optimiser_state,
    grow,
    operator_space,
    parameter_sources,
    stack_on_top,
)
from ...models.transformer import transformer_lm
from ...models.zoo import build_model
from ...train.batches import seeded_generator
from ...train.language_modelling import (
    VOCABULARY,
    as_tokens,
    token_loss,
    training_batch,
    validation_batches,
    validation_loss,
)
from ...train.optimisers import build_optimiser
from ...train.runtime import load_checkpoint
from ...train.schedules import Warmup, WarmupCosine
from ...train.session import run_key

log = logging.getLogger(__name__)
PRETRAIN, GROWN, STAGE = 0, 1, 2  # batch-stream phases: each draws its own batches


class Corpus:
    """A prepared text corpus's streams as token tensors and the fixed validation batches."""

    def __init__(self, arrays, setting: dict):
        self.train = as_tokens(arrays["train_tokens"])
        self.validation = validation_batches(as_tokens(arrays["validation_tokens"]), setting["objective"],
                                             setting["validation_batches"], setting["batch_size"],
                                             setting["model"]["context"])


def model_spec(setting: dict, layers: int) -> dict:
    return {"name": "transformer_lm", "vocab_size": VOCABULARY, "layers": layers,
            "causal": setting["objective"] == "causal", **setting["model"]}


def growth_operators(setting: dict) -> list[GrowthOperator]:
    return operator_space(setting["grown_layers"], setting["starts"], setting["block_sizes"], setting["inits"])


def recorded_steps(setting: dict) -> list[int]:
    """Steps after growing with a validation loss: the window (continued half a smoothing window past
    its end, so the centred smoothing is full there), the lag steps and the end."""
    late = {key: setting[key] for key in ("window_end", "lag", "lag_k") if setting[key] > setting["train_steps"]}
    if late:
        raise ValueError(f"{late} lie past the {setting['train_steps']} steps trained after growing")
    every = setting["window_every"]
    window = range(0, setting["window_end"] + (setting["smoothing"] // 2) * every + 1, every)
    return sorted({*window, setting["lag"], setting["lag_k"], setting["train_steps"]})


class Trainer:
    """One model and its AdamW, stepped on the setting's batch stream with warm-up then a constant rate."""

    def __init__(self, model: torch.nn.Module, setting: dict, step: int = 0):
        self.model, self.setting, self.step = model, setting, step
        self.optimiser = build_optimiser(setting["optimiser"], model.parameters())
        self.base_rate = self.optimiser.param_groups[0]["lr"]
        decay = setting.get("decay")
        self.rate = (WarmupCosine(setting["warmup_steps"], decay["until"], decay["final"]) if decay
                     else Warmup(setting["warmup_steps"]))

    def train(self, corpus: Corpus, steps: int, stream: tuple[int, ...], first: int = 1, on_step=None) -> None:
        """``steps`` steps, the t-th batch of ``stream`` for t from ``first``: the same stream and t
        give every model the same batch."""
        for t in range(first, first + steps):
            self.step += 1
            for group in self.optimiser.param_groups:
                group["lr"] = self.base_rate * self.rate(self.step)
            inputs, targets = training_batch(corpus.train, self.setting["objective"], self.setting["batch_size"],
                                             self.setting["model"]["context"], *stream, t)
            self.optimiser.zero_grad(set_to_none=True)
            token_loss(self.model, inputs, targets).backward()
            self.optimiser.step()
            if on_step is not None:
                on_step(t)

    def grown(self, operator: GrowthOperator, generator: torch.Generator) -> Trainer:
        """A trainer of the grown model, its optimiser state carried over (models.growth)."""
        successor = Trainer(grow(self.model, operator, generator), self.setting, self.step)
        carry_optimiser_state(self.optimiser, self.model, successor.optimiser, successor.model,
                              parameter_sources(self.model, operator))
        return successor

    def checkpoint(self, spec: dict, **metadata) -> dict:
        names = {p: name for name, p in self.model.named_parameters()}
        return {"model_spec": spec, "state_dict": self.model.state_dict(), "step": self.step,
                "optimiser_state": {names[p]: state for p, state in self.optimiser.state.items()}, **metadata}

    @classmethod
    def from_checkpoint(cls, state: dict, setting: dict) -> Trainer:
        model = build_model(state["model_spec"])
        model.load_state_dict(state["state_dict"])
        trainer = cls(model, setting, int(state["step"]))
        parameters = dict(model.named_parameters())
        for name, entry in state["optimiser_state"].items():
            trainer.optimiser.state[parameters[name]] = {key: value.clone() for key, value in entry.items()}
        return trainer


def fresh_model(setting: dict, layers: int, seed: int) -> tuple[torch.nn.Module, dict]:
    spec = model_spec(setting, layers)
    torch.manual_seed(seed)
    return transformer_lm(**{k: v for k, v in spec.items() if k != "name"}), spec


def pretrain(setting: dict, corpus: Corpus, seed: int) -> dict:
    """The L-layer model after ``pretrain_steps``, with its optimiser state and validation loss."""
    model, spec = fresh_model(setting, setting["layers"], seed)
    trainer = Trainer(model, setting)
    trainer.train(corpus, setting["pretrain_steps"], (seed, PRETRAIN))
    loss = validation_loss(trainer.model, corpus.validation)
    log.info("pretrained %d layers for %d steps: validation loss %.4f", setting["layers"], trainer.step, loss)
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


def pre_growth_loss(pretrained: dict, setting: dict, corpus: Corpus) -> float:
    """The pretrained model's validation loss, on this setting's validation set."""
    return validation_loss(Trainer.from_checkpoint(pretrained, setting).model, corpus.validation)


def grown_losses(pretrained: dict, operator: GrowthOperator, setting: dict, corpus: Corpus, seed: int) -> np.ndarray:
    """The validation loss of one grown model at the setting's recorded steps."""
    generator = seeded_generator(seed, 11, operator.start, operator.block_size)
    trainer = Trainer.from_checkpoint(pretrained, setting).grown(operator, generator)
    steps = recorded_steps(setting)
    losses = {0: validation_loss(trainer.model, corpus.validation)}

    def record(t: int) -> None:
        if t in steps:
            losses[t] = validation_loss(trainer.model, corpus.validation)

    trainer.train(corpus, setting["train_steps"], (seed, GROWN), on_step=record)
    return np.array([losses[t] for t in steps])


def growth_part(pretrained: dict, operators: list[GrowthOperator], setting: dict, corpus: Corpus, seed: int,
                state_dir: str | Path, version: str) -> np.ndarray:
    """(operators, recorded steps) losses; a finished operator's losses are kept under
    ``state_dir`` so an interrupted job does not train it again."""
    rows = []
    for operator in operators:
        saved = Path(state_dir) / f"{run_key({'setting': setting, 'operator': operator.name}, seed, version)}.npy"
        if saved.exists():
            rows.append(np.load(saved))
            log.info("%s: finished earlier (%s)", operator.name, saved)
            continue
        began = time.perf_counter()
        rows.append(grown_losses(pretrained, operator, setting, corpus, seed))
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


def stacking_run(spec: dict, corpus: Corpus, seed: int) -> dict:
    """Last and adaptive stacking from the same first stage (App. C.1.3). The probe steps of the
    chosen operator count toward its stage (trap C5-6, DEFAULT); the others' are the extra cost."""
    depths, steps = spec["stage_layers"], spec["stage_steps"]
    model, _ = fresh_model(spec, depths[0], seed)
    first = Trainer(model, spec)
    first.train(corpus, steps[0], (seed, STAGE, 0))
    record = {"chosen": [["", ""]], "stage_end_loss": [[validation_loss(model, corpus.validation)] * 2],
              "candidates": [0]}
    trainers = {"adaptive": first, "last": first}
    for stage in range(1, len(depths)):
        grown = depths[stage] - depths[stage - 1]
        generator = seeded_generator(seed, 12, stage)
        last = trainers["last"].grown(stack_on_top(depths[stage - 1], grown), generator)
        last.train(corpus, steps[stage], (seed, STAGE, stage))
        candidates = stacking_candidates(spec, depths[stage - 1], grown, stage)
        adaptive, chosen = _best_after_probe(trainers["adaptive"], candidates, spec, corpus, seed, stage)
        adaptive.train(corpus, steps[stage] - spec["probe_steps"], (seed, STAGE, stage), first=spec["probe_steps"] + 1)
        trainers = {"adaptive": adaptive, "last": last}
        record["chosen"].append([chosen.name, stack_on_top(depths[stage - 1], grown).name])
        record["stage_end_loss"].append([validation_loss(t.model, corpus.validation) for t in trainers.values()])
        record["candidates"].append(len(candidates))
        log.info("stage %d (%d layers): adaptive chose %s; losses %s", stage + 1, depths[stage], chosen.name,
                 record["stage_end_loss"][-1])
    return {"strategy": np.array(["adaptive", "last"]), "stage_layers": np.array(depths),
            "chosen": np.array(record["chosen"]).T, "candidates": np.array(record["candidates"]),
            "stage_end_loss": np.array(record["stage_end_loss"]).T}


def _best_after_probe(trainer: Trainer, candidates, spec: dict, corpus: Corpus, seed: int, stage: int):
    """The candidate with the lowest validation loss after ``probe_steps`` (LAG@probe_steps); the
    probe's batches are the stage's first ones, which the chosen model then carries on from."""
    best = None
    for operator in candidates:
        probe = trainer.grown(operator, seeded_generator(seed, 12, stage))
        probe.train(corpus, spec["probe_steps"], (seed, STAGE, stage))
        loss = validation_loss(probe.model, corpus.validation)
        if best is None or loss < best[0]:
            best = (loss, probe, operator)
    return best[1], best[2]
