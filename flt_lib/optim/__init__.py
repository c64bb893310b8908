"""Chapter 3, optimisation algorithms written from scratch.

Modules (import them directly, e.g. ``from flt_lib.optim import gd``):

- ``gd`` (a subpackage): test problems (quadratics, Rosenbrock), gradient descent, PL,
  heavy ball, Nesterov;
- ``adaptive``: AdaGrad, RMSProp and Adam;
- ``sgd``: minibatch gradients, their variance, step-size schedules and SGD on least
  squares;
- ``train_step``: gradient clipping by the joint norm and one Adam step on a list of
  tensors (the training loops of Chapter 4).
"""

__all__ = ["adaptive", "gd", "sgd", "train_step"]
