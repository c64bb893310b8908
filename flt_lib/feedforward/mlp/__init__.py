"""Multilayer perceptrons (Sections 2.2 and 2.3), one module per topic.

- ``network``: the list-of-layers format ``Params``, initialisation, the forward pass
  and full-batch Adam training;
- ``symmetries``: hidden-unit permutations and sign flips, their count, and straight
  paths between parameter vectors;
- ``residual``: deep linear networks, residual layers and networks, DenseNet-style
  blocks.

Every public name is re-exported here, so ``from flt_lib.feedforward import mlp`` then
``mlp.init_mlp`` works.
"""

from flt_lib.feedforward.mlp.network import (
    ACTIVATIONS,
    ODD_ACTIVATIONS,
    MLPFit,
    Params,
    RegressorFit,
    activation_fn,
    check_params,
    fit_mlp,
    hidden_activations,
    init_mlp,
    mlp_forward,
    train_regressor,
)
from flt_lib.feedforward.mlp.residual import (
    DeepMLP,
    compose_linear,
    dense_forward,
    residual_layer,
)
from flt_lib.feedforward.mlp.symmetries import (
    count_symmetries,
    flip_signs,
    interpolate,
    permute_hidden,
    random_symmetry,
)

__all__ = [
    "ACTIVATIONS",
    "DeepMLP",
    "MLPFit",
    "ODD_ACTIVATIONS",
    "Params",
    "RegressorFit",
    "activation_fn",
    "check_params",
    "compose_linear",
    "count_symmetries",
    "dense_forward",
    "fit_mlp",
    "flip_signs",
    "hidden_activations",
    "init_mlp",
    "interpolate",
    "mlp_forward",
    "permute_hidden",
    "random_symmetry",
    "residual_layer",
    "train_regressor",
]
