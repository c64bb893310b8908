"""Other sequence architectures: gated convolutions and recursive networks over trees
(Section 4.7).

- Gated linear units over causal convolutions (Dauphin et al. 2017):
      h(X) = (X * W + b) (x) sigma(X * V + c),                              (eq-rnn-glu)
  with * a convolution of width k over time whose output at t sees only x_{t-k+1..t}.
  Stacking L such layers makes y_t depend on x_{t - L(k-1) .. t}: a receptive field of
  L(k-1) + 1 tokens.
- Recursive neural networks (Goller & Kuechler 1996; Socher et al. 2011): a binary tree
  over x_1..x_n is the set of triples (i, k, j) saying that span i..j splits into i..k
  and k+1..j, and
      s_{i:j} = tanh(W [s_{i:k}; s_{k+1:j}] + b),   s_{i:i} = x_i.    (eq-rnn-recursive)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from flt_lib._validate import check_generator, check_int, check_real, check_tensor
from flt_lib.optim.adaptive import AdamConfig
from flt_lib.optim.train_step import adam_train_step

__all__ = [
    "causal_conv1d",
    "glu_layer",
    "GatedConvLM",
    "lag_copy_batch",
    "LagHistory",
    "train_lag_copy",
    "parse_bracketing",
    "tree_triples",
    "bottom_up_orders",
    "recursive_encode",
]

Triple = tuple[int, int, int]


def causal_conv1d(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None
) -> torch.Tensor:
    """Causal convolution over time: out_t = sum_{j<k} weight[:, :, j] x_{t-k+1+j}
    (zero-padded).

    Args:
        x: (B, T, c_in).
        weight: (c_out, c_in, k).
        bias: (c_out,) or None.

    Returns:
        (B, T, c_out); position t sees x_{t-k+1}, ..., x_t only.
    """
    check_tensor(x, "x", ndim=3, floating=True, shape_doc="(B, T, c_in)")
    check_tensor(weight, "weight", ndim=3, floating=True, shape_doc="(c_out, c_in, k)")
    if weight.shape[1] != x.shape[-1]:
        raise ValueError(
            f"weight must have shape (c_out, c_in, k) with c_in = {x.shape[-1]}, got "
            f"{tuple(weight.shape)}"
        )
    return _causal_conv1d(x, weight, bias)


def _causal_conv1d(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None
) -> torch.Tensor:
    """The check-free core of :func:`causal_conv1d` (arguments already checked)."""
    k = weight.shape[-1]
    # (B, c_in, T + k - 1), left zeros
    xp = nn.functional.pad(x.transpose(1, 2), (k - 1, 0))
    return nn.functional.conv1d(xp, weight, bias).transpose(1, 2)


def glu_layer(
    x: torch.Tensor, W: torch.Tensor, b: torch.Tensor, V: torch.Tensor, c: torch.Tensor
) -> torch.Tensor:
    """A gated linear unit over causal convolutions (eq-rnn-glu):
    (x*W + b) (x) sigmoid(x*V + c).

    Args:
        x: (B, T, c_in); W, V: (c_out, c_in, k); b, c: (c_out,).

    Returns:
        (B, T, c_out).
    """
    return causal_conv1d(x, W, b) * torch.sigmoid(causal_conv1d(x, V, c))


class GatedConvLM(nn.Module):
    """A gated convolutional language model: embedding, residual GLU blocks, linear
    read-out."""

    def __init__(self, vocab: int, *, d: int = 16, k: int = 3, n_layers: int = 4,
                 generator: torch.Generator) -> None:
        super().__init__()
        vocab, d = (
            check_int(vocab, "vocab", min_value=1), check_int(d, "d", min_value=1)
        )
        self.k, self.n_layers = (
            check_int(k, "k", min_value=1),
            check_int(n_layers, "n_layers", min_value=1),
        )
        check_generator(generator)
        self.emb = nn.Embedding(vocab, d)
        bound = 1 / math.sqrt(d * self.k)
        shape = (n_layers, d, d, self.k)
        self.W = nn.Parameter((2 * torch.rand(shape, generator=generator) - 1) * bound)
        self.V = nn.Parameter((2 * torch.rand(shape, generator=generator) - 1) * bound)
        self.b = nn.Parameter(torch.zeros(n_layers, d))
        self.c = nn.Parameter(torch.zeros(n_layers, d))
        self.head = nn.Linear(d, vocab)
        with torch.no_grad():
            self.emb.weight.copy_(
                torch.randn(self.emb.weight.shape, generator=generator)
            )

    def features(self, h: torch.Tensor) -> torch.Tensor:
        """Run the GLU blocks on embedded inputs (B, T, d), with residual
        connections."""
        for layer in range(self.n_layers):
            h = h + glu_layer(
                h, self.W[layer], self.b[layer], self.V[layer], self.c[layer]
            )
        return h

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Next-token logits (B, T, vocab) from token ids (B, T)."""
        return self.head(self.features(self.emb(tokens)))


