"""Karp thesis chapter 5: the growth operators of Sec 5.2.1, growing a transformer language model
and carrying its AdamW state, the byte-token corpora, the language-modelling batches and losses,
and the growing experiments (pretrain, grow, resume, stacking) at a tiny scale.

Where possible a check takes another route than the code it checks: the thesis's examples written
out literally, a forward pass through the original blocks in the expected order, AdamW's update
written out by hand, checksums from hashlib, files found through their modules' ``__file__``."""

import colorsys
import hashlib
import keyword
import math
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from linearlens.data.text import corpus_provenance, python_stdlib_sources, split_tokens, text_file_tokens
from linearlens.experiments.karp_thesis import ch5 as experiments
from linearlens.growth.apply import carry_optimiser_state, grow, parameter_sources
from linearlens.growth.operators import GrowthOperator, operator_space, parse_operator, stack_on_top
from linearlens.models.transformer import INIT_STD, transformer_lm
from linearlens.train.language_modelling import (
    IGNORED,
    MASK_RATE,
    MASK_TOKEN,
    VOCABULARY,
    causal_example,
    masked_example,
    training_batch,
    validation_batches,
    validation_loss,
)
from linearlens.train.runtime import load_checkpoint, save_checkpoint

TINY = {"width": 8, "heads": 2, "hidden": 16, "context": 8}
OUTPUT_PROJECTIONS = ("attention_out.weight", "attention_out.bias", "mlp_out.weight", "mlp_out.bias")


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def tiny_model(layers: int, seed: int = 0, perturb: float = 0.0, causal: bool = True):
    """A tiny language model; ``perturb`` adds noise to every parameter, so that no two layers,
    and no layer and a fresh one, share any parameter (LayerNorms and biases start equal)."""
    torch.manual_seed(seed)
    model = transformer_lm(vocab_size=VOCABULARY, layers=layers, causal=causal, **TINY)
    if perturb:
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.add_(perturb * torch.randn_like(parameter))
    return model


def random_tokens(count: int, seed: int = 0) -> torch.Tensor:
    return torch.randint(0, 256, (count,), generator=torch.Generator().manual_seed(seed))


def block_parameters(block) -> dict[str, torch.Tensor]:
    return dict(block.named_parameters())


# --- (a) Sec 5.2.1's four examples --------------------------------------------------------------

# L = 6, k = 3, i = 2 (1-indexed), as the thesis prints them: new layers in bold (**·**).
THESIS_EXAMPLES = {
    (1, "duplicate"): "1 2 **2** 3 **3** 4 **4** 5 6",
    (3, "duplicate"): "1 2 3 4 **2** **3** **4** 5 6",
    (1, "random"): "1 2 **random** 3 **random** 4 **random** 5 6",
    (3, "random"): "1 2 3 4 **random** **random** **random** 5 6",
}


def as_printed(order, init: str) -> str:
    """A 0-indexed layer order written as the thesis prints its examples."""
    words = []
    for source, is_new in order:
        word = "random" if is_new and init == "random" else str(source + 1)
        words.append(f"**{word}**" if is_new else word)
    return " ".join(words)


@pytest.mark.parametrize(("block_size", "init"), list(THESIS_EXAMPLES))
def test_the_four_examples_of_section_5_2_1(block_size, init):
    operator = GrowthOperator(start=2 - 1, block_size=block_size, init=init, grown=3)  # i = 2 is start 1
    order = operator.layer_order(6)
    assert as_printed(order, init) == THESIS_EXAMPLES[block_size, init]
    # a random layer stands where the duplicate would: both inits put new layers in the same places
    assert order == GrowthOperator(1, block_size, "duplicate", 3).layer_order(6)


def test_the_feasible_set_of_section_5_2_1():
    """L = 6, k = 3: starts i in {1, 2, 3, 4} (0-indexed 0..3), block sizes {1, 3}."""
    for start in range(4):
        for block_size in (1, 3):
            assert len(GrowthOperator(start, block_size, "duplicate", 3).layer_order(6)) == 9
    with pytest.raises(ValueError):
        GrowthOperator(4, 1, "duplicate", 3).layer_order(6)
    with pytest.raises(ValueError):
        GrowthOperator(0, 2, "duplicate", 3)


