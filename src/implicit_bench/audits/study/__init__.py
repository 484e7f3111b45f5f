"""The diversity study: the ``diversity_study`` stage (entry:
:mod:`implicit_bench.audits.study.stage`)."""
