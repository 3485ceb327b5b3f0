"""Abnar & Zuidema (2020): attention rollout and flow against input-importance measures.

The names below live here, not in `run`, so that the report jobs can read them without importing torch."""

METHODS = ("raw", "rollout", "flow")
IMPORTANCES = ("blankout", "grad", "grad_x_input")
