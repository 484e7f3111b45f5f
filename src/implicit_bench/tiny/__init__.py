"""Tiny randomly initialised models: the ``models`` stage (entry:
:mod:`implicit_bench.tiny.stage`)."""
