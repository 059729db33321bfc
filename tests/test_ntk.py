"""The layer-wise NTK against the plain torch.func Jacobian product, in float64, on every kind
of layer the zoo uses, in every output mode, chunked and not."""

import pytest
import torch
from torch import nn

from linearlens.kernels.ntk import empirical_ntk, ntk_by_jacobian, ntk_diagonal
from linearlens.models.cnn import small_cnn
from linearlens.models.mlp import mlp
from linearlens.models.resnet import resnet20
from linearlens.train.runtime import default_dtype


@pytest.fixture(autouse=True)
def float64():
    with default_dtype("float64"):
        yield


def reference_ntk(model, x1, x2):
    """The plain torch.func route: materialised per-example Jacobians, then J Jᵀ."""
    return ntk_by_jacobian(model, x1, x2)


def relative_error(a, b):
    return ((a - b).norm() / b.norm()).item()


class Residual(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(channels)

    def forward(self, x):
        out = self.bn(self.conv(x))
        out += x  # in place, as ResNets do
        return torch.relu_(out)


class TinyTransformer(nn.Module):
    """Embedding, LayerNorm, sequence Linear layers and MultiheadAttention (whose projections
    are used through F.* calls, not as modules)."""

    def __init__(self, vocab=7, dim=8, outputs=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.attn = nn.MultiheadAttention(dim, 2, batch_first=True)
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, outputs)

    def forward(self, tokens):
        h = self.embed(tokens)
        h = self.norm(h + self.attn(h, h, h, need_weights=False)[0])
        return self.head(torch.tanh(self.mlp(h)).mean(1))


class Scaled(nn.Module):
    """A parameter no closed form knows: must go through torch.func."""

    def __init__(self, features):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(features))

    def forward(self, x):
        return x * self.scale


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Linear(5, 5)
        self.second = nn.Linear(5, 5)
        self.second.weight = self.first.weight
        self.head = nn.Linear(5, 2)

    def forward(self, x):
        return self.head(torch.tanh(self.second(torch.tanh(self.first(x)))))


