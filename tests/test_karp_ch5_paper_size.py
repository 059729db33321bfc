"""Karp ch. 5 at paper size: micro-batches that step as the full batch, fused attention outside
torch.func and plain attention inside it, validation in chunks, the memory estimate of every paper
job against one 80 GB GPU, corpora kept as bytes, training resumable inside a model's steps
(pretraining, each grown model, stacking) bit for bit, and scripts that honour the device."""

import os
import re
import signal
import tracemalloc

import numpy as np
import pytest
import torch
from torch.func import functional_call, vmap

from linearlens.config import load_scale
from linearlens.data.text import split_tokens, token_dtype, token_stream
from linearlens.experiments.karp_thesis import ch5 as experiments
from linearlens.growth.operators import GrowthOperator
from linearlens.manifests import karp_thesis_runs
from linearlens.models import transformer
from linearlens.train.interruption import TrainingInterrupted
from linearlens.train.language_modelling import (
    VOCABULARY,
    accumulate_gradients,
    token_loss,
    training_batch,
    validation_batches,
    validation_loss,
)
from rule_blocks import ROOT

TINY = {"width": 16, "heads": 2, "hidden": 32, "context": 12}
SETTING = {"objective": "masked", "model": dict(TINY), "layers": 2, "grown_layers": 1, "starts": [0, 1],
           "block_sizes": [1], "inits": ["random", "duplicate"],
           "optimiser": {"name": "adamw", "lr": 1e-3, "betas": [0.9, 0.999], "weight_decay": 0.01},
           "warmup_steps": 2, "batch_size": 8, "validation_batches": 2, "pretrain_steps": 6, "train_steps": 6,
           "window_end": 3, "window_every": 1, "smoothing": 1, "lag": 2, "lag_k": 3}
GIB_OF_ONE_GPU = 80e9 / 2**30  # an 80 GB card


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def corpus():
    text = " ".join(f"stack{i % 23} grows{i % 13}." for i in range(300)).encode()
    return experiments.Corpus(split_tokens(text, 0.2), SETTING)


def tiny_model(causal: bool, seed: int = 0):
    torch.manual_seed(seed)
    return transformer.transformer_lm(vocab_size=VOCABULARY, layers=2, causal=causal, **TINY)


# --- micro-batches, attention, validation chunks ----------------------------------------------

@pytest.mark.parametrize("objective", ["masked", "causal"])
def test_micro_batches_give_the_full_batch_loss_and_gradient(corpus, objective):
    """The masked objective's micro-batches hold different numbers of targets: each part's summed
    loss over the whole batch's count adds up to the full batch's mean and its gradient."""
    inputs, targets = training_batch(corpus.train, objective, 8, TINY["context"], 0, 0, 1)
    model = tiny_model(objective == "causal")
    full = token_loss(model, inputs, targets)
    full.backward()
    expected = {name: p.grad.clone() for name, p in model.named_parameters()}
    model.zero_grad(set_to_none=True)
    loss = accumulate_gradients(model, inputs, targets, micro_batch=3)  # parts of 3, 3 and 2
    assert loss.item() == pytest.approx(full.item(), rel=1e-6)
    for name, parameter in model.named_parameters():
        torch.testing.assert_close(parameter.grad, expected[name], rtol=1e-5, atol=1e-7, msg=name)


def test_a_trainer_in_micro_batches_takes_the_full_batch_step(corpus, float64):
    # float64: AdamW divides by the root of tiny second moments, so float32's rounding of the
    # summed parts (1e-6 after three steps on some CPUs) would swamp what the test checks.
    trainers = [experiments.Trainer(tiny_model(False), {**SETTING, "micro_batch_size": micro}) for micro in (8, 2)]
    for trainer in trainers:
        experiments.train(trainer, corpus, 3, (0, experiments.PRETRAIN))
    for (name, whole), part in zip(trainers[0].model.named_parameters(), trainers[1].model.parameters()):
        torch.testing.assert_close(part, whole, rtol=1e-9, atol=1e-12, msg=name)
    with pytest.raises(ValueError, match="micro_batch_size 9 is not in 1..batch_size"):
        experiments.micro_batch_size({**SETTING, "micro_batch_size": 9})


