"""Neural tangent kernels and the lazy regime (Chapter 7, Sections 7.1-7.3).

One module per piece, all re-exported here, so ``from flt_lib.flt import ntk`` and
``ntk.arccos_ntk(...)`` work as before the split:

- :mod:`~flt_lib.flt.ntk.data`: the teacher-neuron task on the sphere
  (``single_index_data``);
- :mod:`~flt_lib.flt.ntk.shallow`: the two-layer ReLU network in the NTK
  parameterisation, its Jacobian and empirical NTK (``two_layer``, ``ntk_features``,
  ``empirical_ntk``, ...);
- :mod:`~flt_lib.flt.ntk.deep`: the depth-L ReLU network and its empirical NTK;
- :mod:`~flt_lib.flt.ntk.kernels`: infinite-width kernels (``kappa``, ``arccos_ntk``,
  the depth-L recursion ``relu_ntk``), kernel regression and kernel gradient descent.
  The Bayesian appendix reuses these;
- :mod:`~flt_lib.flt.ntk.lazy`: the alpha-scaled model of Chizat et al.
  (``train_alpha``);
- :mod:`~flt_lib.flt.ntk.occam`: quantisation and the Occam bound of Section 7.1.
"""

from flt_lib.flt.ntk.data import single_index_data
from flt_lib.flt.ntk.deep import deep_empirical_ntk, deep_relu_net, init_deep
from flt_lib.flt.ntk.kernels import (
    arccos_ntk,
    kappa,
    kappa0,
    kappa1,
    kernel_gd,
    kernel_regression,
    relu_ntk,
)
from flt_lib.flt.ntk.lazy import AlphaHistory, feature_alignment, train_alpha
from flt_lib.flt.ntk.occam import occam_bound, quantise
from flt_lib.flt.ntk.shallow import (
    check_two_layer_params,
    empirical_ntk,
    init_two_layer,
    jacobian_autograd,
    ntk_features,
    two_layer,
)

__all__ = [
    "check_two_layer_params",
    "AlphaHistory",
    "arccos_ntk",
    "deep_empirical_ntk",
    "deep_relu_net",
    "empirical_ntk",
    "feature_alignment",
    "init_deep",
    "init_two_layer",
    "jacobian_autograd",
    "kappa",
    "kappa0",
    "kappa1",
    "kernel_gd",
    "kernel_regression",
    "ntk_features",
    "occam_bound",
    "quantise",
    "relu_ntk",
    "single_index_data",
    "train_alpha",
    "two_layer",
]
