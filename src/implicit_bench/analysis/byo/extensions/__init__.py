"""The one extension point of ``implicit-bench analyze``.

An extension is a function ``fn(tables, out_dir, params) -> dict | None`` that receives the
validated tables (``load.Tables``: units, judgements of every configuration, rejects,
duplicates, image index), the output directory (write ``out_dir/metrics/NAME.json``,
``out_dir/tables/...``) and the whole params mapping (``--params`` file, or ``params.yaml``
sections; validate your own section). Its return value (a small summary) is echoed by
``analyze``. Write it as ``analyze/extensions/NAME.py`` (the library logic it calls stays in
its own package) and register it here with one line, as a lazy ``"module:function"`` string.

An extension reads only what it is given (never the analysis's own output files): on a
machine with two or more CPUs ``analyze`` runs the extensions in a forked process while it
computes its own outputs, with ``out_dir`` a staging directory whose files are moved into
the output directory once the analysis has written its own (``start_extensions``).
"""

from __future__ import annotations

import os
import pickle
import shutil
import signal
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from implicit_bench._util.dirswap import temp_dir_next_to
from implicit_bench.analysis.load import Tables
from implicit_bench.errors import ConfigError, InputError
from implicit_bench.runtime.registry import import_target

Extension = Callable[[Tables, Path, dict[str, Any]], "dict[str, Any] | None"]

EXTENSIONS: dict[str, str] = {
    # name: "module:function", the module analyze/extensions/NAME.py
    # docs/debiasing.md
    "debias": "implicit_bench.analysis.byo.extensions.debias:analyze_extension",
    "audits": "implicit_bench.analysis.byo.extensions.audits:analyze_extension",  # docs/audits.md
    # docs/byo-judgements.md
    "retrieval": "implicit_bench.analysis.byo.extensions.retrieval:analyze_extension",
}


# name: "module:function" of a cheap check ``fn(tables, params) -> bool``: False when the
# extension would find nothing to compute (no blind rows, no debiasing runs, no retrieval
# table). When no extension has work, ``start_extensions`` does not fork: a forked process
# costs the analysis a page fault on each page it writes afterwards (copy-on-write), about
# 6% of the CPU time of the release's construction recipe, which none of them uses.
WORK_CHECKS: dict[str, str] = {
    "debias": "implicit_bench.analysis.byo.extensions.debias:has_work",
    "audits": "implicit_bench.analysis.byo.extensions.audits:has_work",
    "retrieval": "implicit_bench.analysis.byo.extensions.retrieval:has_work",
}


def load_extension(ref: str) -> Extension:
    return import_target(ref)


def any_work(tables: Tables, params: dict[str, Any], registry: dict[str, str]) -> bool:
    """Whether any extension of ``registry`` may have something to compute: an extension
    without a check in ``WORK_CHECKS`` (or whose check fails, e.g. on bad params, which the
    extension then reports itself) counts as having work."""
    for name in registry:
        check = WORK_CHECKS.get(name) if registry[name] == EXTENSIONS.get(name) else None
        if check is None:
            return True
        try:
            if import_target(check)(tables, params):
                return True
        except Exception:  # noqa: BLE001 - the extension itself reports the problem
            return True
    return False


def run_extensions(
    tables: Tables, out_dir: Path, params: dict[str, Any], registry: dict[str, str] | None = None
) -> dict[str, Any]:
    """Call every registered extension in name order; returns {name: summary}.

    The analysis's own outputs are written before the extensions run, and no extension stops
    the others: one that fails on the input (``InputError`` / ``ConfigError``) gets the summary
    ``{"error": ...}``; one that fails otherwise (a bug) gets ``{"error": ..., "unexpected":
    True}``, and ``analyze`` exits non-zero after every extension ran.
    """
    from implicit_bench._util.redact import redact

    registry = EXTENSIONS if registry is None else registry
    out: dict[str, Any] = {}
    for name in sorted(registry):
        try:
            out[name] = load_extension(registry[name])(tables, out_dir, params)
        except (InputError, ConfigError) as exc:
            out[name] = {"error": redact(f"{type(exc).__name__}: {exc}")}
        except Exception as exc:  # noqa: BLE001 - reported, and analyze exits non-zero
            from implicit_bench._util.friendly_errors import debug_enabled

            if debug_enabled():
                raise
            out[name] = {"error": redact(f"{type(exc).__name__}: {exc}"), "unexpected": True}
    return out


