"""Chapter 5: attention and transformers (one module per setting)."""
