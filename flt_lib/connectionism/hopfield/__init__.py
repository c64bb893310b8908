"""Classical Hopfield networks: energy, asynchronous dynamics, Hebbian storage and
retrieval.

Conventions (chapter 1 of the notation table): a network has ``n`` binary neurons with
states in {-1, +1}; ``s`` patterns are stored as the rows of ``patterns`` with shape (s,
n); the tie of ``sign`` at 0 goes to +1. Equations refer to section 1.5 of the book.
Dense associative memories and the modern (softmax) update of section 1.6 live in
``dense_memory``.

References: Hopfield (1982); Hebb (1949); Amit, Gutfreund & Sompolinsky (1985);
McEliece, Posner, Rodemich & Venkatesh (1987).

The code is split by topic, and every public name is re-exported here, so
``from flt_lib.connectionism import hopfield`` then ``hopfield.run_async(...)`` works
whichever file holds it:

- :mod:`~flt_lib.connectionism.hopfield.patterns`: ``sign``, the hand-drawn letters
  and random patterns;
- :mod:`~flt_lib.connectionism.hopfield.network`: Hebbian weights, energy, local
  fields, one asynchronous update and ``run_async`` (``AsyncRun``);
- :mod:`~flt_lib.connectionism.hopfield.retrieval`: overlaps, batched asynchronous
  sweeps and the retrieval sweep over loads;
- :mod:`~flt_lib.connectionism.hopfield.capacity`: the capacity analysis (cross-talk,
  flip probability, the replica-symmetric solution, perfect recall).
"""

from flt_lib.connectionism.hopfield.capacity import (
    RSCapacity,
    critical_load,
    crosstalk,
    flip_probability,
    max_stable_load,
    mceliece_capacity,
    perfect_recall_prediction,
    replica_symmetric_capacity,
    replica_symmetric_overlap,
    stability_table,
)
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
    "async_sweeps_batched",
    "async_update",
    "AsyncRun",
    "critical_load",
    "crosstalk",
    "energy",
    "flip_probability",
    "hebbian_weights",
    "letter_patterns",
    "local_field",
    "max_stable_load",
    "mceliece_capacity",
    "overlap",
    "perfect_recall_prediction",
    "random_patterns",
    "replica_symmetric_capacity",
    "replica_symmetric_overlap",
    "retrieval_sweep",
    "RSCapacity",
    "run_async",
    "sign",
    "stability_table",
]
