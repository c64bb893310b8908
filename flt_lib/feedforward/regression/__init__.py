"""Regression models of Section 2.1, one module per model.

- ``least_squares``: the halved mean squared error, the normal equations, and the book's
  one gradient-descent loop on least squares (with optional weight decay and norm
  constraint);
- ``logistic``: the logistic loss, its gradient, and gradient descent on it (with
  optional weight decay, bias and data augmentation);
- ``softmax``: stable log-sum-exp, softmax and cross-entropy, and softmax regression on
  soft targets (with a temperature, for distillation);
- ``risk``: Gaussian data, the exact risk of least squares, and generalisation gaps.

Every public name is re-exported here, so ``from flt_lib.feedforward import regression
as rg`` then ``rg.mse_loss`` works; ``show_source(rg.mse_loss)`` shows the module it
lives in.
"""

from flt_lib.feedforward.regression.least_squares import (
    LeastSquaresGD,
    least_squares_gd,
    least_squares_normal,
    mse_loss,
)
from flt_lib.feedforward.regression.logistic import (
    LogisticFit,
    logistic_gd,
    logistic_grad,
    logistic_loss,
)
from flt_lib.feedforward.regression.risk import (
    RiskCurves,
    generalisation_gaps,
    linear_gaussian_data,
    linear_gaussian_risk,
    ols_expected_gap,
)
from flt_lib.feedforward.regression.softmax import (
    SoftmaxFit,
    cross_entropy,
    cross_entropy_naive,
    logsumexp,
    logsumexp_naive,
    softmax,
    softmax_regression_gd,
)

__all__ = [
    "LeastSquaresGD",
    "LogisticFit",
    "RiskCurves",
    "SoftmaxFit",
    "cross_entropy",
    "cross_entropy_naive",
    "generalisation_gaps",
    "least_squares_gd",
    "least_squares_normal",
    "linear_gaussian_data",
    "linear_gaussian_risk",
    "logistic_gd",
    "logistic_grad",
    "logistic_loss",
    "logsumexp",
    "logsumexp_naive",
    "mse_loss",
    "ols_expected_gap",
    "softmax",
    "softmax_regression_gd",
]
