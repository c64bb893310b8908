"""Benign overfitting in token selection of single-head attention (Sakamoto & Sato, ICML
2025).

Setting (chapter 7, section 6). A sequence X = (x_1, ..., x_T)^T in R^{T x d} is
classified by

    f(X) = nu^T X^T softmax(X W p),                                   (eq-ts-model)

with a learnable key-query matrix W in R^{d x d}, a learnable query ([CLS]) vector p in
R^d, and a fixed linear head nu = (mu_+ - mu_-) / (||mu_+ - mu_-|| * mu). The paper
writes the logits as X W^T p; we store W as the official code does (``x @ W @ p``), so
our W is the paper's W^T.

Data, as in the official code (github.com/keitaroskmt/benign-attention, ``main.py``):
orthogonal class signals mu_+ = mu e_1, mu_- = mu e_2; token 1 is relevant (mu_{Y*} +
eps), token 2 is weakly relevant (rho mu_{Y*} + eps), token 3 is weakly relevant to the
*other* class (rho mu_{-Y*} + eps), the rest are noise eps ~ N(0, sigma^2 I_d). The
classes have equal sizes and the ceil(eta n) label flips are split evenly between them.
SNR = mu / (sigma sqrt(d)).

Training: full-batch gradient descent on the mean logistic loss from p = 0 and W drawn
from PyTorch's default initialisation of a (d, d) parameter,
``kaiming_uniform_(a=sqrt(5))``, which is U(-1/sqrt(d), 1/sqrt(d)). The older choices of
this module (W = I, random labels, no x_3) remain available as options
(``init="identity"``, ``balanced=False``, ``opposite_token=False``).

Gradient descent never leaves the span of the training tokens (eq-ts-token-space): with
the N = nT training tokens stacked in Z (N, d), p_t = W_0^T Z^T a_t and W_t = (I - lr
Z^T C_t Z) W_0 for a vector a_t (N,) and a matrix C_t (N, N). :func:`train` runs the
exact GD iterates in these coordinates, so a step costs O(N^2) instead of O(d^2), and d
= 4500 trains in about a second.
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
from flt_lib.rng import spawn

__all__ = [
    "INITS",
    "REGIMES",
    "History",
    "Sample",
    "TokenData",
    "attention",
    "class_signals",
    "gradients",
    "handcrafted_query",
    "hard_selection_accuracy",
    "init_key_query",
    "linear_head",
    "logistic_loss",
    "predict",
    "regime",
    "run_experiment",
    "sample",
    "token_logits",
    "token_space_step",
    "train",
]

INITS = ("kaiming", "identity")  # the initialisations of W that train() knows
REGIMES = (
    "no overfitting",
    "partial fitting",
    "benign overfitting",
    "harmful overfitting",
)


@dataclass(frozen=True)
class TokenData:
    """Parameters of the Gaussian-mixture sequence data with positional label noise."""

    d: int = 2000  # embedding dimension of every token
    T: int = 8  # number of tokens per sequence
    # norm of each class signal, mu_+ = mu e_1 and mu_- = mu e_2
    mu: float = 20.0
    # signal weight of the weakly relevant tokens x_2 and x_3 (rho << 1)
    rho: float = 0.1
    sigma: float = 1.0  # standard deviation of every noise coordinate
    # x_3 = rho mu_{-Y*} + eps (official code); False: x_3 is noise
    opposite_token: bool = True
    # equal class sizes, flips split evenly (official code); False: i.i.d.
    balanced: bool = True

    def __post_init__(self) -> None:
        check_int(self.d, "d", min_value=2)
        check_int(self.T, "T", min_value=3 if self.opposite_token else 2)
        check_real(self.mu, "mu", min_value=0.0, strict_min=True)
        check_real(self.rho, "rho", min_value=0.0)
        check_real(self.sigma, "sigma", min_value=0.0, strict_min=True)
        for name in ("opposite_token", "balanced"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool, got {getattr(self, name)!r}")

    @property
    def snr(self) -> float:
        """Signal-to-noise ratio mu / (sigma sqrt(d)) (eq-ts-snr)."""
        return self.mu / (self.sigma * math.sqrt(self.d))


@dataclass(frozen=True)
class Sample:
    """A labelled set of sequences drawn by :func:`sample`."""

    X: torch.Tensor  # (n, T, d) token embeddings
    # (n,) observed labels in {-1, +1} (flipped where `flipped`)
    y: torch.Tensor
    y_clean: torch.Tensor  # (n,) clean labels Y*
    flipped: torch.Tensor  # (n,) bool, True where the label was flipped
    cfg: TokenData  # the parameters the sequences were drawn with

    def to(self, device: torch.device | str) -> Sample:
        """The same sequences on ``device`` (``cfg`` is unchanged)."""
        moved = (t.to(device) for t in (self.X, self.y, self.y_clean, self.flipped))
        return Sample(*moved, cfg=self.cfg)

    @property
    def noise(self) -> torch.Tensor:
        """The noise part eps of every token, X minus its signal, shape (n, T, d)."""
        mu_plus, mu_minus = (
            m.to(self.X) for m in class_signals(self.cfg, self.X.dtype)
        )
        own = torch.where(self.y_clean[:, None] == 1, mu_plus, mu_minus)  # (n, d)
        other = torch.where(self.y_clean[:, None] == 1, mu_minus, mu_plus)  # (n, d)
        eps = self.X.clone()
        eps[:, 0] -= own
        eps[:, 1] -= self.cfg.rho * own
        if self.cfg.opposite_token:
            eps[:, 2] -= self.cfg.rho * other
        return eps


def _check_cfg(cfg: object) -> TokenData:
    if not isinstance(cfg, TokenData):
        raise TypeError(f"cfg must be a TokenData, got {type(cfg).__name__}")
    return cfg


def class_signals(
    cfg: TokenData, dtype: torch.dtype = torch.float32
) -> tuple[torch.Tensor, torch.Tensor]:
    """Return the orthogonal class signals ``(mu_plus, mu_minus) = (mu e_1, mu e_2)``,
    each (d,)."""
    _check_cfg(cfg)
    mu_plus = torch.zeros(cfg.d, dtype=dtype)
    mu_minus = torch.zeros(cfg.d, dtype=dtype)
    mu_plus[0], mu_minus[1] = cfg.mu, cfg.mu
    return mu_plus, mu_minus


def linear_head(cfg: TokenData, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The fixed head nu = (mu_+ - mu_-) / (||mu_+ - mu_-|| mu), shape (d,).

    With this scaling a relevant token contributes +-1/sqrt(2) to f(X), whatever mu is
    (the official code's ``init_linear_head`` with ``nu_norm = 1 / mu``).
    """
    mu_plus, mu_minus = class_signals(cfg, dtype)
    diff = mu_plus - mu_minus
    return diff / (diff.norm() * cfg.mu)