@pytest.mark.parametrize("causal", [True, False])
def test_fused_attention_outside_torch_func_agrees_with_plain_attention_under_vmap(causal, monkeypatch):
    """The fused kernel runs on a plain call; under vmap (as an NTK extraction calls a model) the
    plain route runs, and both give the same outputs."""
    calls = []
    fused = torch.nn.functional.scaled_dot_product_attention
    monkeypatch.setattr(transformer.F, "scaled_dot_product_attention",
                        lambda *args, **kwargs: calls.append(1) or fused(*args, **kwargs))
    model = tiny_model(causal)
    tokens = torch.randint(0, 256, (3, TINY["context"]), generator=torch.Generator().manual_seed(1))
    direct = model(tokens)
    assert len(calls) == 2  # one per block
    params = {name: p.detach() for name, p in model.named_parameters()}
    batched = vmap(lambda x: functional_call(model, params, (x[None],))[0])(tokens)
    assert len(calls) == 2  # not under vmap
    torch.testing.assert_close(batched, direct, rtol=1e-5, atol=1e-5)


def test_causal_attention_sees_no_later_token():
    model = tiny_model(True).eval()
    tokens = torch.randint(0, 256, (2, TINY["context"]), generator=torch.Generator().manual_seed(2))
    changed = tokens.clone()
    changed[:, -1] = (changed[:, -1] + 1) % 256
    torch.testing.assert_close(model(tokens)[:, :-1], model(changed)[:, :-1])


def test_validation_in_chunks_gives_the_same_loss(corpus):
    stream = token_stream(split_tokens(b"chunks of the held-out stream " * 20, 0.5)["validation_tokens"], "v")
    whole = validation_batches(stream, "masked", 2, 8, TINY["context"])
    chunks = validation_batches(stream, "masked", 2, 8, TINY["context"], chunk=3)
    assert [len(x) for x, _ in whole] == [8, 8] and [len(x) for x, _ in chunks] == [3, 3, 3, 3, 3, 1]
    model = tiny_model(False)
    assert validation_loss(model, chunks) == pytest.approx(validation_loss(model, whole), rel=1e-6)
    assert [len(x) for x, _ in experiments.Corpus(split_tokens(b"x" * 800, 0.5), {**SETTING, "micro_batch_size": 4})
            .validation] == [4, 4, 4, 4]


# --- memory at paper size -------------------------------------------------------------------------

def paper_ch5() -> dict:
    return load_scale("paper")["karp_thesis"]["ch5"]


def paper_jobs() -> dict[str, tuple[dict, int]]:
    """Every paper training job's setting and its deepest model."""
    spec = paper_ch5()
    jobs = {f"{name} grown": (setting, setting["layers"] + setting["grown_layers"])
            for name, setting in spec["growing"].items()}
    return {**jobs, "stacking": (spec["stacking"], max(spec["stacking"]["stage_layers"]))}


@pytest.mark.parametrize("job", ["bert grown", "ul2 grown", "stacking"])
def test_every_paper_job_fits_one_80_gb_gpu_by_the_estimate(job):
    setting, layers = paper_jobs()[job]
    estimate = experiments.peak_memory_estimate(setting, layers)
    assert setting["batch_size"] % experiments.micro_batch_size(setting) == 0
    assert estimate["total"] < 0.9 * GIB_OF_ONE_GPU, estimate  # a tenth left for the allocator and kernels
    assert estimate["total"] == pytest.approx(sum(v for k, v in estimate.items() if k != "total"))


