"""What attention costs (5.2): time and memory against the sequence length, beside a
recurrence.

Self-attention compares every pair of tokens, so its time and the memory kept for the
backward pass grow like ``T^2``; a recurrence visits the tokens one after the other and
keeps one state per token, so both grow like ``T`` (but the ``T`` steps cannot run in
parallel).

Memory is measured exactly, as the bytes of the tensors autograd saves for the backward
pass (:func:`saved_tensor_bytes`); time is the best of a few runs
(:func:`flt_lib.timing.best_time`), so on a shared machine it is noisier than the memory
count.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import nn

from flt_lib._validate import check_generator, check_int
from flt_lib.attention.multi_head import MultiHeadAttention
from flt_lib.timing import best_time

__all__ = ["CostRow", "saved_tensor_bytes", "saved_tensor_shapes", "sequence_costs"]


def saved_tensor_bytes(
    fn: Callable[[], torch.Tensor], *, exclude: Sequence[torch.Tensor] = ()
) -> int:
    """Bytes of the distinct tensors autograd saves while ``fn()`` runs its forward
    pass.

    Tensors sharing storage with one in ``exclude`` (e.g. the parameters, whose memory
    does not depend on the input) are not counted. Each storage is counted once.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    return _saved_tensor_bytes(fn, exclude=exclude)


def _saved_tensor_bytes(
    fn: Callable[[], torch.Tensor], *, exclude: Sequence[torch.Tensor] = ()
) -> int:
    """The check-free core of :func:`saved_tensor_bytes` (arguments already checked)."""
    skip = {t.untyped_storage().data_ptr() for t in exclude}
    seen: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        if storage.data_ptr() not in skip:
            seen[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn()
    return sum(seen.values())


def saved_tensor_shapes(
    fn: Callable[[], torch.Tensor], *, exclude: Sequence[torch.Tensor] = ()
) -> list[tuple[int, ...]]:
    """Shapes of the distinct tensors autograd saves while ``fn()`` runs its forward
    pass, one per storage (the first view saved), in the order they were saved.

    The same hook as :func:`saved_tensor_bytes`; tensors sharing storage with one in
    ``exclude`` are left out.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    skip = {t.untyped_storage().data_ptr() for t in exclude}
    seen: dict[int, tuple[int, ...]] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        ptr = t.untyped_storage().data_ptr()
        if ptr not in skip and ptr not in seen:
            seen[ptr] = tuple(t.shape)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn()
    return list(seen.values())


@dataclass(frozen=True)
class CostRow:
    """Cost of one forward pass over a sequence of length T."""

    T: int                   # sequence length
    attention_s: float       # seconds, multi-head self-attention layer
    # seconds, an Elman recurrence (torch.nn.RNN) of the same width
    recurrence_s: float
    attention_bytes: int     # bytes saved for the backward pass, attention
    recurrence_bytes: int    # bytes saved for the backward pass, recurrence


def sequence_costs(
    lengths: Sequence[int],
    *,
    d_model: int,
    n_heads: int,
    generator: torch.Generator,
    repeat: int = 3,
) -> list[CostRow]:
    """Time and saved memory of one self-attention layer and one recurrence, for each
    length.

    Both layers map a batch of one sequence (1, T, d_model) to (1, T, d_model); inputs
    require gradients, so the forward pass saves what the backward pass would need.

    Args:
        lengths: sequence lengths T to measure, each >= 1.
        d_model: width of tokens and of the recurrent state.
        n_heads: heads of the attention layer.
        generator: CPU generator for inputs and weights.
        repeat: timing runs per measurement (the best counts).

    Returns:
        One :class:`CostRow` per length.
    """
    lengths = [check_int(T, "lengths[i]", min_value=1) for T in lengths]
    d_model = check_int(d_model, "d_model", min_value=1)
    check_generator(generator)
    mha = MultiHeadAttention(d_model, n_heads, generator=generator)
    rnn = nn.RNN(d_model, d_model, batch_first=True)
    # PyTorch's default U(-1/sqrt(d), 1/sqrt(d)), from the generator
    with torch.no_grad():
        for p in rnn.parameters():
            p.copy_((torch.rand(p.shape, generator=generator) * 2 - 1) / d_model**0.5)
    params = [*mha.parameters(), *rnn.parameters()]
    rows = []
    for T in lengths:
        x = torch.randn(1, T, d_model, generator=generator).requires_grad_()

        def att() -> torch.Tensor:
            return mha(x)[0]

        def rec() -> torch.Tensor:
            return rnn(x)[0]

        rows.append(CostRow(
            T=T,
            attention_s=best_time(att, repeat=repeat),
            recurrence_s=best_time(rec, repeat=repeat),
            attention_bytes=saved_tensor_bytes(att, exclude=params),
            recurrence_bytes=saved_tensor_bytes(rec, exclude=params),
        ))
    return rows
