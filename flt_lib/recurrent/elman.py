"""The Elman RNN, bidirectional and stacked (Sections 4.1 and 4.2).

One layer maps inputs x_1, ..., x_T in R^n to states z_1, ..., z_T in R^m by

    z_t = phi(U z_{t-1} + V x_t + b),   z_0 given (zero by default),      (eq-rnn-elman)

with U in R^{m x m}, V in R^{m x n} and b in R^m (Elman 1990). A bidirectional layer
runs a second, independent layer from right to left and concatenates the two states
(Schuster & Paliwal 1997); a stacked RNN feeds the states of one layer as the inputs of
the next. :func:`from_torch_rnn` reads the weights of a ``torch.nn.RNN`` (whose two
biases add up to b), so the two implementations can be compared exactly.

Shapes: inputs (B, T, n), states (B, T, m).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from flt_lib._validate import check_choice, check_generator, check_int, check_tensor

__all__ = [
    "ACTIVATIONS",
    "ElmanWeights",
    "activation_fn",
    "elman_init",
    "elman",
    "bidirectional",
    "stacked",
    "from_torch_rnn",
]

# phi and its derivative phi' as a function of the pre-activation a.
ACTIVATIONS: dict[
    str,
    tuple[
        Callable[[torch.Tensor], torch.Tensor],
        Callable[[torch.Tensor], torch.Tensor],
    ],
] = {
    "tanh": (torch.tanh, lambda a: 1 - torch.tanh(a) ** 2),
    "relu": (torch.relu, lambda a: (a > 0).to(a.dtype)),
    "linear": (lambda a: a, lambda a: torch.ones_like(a)),
}


@dataclass(frozen=True)
class ElmanWeights:
    """The parameters of one Elman layer (eq-rnn-elman)."""

    U: torch.Tensor  # (m, m) recurrent weights: how the previous state enters
    V: torch.Tensor  # (m, n) input weights: how the current input enters
    b: torch.Tensor  # (m,) bias (torch.nn.RNN's bias_ih + bias_hh)

    def __post_init__(self) -> None:
        check_tensor(self.U, "U", ndim=2, floating=True, shape_doc="(m, m)")
        m = self.U.shape[0]
        check_tensor(self.U, "U", shape=(m, m), shape_doc=f"(m, m) = ({m}, {m})")
        check_tensor(self.V, "V", ndim=2, floating=True, shape_doc="(m, n)")
        if self.V.shape[0] != m:
            raise ValueError(
                f"V must have shape (m, n) with m = {m}, got {tuple(self.V.shape)}"
            )
        check_tensor(self.b, "b", shape=(m,), floating=True, shape_doc=f"(m,) = ({m},)")
        if not self.U.dtype == self.V.dtype == self.b.dtype:
            raise TypeError(
                f"U, V, b must share a dtype, got {self.U.dtype}, {self.V.dtype}, "
                f"{self.b.dtype}"
            )

    @property
    def m(self) -> int:
        """State width."""
        return self.U.shape[0]

    @property
    def n(self) -> int:
        """Input width."""
        return self.V.shape[1]


def activation_fn(name: str) -> tuple[
    Callable[[torch.Tensor], torch.Tensor], Callable[[torch.Tensor], torch.Tensor]
]:
    """Return (phi, phi') for ``name`` in ``ACTIVATIONS`` ("tanh", "relu",
    "linear")."""
    check_choice(name, "activation", list(ACTIVATIONS))
    return ACTIVATIONS[name]


def elman_init(
    n: int, m: int, *, generator: torch.Generator, gain: float = 1.0,
    dtype: torch.dtype = torch.float64,
) -> ElmanWeights:
    """Draw an Elman layer as torch.nn.RNN does: every entry uniform on [-k, k],
    k = gain / sqrt(m).

    Args:
        n: input width, >= 1.
        m: state width, >= 1.
        generator: a CPU torch.Generator.
        gain: multiplies the range k (1 gives PyTorch's default).
        dtype: floating dtype.

    Returns:
        :class:`ElmanWeights` on the CPU.
    """
    n, m = check_int(n, "n", min_value=1), check_int(m, "m", min_value=1)
    check_generator(generator)
    k = gain / math.sqrt(m)

    def unif(*shape: int) -> torch.Tensor:
        return (2 * torch.rand(*shape, generator=generator, dtype=dtype) - 1) * k

    return ElmanWeights(U=unif(m, m), V=unif(m, n), b=unif(m))


def _check_x(x: object, n: int) -> torch.Tensor:
    check_tensor(x, "x", ndim=3, floating=True, shape_doc="(B, T, n)")
    if x.shape[-1] != n:
        raise ValueError(
            f"x must have shape (B, T, n) with n = {n}, got {tuple(x.shape)}"
        )
    return x


def elman(
    x: torch.Tensor, w: ElmanWeights, *, z0: torch.Tensor | None = None,
    activation: str = "tanh", reverse: bool = False,
) -> torch.Tensor:
    """All states of one Elman layer (eq-rnn-elman).

    Args:
        x: inputs, (B, T, n).
        w: the layer's weights.
        z0: initial state, (B, m) or (m,); zero if None.
        activation: "tanh", "relu" or "linear".
        reverse: if True, run from t = T down to 1 (the backward half of a bidirectional
            layer); the result is still indexed by t.

    Returns:
        Z, (B, T, m), with Z[:, t] the state after reading x_{t+1} (or, if reversed,
        after reading x_T, ..., x_{t+1}).
    """
    if not isinstance(w, ElmanWeights):
        raise TypeError(f"w must be an ElmanWeights, got {type(w).__name__}")
    _check_x(x, w.n)
    return _elman(x, w, z0, activation, reverse)


def _elman(x, w, z0, activation, reverse):
    phi, _ = activation_fn(activation)
    z = x.new_zeros(x.shape[0], w.m) if z0 is None else z0.expand(x.shape[0], w.m)
    # (B, T, m), all inputs at once
    Vx = x @ w.V.T + w.b
    steps = range(x.shape[1] - 1, -1, -1) if reverse else range(x.shape[1])
    out: list[torch.Tensor] = [z] * x.shape[1]
    for t in steps:
        z = phi(z @ w.U.T + Vx[:, t])                     # (B, m)
        out[t] = z
    return torch.stack(out, dim=1)


def bidirectional(
    x: torch.Tensor, fwd: ElmanWeights, bwd: ElmanWeights, *, activation: str = "tanh"
) -> torch.Tensor:
    """A bidirectional layer: [forward state at t ; backward state at t] (Schuster &
    Paliwal 1997).

    Args:
        x: inputs, (B, T, n).
        fwd, bwd: the weights of the left-to-right and right-to-left layers.
        activation: as in :func:`elman`.

    Returns:
        (B, T, 2m): position t sees x_1..x_t through the first half and x_t..x_T through
        the second.
    """
    return torch.cat([elman(x, fwd, activation=activation),
                      elman(x, bwd, activation=activation, reverse=True)], dim=-1)


def stacked(
    x: torch.Tensor, layers: Sequence[ElmanWeights | tuple[ElmanWeights, ElmanWeights]],
    *, activation: str = "tanh",
) -> torch.Tensor:
    """A stacked RNN: layer l reads the states of layer l - 1 as its inputs
    (eq-rnn-stacked).

    Args:
        x: inputs, (B, T, n).
        layers: one entry per layer, an :class:`ElmanWeights` (unidirectional) or a pair
            ``(fwd, bwd)`` (bidirectional).
        activation: as in :func:`elman`.

    Returns:
        The states of the top layer, (B, T, m) or (B, T, 2m).
    """
    if (
        isinstance(layers, ElmanWeights)
        or not isinstance(layers, Sequence)
        or not layers
    ):
        raise TypeError(
            "layers must be a non-empty sequence of ElmanWeights or (fwd, bwd) pairs"
        )
    h = x
    for i, layer in enumerate(layers):
        if isinstance(layer, ElmanWeights):
            h = elman(h, layer, activation=activation)
        elif isinstance(layer, tuple) and len(layer) == 2:
            h = bidirectional(h, *layer, activation=activation)
        else:
            raise TypeError(
                f"layers[{i}] must be an ElmanWeights or a (fwd, bwd) pair, got "
                f"{type(layer).__name__}"
            )
    return h


def from_torch_rnn(
    rnn: torch.nn.RNN,
) -> list[ElmanWeights | tuple[ElmanWeights, ElmanWeights]]:
    """Read the weights of a ``torch.nn.RNN`` (batch_first or not) as a list for
    :func:`stacked`.

    torch computes h_t = phi(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh), so V = W_ih,
    U = W_hh and b = b_ih + b_hh.

    Args:
        rnn: a ``torch.nn.RNN`` with biases.

    Returns:
        One entry per layer: ElmanWeights, or (fwd, bwd) if the RNN is bidirectional.
    """
    if not isinstance(rnn, torch.nn.RNN):
        raise TypeError(f"rnn must be a torch.nn.RNN, got {type(rnn).__name__}")
    if not rnn.bias:
        raise ValueError("rnn must have biases (bias=True)")
    layers: list = []
    for layer in range(rnn.num_layers):
        ws = []
        for suffix in [""] + (["_reverse"] if rnn.bidirectional else []):
            get = lambda name: (  # noqa: E731
                getattr(rnn, f"{name}_l{layer}{suffix}").detach().clone()
            )
            ws.append(
                ElmanWeights(
                    U=get("weight_hh"),
                    V=get("weight_ih"),
                    b=get("bias_ih") + get("bias_hh"),
                )
            )
        layers.append(tuple(ws) if rnn.bidirectional else ws[0])
    return layers
