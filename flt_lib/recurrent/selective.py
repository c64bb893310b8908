"""Selective copying with a selective and a time-invariant state-space layer
(Section 4.6).

The task (Gu & Dao 2023, Section 3.1; data as in the official S4 repository's copying
generator with ``variable=True``): M data tokens, drawn from 1..A-2, sit at random
positions among L_noise blank tokens 0; then M marker tokens A-1 ask the model to output
the data tokens in order. Because the spacing is random, a time-invariant model (a fixed
convolution) cannot know where to look; a *selective* model, whose step size depends on
the token, can skip the blanks.

:class:`SSMLayer` is a diagonal SSM per channel, discretised as in Mamba's reference
code (A_bar = exp(delta A), B_bar x = delta B x):

    h_t = exp(delta_t A) * h_{t-1} + delta_t B_t x_t,   y_t = C_t . h_t + D x_t,
                                                                             (eq-rnn-s6)

with delta_t = softplus(W_delta x_t + b), B_t = W_B x_t and C_t = W_C x_t if
``selective``, and delta, B, C fixed parameters otherwise (an S4D-like time-invariant
layer). Every other part of the network (embedding, gating, residual, read-out) is the
same in the two models. Two departures from Mamba's block: no short causal convolution
before the SSM, and a full-rank d x d projection W_delta where Mamba uses a low-rank
one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from flt_lib._validate import check_generator, check_int, check_real
from flt_lib.optim.adaptive import AdamConfig
from flt_lib.optim.train_step import adam_train_step
from flt_lib.recurrent.linear import scan_loop

__all__ = ["selective_copying", "SSMLayer", "CopyModel", "CopyHistory", "train_copying"]


def selective_copying(
    batch_size: int, *, L_noise: int, M: int, A: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Draw selective-copying sequences.

    Args:
        batch_size: B >= 1.
        L_noise: number of blank tokens among the data, >= 0.
        M: number of data tokens to copy, >= 1.
        A: alphabet size >= 3: 0 is blank, 1..A-2 are data, A-1 is the marker.
        generator: a CPU torch.Generator.

    Returns:
        ``(x, y)``: inputs (B, L_noise + 2M) and targets (B, M), int64.
    """
    B = check_int(batch_size, "batch_size", min_value=1)
    L = check_int(L_noise, "L_noise", min_value=0)
    M = check_int(M, "M", min_value=1)
    A = check_int(A, "A", min_value=3)
    check_generator(generator)
    tokens = torch.randint(1, A - 1, (B, M), generator=generator)
    pos = (
        torch.argsort(torch.rand(B, L + M, generator=generator), dim=1)[:, :M]
        .sort(dim=1)
        .values
    )
    body = torch.zeros(B, L + M, dtype=torch.int64).scatter_(1, pos, tokens)
    return (
        torch.cat([body, torch.full((B, M), A - 1, dtype=torch.int64)], dim=1),
        tokens,
    )


