"""Gated memory: the LSTM and GRU cells, and the adding problem (Section 4.3).

LSTM (Hochreiter & Schmidhuber 1997, with the forget gate of Gers et al. 2000), in
PyTorch's gate order (i, f, g, o): with s_t = [x_t; h_{t-1}],

    i_t = sigma(W_i s_t + b_i)      input gate: how much of the candidate to write
    f_t = sigma(W_f s_t + b_f)      forget gate: how much of the old cell to keep
    g_t = tanh(W_g s_t + b_g)       candidate cell content (the "new information")
    o_t = sigma(W_o s_t + b_o)      output gate: how much of the cell to expose
    c_t = f_t * c_{t-1} + i_t * g_t,   h_t = o_t * tanh(c_t).             (eq-rnn-lstm)

GRU (Cho et al. 2014), in PyTorch's form (the reset gate multiplies U h + b after the
product):

    r_t = sigma(...),  u_t = sigma(...),
    n_t = tanh(W_n x_t + b_n + r_t * (U_n h_{t-1} + c_n)),
    h_t = (1 - u_t) * n_t + u_t * h_{t-1}.                                  (eq-rnn-gru)

The adding problem (Hochreiter & Schmidhuber 1997; here in the form of Le et al. 2015)
asks for the sum of the two numbers marked in a long sequence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from flt_lib._validate import (
    check_choice,
    check_generator,
    check_int,
    check_real,
    check_tensor,
)
from flt_lib.optim.adaptive import AdamConfig
from flt_lib.optim.train_step import adam_train_step

__all__ = [
    "LSTMWeights",
    "GRUWeights",
    "lstm_cell",
    "lstm",
    "gru_cell",
    "gru",
    "from_torch_lstm",
    "from_torch_gru",
    "adding_problem",
    "SequenceRegressor",
    "AddingHistory",
    "train_adding",
]


def _check_stacked(Wx: object, Wh: object, k: int, names: tuple[str, str]) -> int:
    check_tensor(Wh, names[1], ndim=2, floating=True, shape_doc=f"({k}m, m)")
    m = Wh.shape[1]
    check_tensor(
        Wh, names[1], shape=(k * m, m), shape_doc=f"({k}m, m) = ({k * m}, {m})"
    )
    check_tensor(Wx, names[0], ndim=2, floating=True, shape_doc=f"({k}m, n)")
    if Wx.shape[0] != k * m:
        raise ValueError(
            f"{names[0]} must have shape ({k}m, n) with m = {m}, got "
            f"{tuple(Wx.shape)}"
        )
    return m


@dataclass(frozen=True)
class LSTMWeights:
    """One LSTM layer, gates stacked in PyTorch's order (i, f, g, o) (eq-rnn-lstm)."""

    Wx: torch.Tensor  # (4m, n) input-to-gate weights (torch's weight_ih)
    Wh: torch.Tensor  # (4m, m) hidden-to-gate weights (torch's weight_hh)
    b: torch.Tensor   # (4m,) gate biases (torch's bias_ih + bias_hh)

    def __post_init__(self) -> None:
        m = _check_stacked(self.Wx, self.Wh, 4, ("Wx", "Wh"))
        check_tensor(
            self.b, "b", shape=(4 * m,), floating=True, shape_doc=f"(4m,) = ({4 * m},)"
        )

    @property
    def m(self) -> int:
        """Hidden (and cell) width."""
        return self.Wh.shape[1]


@dataclass(frozen=True)
class GRUWeights:
    """One GRU layer, gates stacked in PyTorch's order (r, u, n) (eq-rnn-gru)."""

    Wx: torch.Tensor  # (3m, n) input-to-gate weights (torch's weight_ih)
    Wh: torch.Tensor  # (3m, m) hidden-to-gate weights (torch's weight_hh)
    bx: torch.Tensor  # (3m,) input-side biases (torch's bias_ih)
    # (3m,) hidden-side biases (torch's bias_hh; its n-part sits inside r * (...))
    bh: torch.Tensor

    def __post_init__(self) -> None:
        m = _check_stacked(self.Wx, self.Wh, 3, ("Wx", "Wh"))
        for name in ("bx", "bh"):
            check_tensor(
                getattr(self, name),
                name,
                shape=(3 * m,),
                floating=True,
                shape_doc=f"(3m,) = ({3 * m},)",
            )

    @property
    def m(self) -> int:
        """Hidden width."""
        return self.Wh.shape[1]


