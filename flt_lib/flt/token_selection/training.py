"""Training the token-selection model: exact gradient descent in token coordinates.

``train`` runs full-batch GD on W and p from p = 0 and records a ``History``;
``run_experiment`` draws the data and W_0 and trains; ``regime`` names the outcome of a
run (no, partial, benign or harmful overfitting). Part of
:mod:`flt_lib.flt.token_selection`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from flt_lib._validate import check_generator, check_int, check_real
from flt_lib.flt.token_selection.data import Sample, TokenData, linear_head, sample
from flt_lib.flt.token_selection.model import (
    _logit_grad,
    init_key_query,
    logistic_loss,
    _token_logits,
    _token_space_step,
)
from flt_lib.rng import spawn

__all__ = ["REGIMES", "History", "regime", "run_experiment", "train"]


REGIMES = (
    "no overfitting",
    "partial fitting",
    "benign overfitting",
    "harmful overfitting",
)


@dataclass(frozen=True)
class History:
    """What :func:`train` records, once every ``record_every`` steps (and at the first
    and last)."""

    steps: list[int]  # the recorded step numbers
    train_loss: list[float]  # mean logistic loss on the training set
    # accuracy against the observed (noisy) training labels
    train_acc: list[float]
    # fraction of mislabelled sequences predicted as labelled
    flipped_fit: list[float]
    test_acc: list[float]  # accuracy on the test set against its clean labels
    # mean logistic loss on the test set against its clean labels
    test_loss: list[float]
    # test loss if every test sequence attended only to its x_1 (the floor)
    test_loss_floor: float
    # mean attention of the test sequences on their token x_1
    test_relevant_attn: list[float]
    query_norm: list[float]  # norm of the effective query q = W p
    # cosine of q with the class-signal direction e_1 (that of mu_+)
    query_signal: list[float]
    # (records, n, T) attention of every training sequence, CPU
    attn: torch.Tensor
    # (n,) bool, the mislabelled training sequences, CPU
    flipped: torch.Tensor
    p: torch.Tensor  # (d,) final query vector
    q: torch.Tensor  # (d,) final effective query W p


def train(
    train_set: Sample,
    test_set: Sample,
    *,
    lr: float = 5e-3,
    steps: int = 1000,
    record_every: int = 10,
    record_steps: Sequence[int] | None = None,
    train_W: bool = True,
    init: str = "kaiming",
    generator: torch.Generator | None = None,
) -> History:
    """Full-batch gradient descent on W and p from p = 0 (the official code's training
    loop).

    The iterates are exactly those of GD on the loss (eq-ts-loss) of the model
    (eq-ts-model), computed in the coordinates of eq-ts-token-space (see
    :func:`token_space_step`).

    Args:
        train_set: training sequences with (possibly flipped) labels.
        test_set: held-out sequences (same ``cfg``); accuracy is against their clean
            labels.
        lr: step size, > 0.
        steps: number of GD steps, >= 1.
        record_every: record the tracked quantities every this many steps, >= 1.
        record_steps: if given, record at these steps (each in [0, steps]) instead of
            every ``record_every`` steps, e.g. a logarithmic grid; the first and the
            last step are always recorded.
        train_W: if False, W stays at W_0 and only p is trained.
        init: W_0, one of ``INITS`` (see :func:`init_key_query`).
        generator: CPU generator for W_0; required for ``init="kaiming"``.

    Returns:
        A :class:`History`.
    """
    for name, s in (("train_set", train_set), ("test_set", test_set)):
        if not isinstance(s, Sample):
            raise TypeError(
                f"{name} must be a Sample (see sample()), got {type(s).__name__}"
            )
    if test_set.cfg != train_set.cfg:
        raise ValueError(f"test_set.cfg must equal train_set.cfg, got {test_set.cfg}")
    lr = check_real(lr, "lr", min_value=0.0, strict_min=True)
    steps = check_int(steps, "steps", min_value=1)
    record_every = check_int(record_every, "record_every", min_value=1)
    if record_steps is not None:
        if isinstance(record_steps, (str, bytes)) or not isinstance(
            record_steps, Sequence
        ):
            raise TypeError(
                "record_steps must be a sequence of ints, got "
                f"{type(record_steps).__name__}"
            )
        record_steps = {
            check_int(r, "record_steps[i]", min_value=0, max_value=steps)
            for r in record_steps
        }
    cfg, X, y = train_set.cfg, train_set.X, train_set.y
    (n, T, d), dtype, device = X.shape, X.dtype, X.device
    W0 = init_key_query(d, init=init, generator=generator, dtype=dtype).to(device)
    nu = linear_head(cfg, dtype).to(device)
    # (N, d), (N_te, d)
    Z, Z_te = X.reshape(n * T, d), test_set.X.reshape(-1, d)
    # (d, N): p = U a
    U = W0.T @ Z.T
    W0U = W0 @ U  # (d, N)
    # (N, N) each
    K, H = Z @ Z.T, Z @ W0U
    # (N_te, N) each: the test logits Z_te q = H_te a - lr K_te C H a, from one GEMM
    H_te, K_te = (
        P.contiguous() for P in (Z_te @ torch.cat([W0U, Z.T], dim=1)).split(n * T, 1)
    )
    # (n, T), (n_te, T)
    v, v_te = (X @ nu), (test_set.X @ nu)
    a = torch.zeros(n * T, dtype=dtype, device=device)
    C = torch.zeros(n * T, n * T, dtype=dtype, device=device)
    flip = train_set.flipped.to(device)
    rec: dict[str, list] = {
        k: [] for k in ("t", "loss", "tr", "fl", "te", "te_loss", "rel", "qn", "qs",
                        "attn")
    }
    for t in range(steps + 1):
        s = torch.softmax(_token_logits(a, C, H, K, lr).view(n, T), dim=-1)  # (n, T)
        f, c = _logit_grad(s, v, y)
        due = t % record_every == 0 if record_steps is None else t in record_steps
        if due or t == 0 or t == steps:
            CHa = C @ (H @ a)  # (N,)
            z_te = H_te @ a - lr * (K_te @ CHa)  # (N_te,) = Z_te W p
            q = W0U @ a - lr * (Z.T @ CHa)  # (d,) = W p
            s_te = torch.softmax(z_te.view(-1, T), dim=-1)  # (n_te, T)
            f_te = (s_te * v_te).sum(dim=-1)  # (n_te,)
            fit = torch.sign(f) == y  # (n,)
            rec["t"].append(t)
            rec["loss"].append(logistic_loss(y * f).item())
            rec["tr"].append(fit.float().mean().item())
            rec["fl"].append(fit[flip].float().mean().item() if flip.any() else 0.0)
            rec["te"].append(
                (torch.sign(f_te) == test_set.y_clean).float().mean().item()
            )
            rec["te_loss"].append(logistic_loss(test_set.y_clean * f_te).item())
            rec["rel"].append(s_te[:, 0].mean().item())
            q_norm = q.norm().item()
            rec["qn"].append(q_norm)
            rec["qs"].append(q[0].item() / q_norm if q_norm > 0 else 0.0)
            rec["attn"].append(s.cpu())
        if t == steps:
            break
        a, C = _token_space_step(a, C, c.reshape(-1), K, lr, train_W)
    p = U @ a  # (d,)
    q = W0U @ a - lr * (Z.T @ (C @ (H @ a)))  # (d,) = W p
    return History(
        steps=rec["t"],
        train_loss=rec["loss"],
        train_acc=rec["tr"],
        flipped_fit=rec["fl"],
        test_acc=rec["te"],
        test_loss=rec["te_loss"],
        test_loss_floor=logistic_loss(test_set.y_clean * v_te[:, 0]).item(),
        test_relevant_attn=rec["rel"],
        query_norm=rec["qn"],
        query_signal=rec["qs"],
        attn=torch.stack(rec["attn"]),
        flipped=train_set.flipped.cpu(),
        p=p,
        q=q,
    )


def run_experiment(
    cfg: TokenData,
    *,
    n: int = 20,
    n_test: int = 1000,
    label_noise: float = 0.2,
    generator: torch.Generator,
    device: torch.device | str = "cpu",
    **train_kw,
) -> History:
    """Draw a training set, a test set and W_0 from three children of ``generator``, and
    train.

    The official code's synthetic experiment (n = 20, 1000 test sequences, eta = 0.2)
    with the defaults of :func:`train` (lr 5e-3, 1000 steps); ``train_kw`` overrides
    them.

    Args:
        cfg: the data parameters.
        n: training sequences. n_test: test sequences. label_noise: flipped fraction
            eta.
        generator: CPU generator; it is advanced by three draws
            (:func:`flt_lib.rng.spawn`).
        device: where to train.
        **train_kw: other keyword arguments of :func:`train` (``lr``, ``steps``, ...).

    Returns:
        The :class:`History` of the run.
    """
    check_generator(generator)
    return _run_experiment(
        cfg,
        n=n,
        n_test=n_test,
        label_noise=label_noise,
        generator=generator,
        device=device,
        **train_kw,
    )


def _run_experiment(
    cfg: TokenData,
    *,
    n: int = 20,
    n_test: int = 1000,
    label_noise: float = 0.2,
    generator: torch.Generator,
    device: torch.device | str = "cpu",
    **train_kw,
) -> History:
    """The check-free core of :func:`run_experiment` (arguments already checked)."""
    g_train, g_test, g_init = spawn(generator, 3)
    train_set = sample(cfg, n, label_noise=label_noise, generator=g_train).to(device)
    test_set = sample(cfg, n_test, label_noise=0.0, generator=g_test).to(device)
    return train(train_set, test_set, generator=g_init, **train_kw)


def regime(history: History, *, tol: float = 0.01) -> str:
    """Name the outcome of a run from its flipped-label fit and its change of test
    accuracy.

    ``"no overfitting"`` if no mislabelled training sequence is fitted at the end;
    ``"partial fitting"`` if some but not all are; otherwise ``"harmful overfitting"``
    when the clean test accuracy ended more than ``tol`` below its value at step 0
    (uniform attention), and ``"benign overfitting"`` when it did not. The measure is
    relative to step 0 because at uniform attention the test accuracy is already
    Phi(mu / (sigma sqrt(2 T))), which is close to 1 for large mu.

    Args:
        history: the :class:`History` of a run.
        tol: the drop of test accuracy that counts as harmful, in [0, 1).

    Returns:
        One of ``REGIMES``.
    """
    if not isinstance(history, History):
        raise TypeError(f"history must be a History, got {type(history).__name__}")
    tol = check_real(tol, "tol", min_value=0.0, max_value=1.0)
    if tol >= 1.0:
        raise ValueError(f"tol must be < 1, got {tol}")
    return _regime(history, tol)


def _regime(history, tol):
    flipped_fit = history.flipped_fit[-1]
    if flipped_fit == 0.0:
        return REGIMES[0]
    if flipped_fit < 1.0:
        return REGIMES[1]
    drop = history.test_acc[0] - history.test_acc[-1]
    return REGIMES[3] if drop > tol else REGIMES[2]
