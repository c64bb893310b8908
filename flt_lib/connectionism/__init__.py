"""Chapter 1, connectionism: threshold units, the perceptron, Cover's counting, Hopfield
networks.

Modules (import them directly, e.g. ``from flt_lib.connectionism import perceptron``):

- ``threshold``: McCulloch-Pitts units and the exhaustive search that rules out XOR;
- ``perceptron``: the perceptron algorithm, margins and Novikoff's bound;
- ``cover``: Cover's function counting theorem and exact separability tests;
- ``hopfield`` (a subpackage): Hopfield networks: energy, asynchronous updates,
  Hebbian weights, retrieval, and (``hopfield.capacity``) load sweeps, the capacity
  transition and perfect-recall scaling;
- ``dense_memory``: dense associative memories and the modern (softmax) Hopfield update.
"""

__all__ = [
    "cover",
    "dense_memory",
    "hopfield",
    "perceptron",
    "threshold",
]
