"""Rendering: the ``render`` stage (entry: :mod:`implicit_bench.render.stage`)."""
