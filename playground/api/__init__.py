"""The public Python API: running (:mod:`playground.api.running`) and reading saved databases."""
