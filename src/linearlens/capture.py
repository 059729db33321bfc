"""Per-layer capture of inputs and output gradients: the one mechanism behind the tangent kernels
(``kernels/ntk.py``) and the curvature matrices (``curvature/``).

One forward pass records every parameterised layer's input; one batched backward pass gives, for
each example i and each *seed* k, the gradient of ``seeds[i, k] · f(x_i)`` with respect to the
layer's output. The gradient of that scalar with respect to the layer's parameters follows from the
two without forming the network's Jacobian:

* a tangent kernel uses one-hot seeds (one per output index): the rows of the Jacobian J(x_i);
* a Fisher matrix uses seeds from its likelihood: Σ_k g_ik g_ikᵀ with g_ik = J(x_i)ᵀ seeds[i, k]
  is the example's expected (or sampled, or empirical) outer product of log-likelihood gradients.

Linear and convolutional layers also expose their *affine terms* (inputs, with a constant 1 for
the bias, and output gradients, per position), from which KFAC's Kronecker factors are built.
Modules whose parameters no closed form covers go through ``torch.func`` (vmap over jacrev), so
every architecture is exact. Examples must be independent: BatchNorm only in eval mode.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.func import functional_call, jacrev, vmap

# Seeds: (n, k, c) per example, or a function of the detached (n, c) outputs giving them.
Seeds = Tensor | Callable[[Tensor], Tensor]


@dataclass
class OuterFactor:
    """A Linear layer applied once to flat inputs: tangent features = output_grads ⊗ inputs."""

    output_grads: Tensor  # (n, k, out)
    inputs: Tensor  # (n, in), (n, in + 1) with the bias's constant 1, or (n, 1) for a bias alone

    def nbytes(self) -> int:
        return self.output_grads.nbytes + self.inputs.nbytes


@dataclass
class DenseFactor:
    """A layer's per-example, per-seed parameter gradients."""

    grads: Tensor  # (n, k, p), weight before bias as registered

    def nbytes(self) -> int:
        return self.grads.nbytes


@dataclass
class Captured:
    """What one forward and backward pass recorded at a layer, one entry per call of the layer."""

    module: nn.Module
    inputs: list[Tensor]  # (n, ...) the layer's input
    output_grads: list[Tensor]  # (n, k, ...) the gradient of each seed's scalar at the layer's output


class Scratch:
    """Memory kept across the chunks of one computation: a buffer of the same role in every chunk
    (a layer's output gradients, the convolution patches) reuses the one allocation, so its pages
    are faulted in once, not once per chunk (page faults took a quarter of a ResNet-20 Gram's
    time on a 2-core CPU). A tensor taken from it is valid until the same key is taken again."""

    def __init__(self):
        self._memory: dict[object, Tensor] = {}

    def empty(self, key, shape: tuple[int, ...], like: Tensor) -> Tensor:
        numel = math.prod(shape)
        memory = self._memory.get(key)
        if memory is None or memory.numel() < numel or memory.dtype != like.dtype or memory.device != like.device:
            memory = self._memory[key] = like.new_empty(numel)
        return memory[:numel].view(shape)


def _empty(scratch: Scratch | None, key, shape: tuple[int, ...], like: Tensor) -> Tensor:
    return like.new_empty(shape) if scratch is None else scratch.empty(key, shape, like)


# --- which layers take which route ------------------------------------------------------------

def trainable(module: nn.Module) -> dict[str, nn.Parameter]:
    """The module's own trainable parameters (not its children's), in registration order."""
    return {name: p for name, p in module.named_parameters(recurse=False) if p.requires_grad}


def is_affine(module: nn.Module) -> bool:
    """Linear and convolution layers: weight · input (+ bias), with Kronecker-factored curvature."""
    if isinstance(module, (nn.Conv1d, nn.Conv2d)):
        return module.groups == 1 and module.padding_mode == "zeros" and not isinstance(module.padding, str)
    return isinstance(module, nn.Linear)


def has_closed_form(module: nn.Module) -> bool:
    if isinstance(module, nn.Embedding):
        return module.max_norm is None
    return is_affine(module) or _is_norm(module)


def _is_norm(module: nn.Module) -> bool:
    return isinstance(module, (nn.modules.batchnorm._NormBase, nn.LayerNorm, nn.GroupNorm))


def check_independent_examples(model: nn.Module) -> None:
    for name, module in model.named_modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm) and (
                module.training or not module.track_running_stats):
            raise ValueError(f"BatchNorm {name!r} normalises with batch statistics, which couples "
                             "the examples; call model.eval() (running statistics) first")


