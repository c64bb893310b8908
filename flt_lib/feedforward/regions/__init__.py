"""ReLU networks and linear regions (Section 2.5).

Exact region counts for arrangements of lines in the plane (rational arithmetic, no
sampling); the maximal count of ``m`` hyperplanes in general position (Schlaefli; Buck
1943) and Zaslavsky's (1975) count through the characteristic polynomial; Montufar et
al.'s (2014) lower bound for deep networks; exact piecewise-linear bookkeeping for ReLU
networks on an interval (tent maps, Telgarsky 2016); and piecewise-linear interpolation
by ReLUs.

The code is split by topic, and every public name is re-exported here, so
``from flt_lib.feedforward import regions`` then ``regions.count_regions_2d(...)`` works
whichever file holds it:

- :mod:`~flt_lib.feedforward.regions.arrangements`: activation patterns, exact region
  counts of line arrangements, the general-position and Zaslavsky counts, Montufar et
  al.'s lower bound;
- :mod:`~flt_lib.feedforward.regions.piecewise`: scalar ReLU networks on an interval
  (exact knots, linear pieces, tent maps, Montufar's 1-d construction) and ReLU
  interpolation.
"""

from flt_lib.feedforward.regions.arrangements import (
    Number,  # the type of exact coordinates; public before the split, kept importable
    activation_pattern,
    count_regions_2d,
    general_position_regions,
    in_general_position_2d,
    montufar_lower_bound,
    region_sign_vectors_2d,
    zaslavsky_regions_2d,
)
from flt_lib.feedforward.regions.piecewise import (
    count_linear_pieces,
    eval_relu_sum,
    montufar_1d_params,
    relu_interpolant,
    relu_net_1d,
    sawtooth_params,
)

__all__ = [
    "activation_pattern",
    "count_linear_pieces",
    "count_regions_2d",
    "eval_relu_sum",
    "general_position_regions",
    "in_general_position_2d",
    "montufar_1d_params",
    "montufar_lower_bound",
    "region_sign_vectors_2d",
    "relu_interpolant",
    "relu_net_1d",
    "sawtooth_params",
    "zaslavsky_regions_2d",
]
