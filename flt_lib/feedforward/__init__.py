"""Chapter 2, feedforward networks.

Modules and subpackages (import them directly, e.g. ``from flt_lib.feedforward import
mlp``):

- ``regression`` (subpackage): least squares, logistic and softmax regression, risks;
- ``mlp`` (subpackage): multilayer perceptrons, hidden-unit symmetries, linear, residual
  and dense networks;
- ``approximation``: sigmoid networks, universal approximation and Barron-type
  experiments;
- ``regions`` (subpackage): ReLU activation patterns, linear regions, region counts and
  tent maps.
"""

__all__ = ["approximation", "mlp", "regions", "regression"]
