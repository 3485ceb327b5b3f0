"""Figures of the reproduction: one function per figure, `(results, options) -> matplotlib Figure`.

`catalog` names the figures (import-light, used by the Snakefile); `render` draws and saves them.
"""