class SharedNorms(nn.Module):
    """Normalisation layers called twice (their gradients summed over the calls), a LayerNorm
    without shift and a GroupNorm whose shift is frozen."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.group = nn.GroupNorm(2, 4)
        self.group.bias.requires_grad_(False)
        self.norm = nn.LayerNorm(6, bias=False)
        self.head = nn.Linear(4 * 6, 3)

    def forward(self, x):
        h = self.group(torch.tanh(self.group(self.conv(x))))  # (m, 4, 6, 6)
        h = self.norm(torch.tanh(self.norm(h.mean(2))))  # over the last axis, shared by 4 rows
        return self.head(h.flatten(1))


def randomise_norm_statistics(model):
    for module in model.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.running_mean.uniform_(-0.5, 0.5)
            module.running_var.uniform_(0.5, 2.0)
            nn.init.uniform_(module.weight, 0.5, 1.5)
            nn.init.uniform_(module.bias, -0.5, 0.5)


def make_case(name, device="cpu"):
    """A model in eval mode and two input sets of different sizes, on ``device``."""
    torch.manual_seed(0)
    if name == "mlp":
        model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 3))
        x1, x2 = torch.randn(11, 6), torch.randn(7, 6)
    elif name == "mlp_scalar":
        model = nn.Sequential(nn.Linear(4, 12), nn.Tanh(), nn.Linear(12, 1), nn.Flatten(0))
        x1, x2 = torch.randn(9, 4), torch.randn(5, 4)
    elif name == "cnn_batchnorm":
        model = nn.Sequential(
            nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(inplace=True),
            nn.Conv2d(4, 5, 3, stride=2, dilation=1), nn.ReLU(), Residual(5),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.BatchNorm1d(5), nn.Linear(5, 4))
        x1, x2 = torch.randn(6, 3, 8, 8), torch.randn(4, 3, 8, 8)
    elif name == "conv1d_groupnorm":
        model = nn.Sequential(nn.Conv1d(1, 4, 5, padding=2, stride=2), nn.GroupNorm(2, 4), nn.ELU(),
                              nn.Conv1d(4, 4, 3, dilation=2), nn.Flatten(), nn.Linear(4 * 16, 3))
        x1, x2 = torch.randn(7, 1, 40), torch.randn(3, 1, 40)
    elif name == "transformer":
        model = TinyTransformer()
        x1, x2 = torch.randint(0, 7, (6, 5)), torch.randint(0, 7, (4, 5))
    elif name == "custom_parameter":
        model = nn.Sequential(nn.Linear(3, 6), Scaled(6), nn.Tanh(), nn.Linear(6, 2))
        x1, x2 = torch.randn(8, 3), torch.randn(5, 3)
    elif name == "tied":
        model = Tied()
        x1, x2 = torch.randn(6, 5), torch.randn(4, 5)
    elif name == "shared_norms":
        model = SharedNorms()
        nn.init.uniform_(model.norm.weight, 0.5, 1.5)
        x1, x2 = torch.randn(5, 2, 6, 6), torch.randn(3, 2, 6, 6)
    elif name == "zoo_resnet20":
        model = resnet20(num_classes=3, width=4)
        x1, x2 = torch.randn(4, 3, 12, 12), torch.randn(3, 3, 12, 12)
    elif name == "zoo_resnet20_projection":
        model = resnet20(num_classes=2, width=2, shortcut="B")
        x1, x2 = torch.randn(3, 3, 8, 8), torch.randn(2, 3, 8, 8)
    elif name == "zoo_small_cnn":
        model = small_cnn(1, 4, width=3, batch_norm=True)
        x1, x2 = torch.randn(5, 1, 8, 8), torch.randn(3, 1, 8, 8)
    elif name == "zoo_mlp":
        model = mlp(10, [7, 5], 3, activation="gelu", init_scale=2.0)
        x1, x2 = torch.randn(6, 10), torch.randn(4, 10)
    elif name == "frozen":
        model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
        model[0].weight.requires_grad_(False)
        model[2].bias.requires_grad_(False)
        x1, x2 = torch.randn(6, 4), torch.randn(3, 4)
    randomise_norm_statistics(model)
    return model.eval().to(device), x1.to(device), x2.to(device)


CASES = ["mlp", "mlp_scalar", "cnn_batchnorm", "conv1d_groupnorm", "shared_norms", "transformer",
         "custom_parameter", "tied", "frozen", "zoo_resnet20", "zoo_resnet20_projection",
         "zoo_small_cnn", "zoo_mlp"]
TOLERANCE = 1e-10


@pytest.mark.parametrize("name", CASES)
def test_full_blocks_equal_the_jacobian_product(name, device):
    model, x1, x2 = make_case(name, device)
    expected = reference_ntk(model, x1, x2)
    assert relative_error(empirical_ntk(model, x1, x2), expected) < TOLERANCE
    # Chunks smaller than the sets, both the cross Gram and the symmetric one.
    assert relative_error(empirical_ntk(model, x1, x2, chunk_size=2), expected) < TOLERANCE
    # A memory budget of one byte: every layer is a group of its own, one pass each.
    assert relative_error(empirical_ntk(model, x1, x2, chunk_size=3, memory_bytes=1), expected) < TOLERANCE
    assert relative_error(empirical_ntk(model, x1, chunk_size=3), reference_ntk(model, x1, x1)) < TOLERANCE


@pytest.mark.parametrize("name", CASES)
def test_one_output_trace_and_diagonal(name, device):
    model, x1, x2 = make_case(name, device)
    full = reference_ntk(model, x1, x2)
    last = full.shape[1] - 1
    assert relative_error(empirical_ntk(model, x1, x2, output=last), full[:, last, :, last]) < TOLERANCE
    trace = torch.einsum("iaja->ij", full)
    assert relative_error(empirical_ntk(model, x1, x2, output="trace"), trace) < TOLERANCE
    own = reference_ntk(model, x1, x1)
    diagonal = torch.einsum("iaib->iab", own)
    assert relative_error(ntk_diagonal(model, x1, chunk_size=4), diagonal) < TOLERANCE
    assert relative_error(ntk_diagonal(model, x1, output="trace"), torch.einsum("iaa->i", diagonal)) < TOLERANCE


@pytest.mark.parametrize("name", ["cnn_batchnorm", "transformer", "custom_parameter"])
def test_per_layer_grams_are_each_layers_own_and_sum_to_the_ntk(name, device):
    model, x1, x2 = make_case(name, device)
    layers = empirical_ntk(model, x1, x2, per_layer=True)
    owners = {n for n, m in model.named_modules() if any(p.requires_grad for p in m.parameters(recurse=False))}
    assert set(layers) == owners
    assert relative_error(sum(layers.values()), reference_ntk(model, x1, x2)) < TOLERANCE
    name_, module = next((n, m) for n, m in model.named_modules() if n in layers and n)
    others = [p for p in model.parameters() if all(p is not q for q in module.parameters(recurse=False))]
    for p in others:
        p.requires_grad_(False)
    assert relative_error(layers[name_], reference_ntk(model, x1, x2)) < TOLERANCE


def test_batchnorm_in_training_mode_is_refused():
    model, x1, _ = make_case("cnn_batchnorm")
    with pytest.raises(ValueError, match="model.eval"):
        empirical_ntk(model.train(), x1)


def test_float32_agrees_with_float64(device):
    """On CUDA too: cuDNN's default TF32 convolutions would be about 1e-3 off."""
    model, x1, x2 = make_case("cnn_batchnorm", device)
    exact = empirical_ntk(model, x1, x2)
    single = empirical_ntk(model.float(), x1.float(), x2.float())
    assert single.dtype == torch.float32
    assert relative_error(single.double(), exact) < 1e-5


