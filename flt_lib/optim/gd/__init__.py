"""Gradient descent, heavy ball and Nesterov on smooth functions (Sections 3.2 and 3.3).

The test problems are quadratics ``h(x) = 0.5 x^T A x - b^T x`` with symmetric positive
semidefinite ``A`` (smoothness constant ``L = lambda_max(A)``) and least squares ``h(w)
= ||X w - y||^2 / (2n)``, which is a quadratic with ``A = X^T X / n``. The methods take
any gradient function, so they work on other smooth problems too.

References: Polyak (1963) for gradient descent under the PL inequality, Polyak (1964)
for the heavy-ball method, Nesterov (1983, 2004) for the accelerated method, Karimi,
Nutini & Schmidt (2016) for PL versus strong convexity.

The code is split by topic, and every public name is re-exported here, so
``from flt_lib.optim import gd`` then ``gd.gradient_descent(...)`` works whichever file
holds it:

- :mod:`~flt_lib.optim.gd.problems`: quadratics (``Quadratic``), least squares, their
  spectral constants, random quadratics and low-rank designs, Rosenbrock's function;
- :mod:`~flt_lib.optim.gd.methods`: gradient descent, heavy ball and Nesterov, their
  tuned parameters, the critical-point bound and steps to a tolerance.
"""

from flt_lib.optim.gd.methods import (
    GradFn,  # the type of a gradient function; public before the split, kept importable
    critical_point_bound,
    gradient_descent,
    heavy_ball,
    nesterov,
    steps_to_tolerance,
    tuned_parameters,
)
from flt_lib.optim.gd.problems import (
    Quadratic,
    least_squares,
    low_rank_design,
    minimum_value,
    quadratic_grad,
    quadratic_value,
    random_spectrum_quadratic,
    rosenbrock,
    rosenbrock_grad,
    spectrum_constants,
)

__all__ = [
    "Quadratic",
    "critical_point_bound",
    "gradient_descent",
    "heavy_ball",
    "least_squares",
    "low_rank_design",
    "minimum_value",
    "nesterov",
    "quadratic_grad",
    "quadratic_value",
    "random_spectrum_quadratic",
    "rosenbrock",
    "rosenbrock_grad",
    "spectrum_constants",
    "steps_to_tolerance",
    "tuned_parameters",
]
