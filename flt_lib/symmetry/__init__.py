"""Chapter 6: symmetry and equivariance (one module per setting; nothing is imported
eagerly).

- :mod:`~flt_lib.symmetry.groups`: finite groups acting by permuting coordinates,
  symmetrisation
- :mod:`~flt_lib.symmetry.conv`: 1-D convolution, circulant and Toeplitz matrices, the
  DFT, FFT
- :mod:`~flt_lib.symmetry.cnn`: 2-D convolution and pooling from the definition, their
  gradients, strided networks, the p4 lifting convolution, small image classifiers
- :mod:`~flt_lib.symmetry.sets`: Deep Sets, PointNet, aggregators, equivariant linear
  layers
- :mod:`~flt_lib.symmetry.graphs`: graph constructions, GCN coupling, Dirichlet energy,
  1-WL
- :mod:`~flt_lib.symmetry.gnn`: GCN, GAT and GIN layers, the over-squashing bound
- :mod:`~flt_lib.symmetry.spectral`: Laplacians, graph Fourier basis, spectral and
  polynomial filters
- :mod:`~flt_lib.symmetry.orthogonal`: orthogonal equivariance and attention (Ma & Ying
  2023)
- :mod:`~flt_lib.symmetry.group_conv`: the p4 group convolution, the commutant solve,
  Burnside counts, canonicalisation and a small p4 network
- :mod:`~flt_lib.symmetry.steerable`: irreducible representations of SO(2), circular
  harmonics, steering and the steerable kernel basis
- :mod:`~flt_lib.symmetry.egnn`: E(n)-equivariant graph networks, a coordinate-based
  baseline and a springs N-body data set
- :mod:`~flt_lib.symmetry.graph_transformer`: attention as message passing, Laplacian
  positional encodings and their sign and basis invariances, remedies for
  over-smoothing and over-squashing
- :mod:`~flt_lib.symmetry.train`: the full-batch training loop of the sample-efficiency
  experiments
"""

__all__ = [
    "cnn",
    "conv",
    "egnn",
    "gnn",
    "graph_transformer",
    "graphs",
    "group_conv",
    "groups",
    "orthogonal",
    "sets",
    "spectral",
    "steerable",
    "train",
]
