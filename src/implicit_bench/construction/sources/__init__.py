"""Bias-pair sources: the ``sources`` stage (entry:
:mod:`implicit_bench.construction.sources.stage`)."""
