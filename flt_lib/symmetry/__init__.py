"""Chapter 6: symmetry and equivariance: convolutions, sets, graphs (one module per setting)."""