# --- (b), (c) the 12 -> 16 search space and stacking ---------------------------------------------

def test_the_thirty_operators_of_growing_12_to_16_layers():
    operators = operator_space(4, [0, 2, 4, 6, 8], [1, 2, 4], ["random", "duplicate"])
    assert len(operators) == 30
    assert len({operator.name for operator in operators}) == 30
    assert {(op.start, op.block_size, op.init) for op in operators} == {
        (s, b, i) for s in (0, 2, 4, 6, 8) for b in (1, 2, 4) for i in ("random", "duplicate")}
    for operator in operators:
        order = operator.layer_order(12)
        assert len(order) == 16
        assert sum(is_new for _, is_new in order) == 4
        # the original layers keep their order; the new ones copy the four grown layers once each
        assert [source for source, is_new in order if not is_new] == list(range(12))
        grown = range(operator.start, operator.start + 4)
        assert sorted(source for source, is_new in order if is_new) == list(grown)
        # each new layer sits in its block, after the block's own layers
        for position, (source, is_new) in enumerate(order):
            if is_new:
                block_start = operator.start + (source - operator.start) // operator.block_size * operator.block_size
                kept_at = order.index((source, False))
                assert kept_at < position
                assert order[kept_at - (source - block_start)] == (block_start, False)


def test_stacking_the_last_block_on_top_of_12_layers():
    operator = stack_on_top(12, 4)
    assert operator == GrowthOperator(8, 4, "duplicate", 4)  # Sec 5.2.2: start L - b + 1 = 9, 1-indexed
    assert operator.layer_order(12) == [(layer, False) for layer in range(12)] + [(8, True), (9, True),
                                                                                 (10, True), (11, True)]
    assert stack_on_top(12, 4, "random").init == "random"


# --- (d), (f) growing a transformer -------------------------------------------------------------

# 4 layers grown by 2 from layer 1 (0-indexed): the grown network's (source, is new), written out.
EXPECTED_ORDERS = {1: [(0, False), (1, False), (1, True), (2, False), (2, True), (3, False)],
                   2: [(0, False), (1, False), (2, False), (1, True), (2, True), (3, False)]}


@pytest.mark.parametrize("init", ["duplicate", "random"])
@pytest.mark.parametrize("block_size", [1, 2])
def test_growing_copies_kept_and_duplicated_layers_and_initialises_random_ones(block_size, init):
    model = tiny_model(4, perturb=0.1)
    before = {name: value.clone() for name, value in model.state_dict().items()}
    operator = GrowthOperator(1, block_size, init, 2)
    grown = grow(model, operator, torch.Generator().manual_seed(5))
    assert operator.layer_order(4) == EXPECTED_ORDERS[block_size]

    assert len(grown.blocks) == 6
    for name, parameter in grown.named_parameters():  # embeddings, final norm, output: kept
        if not name.startswith("blocks."):
            assert torch.equal(parameter, before[name]), name
    new_weights = []
    for position, (source, is_new) in enumerate(EXPECTED_ORDERS[block_size]):
        layer = block_parameters(grown.blocks[position])
        if not is_new or init == "duplicate":
            for name, parameter in layer.items():
                assert torch.equal(parameter, before[f"blocks.{source}.{name}"]), (position, name)
            continue
        for name, parameter in layer.items():  # a random layer: none of its parameters is an original's
            assert not any(torch.equal(parameter, before[f"blocks.{original}.{name}"]) for original in range(4))
            if name.endswith("norm.weight"):
                assert torch.equal(parameter, torch.ones_like(parameter)), name
            elif name.endswith("bias"):
                assert torch.equal(parameter, torch.zeros_like(parameter)), name
            else:
                new_weights.append(parameter.detach().flatten())
    if init == "random":
        pooled = torch.cat(new_weights)
        assert abs(pooled.mean().item()) < 0.1 * INIT_STD
        assert pooled.std().item() == pytest.approx(INIT_STD, rel=0.1)

    # the original is left as it was, and shares no storage with the grown model
    assert len(model.blocks) == 4
    with torch.no_grad():
        for parameter in grown.parameters():
            parameter.add_(1.0)
    for name, value in model.state_dict().items():
        assert torch.equal(value, before[name]), name

    fresh = transformer_lm(vocab_size=VOCABULARY, layers=6, causal=True, **TINY)
    assert [(n, p.shape) for n, p in grown.named_parameters()] == [(n, p.shape) for n, p in fresh.named_parameters()]
    assert sum(p.numel() for p in grown.parameters()) == sum(p.numel() for p in fresh.parameters())