def test_the_estimate_counts_what_the_thesis_batch_costs():
    """BERT-BASE: 110M-parameter class, so 16 bytes a parameter is under 2 GiB; the whole batch of
    256 × 512 with the score matrices kept needs well over one GPU, as the issue measured."""
    setting, _ = paper_jobs()["bert grown"]
    estimate = experiments.peak_memory_estimate(setting, 12)
    assert 80e6 < estimate["parameters"] * 2**30 / 4 < 120e6  # 12 layers of width 768 over 257 tokens
    whole_batch = {**setting, "micro_batch_size": None}
    assert experiments.peak_memory_estimate(whole_batch, 12, fused_attention=False)["total"] > 1.5 * GIB_OF_ONE_GPU
    assert experiments.peak_memory_estimate(whole_batch, 12)["activations"] == pytest.approx(
        estimate["activations"] * setting["batch_size"] / setting["micro_batch_size"])


# --- corpora as bytes ------------------------------------------------------------------------------

def test_a_corpus_is_kept_as_bytes_and_only_a_batch_is_widened():
    """A 24 MB corpus: loading it allocates far less than the stream (no int64 copy, which would be
    eight times it), and a training batch is int64 of the batch's size."""
    size = 24 * 2**20
    arrays = split_tokens(np.random.default_rng(0).integers(0, 256, size, dtype=np.uint8).tobytes(), 0.01)
    assert arrays["train_tokens"].dtype == np.uint8 == token_dtype(256)
    setting = {**SETTING, "batch_size": 4, "validation_batches": 1}
    tracemalloc.start()
    corpus = experiments.Corpus(arrays, setting)
    inputs, targets = training_batch(corpus.train, "masked", 4, TINY["context"], 0, 0, 1)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < size / 20, f"loading allocated {peak:,} bytes"
    assert corpus.train.dtype == np.uint8 and np.shares_memory(corpus.train, arrays["train_tokens"])
    assert inputs.dtype == targets.dtype == torch.int64 and inputs.shape == (4, TINY["context"])


def test_token_types_and_a_wide_stream_refused():
    assert token_dtype(257) == np.uint16 and token_dtype(65536) == np.uint16
    with pytest.raises(ValueError, match="does not fit uint16"):
        token_dtype(65537)
    with pytest.raises(ValueError, match="train_tokens holds int64 tokens.*prepare the dataset again"):
        experiments.Corpus({"train_tokens": np.zeros(100, np.int64), "validation_tokens": np.zeros(100, np.uint8)},
                           SETTING)


# --- resumable inside a model's steps -----------------------------------------------------------

@pytest.fixture
def sigterm_at(monkeypatch):
    """SIGTERM (what SLURM sends at a time limit) once the n-th training step of the test is done."""
    def arm(n: int):
        step, taken = experiments.Trainer.step, []

        def counted(self, batch, t):
            loss = step(self, batch, t)
            taken.append(t)
            if len(taken) == n:
                os.kill(os.getpid(), signal.SIGTERM)
            return loss

        monkeypatch.setattr(experiments.Trainer, "step", counted)
        return taken
    return arm


def same_checkpoints(a: dict, b: dict) -> None:
    assert a["step"] == b["step"] and a.get("validation_loss") == b.get("validation_loss")
    for name, tensor in a["state_dict"].items():
        assert torch.equal(tensor, b["state_dict"][name]), name
    for name, state in a["optimiser_state"].items():
        assert all(torch.equal(value, b["optimiser_state"][name][key]) for key, value in state.items()), name


def test_pretraining_resumes_inside_its_steps_bit_for_bit(tmp_path, corpus, sigterm_at):
    uninterrupted = experiments.pretrain(SETTING, corpus, 0)
    taken = sigterm_at(4)
    with pytest.raises(TrainingInterrupted, match="interrupted at step 4/6"):
        experiments.pretrain(SETTING, corpus, 0, state_dir=tmp_path, version="v1")
    assert len(list(tmp_path.glob("*.pt"))) == 1
    resumed = experiments.pretrain(SETTING, corpus, 0, state_dir=tmp_path, version="v1")
    assert taken == [1, 2, 3, 4, 5, 6]  # steps 5 and 6 only, after the kill
    same_checkpoints(resumed, uninterrupted)
    assert not list(tmp_path.glob("*.pt"))  # a finished run leaves no state


