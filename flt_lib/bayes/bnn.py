"""A Bayesian neural network: one hidden layer, 1-D regression (Appendix A.7).

The network ``f(x; theta) = sum_j v_j tanh(w_j x + b_j) + c`` has ``H`` hidden units and
``d = 3H + 1`` parameters, stored flat as ``theta = (w, b, v, c)``: input weights (H),
hidden biases (H), output weights (H) and the output bias. With Gaussian noise and a
Gaussian prior the posterior is

    log pi(theta) = -|y - f(x; theta)|^2 / (2 noise_var)
                    - sum_k theta_k^2 / (2 prior_var_k)

up to a constant (eq-bayes-bnn-posterior). Following Neal (1996) the output weights have
prior variance ``out_var / H``, so that the prior over functions has a limit as ``H``
grows (Section A.6). Everything is vectorised over ``C`` parameter vectors (chains,
ensemble members or Monte-Carlo draws): ``theta`` has shape (C, d).

The posterior is invariant under the ``H! 2^H`` relabellings of the hidden units:
permuting them, and flipping the signs of ``(w_j, b_j, v_j)`` together (``tanh`` is
odd). :func:`permute_hidden`, :func:`flip_hidden` and :func:`canonical_form` act on
them.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from flt_lib._validate import check_int, check_real, check_tensor

__all__ = [
    "n_params",
    "unpack",
    "forward",
    "prior_variances",
    "BNNRegression",
    "permute_hidden",
    "flip_hidden",
    "canonical_form",
]


def n_params(n_hidden: int) -> int:
    """Number of parameters ``d = 3H + 1`` of a network with ``H`` hidden units."""
    return 3 * check_int(n_hidden, "n_hidden", min_value=1) + 1


def _check_theta(theta: object, n_hidden: int) -> torch.Tensor:
    d = n_params(n_hidden)
    return check_tensor(
        theta,
        "theta",
        shape=(None, d),
        floating=True,
        shape_doc=f"(C, d) with d = 3 n_hidden + 1 = {d}",
    )


def unpack(
    theta: torch.Tensor, n_hidden: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Split flat parameters into ``(w, b, v, c)``.

    Args:
        theta: parameters, shape (C, d), ``d = 3 n_hidden + 1``.
        n_hidden: number of hidden units ``H``.

    Returns:
        Input weights (C, H), hidden biases (C, H), output weights (C, H), output
        biases (C,): views of ``theta``.
    """
    theta = _check_theta(theta, n_hidden)
    H = n_hidden
    return theta[:, :H], theta[:, H : 2 * H], theta[:, 2 * H : 3 * H], theta[:, 3 * H]