@pytest.mark.parametrize("init", ["duplicate", "random"])
def test_parameter_sources_name_each_grown_parameter_s_origin(init):
    model = tiny_model(4, perturb=0.1)
    operator = GrowthOperator(1, 1, init, 2)
    sources = parameter_sources(model, operator)
    grown = grow(model, operator)
    original = dict(model.named_parameters())
    assert sorted(sources) == sorted(name for name, _ in grown.named_parameters())
    for name, parameter in grown.named_parameters():
        position = int(name.split(".")[1]) if name.startswith("blocks.") else None
        fresh = position is not None and EXPECTED_ORDERS[1][position][1] and init == "random"
        assert (sources[name] is None) == fresh, name
        if not fresh:
            assert torch.equal(parameter, original[sources[name]]), name


def test_growing_with_the_same_generator_gives_the_same_random_layers():
    model = tiny_model(3)
    operator = GrowthOperator(0, 1, "random", 2)
    first, second = (grow(model, operator, torch.Generator().manual_seed(3)) for _ in range(2))
    other = grow(model, operator, torch.Generator().manual_seed(4))
    assert all(torch.equal(a, b) for a, b in zip(first.parameters(), second.parameters()))
    assert not torch.equal(first.blocks[1].qkv.weight, other.blocks[1].qkv.weight)


def forward_through(model, layers, tokens):
    """The model's logits with its blocks taken in the order ``layers`` (an independent forward)."""
    x = model.token_embedding(tokens) + model.position_embedding.weight[: tokens.shape[1]]
    for layer in layers:
        x = model.blocks[layer](x)
    return model.output(model.final_norm(x))


@pytest.mark.parametrize("init", ["duplicate", "random"])
@pytest.mark.parametrize("block_size", [1, 2])
@pytest.mark.parametrize("causal", [True, False])
def test_new_layers_with_zero_output_projections_preserve_the_function(block_size, init, causal):
    """Pre-LN residual blocks whose attention and MLP outputs are zero are the identity, so the grown
    model with its new layers silenced is the original, exactly: the kept layers are in order."""
    model = tiny_model(4, perturb=0.1, causal=causal)
    tokens = torch.randint(0, VOCABULARY, (3, TINY["context"]), generator=torch.Generator().manual_seed(1))
    operator = GrowthOperator(1, block_size, init, 2)
    grown = grow(model, operator, torch.Generator().manual_seed(2))
    with torch.no_grad():
        original = model(tokens)
        assert not torch.equal(grown(tokens), original)  # the new layers do change the function
        # the duplicated network is the original blocks run in the expected order
        if init == "duplicate":
            layers = [source for source, _ in EXPECTED_ORDERS[block_size]]
            assert torch.equal(grown(tokens), forward_through(model, layers, tokens))
        for position, (_, is_new) in enumerate(operator.layer_order(4)):
            if is_new:
                for name, parameter in grown.blocks[position].named_parameters():
                    if name in OUTPUT_PROJECTIONS:
                        parameter.zero_()
        assert torch.equal(grown(tokens), original)


# --- (e) carrying AdamW's state -----------------------------------------------------------------

def adamw_update(parameter, gradient, state, group):
    """AdamW's step written out (decoupled weight decay, bias-corrected moments), in float64."""
    beta1, beta2 = group["betas"]
    step = float(state["step"]) + 1
    m = beta1 * state["exp_avg"].double() + (1 - beta1) * gradient.double()
    v = beta2 * state["exp_avg_sq"].double() + (1 - beta2) * gradient.double() ** 2
    decayed = parameter.double() * (1 - group["lr"] * group["weight_decay"])
    denominator = (v / (1 - beta2 ** step)).sqrt() + group["eps"]
    return decayed - group["lr"] * m / (1 - beta1 ** step) / denominator


