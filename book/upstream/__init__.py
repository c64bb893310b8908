"""Small patches of other packages, one module each, with the upstream issue it works
around.

- :mod:`book.upstream.nbval_kernel_start`: start a notebook kernel again when it dies
  while starting (nbval's kernels; jupyter/jupyter_client#487);
- :mod:`book.upstream.sphinx_proof_labels`: sphinx-proof's LaTeX labels always name
  their document;
- :mod:`book.upstream.sphinx_exercise_links`: the PDF's links to exercises use the
  labels sphinx-exercise writes;
- :mod:`book.upstream.sphinx_thebe_scripts`: one copy of sphinx-thebe's script per page.

Each module says when it can be removed.
"""
