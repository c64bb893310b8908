"""Chapter 7, feature learning theory: one module per setting.

Each module holds the data generator, the model, and a training function that returns a
history of the tracked quantities. Import them directly, e.g. ``from flt_lib.flt import
ntk``:

- ``ntk`` (a subpackage): empirical neural tangent kernels of shallow and deep ReLU
  networks, their infinite-width limits, kernel regression, the alpha-scaling (lazy
  versus rich) experiment and the Occam bound;
- ``diagonal``: diagonal linear networks and their implicit bias;
- ``sparse_coding``: sparse-coding data and the symmetric two-layer ReLU network;
- ``benign_cnn`` (a subpackage): signal learning versus noise memorisation in a
  two-layer ReLU CNN;
- ``token_selection`` (a subpackage): benign overfitting in token selection of
  single-head attention, at the setting of the paper's official code;
- ``multiview``: multi-view data, ensembles and knowledge distillation.
"""

__all__ = [
    "benign_cnn",
    "diagonal",
    "multiview",
    "ntk",
    "sparse_coding",
    "token_selection",
]
