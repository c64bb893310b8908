"""Label smoothing and knowledge distillation for softmax classifiers (Section 3.6).

Label smoothing trains on a soft target instead of the one-hot label ``e_y``: row ``y``
of a row-stochastic *confusion matrix* ``Pi`` (``Pi_yk`` = probability of reporting
class ``k`` for an example of class ``y``). Uniform smoothing (Szegedy et al., 2016) is
``Pi = (1 - eps) I + (eps / K) 1 1^T``. Distillation (Hinton, Vinyals & Dean, 2015)
trains a student on the teacher's tempered probabilities ``q_T = softmax(v / T)``, with
the student's ``p_T = softmax(z / T)``. The training loop itself is softmax regression,
``flt_lib.feedforward.regression.softmax_regression_gd``.
"""

from __future__ import annotations

import torch

from flt_lib._validate import check_int, check_real, check_tensor

__all__ = [
    "distillation_gradient",
    "smooth_labels",
    "soft_cross_entropy",
    "tempered_softmax",
    "uniform_smoothing",
]


def tempered_softmax(logits: torch.Tensor, *, temperature: float = 1.0) -> torch.Tensor:
    """``softmax(logits / T)`` along the last dimension (def. ``def-distil-loss``).

    Args:
        logits: shape (n, K).
        temperature: T > 0; T > 1 flattens the distribution.

    Returns:
        Probabilities, shape (n, K).
    """
    logits = check_tensor(logits, "logits", ndim=2, floating=True, shape_doc="(n, K)")
    T = check_real(temperature, "temperature", min_value=0.0, strict_min=True)
    return torch.softmax(logits / T, dim=1)


def uniform_smoothing(n_classes: int, eps: float) -> torch.Tensor:
    """The confusion matrix ``Pi = (1 - eps) I + (eps / K) 1 1^T`` of uniform label
    smoothing.

    Args:
        n_classes: ``K >= 2``.
        eps: smoothing in [0, 1].

    Returns:
        ``Pi``, shape (K, K), float64, rows summing to 1.
    """
    K = check_int(n_classes, "n_classes", min_value=2)
    eps = check_real(eps, "eps", min_value=0.0, max_value=1.0)
    return (1 - eps) * torch.eye(K, dtype=torch.float64) + eps / K


def smooth_labels(y: torch.Tensor, confusion: torch.Tensor) -> torch.Tensor:
    """Label-smoothed targets ``q_i = Pi[y_i]``: row ``y_i`` of the confusion matrix.

    Eq. ``eq-distil-confusion``; with :func:`uniform_smoothing` this is
    ``(1 - eps) e_y + eps / K`` (Szegedy et al., 2016, Sec. 7).

    Args:
        y: class indices in [0, K), shape (n,).
        confusion: row-stochastic ``Pi``, shape (K, K), entries >= 0, rows summing to 1.

    Returns: Target distributions, shape (n, K), in the dtype of ``confusion``, on
        ``y``'s device.
    """
    y = check_tensor(y, "y", ndim=1, shape_doc="(n,)")
    Pi = check_tensor(confusion, "confusion", ndim=2, floating=True, shape_doc="(K, K)")
    K = Pi.shape[0]
    if Pi.shape[1] != K:
        raise ValueError(
            f"confusion must be square (K, K), got shape {tuple(Pi.shape)}"
        )
    if (Pi < 0).any() or not torch.allclose(
        Pi.sum(1), torch.ones_like(Pi[:, 0]), atol=1e-9
    ):
        raise ValueError("confusion must have entries >= 0 and rows summing to 1")
    if y.is_floating_point():
        raise TypeError(f"y must hold integer class indices, got dtype {y.dtype}")
    if y.numel() and (y.min().item() < 0 or y.max().item() >= K):
        raise ValueError(
            f"y must hold class indices in [0, {K}), "
            f"got values in [{y.min().item()}, {y.max().item()}]"
        )
    return _smooth_labels(y, Pi)


def _smooth_labels(y: torch.Tensor, Pi: torch.Tensor) -> torch.Tensor:
    """The check-free core of :func:`smooth_labels`: row ``y_i`` of ``Pi``."""
    return Pi.to(y.device)[y.long()]  # (n, K)


def soft_cross_entropy(
    logits: torch.Tensor, targets: torch.Tensor, *, temperature: float = 1.0
) -> torch.Tensor:
    """Per-example cross-entropy ``H(q, p_T) = -sum_k q_k log softmax(z / T)_k``.

    With ``q = softmax(v / T)`` this is Hinton et al.'s (2015) distillation loss
    (eq. ``eq-distil-loss``); its gradient with respect to the student logits ``z`` is
    ``(p_T - q) / T`` (see :func:`distillation_gradient`).

    Args:
        logits: student logits z, shape (n, K).
        targets: target distributions q, shape (n, K), rows summing to 1.
        temperature: T > 0.

    Returns:
        Losses, shape (n,).
    """
    logits = check_tensor(logits, "logits", ndim=2, floating=True, shape_doc="(n, K)")
    check_tensor(
        targets, "targets", shape=tuple(logits.shape), shape_doc="(n, K) like logits"
    )
    T = check_real(temperature, "temperature", min_value=0.0, strict_min=True)
    return -(targets * torch.log_softmax(logits / T, dim=1)).sum(1)


def distillation_gradient(
    student_logits: torch.Tensor, teacher_logits: torch.Tensor, *, temperature: float
) -> torch.Tensor:
    """Closed-form gradient ``(p_T - q_T) / T`` of ``H(q_T, p_T)`` in the student's
    logits.

    Theorem ``thm-distil-gradient`` (eq. ``eq-distil-gradient``).

    Args:
        student_logits: z, shape (n, K).
        teacher_logits: v, shape (n, K).
        temperature: T > 0.

    Returns: The gradient of each example's loss with respect to its own logits, shape
        (n, K).
    """
    z = check_tensor(
        student_logits, "student_logits", ndim=2, floating=True, shape_doc="(n, K)"
    )
    v = check_tensor(
        teacher_logits,
        "teacher_logits",
        shape=tuple(z.shape),
        shape_doc="(n, K) like student_logits",
    )
    T = check_real(temperature, "temperature", min_value=0.0, strict_min=True)
    return _distillation_gradient(z, v, T)


def _distillation_gradient(z: torch.Tensor, v: torch.Tensor, T: float) -> torch.Tensor:
    """The check-free core of :func:`distillation_gradient`."""
    p_T = tempered_softmax(z, temperature=T)  # student, (n, K)
    q_T = tempered_softmax(v, temperature=T)  # teacher, (n, K)
    return (p_T - q_T) / T