@pytest.mark.parametrize("init", ["duplicate", "random"])
def test_growing_carries_the_adamw_state(init):
    steps, batch = 3, (4, TINY["context"])
    model = tiny_model(3)
    tokens = random_tokens(2000)
    optimiser = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)

    def step(net, opt, t):
        inputs, targets = training_batch(tokens, "causal", batch[0], batch[1], 0, t)
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(net(inputs).flatten(0, 1), targets.flatten()).backward()
        opt.step()

    for t in range(steps):
        step(model, optimiser, t)
    operator = GrowthOperator(1, 1, init, 2)
    grown = grow(model, operator, torch.Generator().manual_seed(0))
    grown_optimiser = torch.optim.AdamW(grown.parameters(), lr=1e-2, weight_decay=0.1)
    carry_optimiser_state(optimiser, model, grown_optimiser, grown, parameter_sources(model, operator))

    original = dict(model.named_parameters())
    expected_sources = [0, 1, 1, 2, 2]  # 3 layers, start 1, k = 2, b = 1
    for name, parameter in grown.named_parameters():
        state = grown_optimiser.state[parameter]
        assert set(state) == {"step", "exp_avg", "exp_avg_sq"}
        assert float(state["step"]) == steps
        position = int(name.split(".")[1]) if name.startswith("blocks.") else None
        is_new = position in (2, 4)
        if is_new and init == "random":
            assert torch.equal(state["exp_avg"], torch.zeros_like(parameter)), name
            assert torch.equal(state["exp_avg_sq"], torch.zeros_like(parameter)), name
            continue
        source_name = name if position is None else f"blocks.{expected_sources[position]}.{name.split('.', 2)[2]}"
        source_state = optimiser.state[original[source_name]]
        for key in ("exp_avg", "exp_avg_sq", "step"):
            assert torch.equal(state[key], source_state[key]), (name, key)
            assert state[key] is not source_state[key]  # copies, not the same tensors
        assert state["exp_avg"].abs().sum() > 0

    # one more step on the grown model uses the carried moments and step count
    before = {name: (p.detach().clone(), {k: v.clone() for k, v in grown_optimiser.state[p].items()})
              for name, p in grown.named_parameters()}
    original_state = {name: optimiser.state[p]["exp_avg"].clone() for name, p in model.named_parameters()}
    step(grown, grown_optimiser, steps)
    group = grown_optimiser.param_groups[0]
    for name, parameter in grown.named_parameters():
        assert float(grown_optimiser.state[parameter]["step"]) == steps + 1
        value, state = before[name]
        expected = adamw_update(value, parameter.grad, state, group)
        torch.testing.assert_close(parameter.detach().double(), expected, rtol=1e-5, atol=1e-7)
    for name, p in model.named_parameters():  # the original optimiser is untouched
        assert torch.equal(optimiser.state[p]["exp_avg"], original_state[name])


# --- (g) invalid operators and names ------------------------------------------------------------

def test_invalid_operators_are_refused():
    with pytest.raises(ValueError, match="block size"):
        GrowthOperator(0, 2, "duplicate", 3)
    with pytest.raises(ValueError, match="block size"):
        GrowthOperator(0, 0, "duplicate", 3)
    with pytest.raises(ValueError, match="init"):
        GrowthOperator(0, 1, "zeros", 1)
    with pytest.raises(ValueError, match="negative"):
        GrowthOperator(-1, 1, "random", 1)
    with pytest.raises(ValueError, match="6-layer"):
        GrowthOperator(4, 1, "duplicate", 3).layer_order(6)  # start + k > L
    with pytest.raises(ValueError):
        grow(tiny_model(2), GrowthOperator(1, 1, "duplicate", 2))


def test_operator_names_round_trip():
    for operator in operator_space(4, [0, 2, 4, 6, 8], [1, 2, 4]):
        assert parse_operator(operator.name, 4) == operator
    assert GrowthOperator(8, 4, "duplicate", 4).name == "start8-b4-duplicate"
    for name in ("start1-b2", "start1-b3-duplicate", "begin1-b1-random", "start1-b1-copy", "nonsense"):
        with pytest.raises(ValueError):
            parse_operator(name, 4)


