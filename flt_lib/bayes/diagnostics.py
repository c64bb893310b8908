"""Convergence diagnostics over several chains: split R-hat and its rank-normalised form
(Appendix A.7).

R-hat compares the spread between chains with the spread within them (Gelman & Rubin,
1992). Splitting every chain in two also catches a chain that is still drifting, and
rank-normalising the draws and folding them about the median makes the diagnostic work
for heavy tails and for differences in scale (Vehtari, Gelman, Simpson, Carpenter &
Buerkner, 2021). The functions accept draws of shape (T, C) or (T, C, d): ``T`` draws of
``C`` chains, for ``d`` quantities.
"""

from __future__ import annotations

import torch

from flt_lib._validate import check_tensor

__all__ = ["split_chains", "split_rhat", "rank_normalise", "rank_normalised_rhat"]


def _as_tcd(x: object, name: str = "x") -> tuple[torch.Tensor, int]:
    x = check_tensor(x, name, floating=True)
    if x.ndim not in (2, 3):
        raise ValueError(
            f"{name} must have shape (T, C) or (T, C, d), got {tuple(x.shape)}"
        )
    if x.shape[0] < 4:
        raise ValueError(
            f"{name} must have at least 4 draws per chain, got T = {x.shape[0]}"
        )
    return (x if x.ndim == 3 else x[:, :, None]), x.ndim


def split_chains(x: torch.Tensor) -> torch.Tensor:
    """Cut every chain into its first and second half; an odd middle draw is dropped.

    Args:
        x: draws, shape (T, C) or (T, C, d), ``T >= 4``.

    Returns:
        Draws of ``2C`` half-chains, shape (T // 2, 2C) or (T // 2, 2C, d).
    """
    x3, ndim = _as_tcd(x)
    n = x3.shape[0] // 2
    out = torch.cat([x3[:n], x3[x3.shape[0] - n :]], dim=1)  # (n, 2C, d)
    return out if ndim == 3 else out[..., 0]


def _rhat(z: torch.Tensor) -> torch.Tensor:
    """R-hat of (already split) chains z (n, M, d) -> (d,) (eq-bayes-rhat)."""
    n = z.shape[0]
    W = z.var(0).mean(0)  # mean within-chain variance
    B_over_n = z.mean(0).var(0)  # variance of the chain means
    var_plus = (n - 1) / n * W + B_over_n
    return (var_plus / W).sqrt()


def split_rhat(x: torch.Tensor) -> torch.Tensor:
    """Split R-hat ``sqrt(var_plus / W)`` over half-chains (Gelman et al., 2013).

    Args:
        x: draws, shape (T, C) or (T, C, d), ``T >= 4``.

    Returns:
        R-hat, a 0-D tensor or shape (d,); close to 1 when the chains agree.
    """
    x3, ndim = _as_tcd(x)
    r = _rhat(split_chains(x3))
    return r if ndim == 3 else r[0]


def rank_normalise(x: torch.Tensor) -> torch.Tensor:
    """Replace each draw by ``Phi^-1((r - 3/8) / (S + 1/4))``, ``r`` its rank of ``S``.

    Ranks are pooled over all chains and draws, separately for each quantity, and tied
    draws share their average rank (Vehtari et al., 2021, eq. 14).

    Args:
        x: draws, shape (T, C) or (T, C, d).

    Returns:
        Normal scores of the same shape.
    """
    x3, ndim = _as_tcd(x)
    z = _rank_normalise(x3)
    return z if ndim == 3 else z[..., 0]


def _rank_normalise(x3: torch.Tensor) -> torch.Tensor:
    """Normal scores of pooled average ranks, (T, C, d) -> (T, C, d)."""
    T, C, d = x3.shape
    flat = x3.reshape(T * C, d)
    S = T * C
    ranks = torch.empty_like(flat)
    for k in range(d):
        vals, inv, counts = torch.unique(
            flat[:, k], return_inverse=True, return_counts=True
        )
        first = torch.cumsum(counts, 0) - counts  # 0-based first rank
        ranks[:, k] = (first.to(flat.dtype) + (counts.to(flat.dtype) + 1) / 2)[
            inv
        ]  # average rank
    return torch.special.ndtri((ranks - 0.375) / (S + 0.25)).reshape(T, C, d)


def rank_normalised_rhat(x: torch.Tensor) -> torch.Tensor:
    """Rank-normalised split R-hat: the larger of the bulk and the folded (tail) R-hat
    (Vehtari et al., 2021) (eq-bayes-rank-rhat).

    The chains are split first. Bulk: R-hat of the rank-normalised half-chains. Tail:
    the same for the folded draws ``|x - median(x)|``, which detects chains that agree
    in location but not in scale.

    Args:
        x: draws, shape (T, C) or (T, C, d), ``T >= 4``.

    Returns:
        R-hat, a 0-D tensor or shape (d,); Vehtari et al. recommend using draws only
        when it is below 1.01.
    """
    x3, ndim = _as_tcd(x)
    z = split_chains(x3)  # (n, 2C, d)
    median = z.flatten(0, 1).quantile(0.5, dim=0)  # (d,)
    bulk = _rhat(_rank_normalise(z))
    tail = _rhat(_rank_normalise((z - median).abs()))  # folded
    r = torch.maximum(bulk, tail)
    return r if ndim == 3 else r[0]
