"""The ``implicit-bench analyze`` tool: evaluate bring-your-own tables (``cli``) and run the
extensions (``extensions/``: the registry in its ``__init__``, one module per extension, named
as registered). Above ``analysis``, ``audits`` and ``debias``, which it calls; docs/analysis.md.
"""
