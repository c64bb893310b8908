"""Signal learning versus noise memorisation in a two-layer ReLU CNN (Cao et al. 2022;
Kou et al. 2023).

Data (Kou et al. 2023, Definition of the two-patch model): a clean label ``y_clean``
uniform on {-1, +1}; an input with two patches ``x = [y_clean * mu, xi]``, where ``mu``
in R^d is a fixed signal vector and ``xi ~ N(0, sigma_p^2 (I - mu mu^T / ||mu||^2))`` is
Gaussian noise in the orthogonal complement of ``mu``; the observed training label ``y``
equals ``y_clean`` flipped with probability ``flip_prob``.

Model: f(W, x) = F_{+1}(W_{+1}, x) - F_{-1}(W_{-1}, x) with
F_j(W_j, x) = (1/m) sum_{r=1}^m sum_{p=1}^2 ReLU(<w_{j,r}, x^(p)>); the second layer
(+1/m, -1/m) is fixed, only the filters ``w_{j,r}`` are trained, by full-batch gradient
descent on the logistic loss from ``w_{j,r} ~ N(0, sigma0^2 I_d)``.

Every function works on a *batch of B independent problems* at once (leading dimension
B), so that a whole grid of signal strengths is trained in one set of tensor operations.
Filters are stored as ``W`` of shape (B, 2, m, d); index 0 of the second axis is j = +1
and index 1 is j = -1.

The code is split by topic, and every public name is re-exported here, so
``from flt_lib.flt import benign_cnn as bc`` then ``bc.train_cnn(...)`` works whichever
file holds it:

- :mod:`~flt_lib.flt.benign_cnn.data`: the two-patch data (``TwoPatchData``,
  ``sample_two_patch``);
- :mod:`~flt_lib.flt.benign_cnn.cnn`: the configuration, the CNN, its closed-form GD
  step and ``train_cnn`` (``CNNHistory``);
- :mod:`~flt_lib.flt.benign_cnn.analysis`: coefficient summaries, the clean test error,
  the crossing point and the phase diagram over sample sizes and signal strengths.
"""

from flt_lib.flt.benign_cnn.analysis import (
    CoefficientSummary,
    PhaseDiagram,
    clean_test_error,
    coefficient_summary,
    crossing_point,
    phase_diagram,
)
from flt_lib.flt.benign_cnn.cnn import (
    SIGN,
    BenignCNNConfig,
    CNNHistory,
    cnn_gd_step,
    cnn_output,
    train_cnn,
)
from flt_lib.flt.benign_cnn.data import TwoPatchData, sample_two_patch

__all__ = [
    "SIGN",
    "BenignCNNConfig",
    "CNNHistory",
    "CoefficientSummary",
    "PhaseDiagram",
    "TwoPatchData",
    "clean_test_error",
    "cnn_gd_step",
    "cnn_output",
    "coefficient_summary",
    "crossing_point",
    "phase_diagram",
    "sample_two_patch",
    "train_cnn",
]
