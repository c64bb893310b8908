"""Chapter 4: recurrent networks and modern sequence models (one module per setting)."""
