"""How well the benchmark recovers the simulated world's planted truth (docs/world.md).

``stage`` (the ``recovery`` stage, ``run_recovery``: every headline estimate beside its truth,
one entry function per metrics file), ``truth`` (the
truth of each estimand over exactly the images its estimator used), ``fastpath`` (whole
simulated worlds as arrays, no pixels) and ``power`` (``implicit-bench recovery``). The
coverage study of the intervals, which only the benchmark reaches, is
``benchmarks/coverage_study.py`` (run by ``benchmarks/bench_coverage.py``).
"""