def flat_outputs(out: Tensor) -> Tensor:
    return out.reshape(out.shape[0], -1)


def one_hot_seeds(outputs: list[int]) -> Callable[[Tensor], Tensor]:
    """Seeds selecting output indices: the rows of the Jacobian."""
    def seeds(out: Tensor) -> Tensor:
        s = out.new_zeros(out.shape[0], len(outputs), out.shape[1])
        s[:, torch.arange(len(outputs)), torch.as_tensor(outputs)] = 1
        return s
    return seeds


# --- affine layers: inputs and output gradients per position ----------------------------------

def affine_terms(module: nn.Module, h: Tensor, g: Tensor, bias_row: bool = True,
                 scratch: Scratch | None = None) -> tuple[Tensor, Tensor]:
    """One call of a Linear or convolution layer as (inputs (m, width, T), output gradients
    (m, k, out, T)) over its T positions: the parameter gradient of seed k is
    Σ_t g[:, k, :, t] ⊗ inputs[:, :, t], with the weight flattened row-major (out, in·kernel) and,
    when the layer has a bias and ``bias_row``, a last input row of ones for it.

    Views, not copies, except the convolution's patches (and a bias row), which are stored
    width-major, (width, m, T) in memory: a product summed over examples and positions (KFAC's
    input factor) then reads them as one matrix."""
    params = trainable(module)
    ones = 1 if bias_row and "bias" in params else 0
    grads = affine_output_grads(module, g)
    if "weight" not in params:  # a bias alone
        return g.new_ones(g.shape[0], ones, grads.shape[3]), grads
    if not isinstance(module, nn.Linear):
        return _patches(module, h, ones, scratch), grads
    inputs = h.reshape(h.shape[0], -1, h.shape[-1]).transpose(1, 2)
    if ones:
        inputs = torch.cat([inputs, inputs.new_ones(inputs.shape[0], 1, inputs.shape[2])], dim=1)
    return inputs, grads


def affine_output_grads(module: nn.Module, g: Tensor) -> Tensor:
    """A Linear or convolution layer's output gradients (m, k, ...) as (m, k, out, T)."""
    if isinstance(module, nn.Linear):
        return g.reshape(*g.shape[:2], -1, g.shape[-1]).transpose(2, 3)
    return g.reshape(*g.shape[:3], -1)