def lstm_cell(
    x_t: torch.Tensor, h: torch.Tensor, c: torch.Tensor, w: LSTMWeights
) -> tuple[torch.Tensor, torch.Tensor]:
    """One LSTM step (eq-rnn-lstm): returns the new (h_t, c_t), each (B, m).

    Args:
        x_t: inputs at this step, (B, n).
        h, c: previous hidden and cell states, (B, m).
        w: the layer's weights.
    """
    gates = x_t @ w.Wx.T + h @ w.Wh.T + w.b              # (B, 4m)
    i, f, g, o = gates.chunk(4, dim=-1)
    i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
    # the cell: keep some, write some
    c = f * c + i * g
    h = o * torch.tanh(c)                               # the exposed state
    return h, c


def lstm(
    x: torch.Tensor,
    w: LSTMWeights,
    state: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Run an LSTM layer over a sequence.

    Args:
        x: inputs, (B, T, n).
        w: the layer's weights.
        state: initial (h_0, c_0), each (B, m); zeros if None.

    Returns:
        ``(H, C)``: hidden and cell states, each (B, T, m).
    """
    if not isinstance(w, LSTMWeights):
        raise TypeError(f"w must be an LSTMWeights, got {type(w).__name__}")
    check_tensor(x, "x", ndim=3, floating=True, shape_doc="(B, T, n)")
    if x.shape[-1] != w.Wx.shape[1]:
        raise ValueError(
            f"x must have shape (B, T, n) with n = {w.Wx.shape[1]}, got "
            f"{tuple(x.shape)}"
        )
    if state is None:
        h, c = (x.new_zeros(x.shape[0], w.m),) * 2
    else:
        if not isinstance(state, (tuple, list)) or len(state) != 2:
            raise TypeError(
                "state must be a pair (h_0, c_0) of tensors, got "
                f"{type(state).__name__}"
            )
        h, c = state
        shape = (x.shape[0], w.m)
        for name, s in (("state[0] (h_0)", h), ("state[1] (c_0)", c)):
            check_tensor(s, name, shape=shape, floating=True, shape_doc="(B, m)")
    H, C = [], []
    for x_t in x.unbind(1):
        h, c = lstm_cell(x_t, h, c, w)
        H.append(h)
        C.append(c)
    return torch.stack(H, dim=1), torch.stack(C, dim=1)


def gru_cell(x_t: torch.Tensor, h: torch.Tensor, w: GRUWeights) -> torch.Tensor:
    """One GRU step (eq-rnn-gru): returns the new h_t, (B, m).

    Args:
        x_t: inputs at this step, (B, n).
        h: previous hidden state, (B, m).
        w: the layer's weights.
    """
    xr, xu, xn = (x_t @ w.Wx.T + w.bx).chunk(3, dim=-1)  # (B, m) each
    hr, hu, hn = (h @ w.Wh.T + w.bh).chunk(3, dim=-1)
    r = torch.sigmoid(xr + hr)                          # reset gate
    u = torch.sigmoid(xu + hu)                          # update gate (u = 1 keeps h)
    n = torch.tanh(xn + r * hn)                         # candidate state
    return (1 - u) * n + u * h                          # convex combination


def gru(x: torch.Tensor, w: GRUWeights, h0: torch.Tensor | None = None) -> torch.Tensor:
    """Run a GRU layer over a sequence.

    Args:
        x: inputs, (B, T, n).
        w: the layer's weights.
        h0: initial state (B, m); zeros if None.

    Returns:
        H, the hidden states, (B, T, m).
    """
    if not isinstance(w, GRUWeights):
        raise TypeError(f"w must be a GRUWeights, got {type(w).__name__}")
    check_tensor(x, "x", ndim=3, floating=True, shape_doc="(B, T, n)")
    if x.shape[-1] != w.Wx.shape[1]:
        raise ValueError(
            f"x must have shape (B, T, n) with n = {w.Wx.shape[1]}, got "
            f"{tuple(x.shape)}"
        )
    if h0 is None:
        h = x.new_zeros(x.shape[0], w.m)
    else:
        h = check_tensor(
            h0, "h0", shape=(x.shape[0], w.m), floating=True, shape_doc="(B, m)"
        )
    H = []
    for x_t in x.unbind(1):
        h = gru_cell(x_t, h, w)
        H.append(h)
    return torch.stack(H, dim=1)


def from_torch_lstm(module: torch.nn.LSTM) -> LSTMWeights:
    """Read the weights of a one-layer, unidirectional ``torch.nn.LSTM`` with biases."""
    if not isinstance(module, torch.nn.LSTM):
        raise TypeError(f"module must be a torch.nn.LSTM, got {type(module).__name__}")
    if (
        module.num_layers != 1
        or module.bidirectional
        or not module.bias
        or module.proj_size
    ):
        raise ValueError(
            "module must have one layer, one direction, biases and no projection"
        )
    get = lambda name: getattr(module, name).detach().clone()  # noqa: E731
    return LSTMWeights(
        Wx=get("weight_ih_l0"),
        Wh=get("weight_hh_l0"),
        b=get("bias_ih_l0") + get("bias_hh_l0"),
    )


def from_torch_gru(module: torch.nn.GRU) -> GRUWeights:
    """Read the weights of a one-layer, unidirectional ``torch.nn.GRU`` with biases."""
    if not isinstance(module, torch.nn.GRU):
        raise TypeError(f"module must be a torch.nn.GRU, got {type(module).__name__}")
    if module.num_layers != 1 or module.bidirectional or not module.bias:
        raise ValueError("module must have one layer, one direction and biases")
    get = lambda name: getattr(module, name).detach().clone()  # noqa: E731
    return GRUWeights(
        Wx=get("weight_ih_l0"),
        Wh=get("weight_hh_l0"),
        bx=get("bias_ih_l0"),
        bh=get("bias_hh_l0"),
    )


def adding_problem(
    batch_size: int, T: int, *, generator: torch.Generator,
    dtype: torch.dtype = torch.float32,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Sequences of the adding problem, with one marker in each half (Le et al. 2015).

    Channel 0 holds numbers uniform on [0, 1]; channel 1 is 0 except for two 1s, one at
    a uniform position in the first half and one in the second half. The target is the
    sum of the two marked numbers. Always predicting 1 gives mean squared error
    Var(u + u') = 1/6.

    Args:
        batch_size: number of sequences B, >= 1.
        T: sequence length, >= 2.
        generator: a CPU torch.Generator.
        dtype: floating dtype.

    Returns:
        ``(x, y)`` with x of shape (B, T, 2) and y of shape (B,).
    """
    B = check_int(batch_size, "batch_size", min_value=1)
    T = check_int(T, "T", min_value=2)
    check_generator(generator)
    return _adding_problem(B, T, generator=generator, dtype=dtype)


def _adding_problem(
    B: int,
    T: int,
    *,
    generator: torch.Generator,
    dtype: torch.dtype = torch.float32,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The check-free core of :func:`adding_problem` (arguments already checked)."""
    values = torch.rand(B, T, generator=generator, dtype=dtype)
    half = T // 2
    first = torch.randint(0, half, (B,), generator=generator)
    second = torch.randint(half, T, (B,), generator=generator)
    marks = torch.zeros(B, T, dtype=dtype)
    rows = torch.arange(B)
    marks[rows, first] = 1.0
    marks[rows, second] = 1.0
    y = values[rows, first] + values[rows, second]
    return torch.stack([values, marks], dim=-1), y


class SequenceRegressor(torch.nn.Module):
    """A one-layer recurrent network (torch's fast kernels) with a linear read-out
    of the last state.

    The cells are torch.nn.RNN (tanh, the Elman RNN), torch.nn.LSTM or torch.nn.GRU: the
    same equations as :func:`~flt_lib.recurrent.elman.elman`, :func:`lstm` and
    :func:`gru`, which the tests check with copied weights; torch's versions are used
    for training because they are several times faster.
    """

    def __init__(
        self, kind: str, n_in: int, hidden: int, *, forget_bias: float | None = None,
        generator: torch.Generator,
    ) -> None:
        """Args:
            kind: "elman", "lstm" or "gru".
            n_in: input width; hidden: state width.
            forget_bias: for the LSTM, set the total forget-gate bias to this value
                (Jozefowicz et al. 2015 recommend 1); None keeps torch's initialisation.
            generator: seeds the initialisation (torch's default uniform
                +-1/sqrt(hidden)).
        """
        super().__init__()
        check_choice(kind, "kind", ["elman", "lstm", "gru"])
        n_in, hidden = (
            check_int(n_in, "n_in", min_value=1),
            check_int(hidden, "hidden", min_value=1),
        )
        check_generator(generator)
        if forget_bias is not None and kind != "lstm":
            raise ValueError(
                f"forget_bias applies to kind='lstm' only, got kind={kind!r}"
            )
        cls = {"elman": torch.nn.RNN, "lstm": torch.nn.LSTM, "gru": torch.nn.GRU}[kind]
        self.kind = kind
        self.rnn = cls(n_in, hidden, batch_first=True)
        self.head = torch.nn.Linear(hidden, 1)
        k = 1 / math.sqrt(hidden)
        with torch.no_grad():
            # torch's ranges, drawn from our generator
            for p in self.parameters():
                p.copy_((2 * torch.rand(p.shape, generator=generator) - 1) * k)
            if forget_bias is not None:
                forget_bias = check_real(forget_bias, "forget_bias")
                self.rnn.bias_ih_l0[hidden:2 * hidden] = forget_bias
                self.rnn.bias_hh_l0[hidden:2 * hidden] = 0.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Predictions, (B,), from inputs (B, T, n_in)."""
        out, _ = self.rnn(x)                            # (B, T, hidden)
        return self.head(out[:, -1]).squeeze(-1)


@dataclass(frozen=True)
class AddingHistory:
    """What :func:`train_adding` records."""

    steps: list[int]        # the step numbers at which the test error was measured
    test_mse: list[float]   # mean squared error on the fixed test set at those steps
    train_loss: list[float]  # the training loss of every step (one fresh batch each)
    final_mse: float        # test_mse[-1]


def train_adding(
    model: SequenceRegressor, *, T: int, steps: int, batch_size: int, lr: float,
    clip: float, generator: torch.Generator, n_test: int = 1000, eval_every: int = 50,
) -> AddingHistory:
    """Train on fresh adding-problem batches with Adam and norm clipping
    (:func:`adam_train_step`).

    Args:
        model: the network (trained in place, on the device of its parameters).
        T: sequence length; steps: number of Adam steps; batch_size: sequences per step.
        lr: Adam's step size; clip: threshold of
            :func:`~flt_lib.recurrent.bptt.clip_by_norm`.
        generator: draws the test set first, then every training batch.
        n_test: size of the fixed test set; eval_every: test every this many steps.

    Returns:
        An :class:`AddingHistory`.
    """
    if not isinstance(model, SequenceRegressor):
        raise TypeError(
            f"model must be a SequenceRegressor, got {type(model).__name__}"
        )
    steps = check_int(steps, "steps", min_value=1)
    lr = check_real(lr, "lr", min_value=0.0, strict_min=True)
    eval_every = check_int(eval_every, "eval_every", min_value=1)
    return _train_adding(
        model,
        T=T,
        steps=steps,
        batch_size=batch_size,
        lr=lr,
        clip=clip,
        generator=generator,
        n_test=n_test,
        eval_every=eval_every,
    )


def _train_adding(
    model: SequenceRegressor, *, T: int, steps: int, batch_size: int, lr: float,
    clip: float, generator: torch.Generator, n_test: int = 1000, eval_every: int = 50,
) -> AddingHistory:
    """The check-free core of :func:`train_adding` (arguments already checked)."""
    device = next(model.parameters()).device
    x_test, y_test = (
        t.to(device) for t in adding_problem(n_test, T, generator=generator)
    )
    config, state = AdamConfig(lr=lr), None
    params = list(model.parameters())
    rec_steps, rec_mse, losses = [], [], []
    for step in range(steps + 1):
        if step % eval_every == 0 or step == steps:
            with torch.no_grad():
                rec_steps.append(step)
                rec_mse.append(torch.mean((model(x_test) - y_test) ** 2).item())
        if step == steps:
            break
        x, y = (
            t.to(device) for t in adding_problem(batch_size, T, generator=generator)
        )
        loss = torch.mean((model(x) - y) ** 2)
        state = adam_train_step(params, loss, state, config, clip=clip)
        losses.append(loss.item())
    return AddingHistory(
        steps=rec_steps, test_mse=rec_mse, train_loss=losses, final_mse=rec_mse[-1]
    )