class SeesTF32(nn.Module):
    """Records whether TF32 was allowed when it ran."""

    def forward(self, x):
        self.seen = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
        return x


def test_kernels_run_without_tf32_and_restore_the_callers_setting():
    model = nn.Sequential(nn.Linear(3, 2), SeesTF32())
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    try:
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = True
        empirical_ntk(model, torch.randn(4, 3))
        assert model[1].seen == (False, False)
        assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == (True, True)
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def test_symmetric_gram_from_upper_blocks_spans_several_block_rows():
    """More examples than one block row: the blocks below the diagonal are mirrored, not
    computed, and must still be exact, per layer and summed."""
    from linearlens.kernels.ntk import GRAM_BLOCK_ROWS, GRAM_BLOCKS, GRAM_MIN_BLOCKS, block_rows
    torch.manual_seed(0)
    model = mlp(3, [5], 2, activation="tanh")
    x = torch.randn(GRAM_BLOCK_ROWS + 7, 3)  # two outputs: fewer product rows than the minimum blocks allow
    blocks = block_rows(len(x), len(x), 2, 8, symmetric=True)
    assert len(blocks) == GRAM_MIN_BLOCKS and all(cols == slice(rows.start, len(x)) for rows, cols in blocks)
    many = block_rows(80 * GRAM_BLOCKS, 80 * GRAM_BLOCKS, 10, 4, symmetric=True)
    assert len(many) == GRAM_BLOCKS  # a large Gram: its lower triangle mostly skipped
    expected = reference_ntk(model, x, x)
    assert relative_error(empirical_ntk(model, x), expected) < TOLERANCE
    assert relative_error(sum(empirical_ntk(model, x, per_layer=True).values()), expected) < TOLERANCE
    trace = empirical_ntk(model, x, output="trace")
    assert torch.equal(trace, trace.T)


def test_automatic_chunk_size_follows_the_memory_budget():
    from linearlens.capture import auto_chunk_size
    model, x1, x2 = make_case("zoo_small_cnn")
    x = x1.repeat(50, 1, 1, 1)
    roomy = auto_chunk_size(model, x, 10, 2**30)
    tight = auto_chunk_size(model, x, 10, 2**20)
    assert roomy == len(x) and 1 <= tight < roomy
    assert auto_chunk_size(model, x, 10, 1) == 1
    assert relative_error(empirical_ntk(model, x1, x2, memory_bytes=2**16), reference_ntk(model, x1, x2)) < TOLERANCE


