"""The single-head attention model f(X) = nu^T X^T softmax(X W p) and its gradients.

The model (eq-ts-model), its logistic loss and closed-form gradients, the initial
key-query matrix W_0, one gradient step written in token coordinates
(eq-ts-token-space), and the hand-made query that memorises the mislabelled sequences
(eq-ts-handcrafted) with the accuracy of hard token selection. Part of
:mod:`flt_lib.flt.token_selection`.
"""

from __future__ import annotations

import math

import torch

from flt_lib._validate import (
    check_choice,
    check_generator,
    check_int,
    check_real,
    check_tensor,
)
from flt_lib.flt.token_selection.data import Sample, class_signals, linear_head

__all__ = [
    "INITS",
    "cls_attention",
    "gradients",
    "handcrafted_query",
    "hard_selection_accuracy",
    "init_key_query",
    "logistic_loss",
    "predict",
    "token_logits",
    "token_space_step",
]


INITS = ("kaiming", "identity")  # the initialisations of W that train() knows


def init_key_query(
    d: int,
    *,
    init: str = "kaiming",
    generator: torch.Generator | None = None,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """The initial key-query matrix W_0, shape (d, d), on the CPU.

    ``init="kaiming"`` draws every entry from U(-1/sqrt(d), 1/sqrt(d)): what
    ``torch.nn.init.kaiming_uniform_(W, a=sqrt(5))``, PyTorch's default for a (d, d)
    parameter and the official code's choice, draws from the same generator.
    ``init="identity"`` returns I_d.

    Args:
        d: dimension, d >= 1.
        init: one of ``INITS``.
        generator: a CPU torch.Generator; required for ``"kaiming"``.
        dtype: floating dtype of the result.
    """
    d = check_int(d, "d", min_value=1)
    check_choice(init, "init", INITS)
    if init == "identity":
        return torch.eye(d, dtype=dtype)
    if generator is None:
        raise ValueError("generator is required for init='kaiming' (W_0 is random)")
    check_generator(generator)
    bound = 1.0 / math.sqrt(d)
    return torch.empty(d, d, dtype=dtype).uniform_(-bound, bound, generator=generator)


def cls_attention(X: torch.Tensor, W: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """Attention of the [CLS] query on each token, softmax(X W p) per sequence.

    Args:
        X: tokens, (n, T, d).
        W: key-query matrix, (d, d).
        p: query vector, (d,).

    Returns:
        Attention probabilities, (n, T); each row sums to one.
    """
    check_tensor(X, "X", ndim=3, floating=True, shape_doc="(n, T, d)")
    d = X.shape[-1]
    check_tensor(W, "W", shape=(d, d), floating=True, shape_doc=f"(d, d) = ({d}, {d})")
    check_tensor(p, "p", shape=(d,), floating=True, shape_doc=f"(d,) = ({d},)")
    return _cls_attention(X, W, p)


def _cls_attention(X, W, p):
    return torch.softmax(X @ (W @ p), dim=-1)  # (n, T): softmax_t <x_t, W p>


def predict(
    X: torch.Tensor, W: torch.Tensor, p: torch.Tensor, nu: torch.Tensor
) -> torch.Tensor:
    """The model output f(X) = nu^T X^T softmax(X W p) for each sequence (eq-ts-model),
    (n,)."""
    cls_attention(X, W, p)  # checks X, W and p
    check_tensor(nu, "nu", shape=(X.shape[-1],), floating=True, shape_doc="(d,)")
    return _predict(X, W, p, nu)


def _predict(
    X: torch.Tensor, W: torch.Tensor, p: torch.Tensor, nu: torch.Tensor
) -> torch.Tensor:
    """The check-free core of :func:`predict` (arguments already checked)."""
    s = _cls_attention(X, W, p)  # (n, T)
    return (s * (X @ nu)).sum(dim=-1)


def logistic_loss(margins: torch.Tensor) -> torch.Tensor:
    """Mean logistic loss log(1 + exp(-m)) of the margins m = y f(X) (eq-ts-loss),
    stably."""
    check_tensor(margins, "margins", ndim=1, floating=True, shape_doc="(n,)")
    return torch.nn.functional.softplus(-margins).mean()


def _logit_grad(
    s: torch.Tensor, v: torch.Tensor, y: torch.Tensor
) -> tuple[torch.Tensor, ...]:
    """Outputs f, losses and c = dL/d(logits) from attention s (n, T) and head scores v
    (n, T)."""
    f = (s * v).sum(dim=-1)  # (n,)
    a = -y * torch.sigmoid(-y * f) / y.shape[0]  # (n,) dL/df
    # (n,), (n, T)
    return f, a[:, None] * s * (v - f[:, None])


def gradients(
    X: torch.Tensor, y: torch.Tensor, W: torch.Tensor, p: torch.Tensor, nu: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Closed-form gradients of the mean logistic loss with respect to W and p
    (eq-ts-gradient).

    Args:
        X: (n, T, d) tokens; y: (n,) labels in {-1, +1}; W: (d, d); p: (d,); nu: (d,).

    Returns:
        ``(loss, dW, dp)`` with dW = g p^T (rank one) and dp = W^T g, where g = dL/d(W
        p).
    """
    cls_attention(X, W, p)  # checks X, W and p
    check_tensor(nu, "nu", shape=(X.shape[-1],), floating=True, shape_doc="(d,)")
    check_tensor(y, "y", shape=(X.shape[0],), floating=True, shape_doc="(n,)")
    return _gradients(X, y, W, p, nu)


def _gradients(X, y, W, p, nu):
    s = _cls_attention(X, W, p)  # (n, T)
    f, c = _logit_grad(s, X @ nu, y)
    g = torch.einsum("nt,ntd->d", c, X)  # (d,) dL/dq
    return logistic_loss(y * f), torch.outer(g, p), W.T @ g


def _check_token_space(a: object, C: object, X: object, K: object, x_name: str):
    """Check the token-space state: a (N,), C (N, N), K (N, N) and ``x_name`` (H (N, N)
    or c (N,))."""
    a = check_tensor(a, "a", ndim=1, floating=True, shape_doc="(N,)")
    N = a.shape[0]
    doc = f"(N, N) = ({N}, {N})"
    C = check_tensor(C, "C", shape=(N, N), floating=True, shape_doc=doc)
    K = check_tensor(K, "K", shape=(N, N), floating=True, shape_doc=doc)
    shape = (N, N) if x_name == "H" else (N,)
    X = check_tensor(X, x_name, shape=shape, floating=True, shape_doc=str(shape))
    return a, C, X, K


def token_logits(
    a: torch.Tensor, C: torch.Tensor, H: torch.Tensor, K: torch.Tensor, *, lr: float
) -> torch.Tensor:
    """Logits Z q of the N training tokens for p = W_0^T Z^T a, W = (I - lr Z^T C Z)
    W_0.

    ``Z q = H a - lr K C H a`` with ``K = Z Z^T`` and ``H = Z W_0 W_0^T Z^T``
    (eq-ts-token-space).

    Args:
        a: query coordinates, (N,). C: accumulated W-updates, (N, N).
        H: (N, N). K: (N, N). lr: the step size of the run.

    Returns:
        The logits, (N,).
    """
    a, C, H, K = _check_token_space(a, C, H, K, "H")
    lr = check_real(lr, "lr", min_value=0.0, strict_min=True)
    return _token_logits(a, C, H, K, lr)


def _token_logits(a, C, H, K, lr):
    Ha = H @ a  # (N,)
    return Ha - lr * (K @ (C @ Ha))  # Z q = H a - lr K C H a


def token_space_step(
    a: torch.Tensor,
    C: torch.Tensor,
    c: torch.Tensor,
    K: torch.Tensor,
    *,
    lr: float,
    train_W: bool = True,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One gradient step on (W, p) written in token coordinates (eq-ts-token-step).

    With g = Z^T c the gradient of the loss with respect to q = W p: p <- p - lr W^T g
    reads ``a <- a - lr (c - lr C^T K c)`` and W <- W - lr g p^T reads ``C <- C + c
    a^T`` (old a).

    Args:
        a: (N,). C: (N, N). c: dL/d(logits) of every training token, (N,). K: Z Z^T, (N,
            N).
        lr: step size. train_W: if False, W stays at W_0 (C does not change).

    Returns:
        The new ``(a, C)``.
    """
    a, C, c, K = _check_token_space(a, C, c, K, "c")
    lr = check_real(lr, "lr", min_value=0.0, strict_min=True)
    if not isinstance(train_W, bool):
        raise TypeError(f"train_W must be a bool, got {type(train_W).__name__}")
    return _token_space_step(a, C, c, K, lr, train_W)


def _token_space_step(a, C, c, K, lr, train_W):
    # p <- p - lr W^T g
    a_new = a - lr * (c - lr * (C.T @ (K @ c)))
    # W <- W - lr g p^T
    return a_new, (C + torch.outer(c, a)) if train_W else C


def handcrafted_query(
    train_set: Sample, scale: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """The query p = mu_+ + mu_- + scale * sum_i eps_{i, t_i} that memorises the
    selected tokens.

    Each training sequence i gets a token t_i to select: the relevant token (index 0) if
    its label is clean; if its label was flipped, the non-relevant token (index >= 1)
    whose head score y_i <x_{i,t}, nu> is largest, i.e. a token that, once selected,
    predicts the flipped label. The noise eps_{i,t_i} of every selected token is added
    to the query with weight ``scale`` (eq-ts-handcrafted). With W = I, a token's
    attention logit is then <x_t, p>.

    Args:
        train_set: the training sequences.
        scale: the memorisation weight lambda >= 0.

    Returns:
        ``(p, selected)``: the query (d,) and the selected token index per sequence
        (n,), CPU.
    """
    if not isinstance(train_set, Sample):
        raise TypeError(f"train_set must be a Sample, got {type(train_set).__name__}")
    scale = check_real(scale, "scale", min_value=0.0)
    return _handcrafted_query(train_set, scale)


def _handcrafted_query(train_set, scale):
    cfg, X = train_set.cfg, train_set.X.cpu()
    mu_plus, mu_minus = class_signals(cfg, X.dtype)
    scores = train_set.y.cpu()[:, None] * (X @ linear_head(cfg, X.dtype))  # (n, T)
    # never the relevant token
    scores[:, 0] = -math.inf
    selected = torch.where(train_set.flipped.cpu(), scores.argmax(dim=1), 0)  # (n,)
    # (d,)
    memory = train_set.noise.cpu()[torch.arange(len(selected)), selected].sum(dim=0)
    return mu_plus + mu_minus + scale * memory, selected


def hard_selection_accuracy(s: Sample, p: torch.Tensor, *, clean: bool) -> float:
    """Accuracy when each sequence is classified by its arg-max-attended token (W = I).

    Args:
        s: the sequences.
        p: query vector, (d,).
        clean: compare with the clean labels (True) or with the observed labels (False).
    """
    if not isinstance(s, Sample):
        raise TypeError(f"s must be a Sample, got {type(s).__name__}")
    check_tensor(p, "p", shape=(s.X.shape[-1],), floating=True, shape_doc="(d,)")
    nu = linear_head(s.cfg, s.X.dtype).to(s.X.device)
    chosen = (s.X @ p.to(s.X)).argmax(dim=1)  # (n,)
    token = s.X[torch.arange(s.X.shape[0]), chosen]  # (n, d)
    labels = s.y_clean if clean else s.y
    return (torch.sign(token @ nu) == labels).float().mean().item()
