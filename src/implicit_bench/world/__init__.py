"""The simulated world: planted truth and simulated backends for the offline default profile.

Modules: ``params`` (the ``world:`` params block), ``truth`` (planting per-unit truth),
``sampling`` (the one sampling rule, shared by the image path and the fast path),
``picture`` (procedural pictures read back from their pixels), ``generator`` / ``judge`` /
``clip`` / ``faces`` (the ``sim`` backends of the existing registries). See docs/world.md.
"""
