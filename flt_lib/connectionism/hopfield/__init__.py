"""Classical Hopfield networks: energy, asynchronous dynamics, Hebbian storage and
retrieval.

Conventions (chapter 1 of the notation table): a network has ``n`` binary neurons with
states in {-1, +1}; ``s`` patterns are stored as the rows of ``patterns`` with shape (s,
n); the tie of ``sign`` at 0 goes to +1. Equations refer to section 1.5 of the book. The
capacity analysis (cross-talk, flip probability, perfect recall) lives in
``hopfield_capacity``; dense associative memories and the modern (softmax) update of
section 1.6 live in ``dense_memory``.

References: Hopfield (1982); Hebb (1949); Amit, Gutfreund & Sompolinsky (1985);
McEliece, Posner, Rodemich & Venkatesh (1987).

The code is split by topic, and every public name is re-exported here, so
``from flt_lib.connectionism import hopfield as hp`` then ``hp.run_async(...)`` works
whichever file holds it:

- :mod:`~flt_lib.connectionism.hopfield.patterns`: ``sign``, the hand-drawn letters
  and random patterns;
- :mod:`~flt_lib.connectionism.hopfield.network`: Hebbian weights, energy, local
  fields, one asynchronous update and ``run_async`` (``AsyncRun``);
- :mod:`~flt_lib.connectionism.hopfield.retrieval`: overlaps, batched asynchronous
  sweeps and the retrieval sweep over loads.
"""

from flt_lib.connectionism.hopfield.network import (
    AsyncRun,
    async_update,
    energy,
    hebbian_weights,
    local_field,
    run_async,
)
from flt_lib.connectionism.hopfield.patterns import (
    letter_patterns,
    random_patterns,
    sign,
)
from flt_lib.connectionism.hopfield.retrieval import (
    async_sweeps_batched,
    overlap,
    retrieval_sweep,
)

__all__ = [
    "AsyncRun",
    "async_sweeps_batched",
    "async_update",
    "energy",
    "hebbian_weights",
    "letter_patterns",
    "local_field",
    "overlap",
    "random_patterns",
    "retrieval_sweep",
    "run_async",
    "sign",
]
