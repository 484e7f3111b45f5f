"""The preflight before a stage that calls models (``python stages/NAME.py``, DVC, ``implicit-bench stage``).

Every stage script is a :class:`~implicit_bench.clierrors.FriendlyCommand`; for a script under
``stages/`` whose stem is in :data:`MODEL_STAGES` that class adds ``--no-preflight`` and, before
the stage's own code runs, calls :func:`run` : the cheap checks of ``implicit-bench check`` for
the catalogue entries that stage uses (:func:`implicit_bench.preflight.preflight_stage`). One
line per problem on stderr, exit status 1, before any model call (docs/experiments.md).

Skipped with ``--no-preflight``, the environment variable ``IMPLICIT_BENCH_NO_PREFLIGHT=1``, or
the params key ``base.preflight: false``; ``IMPLICIT_BENCH_PREFLIGHT_TIMEOUT`` sets the seconds
an endpoint has to answer (default 5). None of these changes an output, so none is a DVC param.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

#: the stages that call models (script stems), in pipeline order
MODEL_STAGES = (
    "kg",
    "triplets",
    "render",
    "judge",
    "debias_render",
    "debias_judge",
    "rewrite",
    "retrieve",
    "diversity_study",
    "clip",
)
SKIP_ENV = "IMPLICIT_BENCH_NO_PREFLIGHT"
TIMEOUT_ENV = "IMPLICIT_BENCH_PREFLIGHT_TIMEOUT"
PARAMS_KEY = "base.preflight"
DEFAULT_TIMEOUT = 5.0


def stage_of(callback: Callable[..., Any] | None) -> str | None:
    """The model stage a click callback belongs to (its file is ``stages/<stem>.py``), else None."""
    code = getattr(callback, "__code__", None)
    if code is None:
        return None
    path = Path(code.co_filename)
    return path.stem if path.parent.name == "stages" and path.stem in MODEL_STAGES else None


def _skip_flag(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    ctx.meta["implicit_bench.no_preflight"] = value
    return value


def no_preflight_option() -> click.Option:
    """``--no-preflight``, added to every model stage's command."""
    return click.Option(
        ["--no-preflight"],
        is_flag=True,
        expose_value=False,
        callback=_skip_flag,
        help=f"Skip the preflight of this stage's models (also {SKIP_ENV}=1 or params {PARAMS_KEY}: false).",
    )


def _env_true(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no")


def run(stage: str, ctx: click.Context) -> None:
    """The preflight of ``stage`` unless skipped: one line per problem on stderr, then exit 1."""
    if ctx.meta.get("implicit_bench.no_preflight") or _env_true(SKIP_ENV):
        return
    from implicit_bench.params import load_params

    try:
        params = load_params(ctx.params.get("params_path") or "params.yaml")
    except Exception:  # noqa: BLE001 - the stage itself reports bad params, in its own words
        return
    if (params.get("base") or {}).get("preflight", True) is False:
        return
    from implicit_bench.preflight import preflight_stage

    timeout = float(os.environ.get(TIMEOUT_ENV) or DEFAULT_TIMEOUT)
    problems = preflight_stage(stage, params, timeout)
    for line in problems:
        click.echo(f"{stage}: preflight: {line}", err=True)
    if problems:
        sys.exit(1)
