"""Book tooling: not installed, not shipped to Colab."""
