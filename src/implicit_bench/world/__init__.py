"""The simulated world: the planted truth the offline default profile's ``sim`` backends draw from.

Modules: ``params`` (the ``world:`` params block), ``model`` (loading the planted world),
``truth`` (planting per-unit truth), ``sampling`` (the one sampling rule, shared by the image
path and the fast path), ``picture`` (procedural pictures read back from their pixels),
``measure`` (what the simulated judges report in expectation), ``stage`` (the ``world``
stage's entry). The ``sim`` backends live with their registries (``generators.sim``,
``judges.sim``, ``clip.sim``, ``faces.sim``); checking the benchmark against the truth lives
in :mod:`implicit_bench.world.recovery`. See docs/world.md.
"""