class SSMLayer(nn.Module):
    """A diagonal state-space layer, selective (Mamba's S6) or time-invariant
    (eq-rnn-s6)."""

    def __init__(
        self, d: int, N: int, *, selective: bool, generator: torch.Generator
    ) -> None:
        """Args: d channels, N states per channel, selective or not, generator for the
        init."""
        super().__init__()
        self.d, self.N, self.selective = (
            check_int(d, "d", min_value=1),
            check_int(N, "N", min_value=1),
            bool(selective),
        )
        check_generator(generator)
        # S4D-real initialisation of A = -(1, 2, ..., N) per channel, as in Mamba.
        self.A_log = nn.Parameter(
            torch.log(torch.arange(1, N + 1, dtype=torch.float32)).repeat(d, 1)
        )
        dt = torch.exp(
            torch.rand(d, generator=generator) * (math.log(0.1) - math.log(1e-3))
            + math.log(1e-3)
        )
        # softplus^{-1}(dt)
        self.dt_bias = nn.Parameter(dt + torch.log(-torch.expm1(-dt)))
        self.D = nn.Parameter(torch.ones(d))
        if self.selective:
            self.W_dt = nn.Parameter(torch.randn(d, d, generator=generator) / d)
            self.W_B = nn.Parameter(
                torch.randn(N, d, generator=generator) / math.sqrt(d)
            )
            self.W_C = nn.Parameter(
                torch.randn(N, d, generator=generator) / math.sqrt(d)
            )
        else:
            self.B = nn.Parameter(torch.randn(d, N, generator=generator) / math.sqrt(N))
            self.C = nn.Parameter(torch.randn(d, N, generator=generator) / math.sqrt(N))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, d) -> (B, T, d)."""
        Bt, T, d = x.shape
        A = -torch.exp(self.A_log)                                   # (d, N)
        if self.selective:
            delta = nn.functional.softplus(x @ self.W_dt.T + self.dt_bias)   # (B, T, d)
            # (B, T, d, N)
            Bx = (x @ self.W_B.T).unsqueeze(-2) * (delta * x).unsqueeze(-1)
            C = (x @ self.W_C.T).unsqueeze(-2)                       # (B, T, 1, N)
        else:
            delta = nn.functional.softplus(self.dt_bias).expand(Bt, T, d)
            Bx = self.B * (delta * x).unsqueeze(-1)                  # (B, T, d, N)
            C = self.C
        a = torch.exp(delta.unsqueeze(-1) * A)                       # (B, T, d, N)
        h = scan_loop(a.reshape(Bt, T, d * self.N), Bx.reshape(Bt, T, d * self.N))
        y = (h.reshape(Bt, T, d, self.N) * C).sum(-1)                # (B, T, d)
        return y + self.D * x


class CopyModel(nn.Module):
    """Embedding, ``n_layers`` gated residual SSM blocks, and a linear read-out of every
    position."""

    def __init__(
        self, A: int, *, d: int = 32, N: int = 8, n_layers: int = 2, selective: bool,
        generator: torch.Generator,
    ) -> None:
        super().__init__()
        A, n_layers = (
            check_int(A, "A", min_value=3), check_int(n_layers, "n_layers", min_value=1)
        )
        self.emb = nn.Embedding(A, d)
        self.inp = nn.ModuleList(nn.Linear(d, 2 * d) for _ in range(n_layers))
        self.ssm = nn.ModuleList(
            SSMLayer(d, N, selective=selective, generator=generator)
            for _ in range(n_layers)
        )
        self.outp = nn.ModuleList(nn.Linear(d, d) for _ in range(n_layers))
        self.norm = nn.ModuleList(nn.LayerNorm(d) for _ in range(n_layers))
        self.head = nn.Linear(d, A)
        with torch.no_grad():
            for name, p in self.named_parameters():
                if name.startswith(("inp", "outp", "head")):
                    fan = p.shape[-1]
                    p.copy_(
                        (2 * torch.rand(p.shape, generator=generator) - 1)
                        / math.sqrt(fan)
                    )
            self.emb.weight.copy_(
                torch.randn(self.emb.weight.shape, generator=generator)
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Token ids (B, T) -> logits (B, T, A)."""
        h = self.emb(x)
        for inp, ssm, outp, norm in zip(self.inp, self.ssm, self.outp, self.norm):
            # Mamba-style gated block
            u, gate = inp(norm(h)).chunk(2, dim=-1)
            h = h + outp(ssm(nn.functional.silu(u)) * nn.functional.silu(gate))
        return self.head(h)


@dataclass(frozen=True)
class CopyHistory:
    """What :func:`train_copying` records."""

    steps: list[int]        # steps at which the test accuracy was measured
    # fraction of the M copied tokens predicted right, on a fixed test set
    test_acc: list[float]
    train_loss: list[float]  # cross-entropy on every step's fresh batch


def train_copying(
    model: CopyModel, *, L_noise: int, M: int, A: int, steps: int, batch_size: int,
    lr: float, generator: torch.Generator, n_test: int = 500, eval_every: int = 50,
    clip: float | None = None,
) -> CopyHistory:
    """Train with Adam on fresh batches; the loss is the cross-entropy at the M marker
    positions.

    ``clip`` caps the joint gradient norm of each step (None: no clipping).
    """
    if not isinstance(model, CopyModel):
        raise TypeError(f"model must be a CopyModel, got {type(model).__name__}")
    steps = check_int(steps, "steps", min_value=1)
    lr = check_real(lr, "lr", min_value=0.0, strict_min=True)
    if clip is not None:
        clip = check_real(clip, "clip", min_value=0.0, strict_min=True)
    device = next(model.parameters()).device
    x_test, y_test = (
        t.to(device)
        for t in selective_copying(
            n_test, L_noise=L_noise, M=M, A=A, generator=generator
        )
    )
    config, state, params = AdamConfig(lr=lr), None, list(model.parameters())
    rec_steps, accs, losses = [], [], []
    for step in range(steps + 1):
        if step % eval_every == 0 or step == steps:
            with torch.no_grad():
                pred = model(x_test)[:, -M:].argmax(-1)
                rec_steps.append(step)
                accs.append((pred == y_test).float().mean().item())
        if step == steps:
            break
        x, y = (
            t.to(device)
            for t in selective_copying(
                batch_size, L_noise=L_noise, M=M, A=A, generator=generator
            )
        )
        logits = model(x)[:, -M:]                                    # (B, M, A)
        loss = nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), y.reshape(-1)
        )
        state = adam_train_step(params, loss, state, config, clip=clip)
        losses.append(loss.item())
    return CopyHistory(steps=rec_steps, test_acc=accs, train_loss=losses)