def lag_copy_batch(
    batch_size: int, T: int, vocab: int, lag: int, *, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Random tokens and the task "output the token seen ``lag`` steps ago".

    Returns:
        ``(x, y)``, both (B, T) int64, with y[:, t] = x[:, t - lag] (and y = -100,
        ignored, for t < lag).
    """
    B, T = (
        check_int(batch_size, "batch_size", min_value=1),
        check_int(T, "T", min_value=1),
    )
    vocab, lag = (
        check_int(vocab, "vocab", min_value=2), check_int(lag, "lag", min_value=0)
    )
    if lag >= T:
        raise ValueError(f"lag must be < T = {T}, got {lag}")
    check_generator(generator)
    x = torch.randint(0, vocab, (B, T), generator=generator)
    y = torch.full_like(x, -100)
    y[:, lag:] = x[:, : T - lag]
    return x, y


@dataclass(frozen=True)
class LagHistory:
    """What :func:`train_lag_copy` records."""

    loss: list[float]     # cross-entropy of every step
    test_acc: float       # accuracy on the predicted positions of a fresh test batch


def train_lag_copy(
    model: GatedConvLM, *, lag: int, T: int, steps: int, batch_size: int, lr: float,
    generator: torch.Generator, n_test: int = 256,
) -> LagHistory:
    """Train the language model to output the token ``lag`` steps back, with Adam."""
    if not isinstance(model, GatedConvLM):
        raise TypeError(f"model must be a GatedConvLM, got {type(model).__name__}")
    steps = check_int(steps, "steps", min_value=1)
    lr = check_real(lr, "lr", min_value=0.0, strict_min=True)
    return _train_lag_copy(
        model,
        lag=lag,
        T=T,
        steps=steps,
        batch_size=batch_size,
        lr=lr,
        generator=generator,
        n_test=n_test,
    )


def _train_lag_copy(
    model: GatedConvLM, *, lag: int, T: int, steps: int, batch_size: int, lr: float,
    generator: torch.Generator, n_test: int = 256,
) -> LagHistory:
    """The check-free core of :func:`train_lag_copy` (arguments already checked)."""
    vocab = model.head.out_features
    device = next(model.parameters()).device
    config, state, params, losses = (
        AdamConfig(lr=lr), None, list(model.parameters()), []
    )
    for _ in range(steps):
        x, y = (
            t.to(device)
            for t in lag_copy_batch(batch_size, T, vocab, lag, generator=generator)
        )
        loss = nn.functional.cross_entropy(
            model(x).reshape(-1, vocab), y.reshape(-1), ignore_index=-100
        )
        state = adam_train_step(params, loss, state, config)
        losses.append(loss.item())
    x, y = (
        t.to(device)
        for t in lag_copy_batch(n_test, T, vocab, lag, generator=generator)
    )
    with torch.no_grad():
        pred = model(x).argmax(-1)
    mask = y >= 0
    return LagHistory(
        loss=losses, test_acc=(pred[mask] == y[mask]).float().mean().item()
    )


def parse_bracketing(text: str) -> tuple[list[str], object]:
    """Parse a bracketed sentence such as "((the cat) (sat down))" into words and a
    tree.

    Every pair of brackets must hold exactly two constituents (a binary tree).

    Returns:
        ``(words, tree)``: the words in order, and the tree as nested pairs of word
        indices, e.g. ``((0, 1), (2, 3))``.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    tokens = text.replace("(", " ( ").replace(")", " ) ").split()
    words: list[str] = []
    pos = 0

    def parse() -> object:
        nonlocal pos
        if pos >= len(tokens):
            raise ValueError(f"unexpected end of bracketing in {text!r}")
        tok = tokens[pos]
        pos += 1
        if tok == ")":
            raise ValueError(f"unexpected ')' in {text!r}")
        if tok != "(":
            words.append(tok)
            return len(words) - 1
        kids = []
        while pos < len(tokens) and tokens[pos] != ")":
            kids.append(parse())
        if pos >= len(tokens):
            raise ValueError(f"missing ')' in {text!r}")
        pos += 1
        if len(kids) != 2:
            raise ValueError(
                f"every bracket must hold exactly two constituents, got {len(kids)} "
                f"in {text!r}"
            )
        return tuple(kids)

    tree = parse()
    if pos != len(tokens):
        raise ValueError(f"trailing tokens after the tree in {text!r}")
    return words, tree


def tree_triples(tree: object) -> list[Triple]:
    """The triples (i, k, j) of a binary tree over leaves 0..n-1: span i..j splits
    after k.

    Args:
        tree: nested pairs of leaf indices, as from :func:`parse_bracketing`.

    Returns:
        One triple per internal node (n - 1 of them), sorted.
    """
    out: list[Triple] = []

    def walk(node: object) -> tuple[int, int]:
        if isinstance(node, int):
            return node, node
        if not (isinstance(node, tuple) and len(node) == 2):
            raise ValueError(f"tree must be nested pairs of leaf indices, got {node!r}")
        (i, k), (k1, j) = walk(node[0]), walk(node[1])
        if k1 != k + 1:
            raise ValueError(
                f"the leaves must be contiguous: span ({i}..{k}) is followed by "
                f"({k1}..{j})"
            )
        out.append((i, k, j))
        return i, j

    walk(tree)
    return sorted(out)


def _check_triples(triples: Sequence[Triple]) -> int:
    spans = {(i, j) for i, _, j in triples}
    n = max(j for _, _, j in triples) + 1 if triples else 1
    for i, k, j in triples:
        for a, b in ((i, k), (k + 1, j)):
            if a != b and (a, b) not in spans:
                raise ValueError(
                    f"triple {(i, k, j)} needs the span ({a}..{b}), which is no node"
                )
    if (
        len(triples) != n - 1
        or (0, n - 1) not in spans | ({(0, 0)} if n == 1 else set())
    ):
        raise ValueError(
            f"triples must form one binary tree over {n} leaves, "
            f"got {len(triples)} nodes"
        )
    return n


def bottom_up_orders(
    triples: Sequence[Triple], count: int, *, generator: torch.Generator
) -> list[list[Triple]]:
    """Random orders of the triples in which every node comes after its two children.

    Each order is built by repeatedly picking, uniformly at random, one node whose
    children are already computed (a random topological order).
    """
    _check_triples(triples)
    count = check_int(count, "count", min_value=1)
    check_generator(generator)
    orders = []
    for _ in range(count):
        done: set[tuple[int, int]] = set()
        todo, order = list(triples), []
        while todo:
            ready = [
                tr
                for tr in todo
                if all(
                    a == b or (a, b) in done
                    for a, b in ((tr[0], tr[1]), (tr[1] + 1, tr[2]))
                )
            ]
            pick = ready[int(torch.randint(len(ready), (1,), generator=generator))]
            order.append(pick)
            todo.remove(pick)
            done.add((pick[0], pick[2]))
        orders.append(order)
    return orders


def recursive_encode(
    x: torch.Tensor, triples: Sequence[Triple], W: torch.Tensor, b: torch.Tensor,
    order: Sequence[Triple] | None = None,
) -> dict[tuple[int, int], torch.Tensor]:
    """Compose a tree bottom-up (eq-rnn-recursive):
    s_{i:j} = tanh(W [s_{i:k}; s_{k+1:j}] + b).

    Args:
        x: leaf vectors, (n, d).
        triples: the tree, as from :func:`tree_triples`.
        W: (d, 2d); b: (d,).
        order: the order in which to compute the nodes (children first); default: by
            span length.

    Returns:
        A dict from each span (i, j) (leaves included) to its vector (d,); the root is
        (0, n-1).
    """
    n = _check_triples(triples)
    check_tensor(
        x, "x", shape=(n, None), floating=True, shape_doc=f"(n, d) with n = {n}"
    )
    d = x.shape[1]
    check_tensor(
        W, "W", shape=(d, 2 * d), floating=True, shape_doc=f"(d, 2d) = ({d}, {2 * d})"
    )
    check_tensor(b, "b", shape=(d,), floating=True, shape_doc=f"(d,) = ({d},)")
    order = (
        sorted(triples, key=lambda tr: tr[2] - tr[0]) if order is None else list(order)
    )
    if sorted(order) != sorted(triples):
        raise ValueError("order must be a permutation of the triples")
    done = {(i, i) for i in range(n)}
    for i, k, j in order:
        if (i, k) not in done or (k + 1, j) not in done:
            raise ValueError(f"order computes {(i, k, j)} before one of its children")
        done.add((i, j))
    return _recursive_encode(x, W, b, order, n)


def _recursive_encode(x, W, b, order, n):
    s = {(i, i): x[i] for i in range(n)}
    for i, k, j in order:                       # children before parents
        s[(i, j)] = torch.tanh(W @ torch.cat([s[(i, k)], s[(k + 1, j)]]) + b)
    return s
