"""Byte-pair encoding (5.8): learn merges from a corpus, encode, decode.

BPE (Sennrich, Haddow & Birch 2016, after Gage's 1994 compression scheme) starts from
single characters and repeatedly merges the most frequent adjacent pair of tokens into a
new token. Encoding applies the learned merges in the order they were learned; decoding
concatenates the tokens' strings, so ``decode(encode(s)) == s`` for every string over
the base alphabet. Here a "word" is a whole string of the corpus (ours has no spaces).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["BPE", "bpe_merges", "learn_bpe", "merge_pair"]


def merge_pair(tokens: list[str], pair: tuple[str, str]) -> list[str]:
    """Replace every non-overlapping occurrence of ``pair``, left to right, by one
    token.

    Args:
        tokens: a tokenised string.
        pair: the two adjacent tokens to merge.

    Returns:
        The new token list.
    """
    out, i = [], 0
    while i < len(tokens):
        if i + 1 < len(tokens) and (tokens[i], tokens[i + 1]) == pair:
            out.append(tokens[i] + tokens[i + 1])
            i += 2
        else:
            out.append(tokens[i])
            i += 1
    return out


@dataclass(frozen=True)
class BPE:
    """A learned byte-pair encoding."""

    alphabet: tuple[str, ...]            # the base symbols (single characters)
    merges: tuple[tuple[str, str], ...]  # the merges, in the order they were learned

    @property
    def vocab(self) -> tuple[str, ...]:
        """Base symbols, then one new token per merge."""
        return self.alphabet + tuple(a + b for a, b in self.merges)

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (every character must be in the alphabet)."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        unknown = set(text) - set(self.alphabet)
        if unknown:
            raise ValueError(
                f"text has characters outside the alphabet: {sorted(unknown)}"
            )
        tokens = list(text)
        for pair in self.merges:
            tokens = merge_pair(tokens, pair)
        index = {t: i for i, t in enumerate(self.vocab)}
        return [index[t] for t in tokens]

    def decode(self, ids: Sequence[int]) -> str:
        """The string of a list of token ids."""
        vocab = self.vocab
        bad = [i for i in ids if not isinstance(i, int) or not 0 <= i < len(vocab)]
        if bad:
            raise ValueError(f"ids must be ints in [0, {len(vocab)}), got {bad[:5]}")
        return "".join(vocab[i] for i in ids)


def bpe_merges(words: list[list[str]], n_merges: int) -> list[tuple[str, str]]:
    """The merges of BPE on tokenised ``words`` (eq-attn-bpe; Sennrich et al. 2016).

    Args:
        words: each string as a list of tokens.
        n_merges: at most this many merges; stops when no pair occurs twice.

    Returns:
        The merged pairs, in order.
    """
    merges = []
    for _ in range(n_merges):
        pairs = Counter(p for w in words for p in zip(w, w[1:]))   # adjacent pairs
        best = min(pairs, key=lambda p: (-pairs[p], p), default=None)  # most frequent
        if best is None or pairs[best] < 2:
            break
        merges.append(best)
        words = [merge_pair(w, best) for w in words]
    return merges


def learn_bpe(corpus: Sequence[str], n_merges: int) -> BPE:
    """Learn ``n_merges`` merges from ``corpus`` (Sennrich et al. 2016, Algorithm 1).

    Ties between equally frequent pairs go to the pair that sorts first, so the result
    does not depend on the order of a dictionary.

    Args:
        corpus: strings; their characters form the alphabet.
        n_merges: number of merges, >= 0; stops early when no pair occurs twice.

    Returns:
        A :class:`BPE`.
    """
    if isinstance(corpus, str) or not all(isinstance(s, str) for s in corpus):
        raise TypeError("corpus must be a sequence of strings")
    if not isinstance(n_merges, int) or isinstance(n_merges, bool) or n_merges < 0:
        raise ValueError(f"n_merges must be an int >= 0, got {n_merges!r}")
    merges = bpe_merges([list(s) for s in corpus], n_merges)
    alphabet = tuple(sorted({c for s in corpus for c in s}))
    return BPE(alphabet=alphabet, merges=tuple(merges))