def _patches(module: nn.Conv1d | nn.Conv2d, h: Tensor, ones: int = 0,
             scratch: Scratch | None = None) -> Tensor:
    """(m, in·kernel + ones, positions): the unfolded inputs that the convolution multiplies, in
    F.unfold's order, then ``ones`` rows of ones; stored (in·kernel + ones, m, positions).

    Taken as sliding windows of the padded input (a view) and copied once: about 15× faster than
    F.unfold's im2col on a 2-core CPU (0.05 s against 0.8 s for a ResNet-20 first-stage layer at
    100 examples); F.unfold remains for dilated convolutions."""
    spatial = 2 if isinstance(module, nn.Conv2d) else 1
    if any(d != 1 for d in module.dilation):
        h2 = h if spatial == 2 else h.unsqueeze(2)
        pair = (lambda v: tuple(v)) if spatial == 2 else (lambda v: (1, v[0]))
        padding = pair(module.padding) if spatial == 2 else (0, module.padding[0])
        unfolded = F.unfold(h2, pair(module.kernel_size), dilation=pair(module.dilation),
                            padding=padding, stride=pair(module.stride))
        windows = unfolded.permute(1, 0, 2)  # (in·kernel, m, T)
    else:
        padding = [p for p in reversed(module.padding) for _ in range(2)]  # F.pad: last dimension first
        windows = F.pad(h, padding) if any(padding) else h
        for dim, (size, step) in enumerate(zip(module.kernel_size, module.stride)):
            windows = windows.unfold(2 + dim, size, step)  # (m, in, *positions, *kernel)
        kernel_dims = tuple(range(2 + spatial, 2 + 2 * spatial))
        windows = windows.permute(1, *kernel_dims, 0, *range(2, 2 + spatial))  # (in, *kernel, m, *positions)
    width = module.in_channels * math.prod(module.kernel_size)
    m = h.shape[0]
    buffer = _empty(scratch, "patches", (width + ones, m, windows.numel() // (width * m)), h)
    buffer[:width].view(windows.shape).copy_(windows)
    buffer[width:] = 1
    return buffer.permute(1, 0, 2)


# --- per-example parameter gradients from inputs and output gradients --------------------------

def outer_form(captured: Captured) -> OuterFactor | None:
    """A Linear layer called once on flat inputs as output gradients ⊗ inputs (its per-example
    gradients never formed); None for any other layer."""
    module = captured.module
    if isinstance(module, nn.Linear) and len(captured.inputs) == 1 and captured.inputs[0].dim() == 2:
        inputs, grads = affine_terms(module, captured.inputs[0], captured.output_grads[0])
        return OuterFactor(grads[..., 0], inputs[..., 0])
    return None


def captured_factor(captured: Captured) -> OuterFactor | DenseFactor:
    """A layer's tangent factor: its per-example, per-seed gradients, or for a Linear layer called
    once on flat inputs the outer-product form that never forms them."""
    outer = outer_form(captured)
    if outer is not None:
        return outer
    g = captured.output_grads[0]
    target = g.new_empty(g.shape[0], g.shape[1], captured_width(captured))
    write_captured_gradients(captured, target)
    return DenseFactor(target)


def captured_width(captured: Captured) -> int:
    return sum(p.numel() for p in trainable(captured.module).values())


def write_captured_gradients(captured: Captured, target: Tensor) -> None:
    """The layer's (m, k, p) per-example gradients written into ``target`` (weight then bias),
    which may be a slice of a larger buffer."""
    module = captured.module
    if not is_affine(module):  # an embedding (normalisation layers arrive as their gradients)
        target.copy_(_embedding_gradients(captured).grads)
        return
    params = trainable(module)
    width = params["weight"].numel() if "weight" in params else 0
    if width:
        write_weight_gradients(captured, target[:, :, :width])
    if "bias" in params:
        target[:, :, width:].copy_(bias_gradients(captured))


def write_weight_gradients(captured: Captured, target: Tensor, scratch: Scratch | None = None) -> None:
    """An affine layer's (m, k, out·in·kernel) per-example weight gradients, Σ over positions of
    g ⊗ inputs: per example one product (k·out × T)(T × in·kernel), written by the product itself
    when ``target`` is one such matrix per example (a contiguous buffer, or a slice of one along
    its first axis), else through one copy. Calls of a shared layer are summed."""
    module = captured.module
    for call, (h, g) in enumerate(zip(captured.inputs, captured.output_grads)):
        inputs, grads = affine_terms(module, h, g, bias_row=False, scratch=scratch)
        m, k, out, positions = grads.shape
        rows, columns = grads.reshape(m, k * out, positions), inputs.transpose(1, 2)
        matrices = _as_matrices(target, m, k * out)
        if matrices is None:
            product = torch.bmm(rows, columns).view(target.shape)
            target.copy_(product) if call == 0 else target.add_(product)
        elif call == 0:
            torch.bmm(rows, columns, out=matrices)
        else:
            matrices.baddbmm_(rows, columns)


def _as_matrices(target: Tensor, m: int, rows: int) -> Tensor | None:
    """``target`` viewed as m row-major (rows × columns) matrices, if its memory is laid out so."""
    columns = target[0].numel() // rows
    if target.stride(-1) != 1 or target[0].numel() == 0:
        return None
    try:
        view = target.view(m, rows, columns)
    except RuntimeError:
        return None
    return view if view.stride(1) == columns and view.stride(2) == 1 else None


def bias_gradients(captured: Captured) -> Tensor:
    """An affine layer's (m, k, out) per-example bias gradients: the output gradients summed
    over positions (and over the calls of a shared layer)."""
    return sum(affine_output_grads(captured.module, g).sum(3) for g in captured.output_grads)


def _normalised(module: nn.Module, h: Tensor) -> Tensor:
    """The normalised input x̂ that a normalisation layer's scale multiplies."""
    if isinstance(module, nn.LayerNorm):
        return F.layer_norm(h, module.normalized_shape, None, None, module.eps)
    if isinstance(module, nn.GroupNorm):
        return F.group_norm(h, module.num_groups, None, None, module.eps)
    # BatchNorm with running statistics (checked before)
    return F.batch_norm(h, module.running_mean, module.running_var, None, None, False, 0.0, module.eps)


def _embedding_gradients(captured: Captured) -> DenseFactor:
    module, weight = captured.module, 0
    for idx, g in zip(captured.inputs, captured.output_grads):
        one_hot = F.one_hot(idx.reshape(idx.shape[0], -1), module.num_embeddings).to(g.dtype)
        if module.padding_idx is not None:
            one_hot[..., module.padding_idx] = 0  # the padding row receives no gradient
        g = g.reshape(*g.shape[:2], -1, g.shape[-1])
        weight = weight + torch.einsum("nlv,nkld->nkvd", one_hot, g)
    return _dense(trainable(module), weight=weight)


def _dense(params: dict[str, nn.Parameter], **grads) -> DenseFactor:
    parts = [grads[name].flatten(2) for name in params]  # weight before bias, as registered
    return DenseFactor(parts[0] if len(parts) == 1 else torch.cat(parts, dim=2))


# --- one pass over a batch ---------------------------------------------------------------------

def closed_form_layers(model: nn.Module, only: set[str] | None = None) -> dict[str, nn.Module]:
    """Layers whose gradients come from the capture: a closed form, and no parameter shared with
    another module (a shared parameter has the sum of their gradients: left to torch.func)."""
    owners: dict[int, int] = {}
    for m in model.modules():
        for p in trainable(m).values():
            owners[id(p)] = owners.get(id(p), 0) + 1
    return {name: m for name, m in model.named_modules()
            if trainable(m) and has_closed_form(m)
            and all(owners[id(p)] == 1 for p in trainable(m).values())
            and (only is None or name in only)}


def capture(model: nn.Module, x: Tensor, seeds: Seeds, only: set[str] | None = None,
            scratch: Scratch | None = None) -> tuple[dict[str, Captured | DenseFactor], Tensor]:
    """Each closed-form layer's inputs and per-seed output gradients for the examples ``x`` (a
    normalisation layer: its per-example, per-seed parameter gradients, contracted seed by seed),
    and the seeds used ((n, k, c)). Layers the forward pass never called are left out."""
    layers = closed_form_layers(model, only)
    calls: dict[str, list[tuple[Tensor, Tensor]]] = {name: [] for name in layers}  # (kept input, output)

    def recorder(name):
        def hook(module, args, output):
            calls[name].append((_kept_input(module, args[0].detach()), output))
            return output.clone()  # later in-place ops then cannot alter the recorded output
        return hook

    handles = [m.register_forward_hook(recorder(name)) for name, m in layers.items()]
    try:
        with torch.enable_grad():
            out = flat_outputs(model(x))
    finally:
        for handle in handles:
            handle.remove()
    seed_tensor = seeds(out.detach()) if callable(seeds) else seeds
    k = seed_tensor.shape[1]
    sinks = {name: [_sink(layers[name], kept, output, k, scratch, (name, call))
                    for call, (kept, output) in enumerate(calls[name])]
             for name in layers if calls[name]}
    _output_gradients(out, [sink for per_call in sinks.values() for sink in per_call], seed_tensor)
    return {name: _result(layers[name], per_call) for name, per_call in sinks.items()}, seed_tensor


def _kept_input(module: nn.Module, h: Tensor) -> Tensor:
    """What the backward pass needs of a layer's input: a normalisation layer's normalised input
    (what its scale multiplies), else the input itself."""
    return _normalised(module, h) if _is_norm(module) else h.clone()


class _OutputGradients:
    """A recorded output's gradients for every seed, kept as (n, k, ...) for the products over
    examples and positions that follow."""

    def __init__(self, kept: Tensor, output: Tensor, k: int, scratch: Scratch | None, key):
        self.kept, self.output = kept, output
        self.grads = _empty(scratch, key, (output.shape[0], k, *output.shape[1:]), output)

    def take(self, seed: int, g: Tensor | None) -> None:
        if g is None:  # a recorded output the chosen outputs do not depend on
            self.grads[:, seed] = 0
        else:
            self.grads[:, seed] = g


class _NormGradients:
    """A normalisation layer's (n, k, p) per-example parameter gradients (scale, then shift, as
    registered), contracted from each seed's output gradient as it arrives: the (n, k, ...)
    output gradients, as large as the layer's activations times k, are never stored."""

    def __init__(self, module: nn.Module, output: Tensor, x_hat: Tensor, k: int):
        self.output, self.x_hat = output, _by_parameter(module, x_hat)
        self.params = trainable(module)
        self.grads = output.new_zeros(output.shape[0], k, len(self.params), self.x_hat.shape[1])
        self.module = module

    def take(self, seed: int, g: Tensor | None) -> None:
        if g is None:
            return
        g = _by_parameter(self.module, g)
        for row, name in enumerate(self.params):  # Σ over positions: of g x̂ (scale), of g (shift)
            self.grads[:, seed, row] = torch.linalg.vecdot(g, self.x_hat) if name == "weight" else g.sum(2)


def _by_parameter(module: nn.Module, t: Tensor) -> Tensor:
    """(m, p, positions): a normalisation layer's input or output gradient by the parameter that
    scales each entry, and the positions that parameter is shared over."""
    if isinstance(module, nn.LayerNorm):
        return t.reshape(t.shape[0], -1, math.prod(module.normalized_shape)).transpose(1, 2)
    return t.reshape(t.shape[0], t.shape[1], -1)


def _sink(module, kept, output, k, scratch, key):
    if _is_norm(module):
        return _NormGradients(module, output, kept, k)
    return _OutputGradients(kept, output, k, scratch, key)


def _result(module: nn.Module, sinks: list) -> Captured | DenseFactor:
    if _is_norm(module):  # the calls of a shared layer summed
        return DenseFactor(sum(sink.grads for sink in sinks).flatten(2))
    return Captured(module, [sink.kept for sink in sinks], [sink.grads for sink in sinks])


def _output_gradients(out: Tensor, sinks: list, seeds: Tensor) -> None:
    """∂ (seeds[i, k] · out[i]) / ∂ (each recorded output)[i] for every example i and seed k
    (examples are independent), handed to each recorded output's sink seed by seed: one plain
    backward pass per seed (batching the seeds with vmap was slower: its convolution backward
    leaves the oneDNN path)."""
    if not sinks:
        return
    recorded = [sink.output for sink in sinks]
    k = seeds.shape[1]
    for seed in range(k):
        grads = torch.autograd.grad(out, recorded, grad_outputs=seeds[:, seed], allow_unused=True,
                                    retain_graph=seed < k - 1)
        for sink, g in zip(sinks, grads):
            sink.take(seed, g)


def auto_chunk_size(model: nn.Module, x: Tensor, n_seeds: int, memory_bytes: int) -> int:
    """Examples per capture (forward and batched backward pass) so that it fits in ``memory_bytes``.

    An estimate: per example, the activations of every module are held once for the forward
    pass and once per seed for the backward passes, and the layer factors (inputs,
    unfolded patches, output gradients) are of the same order; a factor 2 covers the latter.
    """
    sizes = []

    def record(module, args, output):
        if isinstance(output, Tensor):
            sizes.append(output.nbytes)

    handles = [m.register_forward_hook(record) for m in model.modules() if not list(m.children())]
    try:
        with torch.no_grad():
            model(x[:1])
    finally:
        for handle in handles:
            handle.remove()
    per_example = 2 * (n_seeds + 1) * max(sum(sizes), x[:1].nbytes)
    return int(max(1, min(len(x), memory_bytes // per_example)))


def layer_captures(model: nn.Module, x: Tensor, seeds: Seeds, only: set[str] | None = None,
                   outputs: list[int] | None = None,
                   scratch: Scratch | None = None) -> dict[str, Captured | DenseFactor]:
    """What every layer that owns trainable parameters (or every layer named in ``only``) gives
    for the examples ``x`` and the seeds, keyed by module name ("" is the root module): its
    capture, or its gradients (normalisation layers, and the layers no closed form covers, from
    torch.func). ``outputs``: when the seeds are one-hot on these output indices, the torch.func
    route differentiates only those outputs. ``scratch``: memory reused across the calls of a
    chunked computation; the captures are then valid until the next call."""
    captured, seed_tensor = capture(model, x, seeds, only, scratch)
    layers: dict[str, Captured | DenseFactor] = dict(captured)
    # Layers a forward pass never called as modules (e.g. weights used through F.* calls inside
    # another module) and every other parameterised module: torch.func, exactly.
    modules = dict(model.named_modules())
    covered = {id(p) for name in captured for p in trainable(modules[name]).values()}
    rest = {name: m for name, m in model.named_modules()
            if any(id(p) not in covered for p in trainable(m).values())
            and (only is None or name in only)}
    if rest:
        layers.update(_functional_factors(model, x, seed_tensor, outputs, rest, covered))
    return layers


def layer_factors(model: nn.Module, x: Tensor, seeds: Seeds, only: set[str] | None = None,
                  outputs: list[int] | None = None) -> dict[str, OuterFactor | DenseFactor]:
    """Tangent factors of every layer that owns trainable parameters (see ``layer_captures``)."""
    return {name: captured_factor(c) if isinstance(c, Captured) else c
            for name, c in layer_captures(model, x, seeds, only, outputs).items()}


def per_example_gradients(model: nn.Module, x: Tensor, seeds: Seeds,
                          outputs: list[int] | None = None) -> Tensor:
    """(n, k, P) gradients of each seed's scalar over every trainable parameter, in
    ``model.named_parameters()`` order, assembled from the layer factors (one forward and one
    backward pass; no vmap)."""
    factors = layer_factors(model, x, seeds, outputs=outputs)
    modules = dict(model.named_modules())
    owned = [(modules[name], factors[name]) for name in modules if name in factors]
    widths = [_factor_width(module, factor) for module, factor in owned]
    first = owned[0][1]
    reference = first.grads if isinstance(first, DenseFactor) else first.output_grads
    gradients = reference.new_empty(len(x), reference.shape[1], sum(widths))
    start = 0
    for (module, factor), width in zip(owned, widths):
        write_gradients(module, factor, gradients[:, :, start:start + width])
        start += width
    return gradients.detach()


def _factor_width(module: nn.Module, factor) -> int:
    if isinstance(factor, DenseFactor):  # torch.func's gradients: of the parameters it was given
        return factor.grads.shape[2]
    return sum(p.numel() for p in trainable(module).values())


def write_gradients(module: nn.Module, factor: OuterFactor | DenseFactor, target: Tensor) -> None:
    """The layer's (n, k, p) gradients written into ``target`` (weight then bias, as
    ``named_parameters``), without an intermediate copy."""
    if isinstance(factor, DenseFactor):
        target.copy_(factor.grads)
        return
    grads, inputs = factor.output_grads.detach(), factor.inputs.detach()
    params = trainable(module)
    out = grads.shape[2]
    if "weight" in params:
        width = inputs.shape[1] - ("bias" in params)
        weight = target[:, :, :out * width].unflatten(2, (out, width))
        torch.mul(grads[..., None], inputs[:, None, None, :width], out=weight)
    if "bias" in params:
        target[:, :, target.shape[2] - out:].copy_(grads * inputs[:, None, -1:])


def _functional_factors(model, x, seeds, outputs, modules, covered) -> dict[str, DenseFactor]:
    prefix = {name: f"{name}." if name else "" for name in modules}
    first_owner: dict[int, str] = {}
    for name, m in model.named_modules():
        for p in trainable(m).values():
            first_owner.setdefault(id(p), name)
    # A tied parameter counts once, under its first owner, whichever layers are asked for.
    wanted = {prefix[name] + pname: p.detach() for name, m in modules.items()
              for pname, p in trainable(m).items()
              if id(p) not in covered and first_owner[id(p)] == name}
    jacobians = per_example_jacobians(model, x, wanted, outputs)
    if outputs is None:  # rows of the full Jacobian, combined by the seeds
        jacobians = {key: torch.einsum("nkc,ncp->nkp", seeds, j) for key, j in jacobians.items()}
    factors = {}
    for name in modules:
        own = [key for key in wanted if key.startswith(prefix[name]) and "." not in key[len(prefix[name]):]]
        if own:
            factors[name] = DenseFactor(torch.cat([jacobians[key] for key in own], dim=2))
    return factors


def per_example_jacobians(model: nn.Module, x: Tensor, wanted: dict[str, Tensor],
                          outputs: list[int] | None = None) -> dict[str, Tensor]:
    """Per-example Jacobians (n, c, numel) of the chosen outputs over the ``wanted`` parameters
    (by name), the others held fixed: torch.func, vmap over jacrev. Flattened by each
    parameter's size, not by flatten(2): a 0-dim parameter's Jacobian has no third axis."""
    fixed = {name: p.detach() for name, p in model.named_parameters()}
    buffers = dict(model.named_buffers())
    index = None if outputs is None else torch.as_tensor(outputs, device=x.device)

    def single(params, example):
        out = flat_outputs(functional_call(model, ({**fixed, **params}, buffers), (example.unsqueeze(0),)))[0]
        return out if index is None else out[index]

    jacobians = vmap(jacrev(single), in_dims=(None, 0))(wanted, x)  # (n, c, *shape) each
    return {name: j.reshape(*j.shape[:2], wanted[name].numel()) for name, j in jacobians.items()}
