"""The headline summary: the ``summary`` stage (entry:
:mod:`implicit_bench.report.summary.stage`)."""
