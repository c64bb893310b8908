"""Benign overfitting in token selection of single-head attention (Sakamoto & Sato, ICML
2025).

Setting (chapter 7, section 6). A sequence X = (x_1, ..., x_T)^T in R^{T x d} is
classified by

    f(X) = nu^T X^T softmax(X W p),                                   (eq-ts-model)

with a learnable key-query matrix W in R^{d x d}, a learnable query ([CLS]) vector p in
R^d, and a fixed linear head nu = (mu_+ - mu_-) / (||mu_+ - mu_-|| * mu). The paper
writes the logits as X W^T p; we store W as the official code does (``x @ W @ p``), so
our W is the paper's W^T.

Data, as in the official code (github.com/keitaroskmt/benign-attention, ``main.py``):
orthogonal class signals mu_+ = mu e_1, mu_- = mu e_2; token 1 is relevant (mu_{Y*} +
eps), token 2 is weakly relevant (rho mu_{Y*} + eps), token 3 is weakly relevant to the
*other* class (rho mu_{-Y*} + eps), the rest are noise eps ~ N(0, sigma^2 I_d). The
classes have equal sizes and the ceil(eta n) label flips are split evenly between them.
SNR = mu / (sigma sqrt(d)).

Training: full-batch gradient descent on the mean logistic loss from p = 0 and W drawn
from PyTorch's default initialisation of a (d, d) parameter,
``kaiming_uniform_(a=sqrt(5))``, which is U(-1/sqrt(d), 1/sqrt(d)). The older choices of
this module (W = I, random labels, no x_3) remain available as options
(``init="identity"``, ``balanced=False``, ``opposite_token=False``).

Gradient descent never leaves the span of the training tokens (eq-ts-token-space): with
the N = nT training tokens stacked in Z (N, d), p_t = W_0^T Z^T a_t and W_t = (I - lr
Z^T C_t Z) W_0 for a vector a_t (N,) and a matrix C_t (N, N). :func:`train` runs the
exact GD iterates in these coordinates, so a step costs O(N^2) instead of O(d^2), and d
= 4500 trains in about a second.

The code is split by topic, and every public name is re-exported here, so
``from flt_lib.flt import token_selection as ts`` then ``ts.train(...)`` works whichever
file holds it:

- :mod:`~flt_lib.flt.token_selection.data`: the data parameters and sequences
  (``TokenData``, ``Sample``, ``sample``, and ``sample_official``, the official
  code's NumPy draw), the class signals and the fixed head nu;
- :mod:`~flt_lib.flt.token_selection.model`: the model, its loss and closed-form
  gradients, W_0 (``init_key_query``), the step in token coordinates
  (``token_space_step``), the hand-made memorising query and hard token selection;
- :mod:`~flt_lib.flt.token_selection.training`: exact GD in token coordinates
  (``train``, ``History``), ``run_experiment`` and the regime of a run (``regime``).
"""

from flt_lib.flt.token_selection.data import (
    Sample,
    TokenData,
    class_signals,
    linear_head,
    sample,
    sample_official,
)
from flt_lib.flt.token_selection.model import (
    INITS,
    cls_attention,
    gradients,
    handcrafted_query,
    hard_selection_accuracy,
    init_key_query,
    logistic_loss,
    predict,
    token_logits,
    token_space_step,
)
from flt_lib.flt.token_selection.training import (
    REGIMES,
    History,
    regime,
    run_experiment,
    train,
)

__all__ = [
    "INITS",
    "REGIMES",
    "History",
    "Sample",
    "TokenData",
    "cls_attention",
    "class_signals",
    "gradients",
    "handcrafted_query",
    "hard_selection_accuracy",
    "init_key_query",
    "linear_head",
    "logistic_loss",
    "predict",
    "regime",
    "run_experiment",
    "sample",
    "sample_official",
    "token_logits",
    "token_space_step",
    "train",
]
