"""Multi-query associative recall and the capacity of a fixed-size state (Section 4.9).

In multi-query associative recall (MQAR; Arora et al. 2024, "Zoology") a sequence lists
``n`` key-value pairs and then asks for the values of some of the keys. Softmax
attention keeps every key and value (its cache grows with ``n``) and can look each one
up. A linear-attention layer (Katharopoulos et al. 2020) keeps the d_k x d_v state
``S = sum_j phi(k_j) v_j^T`` and reads ``S^T psi(q)``; the values enter the state
linearly, so once ``n > d_k`` some values cannot be told apart (prop-rnn-capacity).

The layers here are *constructed*, not trained: keys are fixed random unit vectors,
attention reads with a large inverse temperature, and linear attention is given the
read-out vectors with the smallest squared recall error (a least-squares fit that knows
all the sequence's keys), more than a trained read-out, a function of the query alone,
can use.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from flt_lib._validate import check_generator, check_int, check_real, check_tensor

__all__ = [
    "MQAR",
    "mqar",
    "key_embedding",
    "softmax_recall",
    "linear_state",
    "linear_recall",
    "min_recall_error",
]


@dataclass(frozen=True)
class MQAR:
    """A batch of multi-query associative-recall problems."""

    keys: torch.Tensor     # (B, n) int64: distinct key ids in 0..n_keys-1
    values: torch.Tensor   # (B, n) int64: value ids in 0..n_values-1
    queries: torch.Tensor  # (B, m) int64: positions 0..n-1 of the keys asked for


def mqar(
    B: int, n: int, *, n_keys: int, n_values: int, m: int, generator: torch.Generator
) -> MQAR:
    """Draw ``B`` problems of ``n`` pairs with distinct keys and ``m`` queries each."""
    B, n = check_int(B, "B", min_value=1), check_int(n, "n", min_value=1)
    n_keys = check_int(n_keys, "n_keys", min_value=n)
    n_values = check_int(n_values, "n_values", min_value=2)
    m = check_int(m, "m", min_value=1)
    check_generator(generator)
    keys = torch.stack(
        [torch.randperm(n_keys, generator=generator)[:n] for _ in range(B)]
    )
    values = torch.randint(n_values, (B, n), generator=generator)
    queries = torch.randint(n, (B, m), generator=generator)
    return MQAR(keys=keys, values=values, queries=queries)


def key_embedding(n_keys: int, d_k: int, *, generator: torch.Generator) -> torch.Tensor:
    """Random unit vectors, one per key id: (n_keys, d_k), float64."""
    n_keys = check_int(n_keys, "n_keys", min_value=1)
    d_k = check_int(d_k, "d_k", min_value=1)
    check_generator(generator)
    E = torch.randn(n_keys, d_k, generator=generator, dtype=torch.float64)
    return E / E.norm(dim=1, keepdim=True)


def _check_problem(task: object, E: object, n_values: int) -> None:
    if not isinstance(task, MQAR):
        raise TypeError(f"task must be an MQAR, got {type(task).__name__}")
    check_tensor(E, "E", ndim=2, floating=True, shape_doc="(n_keys, d_k)")
    if int(task.keys.max()) >= E.shape[0]:
        raise ValueError(
            f"E has {E.shape[0]} rows but a key id is {int(task.keys.max())}"
        )
    check_int(n_values, "n_values", min_value=int(task.values.max()) + 1)


def softmax_recall(
    task: MQAR, E: torch.Tensor, *, n_values: int, beta: float
) -> torch.Tensor:
    """Softmax attention over the cached pairs: o = softmax(beta K q) V with V one-hot.

    Returns:
        Recalled value ids (B, m).
    """
    _check_problem(task, E, n_values)
    beta = check_real(beta, "beta", min_value=0.0, strict_min=True)
    return _softmax_recall(task, E, n_values, beta)


def _softmax_recall(
    task: MQAR, E: torch.Tensor, n_values: int, beta: float
) -> torch.Tensor:
    K = E[task.keys]                                                  # (B, n, d_k)
    q = K.gather(1, task.queries[..., None].expand(-1, -1, K.shape[2]))   # (B, m, d_k)
    V = torch.nn.functional.one_hot(task.values, n_values).double()   # (B, n, n_values)
    o = torch.softmax(beta * q @ K.transpose(1, 2), dim=-1) @ V       # (B, m, n_values)
    return o.argmax(-1)


def linear_state(K: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
    """The linear-attention state S = sum_j k_j v_j^T = K^T V (eq-rnn-linear-attention).

    Args:
        K: keys (B, n, d_k) (features phi(k_j) already applied); V: values (B, n, d_v).

    Returns:
        S, (B, d_k, d_v): a fixed size, whatever n is.
    """
    check_tensor(K, "K", ndim=3, floating=True, shape_doc="(B, n, d_k)")
    check_tensor(V, "V", ndim=3, floating=True, shape_doc="(B, n, d_v)")
    if V.shape[:2] != K.shape[:2]:
        raise ValueError(
            f"K and V must agree in (B, n), got {tuple(K.shape)}, {tuple(V.shape)}"
        )
    return K.transpose(1, 2) @ V


def linear_recall(task: MQAR, E: torch.Tensor, *, n_values: int) -> torch.Tensor:
    """Linear attention with the best read-out: state S = K^T V, queries the rows of
    the pseudo-inverse K^+ (exact dual vectors when the keys are independent).

    Returns:
        Recalled value ids (B, m).
    """
    _check_problem(task, E, n_values)
    return _linear_recall(task, E, n_values)


def _linear_recall(task: MQAR, E: torch.Tensor, n_values: int) -> torch.Tensor:
    K = E[task.keys]                                                  # (B, n, d_k)
    V = torch.nn.functional.one_hot(task.values, n_values).double()   # (B, n, n_values)
    S = linear_state(K, V)                                     # (B, d_k, n_values)
    Psi = torch.linalg.pinv(K).transpose(1, 2)                        # (B, n, d_k)
    psi = Psi.gather(1, task.queries[..., None].expand(-1, -1, K.shape[2]))
    return (psi @ S).argmax(-1)                                       # (B, m)


def min_recall_error(K: torch.Tensor) -> float:
    """min over read-out vectors Psi of ||Psi K^T - I_n||_F^2, for keys K (n, d_k).

    This is the total squared recall error of linear attention over the n queries, for
    values with identity covariance (prop-rnn-capacity); it equals n - rank(K).
    """
    check_tensor(K, "K", ndim=2, floating=True, shape_doc="(n, d_k)")
    return _min_recall_error(K)


def _min_recall_error(K: torch.Tensor) -> float:
    n = K.shape[0]
    G = torch.linalg.pinv(K.T) @ K.T                                  # best Psi K^T
    return float(((G - torch.eye(n, dtype=K.dtype)) ** 2).sum())
