"""Chapter 3, section 5: the tricks of the trade (initialisation, regularisation, normalisation,
augmentation, label smoothing and distillation). Import the modules directly.
"""
