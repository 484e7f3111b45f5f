"""Tiny randomly initialised models: the ``models`` stage (entry:
:mod:`implicit_bench.backends.tiny.stage`)."""
