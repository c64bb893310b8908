"""Reverse-mode automatic differentiation, small enough to read in one sitting (Section
3.1).

Two views of the same algorithm:

- :class:`Value`, a scalar node of a computation graph. Every arithmetic operation
  creates a new node that remembers its inputs and how to compute its local partial
  derivatives. :meth:`Value.backward` visits the graph once in reverse topological order
  and accumulates ``grad = sum over children of (local derivative) * child.grad`` (the
  chain rule). It also counts the floating-point operations it performs, so the cost of
  the backward pass can be compared exactly with the cost of the forward pass
  (:func:`forward_flops`).
- :func:`backprop`, the same recursion written with matrices for a tanh multilayer
  perceptron (the list-of-layers format of :mod:`flt_lib.feedforward.mlp`, whose forward
  pass stores the activations it needs): the backpropagated error ``delta`` obeys
  ``delta_l = phi'(z_l) * (W_{l+1}^T delta_{l+1})`` (eq. ``eq-bp-delta`` in the book),
  and the weight gradient is the outer product ``delta_l h_{l-1}^T`` (Rumelhart, Hinton
  & Williams 1986).

A class is used for :class:`Value` because a graph node is genuinely stateful: its
``grad`` field is filled in by the backward pass.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from flt_lib._validate import check_int, check_tensor
from flt_lib.feedforward.mlp import Params, check_params

__all__ = [
    "Value",
    "backprop",
    "backprop_flops",
    "forward_flops",
    "topological_order",
    "value_mlp_loss",
]

def _leaf_backward() -> int:
    """A leaf has no parents: its backward step does nothing and costs nothing."""
    return 0


def _as_value(x: Value | float) -> Value:
    return x if isinstance(x, Value) else Value(x)


class Value:
    """A scalar node of a computation graph that supports reverse-mode differentiation.

    Every operation builds its output node and, in the same place, a closure
    ``_backward`` that applies that operation's local derivatives (the chain rule for
    one node): it adds ``d(out)/d(parent) * out.grad`` to each parent's ``grad`` and
    returns the number of floating-point operations it performed. Counting convention:
    the local-derivative arithmetic (0 for ``+``, ``*``, negation and exp; 1 for log and
    ReLU; 2 for a power, tanh and the sigmoid), plus one multiplication and one addition
    per edge, only the addition when the local derivative is the constant 1 of a sum.

    Attributes:
        data: the number this node holds (a Python float).
        grad: d(output)/d(this node), filled in by :meth:`backward`; 0.0 before.
        parents: the nodes this one was computed from (empty for a leaf).
        op: the name of the operation that produced it ("" for a leaf).
    """

    __slots__ = ("data", "grad", "parents", "op", "_backward")

    def __init__(self, data: float, parents: tuple[Value, ...] = (), op: str = ""):
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            raise TypeError(f"data must be a real number, got {type(data).__name__}")
        self.data = float(data)
        self.grad = 0.0
        self.parents = parents
        self.op = op
        self._backward = _leaf_backward

    def __repr__(self) -> str:
        return f"Value(data={self.data:.6g}, grad={self.grad:.6g})"

    # ---- operations: each one with its own derivative --------------------------------
    def __add__(self, other: Value | float) -> Value:
        other = _as_value(other)
        out = Value(self.data + other.data, (self, other), "+")

        def _backward() -> int:
            self.grad += out.grad  # d(a + b)/da = 1
            other.grad += out.grad  # d(a + b)/db = 1
            return 2

        out._backward = _backward
        return out

    def __mul__(self, other: Value | float) -> Value:
        other = _as_value(other)
        out = Value(self.data * other.data, (self, other), "*")

        def _backward() -> int:
            self.grad += other.data * out.grad  # d(ab)/da = b
            other.grad += self.data * out.grad  # d(ab)/db = a
            return 4

        out._backward = _backward
        return out

    def __neg__(self) -> Value:
        out = Value(-self.data, (self,), "neg")

        def _backward() -> int:
            self.grad += -1.0 * out.grad  # d(-a)/da = -1
            return 2

        out._backward = _backward
        return out

    def __pow__(self, exponent: float) -> Value:
        if isinstance(exponent, bool) or not isinstance(exponent, (int, float)):
            raise TypeError(
                f"exponent must be a real constant, got {type(exponent).__name__}"
            )
        p = float(exponent)
        out = Value(self.data**exponent, (self,), "pow")

        def _backward() -> int:
            self.grad += p * self.data ** (p - 1.0) * out.grad  # d(a^p)/da = p a^(p-1)
            return 4

        out._backward = _backward
        return out

    def exp(self) -> Value:
        out = Value(math.exp(self.data), (self,), "exp")

        def _backward() -> int:
            self.grad += out.data * out.grad  # d(e^a)/da = e^a
            return 2

        out._backward = _backward
        return out

    def log(self) -> Value:
        out = Value(math.log(self.data), (self,), "log")

        def _backward() -> int:
            self.grad += 1.0 / self.data * out.grad  # d(log a)/da = 1/a
            return 3

        out._backward = _backward
        return out

    def tanh(self) -> Value:
        out = Value(math.tanh(self.data), (self,), "tanh")

        def _backward() -> int:
            # d(tanh a)/da = 1 - tanh^2 a
            self.grad += (1.0 - out.data * out.data) * out.grad
            return 4

        out._backward = _backward
        return out

    def relu(self) -> Value:
        out = Value(max(self.data, 0.0), (self,), "relu")

        def _backward() -> int:
            self.grad += (1.0 if self.data > 0 else 0.0) * out.grad  # 1 if a > 0
            return 3

        out._backward = _backward
        return out

    def sigmoid(self) -> Value:
        out = Value(1.0 / (1.0 + math.exp(-self.data)), (self,), "sigmoid")

        def _backward() -> int:
            # d(sigma a)/da = sigma(a) (1 - sigma(a))
            self.grad += out.data * (1.0 - out.data) * out.grad
            return 4

        out._backward = _backward
        return out

    # ---- operations built from the ones above ----------------------------------------
    def __sub__(self, other: Value | float) -> Value:
        return self + (-other)

    def __truediv__(self, other: Value | float) -> Value:
        return self * _as_value(other) ** -1.0

    __radd__ = __add__
    __rmul__ = __mul__

    def __rsub__(self, other: float) -> Value:
        return Value(other) + (-self)

    def __rtruediv__(self, other: float) -> Value:
        return Value(other) * self**-1.0

    # ---- backward --------------------------------------------------------------------
    def backward(self) -> int:
        """Fill in ``grad`` for every node this one depends on; return the flops used.

        Gradients of a previous call are reset first. Returns the exact number of
        floating-point operations of the sweep (the sum of what the nodes' ``_backward``
        closures report).
        """
        order = topological_order(self)
        for node in order:
            node.grad = 0.0
        self.grad = 1.0  # d(self)/d(self)
        flops = 0
        for node in reversed(order):  # every child before its parents
            flops += node._backward()  # the adjoint recursion, one node at a time
        return flops


def topological_order(root: Value) -> list[Value]:
    """Every node ``root`` depends on, each after all of its parents (iterative DFS).

    Args:
        root: the output node.

    Returns:
        A list of nodes, leaves first, ending with ``root``.
    """
    if not isinstance(root, Value):
        raise TypeError(f"root must be a Value, got {type(root).__name__}")
    order: list[Value] = []
    seen: set[int] = set()
    stack: list[tuple[Value, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        stack.extend((p, False) for p in node.parents if id(p) not in seen)
    return order


def forward_flops(root: Value) -> int:
    """Number of elementary operations in the forward pass that produced ``root``.

    Every non-leaf node is one operation (+, *, negation, power, exp, log, tanh, ReLU,
    sigmoid).

    Args:
        root: the output node.

    Returns:
        The operation count, an int.
    """
    return sum(1 for node in topological_order(root) if node.parents)


def value_mlp_loss(
    params: Params, x: torch.Tensor, y: torch.Tensor
) -> tuple[Value, list[list[list[Value]]], list[list[Value]]]:
    """Squared loss of a tanh MLP on one example, built as a graph of scalar
    :class:`Value` nodes.

    The network is ``z_l = W_l h_{l-1} + b_l``, ``h_l = tanh(z_l)`` for hidden layers, a
    linear last layer (eq. ``eq-bp-mlp``), and loss ``0.5 * ||h_L - y||^2``.

    Args:
        params: list of layers ``(W_l, b_l)`` with shapes (m_l, m_{l-1}) and (m_l,).
        x: one input, shape (m_0,).
        y: its target, shape (m_L,).

    Returns: ``(loss, W, b)``: the loss node and the leaf nodes of the parameters,
        nested like the inputs (``W[l][i][j]``, ``b[l][i]``), whose ``grad`` is set by
        ``loss.backward()``.
    """
    params = check_params(params)
    check_tensor(
        x, "x", shape=(params[0][0].shape[1],), floating=True, shape_doc="(m_0,)"
    )
    check_tensor(
        y, "y", shape=(params[-1][0].shape[0],), floating=True, shape_doc="(m_L,)"
    )
    W = [[[Value(float(v)) for v in row] for row in w.tolist()] for w, _ in params]
    b = [[Value(float(v)) for v in bias.tolist()] for _, bias in params]
    h: list[Value | float] = [float(v) for v in x.tolist()]
    for layer in range(len(params)):
        z = [_dot(W[layer][i], h) + b[layer][i] for i in range(len(b[layer]))]
        h = z if layer == len(params) - 1 else [zi.tanh() for zi in z]
    loss = _sum([(hi - float(yi)) ** 2 for hi, yi in zip(h, y.tolist())]) * 0.5
    return loss, W, b


def _dot(ws: list[Value], hs: list[Value | float]) -> Value:
    total = ws[0] * hs[0]
    for w, h in zip(ws[1:], hs[1:]):
        total = total + w * h
    return total


def _sum(terms: list[Value]) -> Value:
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return total


def backprop(
    params: Params,
    X: torch.Tensor,
    hidden: Sequence[torch.Tensor],
    delta_out: torch.Tensor,
) -> tuple[Params, torch.Tensor]:
    """Backpropagation for a tanh MLP via the delta recursion (Rumelhart et al. 1986).

    With ``delta_L = dloss/dz_L`` given, for l = L, ..., 1: ``dW_l = delta_l^T
    h_{l-1}``, ``db_l = sum_n delta_l`` (eq. ``eq-bp-param-grad``) and ``delta_{l-1} =
    (delta_l W_l) * tanh'(z_{l-1})`` (eq. ``eq-bp-delta``), where ``tanh'(z) = 1 -
    tanh(z)^2`` is read from the stored activations ``h_{l-1}``.

    Args:
        params: list of layers ``(W_l, b_l)`` with shapes (m_l, m_{l-1}) and (m_l,).
        X: the inputs ``h_0``, shape (n, m_0).
        hidden: the stored forward pass ``[h_1, ..., h_L]``, shapes (n, m_l), as
            returned by ``flt_lib.feedforward.mlp.hidden_activations(params, X,
            activation="tanh")``.
        delta_out: gradient of the loss with respect to the output ``h_L``, shape (n,
            m_L).

    Returns: ``(grads, dX)``: the gradients ``(dW_l, db_l)`` in the layout of
        ``params``, and the gradient with respect to the input, shape (n, m_0).
    """
    params = check_params(params)
    L = len(params)
    if len(hidden) != L:
        raise ValueError(
            f"hidden must hold {L} activations [h_1, ..., h_L], got {len(hidden)}"
        )
    hs = [X, *hidden]  # h_0, ..., h_L
    check_tensor(
        delta_out,
        "delta_out",
        shape=tuple(hs[-1].shape),
        floating=True,
        shape_doc="(n, m_L)",
    )
    return _backprop(params, X, hidden, delta_out)


def _backprop(
    params: Params,
    X: torch.Tensor,
    hidden: Sequence[torch.Tensor],
    delta_out: torch.Tensor,
) -> tuple[Params, torch.Tensor]:
    """The check-free core of :func:`backprop` (arguments already checked)."""
    L = len(params)
    hs = [X, *hidden]  # h_0, ..., h_L
    grads: Params = [None] * L  # type: ignore[list-item]
    delta = delta_out  # (n, m_L)
    for layer in range(L - 1, -1, -1):
        W = params[layer][0]
        grads[layer] = (delta.T @ hs[layer], delta.sum(dim=0))  # (m_l, m_{l-1}), (m_l,)
        back = delta @ W  # (n, m_{l-1}) = dloss/dh_{l-1}
        # times tanh'(z_{l-1}) = 1 - h_{l-1}^2
        delta = back * (1.0 - hs[layer] ** 2) if layer > 0 else back
    return grads, delta


def backprop_flops(sizes: Sequence[int], *, n: int = 1) -> tuple[int, int]:
    """Exact flop counts of the forward pass and of :func:`backprop` for layer sizes
    ``sizes``.

    Conventions: a matrix product (n, k) @ (k, m) costs ``n*m*(2k-1)`` flops; tanh costs
    1 flop per entry; ``tanh'(z) = 1 - h^2`` costs 2 per entry; bias addition 1 per
    entry; the bias gradient sums n rows, ``(n-1)*m`` flops.

    Args:
        sizes: layer widths ``[m_0, m_1, ..., m_L]``, each >= 1, at least two entries.
        n: batch size, >= 1.

    Returns: ``(forward, backward)`` flop counts (ints); backward excludes the loss
        derivative.
    """
    if len(sizes) < 2:
        raise ValueError(
            f"sizes must list at least an input and an output width, got {list(sizes)}"
        )
    sizes = [check_int(s, "sizes[i]", min_value=1) for s in sizes]
    n = check_int(n, "n", min_value=1)
    fwd = bwd = 0
    n_layers = len(sizes) - 1
    for layer in range(n_layers):
        k, m = sizes[layer], sizes[layer + 1]
        fwd += n * m * (2 * k - 1) + n * m  # matmul + bias
        if layer < n_layers - 1:
            fwd += n * m  # tanh
        bwd += m * k * (2 * n - 1) + (n - 1) * m  # dW = delta^T h, db = sum of delta
        bwd += n * k * (2 * m - 1)  # delta @ W
        if layer > 0:
            bwd += 3 * n * k  # 1 - h^2 (2 flops) and the elementwise product (1 flop)
    return fwd, bwd
