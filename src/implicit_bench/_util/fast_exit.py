"""Leave a finished command without tearing the interpreter down (docs/analysis.md, "Speed").

At exit CPython frees every module and object one at a time; after ``analyze`` (pandas, pyarrow
and the analysis' frames) that takes about 0.15 s of a 1.5 s run and saves nothing: the outputs
are written and closed. A command whose work is done calls :func:`request`; the console script
(``implicit_bench.cli.main:run``) then, when the command succeeded, runs the ``atexit`` handlers,
flushes stdout and stderr and ends the process with ``os._exit(0)``. It is not taken while
another thread or a child process is alive, under a profiler or tracer, nor on any failure; a
command run in-process (click's ``CliRunner``, the tests) never reaches it.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading

_requested: list[bool] = []


def request() -> None:
    """Ask for a fast exit once the command has returned successfully."""
    _requested.append(True)


def requested() -> bool:
    return bool(_requested)


def _alone() -> bool:
    """No other thread, no child process (``multiprocessing``'s, where it is loaded) and no
    profiler or tracer (cProfile, coverage: they write their data at the interpreter's exit)."""
    if threading.active_count() > 1 or sys.getprofile() or sys.gettrace():
        return False
    mp = sys.modules.get("multiprocessing")
    return not (mp is not None and mp.active_children())


def exit_now(code: int | None) -> None:
    """``os._exit(0)`` after the exit handlers and a flush, when requested, successful and alone;
    otherwise nothing (the caller exits the usual way)."""
    if code not in (None, 0) or not requested() or not _alone():
        return
    if not _flushed():
        return  # a closed pipe: the usual exit reports it
    atexit._run_exitfuncs()  # runs each handler once and clears them
    _flushed()
    os._exit(0)


def _flushed() -> bool:
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return False
    return True