def test_a_grown_model_resumes_inside_its_steps_bit_for_bit(tmp_path, corpus, sigterm_at):
    pretrained = experiments.pretrain(SETTING, corpus, 0)
    operators = [GrowthOperator(0, 1, "random", 1), GrowthOperator(1, 1, "duplicate", 1)]
    uninterrupted = experiments.growth_part(pretrained, operators, SETTING, corpus, 0, tmp_path / "a", "v1")
    taken = sigterm_at(9)  # the first operator's 6 steps, then 3 of the second's
    with pytest.raises(TrainingInterrupted, match="interrupted at step 3/6"):
        experiments.growth_part(pretrained, operators, SETTING, corpus, 0, tmp_path / "b", "v1")
    resumed = experiments.growth_part(pretrained, operators, SETTING, corpus, 0, tmp_path / "b", "v1")
    assert len(taken) == 12  # the first operator kept, the second resumed at its step 4
    assert np.array_equal(resumed, uninterrupted)


STACKING = {**SETTING, "stage_layers": [1, 2, 3], "stage_steps": [3, 4, 4], "probe_steps": 2, "block_sizes": [1],
            "start_strides": [1, 1]}


# steps 1-3: stage 1; 4-7: stage 2's last stacking, 8-9: its probe, 10-11: adaptive; 12-15: stage
# 3's last stacking, 16-19: its two probes, 20-21: adaptive
@pytest.mark.parametrize("kill_after", [5, 10, 14, 17])
def test_stacking_resumes_after_its_finished_segments_bit_for_bit(tmp_path, corpus, sigterm_at, kill_after):
    """Killed inside a stage of either strategy or inside a probe, a rerun trains only what the kill
    left unfinished (21 steps in all) and ends where an uninterrupted run ends."""
    uninterrupted = experiments.stacking_run(STACKING, corpus, 0)
    taken = sigterm_at(kill_after)
    with pytest.raises(TrainingInterrupted):
        experiments.stacking_run(STACKING, corpus, 0, state_dir=tmp_path, version="v1")
    resumed = experiments.stacking_run(STACKING, corpus, 0, state_dir=tmp_path, version="v1")
    assert len(taken) == 21
    for key, value in uninterrupted.items():
        assert np.array_equal(resumed[key], value), key
    assert not list(tmp_path.iterdir())


# --- the device ----------------------------------------------------------------------------------

CH5_TRAINING = {"karp_thesis_ch5_pretrain": "karp_thesis_ch5_pretrain.py", "karp_thesis_ch5_grow": "karp_thesis_ch5_grow.py",
                "karp_thesis_ch5_stack": "karp_thesis_ch5_stack.py"}


@pytest.mark.parametrize("rule", list(CH5_TRAINING))
def test_ch5_training_runs_on_the_configured_device(rule):
    """Each training family computes on the device (its generated rule asks for the device's
    resources and hands the configured device on) and keeps a state to resume; its script trains
    there (the model, its optimiser state and each batch)."""
    family = next(family for family in karp_thesis_runs.FAMILIES if family.rule == rule)
    assert family.device and family.resumable and family.script_file == CH5_TRAINING[rule]
    script = (ROOT / "src" / "scripts" / CH5_TRAINING[rule]).read_text()
    assert "claim_device(snakemake.params.device, snakemake.rule)" in script  # first, before any data
    assert re.search(r"inputs_version\(snakemake\.input\)", script)


def test_a_trainer_keeps_its_model_and_optimiser_state_on_its_device(corpus):
    pretrained = experiments.pretrain(SETTING, corpus, 0)
    trainer = experiments.Trainer.from_checkpoint(pretrained, SETTING, device="meta")
    assert {p.device.type for p in trainer.model.parameters()} == {"meta"}
    assert {value.device.type for state in trainer.optimiser.state.values() for value in state.values()
            if value.dim()} == {"meta"}
    grown = trainer.grown(GrowthOperator(0, 1, "random", 1), torch.Generator().manual_seed(0))
    assert grown.device == torch.device("meta") and {p.device.type for p in grown.model.parameters()} == {"meta"}
