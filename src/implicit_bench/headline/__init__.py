"""The headline summary: the ``summary`` stage (entry: :mod:`implicit_bench.headline.stage`)."""
