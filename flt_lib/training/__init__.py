"""Chapter 3, Sections 3.5 and 3.6: the tricks of the trade.

Modules (import them directly, e.g. ``from flt_lib.training import regularisation``):

- ``initialisation``: LeCun, Xavier, He and orthogonal schemes (Gaussian and uniform),
  and the forward and backward propagation of variance through depth;
- ``regularisation``: weight decay (ridge, MAP, norm constraint), early stopping,
  dropout and data augmentation;
- ``normalisation``: batch, layer and weight normalisation, and whitening;
- ``distillation``: label smoothing with a confusion matrix, and knowledge distillation.
"""

__all__ = ["distillation", "initialisation", "normalisation", "regularisation"]
