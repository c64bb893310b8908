"""Chapter 3, optimisation algorithms written from scratch.

Modules (import them directly, e.g. ``from flt_lib.optim import gd``):

- ``gd``: gradient descent on quadratics and smooth functions, PL, heavy ball and Nesterov;
- ``adaptive``: AdaGrad, RMSProp and Adam;
- ``sgd``: minibatch gradients, their variance, and step-size schedules.
"""