def test_the_operators_import_no_torch():
    """The Fig 5.1 drawing reads the operators in the report environment, which has no torch."""
    script = ("import sys\n"
              "class Absent:\n"
              "    def find_spec(self, name, path, target=None):\n"
              "        if name.split('.')[0] == 'torch':\n"
              "            raise ImportError(name)\n"
              "sys.meta_path.insert(0, Absent())\n"
              "from linearlens.growth.operators import GrowthOperator, parse_operator, stack_on_top\n"
              "assert stack_on_top(6, 3).layer_order(6)[-1] == (5, True)\n"
              "assert parse_operator('start1-b1-random', 3) == GrowthOperator(1, 1, 'random', 3)\n"
              "assert 'torch' not in sys.modules\n")
    source = Path(__file__).resolve().parents[1] / "src"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env={"PYTHONPATH": str(source)})
    assert result.returncode == 0, result.stderr


def test_the_drawing_of_fig_5_1_reads_the_operators():
    from linearlens.figures.karp_thesis.ch5 import grown_layer_order

    for start in range(1, 5):  # i in 1..4, 1-indexed
        for block_size in (1, 3):
            expected = GrowthOperator(start - 1, block_size, "duplicate", 3).layer_order(6)
            assert grown_layer_order(6, 3, start, block_size) == [(s + 1, new) for s, new in expected]
    assert grown_layer_order(6, 3, 2, 1) == [(1, False), (2, False), (2, True), (3, False), (3, True), (4, False),
                                             (4, True), (5, False), (6, False)]


# --- (h) corpora --------------------------------------------------------------------------------

def test_python_stdlib_sources_concatenates_and_splits_the_files():
    files = ["colorsys.py", "keyword.py"]
    texts = [Path(module.__file__).read_bytes() for module in (colorsys, keyword)]  # found another way
    arrays = python_stdlib_sources(files, validation_fraction=0.25)
    joined = b"\n".join(texts)
    train, validation = arrays["train_tokens"], arrays["validation_tokens"]
    assert train.dtype == validation.dtype == np.uint8
    assert len(train) + len(validation) == len(joined)
    assert np.concatenate([train, validation]).tobytes() == joined
    assert len(validation) == pytest.approx(0.25 * len(joined), abs=1)
    assert arrays["file_names"].tolist() == files
    assert arrays["file_sha256"].tolist() == [hashlib.sha256(text).hexdigest() for text in texts]
    assert str(arrays["python_version"]) == platform.python_version()
    provenance = corpus_provenance(arrays)
    assert provenance["files"] == dict(zip(files, (hashlib.sha256(t).hexdigest() for t in texts)))
    assert provenance["python_version"] == platform.python_version()


def test_python_stdlib_sources_names_a_missing_file():
    with pytest.raises(FileNotFoundError, match="no_such_module_xyz.py"):
        python_stdlib_sources(["colorsys.py", "no_such_module_xyz.py"])


def test_text_file_tokens_checks_the_file(tmp_path):
    content = ("growing in depth, " * 300).encode()
    path = tmp_path / "corpus.txt"
    path.write_bytes(content)
    digest = hashlib.sha256(content).hexdigest()
    arrays = text_file_tokens(str(path), digest, validation_fraction=0.1)
    assert np.concatenate([arrays["train_tokens"], arrays["validation_tokens"]]).tobytes() == content
    assert len(arrays["validation_tokens"]) == pytest.approx(0.1 * len(content), abs=1)
    assert arrays["file_sha256"].tolist() == [digest]
    assert len(text_file_tokens(str(path))["validation_tokens"]) == pytest.approx(0.01 * len(content), abs=1)
    with pytest.raises(ValueError, match=str(path)):
        text_file_tokens(str(path), "0" * 64)
    missing = tmp_path / "absent.txt"
    with pytest.raises(FileNotFoundError, match=str(missing)):
        text_file_tokens(str(missing))
    with pytest.raises(FileNotFoundError):
        text_file_tokens(None)
    with pytest.raises(ValueError):
        split_tokens(content, 1.0)