def sample(
    cfg: TokenData, n: int, *, label_noise: float, generator: torch.Generator
) -> Sample:
    """Draw ``n`` sequences of the data model (eq-ts-snr), with ``label_noise`` of
    labels flipped.

    With ``cfg.balanced`` (the official code): the first ``n // 2`` sequences have Y* =
    +1, the rest Y* = -1, and ``ceil(label_noise * n) // 2`` labels are flipped in each
    class. Otherwise Y* is uniform on {-1, +1} and ``ceil(label_noise * n)`` labels
    chosen at random are flipped.

    Args:
        cfg: the data parameters.
        n: number of sequences, n >= 2 if balanced, else n >= 1.
        label_noise: fraction eta of flipped labels, in [0, 1/2).
        generator: a CPU torch.Generator.

    Returns:
        A :class:`Sample` with X of shape (n, T, d), on the CPU.
    """
    _check_cfg(cfg)
    n = check_int(n, "n", min_value=2 if cfg.balanced else 1)
    label_noise = check_real(label_noise, "label_noise", min_value=0.0)
    if label_noise >= 0.5:
        raise ValueError(f"label_noise must be < 0.5, got {label_noise}")
    check_generator(generator)
    mu_plus, mu_minus = class_signals(cfg)
    n_flip = math.ceil(label_noise * n)
    flipped = torch.zeros(n, dtype=torch.bool)
    if cfg.balanced:
        y_clean = torch.cat([torch.ones(n // 2), -torch.ones(n - n // 2)])  # (n,)
        # class +1
        flipped[: n_flip // 2] = True
        # class -1
        flipped[n // 2 : n // 2 + n_flip // 2] = True
    else:
        y_clean = (torch.randint(0, 2, (n,), generator=generator) * 2 - 1).float()
    # (n, T, d): noise
    X = torch.randn(n, cfg.T, cfg.d, generator=generator).mul_(cfg.sigma)
    if not cfg.balanced:
        flipped[torch.randperm(n, generator=generator)[:n_flip]] = True
    own = torch.where(y_clean[:, None] == 1, mu_plus, mu_minus)  # (n, d)
    other = torch.where(y_clean[:, None] == 1, mu_minus, mu_plus)  # (n, d)
    X[:, 0] += own  # relevant token
    X[:, 1] += cfg.rho * own  # weakly relevant token
    if cfg.opposite_token:
        X[:, 2] += cfg.rho * other  # weakly relevant to the opposite class
    y = torch.where(flipped, -y_clean, y_clean)
    return Sample(X=X, y=y, y_clean=y_clean, flipped=flipped, cfg=cfg)


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


def attention(X: torch.Tensor, W: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
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
    return torch.softmax(X @ (W @ p), dim=-1)


def predict(
    X: torch.Tensor, W: torch.Tensor, p: torch.Tensor, nu: torch.Tensor
) -> torch.Tensor:
    """The model output f(X) = nu^T X^T softmax(X W p) for each sequence (eq-ts-model),
    (n,)."""
    s = attention(X, W, p)  # (n, T)
    check_tensor(nu, "nu", shape=(X.shape[-1],), floating=True, shape_doc="(d,)")
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
    s = attention(X, W, p)  # (n, T)
    check_tensor(nu, "nu", shape=(X.shape[-1],), floating=True, shape_doc="(d,)")
    check_tensor(y, "y", shape=(X.shape[0],), floating=True, shape_doc="(n,)")
    f, c = _logit_grad(s, X @ nu, y)
    g = torch.einsum("nt,ntd->d", c, X)  # (d,) dL/dq
    return logistic_loss(y * f), torch.outer(g, p), W.T @ g


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
    Ha = H @ a  # (N,)
    return Ha - lr * (K @ (C @ Ha))


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
    # p <- p - lr W^T g
    a_new = a - lr * (c - lr * (C.T @ (K @ c)))
    # W <- W - lr g p^T
    return a_new, (C + torch.outer(c, a)) if train_W else C


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
    # mean attention of the test sequences on their token x_1
    test_relevant_attn: list[float]
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
        k: [] for k in ("t", "loss", "tr", "fl", "te", "rel", "attn")
    }
    for t in range(steps + 1):
        s = torch.softmax(token_logits(a, C, H, K, lr=lr).view(n, T), dim=-1)  # (n, T)
        f, c = _logit_grad(s, v, y)
        if t % record_every == 0 or t == steps:
            z_te = H_te @ a - lr * (K_te @ (C @ (H @ a)))  # (N_te,) = Z_te W p
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
            rec["rel"].append(s_te[:, 0].mean().item())
            rec["attn"].append(s.cpu())
        if t == steps:
            break
        a, C = token_space_step(a, C, c.reshape(-1), K, lr=lr, train_W=train_W)
    p = U @ a  # (d,)
    q = W0U @ a - lr * (Z.T @ (C @ (H @ a)))  # (d,) = W p
    return History(
        steps=rec["t"],
        train_loss=rec["loss"],
        train_acc=rec["tr"],
        flipped_fit=rec["fl"],
        test_acc=rec["te"],
        test_relevant_attn=rec["rel"],
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
    g_train, g_test, g_init = spawn(generator, 3)
    train_set = sample(cfg, n, label_noise=label_noise, generator=g_train).to(device)
    test_set = sample(cfg, n_test, label_noise=0.0, generator=g_test).to(device)
    return train(train_set, test_set, generator=g_init, **train_kw)


def regime(flipped_fit: float, test_acc: float, *, benign_level: float = 0.98) -> str:
    """Name the outcome of a run from its final flipped-label fit and clean test
    accuracy.

    ``"no overfitting"`` if no mislabelled training sequence is fitted; ``"partial
    fitting"`` if some but not all are; otherwise ``"benign overfitting"`` when the
    clean test accuracy is at least ``benign_level`` and ``"harmful overfitting"`` below
    it.

    Args:
        flipped_fit: fraction of mislabelled training sequences predicted as labelled,
            in [0, 1].
        test_acc: clean test accuracy, in [0, 1].
        benign_level: test accuracy that counts as benign, in (0, 1].

    Returns:
        One of ``REGIMES``.
    """
    flipped_fit = check_real(flipped_fit, "flipped_fit", min_value=0.0, max_value=1.0)
    test_acc = check_real(test_acc, "test_acc", min_value=0.0, max_value=1.0)
    benign_level = check_real(
        benign_level, "benign_level", min_value=0.0, max_value=1.0, strict_min=True
    )
    if flipped_fit == 0.0:
        return REGIMES[0]
    if flipped_fit < 1.0:
        return REGIMES[1]
    return REGIMES[2] if test_acc >= benign_level else REGIMES[3]


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