@pytest.mark.parametrize("name", ["cnn_batchnorm", "zoo_mlp", "custom_parameter"])
def test_block_against_a_subset_is_those_columns_of_the_gram(name, device):
    from linearlens.kernels.ntk import ntk_block
    model, x1, _ = make_case(name, device)
    columns = torch.tensor([2, 0, 2], device=device)
    full = reference_ntk(model, x1, x1)
    assert relative_error(ntk_block(model, x1, columns), full[:, :, columns, :]) < TOLERANCE
    assert relative_error(ntk_block(model, x1, columns, output=0), full[:, 0, columns, 0]) < TOLERANCE


@pytest.mark.parametrize("name", CASES)
def test_jacobian_from_factors_is_the_per_example_jacobian(name, device):
    from linearlens.kernels.ntk import jacobian_from_factors, per_example_jacobian
    model, x1, _ = make_case(name, device)
    expected = per_example_jacobian(model, x1)
    assert relative_error(jacobian_from_factors(model, x1), expected) < TOLERANCE
    assert relative_error(jacobian_from_factors(model, x1, output=0), expected[:, :1]) < TOLERANCE


class TemperedMLP(nn.Module):
    """An MLP whose outputs a learnable scalar temperature scales and a learnable scalar bias
    shifts: 0-dim parameters, which only torch.func sees."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 2))
        self.temperature = nn.Parameter(torch.tensor(1.5))
        self.shift = nn.Parameter(torch.tensor(-0.3))

    def forward(self, x):
        return self.temperature * self.body(x) + self.shift


class Bilinear3d(nn.Module):
    """A 3-dim parameter: out_o = Σ_ij h_i tanh(h_j) W_ijo."""

    def __init__(self, features, outputs):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(features, features, outputs) / features)

    def forward(self, h):
        return torch.einsum("ni,nj,ijo->no", h, torch.tanh(h), self.weight)


def dense_jacobian(model, x):
    """(n, c, P) from one torch.func.jacrev over the flat trainable parameters of the whole
    batch (examples are independent): no vmap and nothing from linearlens."""
    from torch.func import functional_call, jacrev
    params = {name: p.detach() for name, p in model.named_parameters() if p.requires_grad}
    flat = torch.cat([p.reshape(-1) for p in params.values()])

    def outputs(theta):
        pieces = torch.split(theta, [p.numel() for p in params.values()])
        named = {name: piece.view(p.shape) for (name, p), piece in zip(params.items(), pieces)}
        return functional_call(model, named, (x,)).reshape(len(x), -1)

    return jacrev(outputs)(flat)


@pytest.mark.parametrize("model_of", [TemperedMLP, lambda: nn.Sequential(nn.Linear(4, 3), Bilinear3d(3, 2))],
                         ids=["scalar_parameters", "three_dim_parameter"])
def test_parameters_of_any_shape_agree_with_a_dense_jacobian(model_of):
    from linearlens.kernels.ntk import jacobian_from_factors, per_example_jacobian
    torch.manual_seed(0)
    model, x1, x2 = model_of(), torch.randn(7, 4), torch.randn(5, 4)
    j1, j2 = dense_jacobian(model, x1), dense_jacobian(model, x2)
    full = torch.einsum("iap,jbp->iajb", j1, j2)
    assert relative_error(per_example_jacobian(model, x1, chunk_size=3), j1) < TOLERANCE
    assert relative_error(jacobian_from_factors(model, x1), j1) < TOLERANCE
    assert relative_error(jacobian_from_factors(model, x1, output=1), j1[:, 1:]) < TOLERANCE
    assert relative_error(empirical_ntk(model, x1, x2, chunk_size=3), full) < TOLERANCE
    assert relative_error(empirical_ntk(model, x1, x2, output=1), full[:, 1, :, 1]) < TOLERANCE
    own = torch.einsum("iap,ibp->iab", j1, j1)
    assert relative_error(ntk_diagonal(model, x1, chunk_size=3), own) < TOLERANCE
    assert relative_error(ntk_diagonal(model, x1, output=1), own[:, 1, 1]) < TOLERANCE
