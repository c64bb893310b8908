"""Chapter 2, feedforward networks.

Modules (import them directly, e.g. ``from flt_lib.feedforward import regression``):

- ``regression``: linear, logistic and softmax regression, stable log-sum-exp, risks;
- ``mlp``: multilayer perceptrons, hidden-unit permutations, linear and residual networks;
- ``approximation``: sigmoid networks, universal approximation and Barron-type experiments;
- ``regions``: ReLU activation patterns, linear regions, Zaslavsky's bound and tent maps.
"""