# --- (i) language-modelling batches and losses ---------------------------------------------------

def test_training_batches_follow_their_key():
    tokens = random_tokens(3000)
    for objective in ("causal", "masked"):
        first = training_batch(tokens, objective, 4, 8, 0, 1, 5)
        again = training_batch(tokens, objective, 4, 8, 0, 1, 5)
        other = training_batch(tokens, objective, 4, 8, 0, 1, 6)
        assert all(torch.equal(a, b) for a, b in zip(first, again))
        assert not torch.equal(first[0], other[0])
        assert first[0].shape == first[1].shape == (4, 8)


def test_causal_examples_predict_the_next_token():
    inputs, targets = causal_example(torch.tensor([[1, 2, 3, 4], [7, 8, 9, 10]]))
    assert inputs.tolist() == [[1, 2, 3], [7, 8, 9]] and targets.tolist() == [[2, 3, 4], [8, 9, 10]]
    counting = torch.arange(5000) % 251  # each token is the one before it plus one (mod 251)
    inputs, targets = training_batch(counting, "causal", 16, 8, 0, 0, 1)
    assert torch.equal(targets, (inputs + 1) % 251)
    assert torch.equal(inputs[:, 1:], targets[:, :-1])


def test_masked_examples_corrupt_about_fifteen_percent():
    windows = torch.randint(0, 256, (256, 64), generator=torch.Generator().manual_seed(0))
    inputs, targets = masked_example(windows, torch.Generator().manual_seed(1))
    chosen = targets != IGNORED
    assert torch.equal(targets[chosen], windows[chosen])
    assert torch.equal(inputs[~chosen], windows[~chosen])  # inputs change only where a target is
    assert not (inputs != windows)[~chosen].any()
    assert ((inputs == MASK_TOKEN) <= chosen).all()
    assert chosen.float().mean().item() == pytest.approx(MASK_RATE, abs=0.01)
    masked = (inputs[chosen] == MASK_TOKEN).float().mean().item()
    kept = (inputs[chosen] == windows[chosen]).float().mean().item()
    assert masked == pytest.approx(0.8, abs=0.03)
    assert kept == pytest.approx(0.1 + 0.1 / 256, abs=0.02)
    assert int(inputs.max()) <= MASK_TOKEN and int(windows.max()) < MASK_TOKEN


def test_validation_batches_are_the_leading_windows():
    counting = torch.arange(1000) % 251
    batches = validation_batches(counting, "causal", 2, 4, 8)
    assert len(batches) == 2 and batches[0][0].shape == (4, 8)
    assert batches[0][0][0].tolist() == list(range(8)) and batches[0][1][0].tolist() == list(range(1, 9))
    assert batches[0][0][1, 0].item() == 9  # windows of 9 tokens, not overlapping
    masked = validation_batches(counting, "masked", 2, 4, 8)
    assert all(torch.equal(a[1], b[1]) for a, b in zip(masked, validation_batches(counting, "masked", 2, 4, 8)))
    with pytest.raises(ValueError):
        validation_batches(counting, "causal", 200, 4, 8)


@pytest.mark.parametrize("objective", ["causal", "masked"])
def test_validation_loss_of_a_fresh_model_is_near_uniform(objective):
    model = tiny_model(2, causal=objective == "causal")
    batches = validation_batches(random_tokens(2000), objective, 4, 8, 8)
    loss = validation_loss(model, batches)
    assert loss == pytest.approx(math.log(VOCABULARY), abs=0.05)
    # the same mean taken by hand over every target that counts
    with torch.no_grad():
        log_probabilities = torch.cat([model(inputs).log_softmax(-1).flatten(0, 1) for inputs, _ in batches])
    targets = torch.cat([targets.flatten() for _, targets in batches])
    counted = targets != IGNORED
    by_hand = -log_probabilities[counted].gather(1, targets[counted, None]).mean().item()
    assert loss == pytest.approx(by_hand, rel=1e-5)


# --- (j) the growing experiments at a tiny scale -----------------------------------------------