def _forward(
    theta: torch.Tensor, x: torch.Tensor, H: int, mask: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """The network on inputs x (m,): outputs (C, m) and hidden activations (C, m, H)."""
    w, b, v, c = (
        theta[:, :H],
        theta[:, H : 2 * H],
        theta[:, 2 * H : 3 * H],
        theta[:, 3 * H :],
    )
    h = torch.tanh(
        torch.addcmul(b[:, None, :], x[None, :, None], w[:, None, :])
    )  # (C, m, H)
    if mask is not None:
        h = h * mask[:, None, :]  # dropout
    return torch.baddbmm(c[:, :, None], h, v[:, :, None])[:, :, 0], h  # (C, m)


def forward(
    theta: torch.Tensor,
    x: torch.Tensor,
    n_hidden: int,
    mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """Outputs ``f(x; theta) = tanh(x w + b) v + c`` of ``C`` networks (eq-bayes-bnn).

    Args:
        theta: parameters, shape (C, d), ``d = 3 n_hidden + 1``.
        x: inputs, shape (m,).
        n_hidden: number of hidden units ``H``.
        mask: optional multipliers of the hidden units, shape (C, H) (dropout).

    Returns:
        Outputs, shape (C, m).
    """
    theta = _check_theta(theta, n_hidden)
    x = check_tensor(x, "x", ndim=1, floating=True, shape_doc="(m,)")
    if mask is not None:
        check_tensor(
            mask,
            "mask",
            shape=(theta.shape[0], n_hidden),
            floating=True,
            shape_doc=f"(C, H) = ({theta.shape[0]}, {n_hidden})",
        )
    return _forward(theta, x, n_hidden, mask)[0]


def prior_variances(
    n_hidden: int,
    *,
    weight_var: float = 1.0,
    bias_var: float = 1.0,
    out_var: float = 1.0,
) -> torch.Tensor:
    """Prior variances of the flat parameters, with Neal's ``1/H`` output scaling.

    Args:
        n_hidden: number of hidden units ``H``.
        weight_var: variance of each input weight ``w_j``.
        bias_var: variance of each hidden bias ``b_j`` and of the output bias ``c``.
        out_var: ``H`` times the variance of each output weight ``v_j`` (Neal, 1996).

    Returns:
        Variances, shape (d,), float64, in the order ``(w, b, v, c)``.
    """
    H = check_int(n_hidden, "n_hidden", min_value=1)
    wv = check_real(weight_var, "weight_var", min_value=0.0, strict_min=True)
    bv = check_real(bias_var, "bias_var", min_value=0.0, strict_min=True)
    ov = check_real(out_var, "out_var", min_value=0.0, strict_min=True)
    return torch.cat(
        [
            torch.full((H,), wv),
            torch.full((H,), bv),
            torch.full((H,), ov / H),
            torch.tensor([bv]),
        ]
    ).double()


@dataclass(frozen=True)
class BNNRegression:
    """Posterior of a one-hidden-layer tanh network for 1-D regression
    (eq-bayes-bnn-posterior)."""

    x: torch.Tensor  # (n,) training inputs
    y: torch.Tensor  # (n,) training targets
    n_hidden: int  # H, number of hidden units
    prior_var: torch.Tensor  # (d,) prior variance of each parameter, d = 3H + 1
    noise_var: float  # variance of the Gaussian observation noise

    def __post_init__(self) -> None:
        check_tensor(self.x, "x", ndim=1, floating=True, shape_doc="(n,)")
        check_tensor(
            self.y,
            "y",
            shape=(self.x.shape[0],),
            floating=True,
            shape_doc="(n,) like x",
        )
        d = n_params(self.n_hidden)
        check_tensor(
            self.prior_var,
            "prior_var",
            shape=(d,),
            floating=True,
            shape_doc=f"(d,) with d = 3 n_hidden + 1 = {d}",
        )
        if not (self.prior_var > 0).all():
            raise ValueError(
                f"prior_var must be > 0, got min {self.prior_var.min().item()}"
            )
        check_real(self.noise_var, "noise_var", min_value=0.0, strict_min=True)

    @property
    def dim(self) -> int:
        """Number of parameters ``d``."""
        return n_params(self.n_hidden)

    def log_likelihood(
        self, theta: torch.Tensor, mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        """``-|y - f(x; theta)|^2 / (2 noise_var)`` up to a constant: (C, d) -> (C,)."""
        theta = _check_theta(theta, self.n_hidden)
        f, _ = _forward(theta, self.x, self.n_hidden, mask)
        return -((self.y - f) ** 2).sum(1) / (2 * self.noise_var)

    def log_prior(self, theta: torch.Tensor) -> torch.Tensor:
        """``-sum_k theta_k^2 / (2 prior_var_k)`` up to a constant: (C, d) -> (C,)."""
        theta = _check_theta(theta, self.n_hidden)
        return -(theta**2 / (2 * self.prior_var)).sum(1)

    def log_prob(self, theta: torch.Tensor) -> torch.Tensor:
        """Log posterior up to a constant (eq-bayes-bnn-posterior): (C, d) -> (C,)."""
        return self.log_likelihood(theta) + self.log_prior(theta)

    def grad_log_prob(self, theta: torch.Tensor) -> torch.Tensor:
        """Gradient of :meth:`log_prob` by backpropagation by hand: (C, d) -> (C, d)."""
        return self._grad_log_prob(_check_theta(theta, self.n_hidden))

    def _grad_log_prob(self, theta: torch.Tensor) -> torch.Tensor:
        H = self.n_hidden
        f, h = _forward(theta, self.x, H)  # (C, n, H)
        r = (self.y - f) / self.noise_var  # (C, n) dL/df
        da = (1 - h * h) * (
            r[:, :, None] * theta[:, None, 2 * H : 3 * H]
        )  # dL/d(pre-act)
        grad = torch.cat(
            [
                self.x @ da,
                da.sum(1),  # d/dw, d/db
                (r[:, None, :] @ h)[:, 0],
                r.sum(1, keepdim=True),
            ],
            dim=1,
        )
        return grad - theta / self.prior_var


def permute_hidden(
    theta: torch.Tensor, perm: torch.Tensor, n_hidden: int
) -> torch.Tensor:
    """Relabel the hidden units: unit ``j`` of the result is input unit ``perm[j]``.

    Args:
        theta: parameters, shape (C, d).
        perm: a permutation of ``0..H-1``, shape (H,), integer.
        n_hidden: ``H``.

    Returns:
        Parameters (C, d) of the same function.
    """
    theta = _check_theta(theta, n_hidden)
    H = n_hidden
    perm = check_tensor(perm, "perm", shape=(H,), shape_doc=f"(H,) = ({H},)")
    if perm.is_floating_point() or not torch.equal(perm.sort().values, torch.arange(H)):
        raise ValueError(
            f"perm must be a permutation of 0..{H - 1}, got {perm.tolist()}"
        )
    idx = torch.cat([perm, perm + H, perm + 2 * H, torch.tensor([3 * H])])
    return theta[:, idx]


def flip_hidden(
    theta: torch.Tensor, signs: torch.Tensor, n_hidden: int
) -> torch.Tensor:
    """Multiply unit j's ``(w_j, b_j, v_j)`` by ``signs[j] = +-1`` (f is unchanged).

    Args:
        theta: parameters, shape (C, d).
        signs: entries +1 or -1, shape (H,) or (C, H).
        n_hidden: ``H``.

    Returns:
        Parameters (C, d) of the same function.
    """
    theta = _check_theta(theta, n_hidden)
    signs = check_tensor(signs, "signs", floating=True)
    if signs.shape not in ((n_hidden,), (theta.shape[0], n_hidden)):
        raise ValueError(
            f"signs must have shape (H,) or (C, H) with H = {n_hidden}, "
            f"got {tuple(signs.shape)}"
        )
    if not ((signs == 1) | (signs == -1)).all():
        raise ValueError("signs must contain only +1 and -1")
    s = signs.expand(theta.shape[0], n_hidden).to(theta.dtype)
    ones = torch.ones(theta.shape[0], 1, dtype=theta.dtype, device=theta.device)
    return theta * torch.cat([s, s, s, ones], dim=1)


def canonical_form(theta: torch.Tensor, n_hidden: int) -> torch.Tensor:
    """One representative of each symmetry orbit: all ``w_j >= 0``, sorted by ``w_j``.

    Args:
        theta: parameters, shape (C, d).
        n_hidden: ``H``.

    Returns:
        Parameters (C, d) of the same functions, equal for any two relabellings of one
        network (up to ties).
    """
    theta = _check_theta(theta, n_hidden)
    H = n_hidden
    signs = torch.where(theta[:, :H] < 0, -1.0, 1.0).to(theta.dtype)  # (C, H)
    flipped = flip_hidden(theta, signs, H)
    order = flipped[:, :H].argsort(dim=1)  # (C, H)
    idx = torch.cat(
        [order, order + H, order + 2 * H, torch.full((theta.shape[0], 1), 3 * H)], dim=1
    )
    return flipped.gather(1, idx)
