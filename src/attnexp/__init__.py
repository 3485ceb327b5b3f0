"""Can attention weights explain a neural model's predictions? A reproducible toolkit.

Reproduces Jain & Wallace (2019), Wiegreffe & Pinter (2019) and Abnar & Zuidema (2020).
The library has no Snakemake imports: every function is usable from a notebook.
"""

__version__ = "0.1.0"
