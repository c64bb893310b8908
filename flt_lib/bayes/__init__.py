"""Appendix A: Bayesian learning: posteriors, MCMC, Langevin dynamics, Gaussian processes."""
