"""Appendix A, Bayesian learning: posteriors, MCMC, Langevin dynamics, Gaussian
processes.

Modules (import them directly, e.g. ``from flt_lib.bayes import mcmc``):

- ``linear``: Bayesian linear regression, its link to ridge, exact posterior samples and
  Monte-Carlo predictive distributions (A.1);
- ``mcmc``: Metropolis-Hastings (discrete kernels and random-walk Metropolis),
  autocorrelation, effective sample size, and the ``Chain`` every sampler returns (A.2);
- ``targets``: the posteriors the samplers run on (Gaussian, Welling & Teh's mixture,
  Bayesian logistic regression) and a 2-D grid reference (A.2-A.4);
- ``hmc``: leapfrog, explicit Euler and Hamiltonian Monte Carlo (A.3);
- ``langevin``: ULA, MALA, underdamped Langevin dynamics and SGLD (A.4);
- ``gp``: kernels, GP regression and the log marginal likelihood (A.5);
- ``nngp``: arc-cosine kernels and the NNGP of wide ReLU networks (A.6);
- ``bnn``: the posterior of a one-hidden-layer network and its symmetries (A.7);
- ``adaptation``: HMC warm-up: dual averaging of the step, a diagonal mass matrix (A.7);
- ``diagnostics``: split and rank-normalised R-hat (A.7);
- ``approximate``: Laplace, mean-field VI, MC dropout, (anchored) ensembles (A.7).
"""

__all__ = [
    "adaptation",
    "approximate",
    "bnn",
    "diagnostics",
    "gp",
    "hmc",
    "langevin",
    "linear",
    "mcmc",
    "nngp",
    "targets",
]
