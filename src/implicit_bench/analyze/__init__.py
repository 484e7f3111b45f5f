"""The ``implicit-bench analyze`` tool: evaluate bring-your-own tables
(``cli``) and run the registered
extensions of other packages (``extensions``). Above ``analysis``, ``audits`` and ``debias``, which
it calls; docs/analysis.md.
"""
