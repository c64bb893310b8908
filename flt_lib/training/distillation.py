"""Label smoothing and knowledge distillation for softmax classifiers.

Label smoothing (Szegedy et al., 2016; Mueller, Kornblith & Hinton, 2019) trains on the target
(1 - eps) e_y + eps / K. Distillation (Hinton, Vinyals & Dean, 2015) trains a student on the
teacher's tempered probabilities q_T = softmax(v / T), with the student's p_T = softmax(z / T).
"""

from __future__ import annotations

import torch

from flt_lib._validate import check_int, check_real, check_tensor


def tempered_softmax(logits: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """softmax(logits / T) along the last dimension.

    Args:
        logits: shape (n, K).
        temperature: T > 0; T > 1 flattens the distribution.

    Returns:
        Probabilities, shape (n, K).
    """
    logits = check_tensor(logits, "logits", ndim=2, floating=True, shape_doc="(n, K)")
    T = check_real(temperature, "temperature", min_value=0.0, strict_min=True)
    return torch.softmax(logits / T, dim=1)


def smooth_labels(y: torch.Tensor, n_classes: int, eps: float) -> torch.Tensor:
    """Label-smoothed targets (1 - eps) * onehot(y) + eps / K (Szegedy et al., 2016, Sec. 7).

    Args:
        y: class indices in [0, K), shape (n,).
        n_classes: K >= 2.
        eps: smoothing in [0, 1].

    Returns:
        Target distributions, shape (n, K), float64.
    """
    y = check_tensor(y, "y", ndim=1, shape_doc="(n,)")
    K = check_int(n_classes, "n_classes", min_value=2)
    eps = check_real(eps, "eps", min_value=0.0, max_value=1.0)
    if y.numel() and (y.min().item() < 0 or y.max().item() >= K):
        raise ValueError(f"y must hold class indices in [0, {K}), got values in [{y.min().item()}, {y.max().item()}]")
    onehot = torch.nn.functional.one_hot(y.long(), K).double().to(y.device)
    return (1 - eps) * onehot + eps / K


def soft_cross_entropy(logits: torch.Tensor, targets: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """Per-example cross-entropy H(q, p_T) = -sum_k q_k log softmax(z / T)_k with soft targets q.

    With q = softmax(v / T) this is Hinton et al.'s (2015) distillation loss; its gradient with
    respect to the student logits z is (p_T - q) / T (see :func:`distillation_gradient`).

    Args:
        logits: student logits z, shape (n, K).
        targets: target distributions q, shape (n, K), rows summing to 1.
        temperature: T > 0.

    Returns:
        Losses, shape (n,).
    """
    logits = check_tensor(logits, "logits", ndim=2, floating=True, shape_doc="(n, K)")
    check_tensor(targets, "targets", shape=tuple(logits.shape), shape_doc="(n, K) like logits")
    T = check_real(temperature, "temperature", min_value=0.0, strict_min=True)
    return -(targets * torch.log_softmax(logits / T, dim=1)).sum(1)


def distillation_gradient(student_logits: torch.Tensor, teacher_logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """Closed-form gradient (p_T - q_T) / T of H(q_T, p_T) with respect to the student logits.

    Args:
        student_logits: z, shape (n, K).
        teacher_logits: v, shape (n, K).
        temperature: T > 0.

    Returns:
        The gradient of each example's loss with respect to its own logits, shape (n, K).
    """
    z = check_tensor(student_logits, "student_logits", ndim=2, floating=True, shape_doc="(n, K)")
    v = check_tensor(teacher_logits, "teacher_logits", shape=tuple(z.shape), shape_doc="(n, K) like student_logits")
    T = check_real(temperature, "temperature", min_value=0.0, strict_min=True)
    return (tempered_softmax(z, T) - tempered_softmax(v, T)) / T


def train_softmax_regression(
    X: torch.Tensor, targets: torch.Tensor, steps: int, lr: float, temperature: float = 1.0
) -> tuple[torch.Tensor, torch.Tensor]:
    """Full-batch gradient descent from zero on mean_i H(q_i, softmax((W x_i + b) / T)).

    The loss is multiplied by T^2, as Hinton et al. (2015) recommend, so that gradient
    magnitudes do not shrink like 1/T^2 when the temperature is raised.

    Args:
        X: inputs, shape (n, d).
        targets: target distributions, shape (n, K).
        steps: number of gradient steps.
        lr: step size.
        temperature: T > 0 used in training (the model's own logits are W x + b).

    Returns:
        ``(W, b)`` of shapes (K, d) and (K,).
    """
    X = check_tensor(X, "X", ndim=2, floating=True, shape_doc="(n, d)")
    q = check_tensor(targets, "targets", ndim=2, shape=(X.shape[0], None), shape_doc="(n, K)")
    steps = check_int(steps, "steps", min_value=1)
    lr = check_real(lr, "lr", min_value=0.0, strict_min=True)
    T = check_real(temperature, "temperature", min_value=0.0, strict_min=True)
    n, d = X.shape
    K = q.shape[1]
    W = torch.zeros(K, d, dtype=X.dtype, device=X.device)
    b = torch.zeros(K, dtype=X.dtype, device=X.device)
    for _ in range(steps):
        G = T * (tempered_softmax(X @ W.T + b, T) - q) / n  # (n, K): T^2 * (p_T - q) / T / n
        W = W - lr * G.T @ X
        b = b - lr * G.sum(0)
    return W, b
