"""Chapter 7, feature learning theory: one module per setting.

Each module holds the data generator, the model, and a training function that returns a history
of the tracked quantities. Import them directly, e.g. ``from flt_lib.flt import ntk``:

- ``ntk``: empirical neural tangent kernels, the arc-cosine closed form, kernel regression and
  the alpha-scaling (lazy versus rich) experiment;
- ``diagonal``: diagonal linear networks and their implicit bias;
- ``sparse_coding``: sparse-coding data and the symmetric two-layer ReLU network;
- ``benign_cnn``: signal learning versus noise memorisation in a two-layer ReLU CNN;
- ``token_selection``: benign overfitting in token selection of single-head attention.
"""
