"""Wall-clock phase timings of one process, for the benchmarks (never in tracked outputs).

``IMPLICIT_BENCH_TIMINGS=FILE`` makes every ``phase(name)`` block record its wall time; at exit
the process appends one JSON line to FILE: ``{"startup_cpu_s": ..., "phases": {name: s}}``
(``startup_cpu_s``: the CPU time spent before the first phase, i.e. interpreter start-up and
imports). Unset, ``phase`` does nothing but one dictionary lookup.
"""

from __future__ import annotations

import atexit
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

ENV = "IMPLICIT_BENCH_TIMINGS"
_phases: dict[str, float] = {}
_startup: list[float] = []


@contextmanager
def phase(name: str) -> Iterator[None]:
    """Time the block as ``name`` (summed over repeats) when ``IMPLICIT_BENCH_TIMINGS`` is set."""
    if not os.environ.get(ENV):
        yield
        return
    if not _startup:
        _startup.append(time.process_time())
        atexit.register(_dump, os.environ[ENV])
    start = time.perf_counter()
    try:
        yield
    finally:
        _phases[name] = _phases.get(name, 0.0) + time.perf_counter() - start


def _dump(path: str) -> None:
    record = {
        "startup_cpu_s": round(_startup[0], 4),
        "phases": {k: round(v, 4) for k, v in _phases.items()},
    }
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")
