"""Neural tangent kernels of a two-layer ReLU network, and the lazy versus rich comparison.

The model is the two-layer ReLU network in the NTK parameterisation

    h(x; W, a) = (1 / sqrt(m)) * sum_r a_r * relu(<w_r, x>),     W: (m, d), a: (m,),

initialised with every entry of W and a drawn i.i.d. from N(0, 1). Both layers are trained.
The module holds

- the data: a single-index ("teacher neuron") regression task on the unit sphere;
- the model, its closed-form parameter Jacobian and empirical NTK, an autograd oracle;
- the infinite-width limit: the arc-cosine NTK (Jacot et al., 2018; Bietti & Mairal, 2019);
- kernel regression;
- the alpha-scaled training of Chizat, Oyallon & Bach (2019), which returns a history.
"""

from __future__ import annotations

import math

import torch

from flt_lib._validate import check_generator, check_int, check_real, check_tensor


# ----------------------------------------------------------------------------------- data
def single_index_data(
    n: int, d: int, generator: torch.Generator, *, w_star: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Inputs uniform on the unit sphere, labels from one ReLU teacher neuron.

    ``x ~ Unif(S^{d-1})``, ``y = relu(sqrt(d) <w*, x>) - 1/sqrt(2 pi)`` (centred, so that
    ``E[y] ~ 0``); ``sqrt(d) <w*, x>`` is approximately N(0, 1).

    Args:
        n: number of examples.
        d: input dimension, ``d >= 2``.
        generator: CPU generator for the inputs (and for ``w*`` when it is not given).
        w_star: the teacher direction, shape (d,), unit norm; default a random unit vector.

    Returns:
        ``(X, y, w_star)`` with shapes (n, d), (n,), (d,), on the CPU.
    """
    n = check_int(n, "n", min_value=1)
    d = check_int(d, "d", min_value=2)
    check_generator(generator)
    if w_star is None:
        w_star = torch.randn(d, generator=generator)
        w_star = w_star / w_star.norm()
    else:
        check_tensor(w_star, "w_star", shape=(d,), floating=True, shape_doc="(d,)")
        if abs(w_star.norm().item() - 1.0) > 1e-4:
            raise ValueError(f"w_star must have unit norm, got norm {w_star.norm().item():.4g}")
    X = torch.randn(n, d, generator=generator)  # (n, d)
    X = X / X.norm(dim=1, keepdim=True)
    z = math.sqrt(d) * (X @ w_star.to(X))  # (n,)
    y = torch.relu(z) - 1.0 / math.sqrt(2.0 * math.pi)
    return X, y, w_star


# ---------------------------------------------------------------------------------- model
def init_two_layer(d: int, m: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Standard Gaussian initialisation of the two-layer network (NTK parameterisation).

    Args:
        d: input dimension.
        m: width (number of hidden units).
        generator: CPU generator.

    Returns:
        ``(W, a)`` of shapes (m, d) and (m,), entries i.i.d. N(0, 1), on the CPU.
    """
    d = check_int(d, "d", min_value=1)
    m = check_int(m, "m", min_value=1)
    check_generator(generator)
    W = torch.randn(m, d, generator=generator)
    a = torch.randn(m, generator=generator)
    return W, a


def _check_params(X: torch.Tensor, W: torch.Tensor, a: torch.Tensor, name: str = "X") -> None:
    check_tensor(W, "W", ndim=2, floating=True, shape_doc="(m, d)")
    check_tensor(a, "a", shape=(W.shape[0],), floating=True, shape_doc="(m,)")
    check_tensor(X, name, ndim=2, floating=True, shape_doc="(n, d)")
    if X.shape[1] != W.shape[1]:
        raise ValueError(f"{name} must have d = {W.shape[1]} columns like W, got shape {tuple(X.shape)}")


def two_layer(X: torch.Tensor, W: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    """Output ``h(x) = m^{-1/2} sum_r a_r relu(<w_r, x>)`` of the two-layer net.

    Args:
        X: inputs, shape (n, d).
        W: first-layer weights, shape (m, d).
        a: second-layer weights, shape (m,).

    Returns:
        Outputs, shape (n,).
    """
    _check_params(X, W, a)
    return torch.relu(X @ W.T) @ a / math.sqrt(W.shape[0])  # (n,)


def ntk_features(X: torch.Tensor, W: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    """Closed-form parameter Jacobian of :func:`two_layer`, one row per input.

    ``dh/dw_r = m^{-1/2} a_r 1[<w_r, x> > 0] x`` and ``dh/da_r = m^{-1/2} relu(<w_r, x>)``;
    the row is ``[vec(dh/dW), dh/da]`` (row-major ``W``).

    Args:
        X: inputs, shape (n, d).
        W: first-layer weights, shape (m, d).
        a: second-layer weights, shape (m,).

    Returns:
        The Jacobian, shape (n, m*d + m).
    """
    _check_params(X, W, a)
    m = W.shape[0]
    pre = X @ W.T  # (n, m)
    gW = ((pre > 0).to(X) * a)[:, :, None] * X[:, None, :]  # (n, m, d)
    ga = torch.relu(pre)  # (n, m)
    return torch.cat([gW.reshape(X.shape[0], -1), ga], dim=1) / math.sqrt(m)


def jacobian_autograd(X: torch.Tensor, W: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    """Parameter Jacobian of :func:`two_layer` by autograd, one backward pass per input (oracle).

    Args:
        X: inputs, shape (n, d).
        W: first-layer weights, shape (m, d).
        a: second-layer weights, shape (m,).

    Returns:
        The Jacobian, shape (n, m*d + m), in the layout of :func:`ntk_features`.
    """
    _check_params(X, W, a)
    Wg = W.detach().clone().requires_grad_(True)
    ag = a.detach().clone().requires_grad_(True)
    rows = []
    for i in range(X.shape[0]):
        out = two_layer(X[i : i + 1], Wg, ag).sum()
        gW, ga = torch.autograd.grad(out, (Wg, ag))
        rows.append(torch.cat([gW.reshape(-1), ga]))
    return torch.stack(rows)  # (n, m*d + m)


def empirical_ntk(X1: torch.Tensor, X2: torch.Tensor, W: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    """Empirical NTK ``K(x, x') = <grad_theta h(x), grad_theta h(x')>`` of the two-layer net.

    Computed without forming the Jacobian:
    ``K = (1/m) [relu(X1 W^T) relu(X2 W^T)^T + (X1 X2^T) * (S1 diag(a^2) S2^T)]`` with
    ``S = 1[X W^T > 0]`` (Jacot et al., 2018).

    Args:
        X1: inputs, shape (n1, d).
        X2: inputs, shape (n2, d).
        W: first-layer weights, shape (m, d).
        a: second-layer weights, shape (m,).

    Returns:
        The kernel matrix, shape (n1, n2).
    """
    _check_params(X1, W, a, "X1")
    _check_params(X2, W, a, "X2")
    m = W.shape[0]
    p1, p2 = X1 @ W.T, X2 @ W.T  # (n1, m), (n2, m)
    k_a = torch.relu(p1) @ torch.relu(p2).T  # (n1, n2): second-layer part
    k_w = (X1 @ X2.T) * (((p1 > 0).to(X1) * a**2) @ (p2 > 0).to(X1).T)  # first-layer part
    return (k_a + k_w) / m


# ------------------------------------------------------------------------ infinite width
def kappa(u: torch.Tensor) -> torch.Tensor:
    """Arc-cosine NTK profile ``kappa(u) = (2u(pi - arccos u) + sqrt(1 - u^2)) / pi``.

    It is ``kappa_1(u) + u kappa_0(u)`` with ``kappa_0(u) = (pi - arccos u)/pi`` and
    ``kappa_1(u) = (u(pi - arccos u) + sqrt(1 - u^2))/pi`` (Bietti & Mairal, 2019).

    Args:
        u: cosines, any shape; values are clamped to [-1, 1].

    Returns:
        ``kappa(u)``, same shape.
    """
    check_tensor(u, "u", floating=True)
    u = u.clamp(-1.0, 1.0)
    return (2 * u * (math.pi - torch.arccos(u)) + torch.sqrt(1 - u**2)) / math.pi


def arccos_ntk(X1: torch.Tensor, X2: torch.Tensor) -> torch.Tensor:
    """Infinite-width NTK of :func:`two_layer` at N(0, 1) initialisation.

    ``K_inf(x, x') = (1/2) ||x|| ||x'|| kappa(<x, x'> / (||x|| ||x'||))``; the factor 1/2 is
    ``E[relu(g)^2] = E[1[g > 0]] = 1/2`` for ``g ~ N(0, 1)``.

    Args:
        X1: inputs, shape (n1, d), no zero rows.
        X2: inputs, shape (n2, d), no zero rows.

    Returns:
        The kernel matrix, shape (n1, n2).
    """
    check_tensor(X1, "X1", ndim=2, floating=True, shape_doc="(n1, d)")
    check_tensor(X2, "X2", shape=(None, X1.shape[1]), floating=True, shape_doc="(n2, d)")
    n1, n2 = X1.norm(dim=1), X2.norm(dim=1)  # (n1,), (n2,)
    if (n1 == 0).any() or (n2 == 0).any():
        raise ValueError("X1 and X2 must have no zero rows (the cosine is undefined)")
    u = (X1 @ X2.T) / (n1[:, None] * n2[None, :])
    return 0.5 * n1[:, None] * n2[None, :] * kappa(u)


def kernel_regression(
    K_train: torch.Tensor, y: torch.Tensor, K_test: torch.Tensor, ridge: float = 0.0
) -> torch.Tensor:
    """Kernel (ridge) regression predictions ``K_test (K_train + ridge I)^{-1} y``.

    With ``ridge = 0`` this is the minimum-RKHS-norm interpolant, the limit of gradient flow
    on the linearised model from a zero function (Lee et al., 2019).

    Args:
        K_train: train kernel, shape (n, n), symmetric positive definite (if ridge = 0).
        y: targets, shape (n,).
        K_test: test-train kernel, shape (n_test, n).
        ridge: ridge parameter, ``>= 0``.

    Returns:
        Predictions, shape (n_test,).
    """
    check_tensor(K_train, "K_train", ndim=2, floating=True, shape_doc="(n, n)")
    n = K_train.shape[0]
    check_tensor(K_train, "K_train", shape=(n, n), shape_doc="(n, n)")
    check_tensor(y, "y", shape=(n,), floating=True, shape_doc="(n,)")
    check_tensor(K_test, "K_test", shape=(None, n), floating=True, shape_doc="(n_test, n)")
    ridge = check_real(ridge, "ridge", min_value=0.0)
    A = K_train + ridge * torch.eye(n, dtype=K_train.dtype, device=K_train.device)
    return K_test @ torch.linalg.solve(A, y)


def kernel_gd(
    K_train: torch.Tensor, y: torch.Tensor, K_test: torch.Tensor, *, lr: float, steps: int
) -> torch.Tensor:
    """Predictions of gradient descent on a fixed-kernel (linearised) model started at zero.

    Iterates ``f <- f - (lr/n) K (f - y)`` on the training set and the matching update of the
    test predictions; this is what a network in the lazy regime does with the loss
    ``(1/(2n)) sum_i (f(x_i) - y_i)^2`` (Lee et al., 2019). As ``steps -> inf`` it tends to
    :func:`kernel_regression` with ``ridge = 0``.

    Args:
        K_train: train kernel, shape (n, n).
        y: targets, shape (n,).
        K_test: test-train kernel, shape (n_test, n).
        lr: learning rate, ``> 0``.
        steps: number of steps, ``>= 1``.

    Returns:
        Test predictions after ``steps`` steps, shape (n_test,).
    """
    check_tensor(K_train, "K_train", ndim=2, floating=True, shape_doc="(n, n)")
    n = K_train.shape[0]
    check_tensor(K_train, "K_train", shape=(n, n), shape_doc="(n, n)")
    check_tensor(y, "y", shape=(n,), floating=True, shape_doc="(n,)")
    check_tensor(K_test, "K_test", shape=(None, n), floating=True, shape_doc="(n_test, n)")
    lr = check_real(lr, "lr", min_value=0.0, strict_min=True)
    steps = check_int(steps, "steps", min_value=1)
    f = torch.zeros_like(y)  # (n,)
    f_test = torch.zeros(K_test.shape[0], dtype=y.dtype, device=y.device)  # (n_test,)
    for _ in range(steps):
        r = f - y
        f, f_test = f - lr / n * (K_train @ r), f_test - lr / n * (K_test @ r)
    return f_test


# ------------------------------------------------------------------------ alpha scaling
def feature_alignment(W: torch.Tensor, w_star: torch.Tensor) -> float:
    """Fraction of the first layer's energy along the teacher direction, ``||W w*||^2 / ||W||_F^2``.

    For rows drawn isotropically it is about ``1/d``; it is 1 when every row is parallel to w*.

    Args:
        W: first-layer weights, shape (m, d).
        w_star: unit teacher direction, shape (d,).

    Returns:
        A number in [0, 1].
    """
    check_tensor(W, "W", ndim=2, floating=True, shape_doc="(m, d)")
    check_tensor(w_star, "w_star", shape=(W.shape[1],), floating=True, shape_doc="(d,)")
    return ((W @ w_star).pow(2).sum() / (W.pow(2).sum() * w_star.pow(2).sum())).item()


def train_alpha(
    X: torch.Tensor,
    y: torch.Tensor,
    W0: torch.Tensor,
    a0: torch.Tensor,
    alpha: float,
    *,
    lr: float,
    steps: int,
    record_every: int = 0,
    X_test: torch.Tensor | None = None,
    y_test: torch.Tensor | None = None,
    w_star: torch.Tensor | None = None,
) -> dict:
    """Full-batch gradient descent on the alpha-scaled model of Chizat, Oyallon & Bach (2019).

    The model is ``f(x) = alpha (h(x; W, a) - h(x; W0, a0))`` (zero at initialisation) and the
    loss ``L = (1 / (2 n alpha^2)) sum_i (f(x_i) - y_i)^2``. Large alpha gives lazy training,
    small alpha rich training; ``alpha = 1`` is the plain NTK-parameterised net with its
    initial function subtracted.

    Args:
        X: training inputs, shape (n, d).
        y: training targets, shape (n,).
        W0: initial first layer, shape (m, d).
        a0: initial second layer, shape (m,).
        alpha: output scale, ``> 0``.
        lr: learning rate, ``> 0``.
        steps: number of GD steps, ``>= 1``.
        record_every: record the history every this many steps (0: only first and last).
        X_test: optional test inputs, shape (n_test, d).
        y_test: optional test targets, shape (n_test,).
        w_star: optional teacher direction, shape (d,), for :func:`feature_alignment`.

    Returns:
        A dict with lists ``step``, ``train_loss`` (mean of ``(f - y)^2 / 2``), ``rel_move``
        (``||theta_t - theta_0|| / ||theta_0||``), and when given ``test_mse``, ``alignment``;
        plus the final ``W``, ``a`` and the final test predictions ``test_pred`` (or None).
    """
    _check_params(X, W0, a0)
    check_tensor(y, "y", shape=(X.shape[0],), floating=True, shape_doc="(n,)")
    alpha = check_real(alpha, "alpha", min_value=0.0, strict_min=True)
    lr = check_real(lr, "lr", min_value=0.0, strict_min=True)
    steps = check_int(steps, "steps", min_value=1)
    record_every = check_int(record_every, "record_every", min_value=0)
    if (X_test is None) != (y_test is None):
        raise ValueError("X_test and y_test must be given together, got only one of them")
    if X_test is not None:
        _check_params(X_test, W0, a0, "X_test")
        check_tensor(y_test, "y_test", shape=(X_test.shape[0],), floating=True, shape_doc="(n_test,)")
    W, a = W0.detach().clone().requires_grad_(True), a0.detach().clone().requires_grad_(True)
    with torch.no_grad():
        h0 = two_layer(X, W0, a0)  # (n,)
        h0_test = two_layer(X_test, W0, a0) if X_test is not None else None
    norm0 = torch.sqrt(W0.pow(2).sum() + a0.pow(2).sum()).item()
    hist: dict = {"step": [], "train_loss": [], "rel_move": []}
    if X_test is not None:
        hist["test_mse"] = []
    if w_star is not None:
        hist["alignment"] = []

    def record(t: int, loss: float) -> None:
        with torch.no_grad():
            hist["step"].append(t)
            hist["train_loss"].append(loss)
            move = torch.sqrt((W - W0).pow(2).sum() + (a - a0).pow(2).sum()).item()
            hist["rel_move"].append(move / norm0)
            if X_test is not None:
                pred = alpha * (two_layer(X_test, W, a) - h0_test)
                hist["test_mse"].append((pred - y_test).pow(2).mean().item())
            if w_star is not None:
                hist["alignment"].append(feature_alignment(W, w_star))

    for t in range(steps + 1):
        f = alpha * (two_layer(X, W, a) - h0)  # (n,)
        loss = 0.5 * (f - y).pow(2).mean()
        if t == 0 or t == steps or (record_every and t % record_every == 0):
            record(t, loss.item())
        if t == steps:
            break
        gW, ga = torch.autograd.grad(loss / alpha**2, (W, a))
        with torch.no_grad():
            W -= lr * gW
            a -= lr * ga
    hist["W"], hist["a"] = W.detach(), a.detach()
    with torch.no_grad():
        hist["test_pred"] = alpha * (two_layer(X_test, W, a) - h0_test) if X_test is not None else None
    return hist


# ------------------------------------------------------------- uniform-convergence baseline
def quantise(t: torch.Tensor, bits: int, radius: float) -> torch.Tensor:
    """Round every entry to the nearest of ``2^bits`` equally spaced levels in ``[-radius, radius]``.

    The grid is fixed before any data is seen, so a quantised network belongs to a finite
    class of at most ``2^(bits * P)`` functions (``P`` numbers quantised).

    Args:
        t: tensor to quantise, any shape.
        bits: bits per entry, ``1 <= bits <= 24``.
        radius: half-width of the grid, ``> 0``; entries outside are clipped.

    Returns:
        Quantised tensor, same shape, dtype and device.
    """
    check_tensor(t, "t", floating=True)
    bits = check_int(bits, "bits", min_value=1, max_value=24)
    radius = check_real(radius, "radius", min_value=0.0, strict_min=True)
    step = 2 * radius / (2**bits - 1)
    return ((t.clamp(-radius, radius) + radius) / step).round() * step - radius


def occam_bound(n_params: int, bits: int, n: int, delta: float, loss_range: float = 1.0) -> float:
    """Uniform-convergence (Occam / finite-class) bound on the generalisation gap.

    For a class of at most ``2^(bits * n_params)`` functions and a loss with values in
    ``[0, loss_range]``, Hoeffding's inequality and a union bound give, with probability at least
    ``1 - delta`` over ``n`` i.i.d. samples, simultaneously for every function in the class,
    ``risk <= empirical risk + loss_range * sqrt((bits * n_params * ln 2 + ln(1/delta)) / (2 n))``.

    Args:
        n_params: number of quantised parameters ``P >= 1``.
        bits: bits per parameter.
        n: number of training samples.
        delta: failure probability in (0, 1).
        loss_range: the loss takes values in ``[0, loss_range]``.

    Returns:
        The gap term (a float).
    """
    n_params = check_int(n_params, "n_params", min_value=1)
    bits = check_int(bits, "bits", min_value=1)
    n = check_int(n, "n", min_value=1)
    delta = check_real(delta, "delta", min_value=0.0, max_value=1.0, strict_min=True)
    if delta >= 1.0:
        raise ValueError(f"delta must be < 1, got {delta}")
    loss_range = check_real(loss_range, "loss_range", min_value=0.0, strict_min=True)
    return loss_range * math.sqrt((bits * n_params * math.log(2) + math.log(1 / delta)) / (2 * n))