SETTING = {"objective": "causal", "model": dict(TINY), "layers": 3, "grown_layers": 1, "starts": [0, 1, 2],
           "block_sizes": [1], "inits": ["random", "duplicate"],
           "optimiser": {"name": "adamw", "lr": 1e-3, "betas": [0.9, 0.999], "weight_decay": 0.01},
           "warmup_steps": 2, "batch_size": 4, "validation_batches": 2, "pretrain_steps": 3, "train_steps": 6,
           "window_end": 4, "window_every": 1, "smoothing": 3, "lag": 2, "lag_k": 3}


@pytest.fixture(scope="module")
def corpus():
    text = " ".join(f"layer{i % 37} grows{i % 11}." for i in range(400)).encode()
    return experiments.Corpus(split_tokens(text, 0.1), SETTING)


@pytest.fixture(scope="module")
def pretrained(corpus):
    return experiments.pretrain(SETTING, corpus, seed=0)


def test_recorded_steps_of_the_tiny_setting():
    # the window 0..4 continues one point (smoothing 3 // 2) past its end for the centred smoothing
    assert experiments.recorded_steps(SETTING) == [0, 1, 2, 3, 4, 5, 6]
    assert experiments.recorded_steps({**SETTING, "smoothing": 1}) == [0, 1, 2, 3, 4, 6]
    assert [op.name for op in experiments.growth_operators(SETTING)][:2] == ["start0-b1-random", "start0-b1-duplicate"]


def test_a_smoothing_window_past_the_trained_steps_is_refused_naming_the_keys():
    # window_end 4 + 5 (smoothing 11 // 2) > 6 trained steps: the run would end without those losses
    with pytest.raises(ValueError, match=r"window_end \+ \(smoothing // 2\).*train_steps"):
        experiments.recorded_steps({**SETTING, "smoothing": 11})


def test_a_checkpoint_resumes_training_exactly(tmp_path, corpus):
    model, spec = experiments.fresh_model(SETTING, 2, seed=1)
    trainer = experiments.Trainer(model, SETTING)
    experiments.train(trainer, corpus, 2, (1, experiments.PRETRAIN))
    save_checkpoint(tmp_path / "trainer.pt", **trainer.checkpoint(spec))
    restored = experiments.Trainer.from_checkpoint(load_checkpoint(tmp_path / "trainer.pt"), SETTING)
    assert restored.global_step == trainer.global_step == 2
    before = [p.detach().clone() for p in trainer.model.parameters()]
    for t in (trainer, restored):
        experiments.train(t, corpus, 3, (1, experiments.PRETRAIN), first=3)
    assert not torch.equal(before[0], next(trainer.model.parameters()))
    for (name, a), b in zip(trainer.model.named_parameters(), restored.model.parameters()):
        assert torch.equal(a, b), name
        assert torch.equal(trainer.optimiser.state[a]["exp_avg_sq"], restored.optimiser.state[b]["exp_avg_sq"])
    assert restored.global_step == 3


def test_pretraining_records_its_model_and_loss(pretrained, corpus):
    assert pretrained["step"] == SETTING["pretrain_steps"]
    assert pretrained["model_spec"]["layers"] == SETTING["layers"]
    model = experiments.Trainer.from_checkpoint(pretrained, SETTING).model
    assert validation_loss(model, corpus.validation) == pretrained["validation_loss"]
    assert math.isfinite(pretrained["validation_loss"])


def test_a_grown_trainer_counts_steps_globally(pretrained, corpus):
    """Growing at step 3 of a 2-step warm-up: the grown model goes on at step 4, full rate, and
    every parameter's AdamW step count (random layers' included) follows the global one."""
    trainer = experiments.Trainer.from_checkpoint(pretrained, SETTING)
    grown = trainer.grown(GrowthOperator(1, 1, "random", 1), torch.Generator().manual_seed(0))
    assert grown.global_step == trainer.global_step == SETTING["pretrain_steps"]
    experiments.train(grown, corpus, 1, (0, experiments.GROWN))
    assert grown.global_step == SETTING["pretrain_steps"] + 1
    assert grown.optimiser.param_groups[0]["lr"] == SETTING["optimiser"]["lr"]  # past the warm-up
    assert {float(state["step"]) for state in grown.optimiser.state.values()} == {grown.global_step}
    assert len(grown.optimiser.state) == len(list(grown.model.parameters()))


