"""Multi-view data, ensembles and knowledge distillation, at toy scale (Allen-Zhu & Li,
ICLR 2023).

Data (def-mv-data). There are k classes and two *views* (features) per class, the
orthonormal vectors v_{c,0} = e_{2c} and v_{c,1} = e_{2c+1} of R^d. An input has P = 2
P_v + P_n patches: P_v patches for view 0, P_v for view 1, and P_n patches of Gaussian
noise N(0, sigma^2 I_d). A *multi-view* example of class c shows both views (weight 1
each); a *single-view* example shows one of them (chosen uniformly) with weight 1 and
the other with the small weight rho. Every patch also carries a view of another class
with weight gamma ("feature noise"), and the view patches a small Gaussian jitter.

Model (eq-mv-model). F_c(x) = sum_{r=1}^m sum_{p=1}^P srelu(<w_{c,r}, x_p>), with the
smoothed ReLU srelu(z) = 0 for z <= 0, z^q / (q t^{q-1}) for 0 < z <= t and z - (1 -
1/q) t for z > t. Trained by full-batch gradient descent on the cross-entropy of
softmax(F) from w ~ N(0, s0^2 I), or, for distillation, on the cross-entropy with a
teacher's tempered soft labels.

Every function works on a batch of E independent models (leading dimension E of the
weights W, shape (E, k, m, d)), so an ensemble trains in one set of tensor operations.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from flt_lib._validate import check_generator, check_int, check_real, check_tensor

__all__ = [
    "MultiViewData",
    "MultiViewHistory",
    "MultiViewSample",
    "init_models",
    "multiview_logits",
    "sample_multiview",
    "smoothed_relu",
    "train_models",
    "view_strengths",
]


@dataclass(frozen=True)
class MultiViewData:
    """Parameters of the multi-view data distribution (def-mv-data)."""

    k: int = 4  # number of classes
    # patch dimension; views are the basis vectors e_0, ..., e_{2k-1}
    d: int = 500
    view_patches: int = 2  # number of patches carrying each of the two views, P_v
    noise_patches: int = 2  # number of pure-noise patches, P_n
    # probability that an example shows only one of its two views
    single_view: float = 0.2
    sigma: float = 0.15  # standard deviation of every coordinate of a noise patch
    gamma: float = (
        0.2  # weight of the feature noise (another class's view) in every patch
    )
    rho: float = 0.1  # weight of the missing view in a single-view example
    # standard deviation of the Gaussian jitter on the view patches
    jitter: float = 0.02

    def __post_init__(self) -> None:
        check_int(self.k, "k", min_value=2)
        check_int(self.d, "d", min_value=2 * self.k)
        check_int(self.view_patches, "view_patches", min_value=1)
        check_int(self.noise_patches, "noise_patches", min_value=0)
        check_real(self.single_view, "single_view", min_value=0.0, max_value=1.0)
        for name in ("sigma", "gamma", "rho", "jitter"):
            check_real(getattr(self, name), name, min_value=0.0)

    @property
    def patches(self) -> int:
        """Number of patches P = 2 P_v + P_n."""
        return 2 * self.view_patches + self.noise_patches

    def views(self) -> torch.Tensor:
        """The views V[c, l] = e_{2c + l}, shape (k, 2, d)."""
        return torch.eye(self.d)[: 2 * self.k].view(self.k, 2, self.d)


@dataclass(frozen=True)
class MultiViewSample:
    """Examples drawn by :func:`sample_multiview`."""

    X: torch.Tensor  # (n, P, d) patches
    y: torch.Tensor  # (n,) classes in {0, ..., k-1}
    single: torch.Tensor  # (n,) bool, True for a single-view example
    # (n,) the view a single-view example shows (0 or 1; unused otherwise)
    view: torch.Tensor


def sample_multiview(
    cfg: MultiViewData, n: int, *, generator: torch.Generator
) -> MultiViewSample:
    """Draw n examples of the multi-view distribution (def-mv-data), on the CPU.

    Args:
        cfg: the data parameters.
        n: number of examples, n >= 1.
        generator: a CPU torch.Generator.

    Returns:
        A :class:`MultiViewSample` with X of shape (n, P, d).
    """
    if not isinstance(cfg, MultiViewData):
        raise TypeError(f"cfg must be a MultiViewData, got {type(cfg).__name__}")
    n = check_int(n, "n", min_value=1)
    check_generator(generator)
    return _sample_multiview(cfg, n, generator=generator)


def _sample_multiview(
    cfg: MultiViewData, n: int, *, generator: torch.Generator
) -> MultiViewSample:
    """The check-free core of :func:`sample_multiview` (arguments already checked)."""
    k, Pv, V = cfg.k, cfg.view_patches, cfg.views()
    y = torch.randint(0, k, (n,), generator=generator)
    single = torch.rand(n, generator=generator) < cfg.single_view
    view = torch.randint(0, 2, (n,), generator=generator)
    # (n, P, d)
    X = torch.zeros(n, cfg.patches, cfg.d)
    X[:, 2 * Pv :] = cfg.sigma * torch.randn(
        n, cfg.noise_patches, cfg.d, generator=generator
    )
    # the two views
    for l in (0, 1):
        weight = torch.where(single & (view != l), cfg.rho, 1.0)  # (n,)
        X[:, l * Pv : (l + 1) * Pv] += weight[:, None, None] * V[y, l][:, None]
    other = torch.randint(0, k - 1, (n, cfg.patches), generator=generator)
    # another class
    other = other + (other >= y[:, None]).long()
    other_view = torch.randint(0, 2, (n, cfg.patches), generator=generator)
    # feature noise
    X += cfg.gamma * V[other, other_view]
    X[:, : 2 * Pv] += cfg.jitter * torch.randn(n, 2 * Pv, cfg.d, generator=generator)
    return MultiViewSample(X=X, y=y, single=single, view=view)


def smoothed_relu(z: torch.Tensor, *, q: int, threshold: float) -> torch.Tensor:
    """Allen-Zhu & Li's smoothed ReLU: 0, then z^q / (q t^{q-1}) up to t, then z - (1 -
    1/q) t.

    Args:
        z: pre-activations, any shape.
        q: degree of the polynomial part, q >= 2.
        threshold: t > 0, where the polynomial part meets the linear part.

    Returns:
        srelu(z), same shape (continuously differentiable in z).
    """
    check_tensor(z, "z", floating=True)
    q = check_int(q, "q", min_value=2)
    t = check_real(threshold, "threshold", min_value=0.0, strict_min=True)
    return _smoothed_relu(z, q, t)


def _smoothed_relu(z, q, t):
    zp = z.clamp(min=0.0)
    return torch.where(zp <= t, zp**q / (q * t ** (q - 1)), zp - (1 - 1 / q) * t)


def init_models(
    cfg: MultiViewData,
    *,
    models: int,
    width: int,
    sigma0: float,
    generator: torch.Generator,
) -> torch.Tensor:
    """Independent Gaussian initialisations w_{c,r} ~ N(0, sigma0^2 I) of E models, on
    the CPU.

    Args:
        cfg: the data parameters (for k and d).
        models: number of models E. width: neurons m per class. sigma0: init scale.
        generator: a CPU torch.Generator.

    Returns:
        W0 of shape (E, k, m, d).
    """
    models = check_int(models, "models", min_value=1)
    width = check_int(width, "width", min_value=1)
    sigma0 = check_real(sigma0, "sigma0", min_value=0.0, strict_min=True)
    check_generator(generator)
    return sigma0 * torch.randn(models, cfg.k, width, cfg.d, generator=generator)


def multiview_logits(
    W: torch.Tensor, X: torch.Tensor, *, q: int, threshold: float
) -> torch.Tensor:
    """Logits F_c(x) = sum_r sum_p srelu(<w_{c,r}, x_p>) of E models (eq-mv-model).

    Args:
        W: weights, (E, k, m, d). X: patches, (n, P, d). q, threshold: of
            :func:`smoothed_relu`.

    Returns:
        Logits, (E, n, k).
    """
    check_tensor(W, "W", ndim=4, floating=True, shape_doc="(E, k, m, d)")
    check_tensor(
        X, "X", shape=(None, None, W.shape[-1]), floating=True, shape_doc="(n, P, d)"
    )
    # (E, n, k, m, P)
    z = torch.einsum("ekmd,npd->enkmp", W, X)
    return smoothed_relu(z, q=q, threshold=threshold).sum(dim=(3, 4))


@dataclass(frozen=True)
class MultiViewHistory:
    """What :func:`train_models` returns."""

    W: torch.Tensor  # (E, k, m, d) final weights
    train_loss: list[float]  # mean over models of the training loss, at every step
    train_acc: torch.Tensor  # (E,) final training accuracy of each model


def train_models(
    W0: torch.Tensor,
    data: MultiViewSample,
    *,
    q: int,
    threshold: float,
    lr: float,
    steps: int,
    teacher_logits: torch.Tensor | None = None,
    temperature: float = 1.0,
) -> MultiViewHistory:
    """Full-batch GD for E models at once, on labels or on a teacher's soft labels
    (eq-mv-kd).

    Without a teacher, the loss of each model is the mean cross-entropy of softmax(F(x))
    against the labels. With ``teacher_logits`` G (n, k), it is the distillation loss
    ``-T^2 mean_x sum_c softmax(G(x)/T)_c log softmax(F(x)/T)_c`` (Hinton et al., 2015)
    with ``T = temperature``.

    Args:
        W0: initial weights, (E, k, m, d). data: the training set.
        q, threshold: of :func:`smoothed_relu`. lr: step size > 0. steps: number of
            steps >= 1.
        teacher_logits: optional teacher logits on ``data.X``, (n, k) for all models or
            (E, n, k), one teacher per model.
        temperature: T > 0 of the distillation loss.

    Returns:
        A :class:`MultiViewHistory`.
    """
    check_tensor(W0, "W0", ndim=4, floating=True, shape_doc="(E, k, m, d)")
    if not isinstance(data, MultiViewSample):
        raise TypeError(f"data must be a MultiViewSample, got {type(data).__name__}")
    lr = check_real(lr, "lr", min_value=0.0, strict_min=True)
    steps = check_int(steps, "steps", min_value=1)
    T = check_real(temperature, "temperature", min_value=0.0, strict_min=True)
    E, k, n = W0.shape[0], W0.shape[1], data.y.shape[0]
    if teacher_logits is not None:
        check_tensor(teacher_logits, "teacher_logits", floating=True)
        if tuple(teacher_logits.shape) not in ((n, k), (E, n, k)):
            raise ValueError(
                f"teacher_logits must have shape (n, k) = ({n}, {k}) or "
                f"(E, n, k), got {tuple(teacher_logits.shape)}"
            )
    return _train_models(
        W0, data, q=q, threshold=threshold, lr=lr, steps=steps,
        teacher_logits=teacher_logits, T=T,
    )


def _train_models(
    W0: torch.Tensor,
    data: MultiViewSample,
    *,
    q: int,
    threshold: float,
    lr: float,
    steps: int,
    teacher_logits: torch.Tensor | None,
    T: float,
) -> MultiViewHistory:
    """The check-free core of :func:`train_models`."""
    E, k, n = W0.shape[0], W0.shape[1], data.y.shape[0]
    if teacher_logits is not None:
        target = torch.softmax(teacher_logits.to(W0) / T, dim=-1)  # (E?, n, k)
    W = W0.detach().clone().requires_grad_(True)
    X, y = data.X.to(W0), data.y.to(W0.device)
    losses = []
    for _ in range(steps):
        # (E, n, k)
        logits = multiview_logits(W, X, q=q, threshold=threshold)
        if teacher_logits is None:
            per_model = (
                torch.nn.functional.cross_entropy(
                    logits.reshape(E * n, k), y.repeat(E), reduction="none"
                )
                .view(E, n)
                .mean(1)
            )
        else:
            per_model = (
                -(target * torch.log_softmax(logits / T, -1)).sum(-1).mean(1) * T**2
            )
        # models: separate
        (grad,) = torch.autograd.grad(per_model.sum(), W)
        with torch.no_grad():
            W -= lr * grad
        losses.append(per_model.mean().item())
    W = W.detach()
    with torch.no_grad():
        acc = (
            (multiview_logits(W, X, q=q, threshold=threshold).argmax(-1) == y)
            .float()
            .mean(1)
        )
    return MultiViewHistory(W=W, train_loss=losses, train_acc=acc)


def view_strengths(W: torch.Tensor) -> torch.Tensor:
    """How strongly each model has learned each view: S[e, c, l] = max_r <w_{c,r},
    v_{c,l}>.

    Args:
        W: weights, (E, k, m, d), with the views v_{c,l} = e_{2c+l} of
            :class:`MultiViewData`.

    Returns:
        S of shape (E, k, 2).
    """
    check_tensor(W, "W", ndim=4, floating=True, shape_doc="(E, k, m, d)")
    k, d = W.shape[1], W.shape[3]
    if d < 2 * k:
        raise ValueError(f"W must have d >= 2k = {2 * k}, got d = {d}")
    return _view_strengths(W)


def _view_strengths(W):
    E, k, m, d = W.shape
    own = W[..., : 2 * k].view(E, k, m, k, 2)  # <w_{c,r}, v_{c',l}>
    idx = torch.arange(k)
    # (E, k, 2)
    return own[:, idx, :, idx, :].permute(1, 0, 2, 3).amax(dim=2)
