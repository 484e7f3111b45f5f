"""Rendering a debiasing configuration: the ``debias_render`` stage (entry:
:mod:`implicit_bench.debias.render.stage`).

A sub-package of its own so that only ``debias_render`` depends on the render machinery.
"""