def test_grown_losses_at_the_recorded_steps(pretrained, corpus):
    operator = GrowthOperator(2, 1, "duplicate", 1)
    losses = experiments.grown_losses(pretrained, operator, SETTING, corpus, seed=0)
    assert losses.shape == (len(experiments.recorded_steps(SETTING)),)
    assert np.isfinite(losses).all()
    grown = grow(experiments.Trainer.from_checkpoint(pretrained, SETTING).model, operator)
    assert losses[0] == validation_loss(grown, corpus.validation)  # step 0: right after growing
    assert losses[-1] < losses[0]  # training lowers the loss
    assert np.array_equal(losses, experiments.grown_losses(pretrained, operator, SETTING, corpus, seed=0))


def test_growth_part_resumes_without_retraining(tmp_path, pretrained, corpus, monkeypatch):
    operators = experiments.growth_operators(SETTING)[:2]
    rows = experiments.growth_part(pretrained, operators, SETTING, corpus, 0, tmp_path, "v1")
    assert rows.shape == (2, len(experiments.recorded_steps(SETTING)))
    assert len(list(tmp_path.glob("*.npy"))) == 2

    def retrains(*args, **kwargs):
        raise AssertionError("a finished operator was trained again")

    monkeypatch.setattr(experiments, "grown_losses", retrains)
    assert np.array_equal(experiments.growth_part(pretrained, operators, SETTING, corpus, 0, tmp_path, "v1"), rows)
    with pytest.raises(AssertionError, match="trained again"):  # other inputs: nothing to resume
        experiments.growth_part(pretrained, operators, SETTING, corpus, 0, tmp_path, "v2")


def test_stacking_run_arrays(corpus):
    spec = {**SETTING, "stage_layers": [1, 2, 3], "stage_steps": [3, 3, 3], "probe_steps": 1, "block_sizes": [1],
            "start_strides": [1, 1]}
    run = experiments.stacking_run(spec, corpus, seed=0)
    assert run["strategy"].tolist() == ["adaptive", "last"]
    assert run["stage_layers"].tolist() == [1, 2, 3]
    assert run["chosen"].shape == (2, 3) and run["stage_end_loss"].shape == (2, 3)
    assert run["candidates"].tolist() == [0, 1, 2]  # starts 0 of 1 layer, then 0 and 1 of 2 layers
    assert np.isfinite(run["stage_end_loss"]).all()
    assert run["stage_end_loss"][0, 0] == run["stage_end_loss"][1, 0]  # the shared first stage
    assert run["chosen"][:, 0].tolist() == ["", ""]
    assert run["chosen"][1, 1:].tolist() == ["start0-b1-duplicate", "start1-b1-duplicate"]
    for stage, name in enumerate(run["chosen"][0, 1:], start=1):
        operator = parse_operator(str(name), 1)
        assert operator.init == "duplicate" and operator.start <= stage - 1


def test_a_text_corpus_prepares_with_each_file_checksum_and_its_label(tmp_path):
    """prepare_dataset on a text source keeps the two token streams and records every file's SHA-256;
    the figure label counts bytes."""
    from linearlens.data.prepare import prepare_dataset
    from linearlens.data.prepared import data_label
    from linearlens.data.registry import get_source

    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(b"def f(x):\n    return x + 1\n" * 40)
    spec = {"source": "text_file", "source_options": {"path": str(corpus), "validation_fraction": 0.25},
            "standin_for": "Books + Wikipedia"}
    arrays, provenance = prepare_dataset(spec, get_source("text_file"))
    assert len(arrays["train_tokens"]) + len(arrays["validation_tokens"]) == 40 * 27
    step = provenance["transforms"][0]
    assert step["step"] == "byte_tokens" and step["files"] == {str(corpus): hashlib.sha256(corpus.read_bytes()).hexdigest()}
    assert "810 training / 270 validation bytes" in data_label(provenance)
    assert "stand-in for Books + Wikipedia" in data_label(provenance)