JOBS_ENV = "IMPLICIT_BENCH_ANALYZE_JOBS"  # 1: run the extensions after the analysis, in-process


class PendingExtensions:
    """Extensions started by ``start_extensions``; ``result()`` waits and returns
    ``run_extensions``' summaries, ``cancel()`` stops them (the analysis failed)."""

    def __init__(
        self, run: Callable[[], dict[str, Any]], cancel: Callable[[], None] = lambda: None
    ) -> None:
        self._run = run
        self._cancel = cancel

    def result(self) -> dict[str, Any]:
        return self._run()

    def cancel(self) -> None:
        self._cancel()


def start_extensions(
    tables: Tables, out_dir: Path, params: dict[str, Any], registry: dict[str, str] | None = None
) -> PendingExtensions:
    """Start ``run_extensions``; call ``result()`` after the analysis wrote its own outputs.

    Where ``os.fork`` exists (Linux), two or more CPUs are available and
    ``IMPLICIT_BENCH_ANALYZE_JOBS`` is not ``1``, the extensions run at once in a forked child (it
    shares the validated tables without copying them), writing into a staging directory next to
    ``out_dir``; ``result()`` moves the staged files into ``out_dir``, so the output directory
    receives the same files, after the analysis's own, as in a sequential run, and none when the
    analysis fails (``cancel()``). The child sends the summaries back through a pipe. Otherwise,
    or when no extension has work (``any_work``), the extensions run in-process when
    ``result()`` is called.
    """
    out_dir = Path(out_dir)
    registry = EXTENSIONS if registry is None else registry
    if (
        os.environ.get(JOBS_ENV) == "1"
        or not hasattr(os, "fork")
        or sys.platform != "linux"
        or _cpus() < 2
        or not any_work(tables, params, registry)  # nothing to overlap: not worth a fork
    ):
        return PendingExtensions(lambda: run_extensions(tables, out_dir, params, registry))
    try:  # the staging directory sits next to out_dir, so its files move in by rename
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        stage = temp_dir_next_to(out_dir, "extensions")  # pid in the name: a dead run's is cleaned
    except OSError:  # e.g. a read-only parent: run them afterwards, in-process
        return PendingExtensions(lambda: run_extensions(tables, out_dir, params, registry))
    read_end, write_end = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the child: run, send the summaries, leave without the parent's exit handlers
        _die_with_parent(parent)
        os.close(read_end)
        try:
            message: tuple[str, Any] = ("ok", run_extensions(tables, stage, params, registry))
        except BaseException:  # noqa: BLE001 - re-raised by the parent (debug mode)
            message = ("raise", traceback.format_exc())
        with os.fdopen(write_end, "wb") as fh:
            fh.write(pickle.dumps(message))
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    os.close(write_end)

    def result() -> dict[str, Any]:
        with os.fdopen(read_end, "rb") as fh:
            data = fh.read()
        os.waitpid(pid, 0)
        try:
            if not data:
                raise RuntimeError("the extensions' process ended without a result")
            status, payload = pickle.loads(data)
            if status == "raise":
                raise RuntimeError(f"an extension raised (in the extensions' process):\n{payload}")
            _move_tree(stage, out_dir)
            return payload
        finally:
            shutil.rmtree(stage, ignore_errors=True)

    def cancel() -> None:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(read_end)
        shutil.rmtree(stage, ignore_errors=True)

    return PendingExtensions(result, cancel)


def _die_with_parent(parent: int) -> None:
    """In a forked child: be killed (SIGKILL) when the parent dies, so a killed ``analyze``
    leaves no orphan still writing (Linux ``prctl(PR_SET_PDEATHSIG)``)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _move_tree(src: Path, dst: Path) -> None:
    """Move every file under ``src`` to the same relative path under ``dst`` (replacing)."""
    for path in sorted(p for p in src.rglob("*") if p.is_file()):
        target = dst / path.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.replace(path, target)
        except OSError:  # another file system (out_dir is a mount point): copy, then remove
            shutil.move(path, target)
