"""The preflight before a stage that calls models (``python stages/NAME.py``, DVC,
``implicit-bench stage``).

A stage script that calls models (its stem is in :data:`MODEL_STAGES`) is a
:class:`ModelStageCommand`: a :class:`~implicit_bench._util.friendly_errors.FriendlyCommand` that
adds
``--no-preflight`` and, before the stage's own code runs, calls :func:`run` : the cheap checks
of ``implicit-bench check`` for the catalogue entries that stage uses
(:func:`implicit_bench.runtime.preflight.checks.preflight_stage`). One line per problem on stderr,
exit
status 1, before any model call (docs/experiments.md). The other stages are plain
``FriendlyCommand``s, so neither this module nor the preflight is in their import closure (their DVC
deps).

Skipped with ``--no-preflight``, the environment variable ``IMPLICIT_BENCH_NO_PREFLIGHT=1``, or
the params key ``base.preflight: false``; ``IMPLICIT_BENCH_PREFLIGHT_TIMEOUT`` sets the seconds
an endpoint has to answer (default 5). None of these changes an output, so none is a DVC param.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from implicit_bench._util.friendly_errors import FriendlyCommand
from implicit_bench.errors import ConfigError

#: the stages that call models (script stems), in pipeline order
MODEL_STAGES = (
    "kg",
    "triplets",
    "render",
    "judge",
    "bench_render",
    "bench_judge",
    "debias_render",
    "debias_judge",
    "b6",
    "rewrite",
    "retrieve",
    "diversity_study",
    "clip",
)
SKIP_ENV = "IMPLICIT_BENCH_NO_PREFLIGHT"
TIMEOUT_ENV = "IMPLICIT_BENCH_PREFLIGHT_TIMEOUT"
PARAMS_KEY = "base.preflight"
DEFAULT_TIMEOUT = 5.0
MAX_TIMEOUT = 600.0


def stage_of(callback: Callable[..., Any] | None) -> str:
    """The model stage a click callback belongs to: its file is ``stages/<stem>.py`` with the stem
    in :data:`MODEL_STAGES` (anything else is a programming error, raised at import)."""
    code = getattr(callback, "__code__", None)
    path = Path(code.co_filename) if code is not None else None
    if path is None or path.parent.name != "stages" or path.stem not in MODEL_STAGES:
        raise ValueError(
            f"ModelStageCommand on {path}: only stages/<name>.py with <name> in MODEL_STAGES "
            f"({', '.join(MODEL_STAGES)}) run a preflight"
        )
    return path.stem


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
        help="Skip the preflight of this stage's models (also "
        f"{SKIP_ENV}=1 or params {PARAMS_KEY}: false).",
    )


def _env_true(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no")


def env_timeout() -> float:
    """The preflight's seconds from ``IMPLICIT_BENCH_PREFLIGHT_TIMEOUT`` (default 5): a number
    in (0, 600], else a one-line ConfigError naming the variable."""
    raw = (os.environ.get(TIMEOUT_ENV) or "").strip()
    if not raw:
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (0 < value <= MAX_TIMEOUT):
        raise ConfigError(
            f"environment variable {TIMEOUT_ENV}={raw[:40]!r}: not a number of seconds "
            f"in (0, {MAX_TIMEOUT:g}]"
        )
    return value


def run(stage: str, ctx: click.Context) -> None:
    """The preflight of ``stage`` unless skipped: one line per problem on stderr, then exit 1."""
    if ctx.meta.get("implicit_bench.no_preflight") or _env_true(SKIP_ENV):
        return
    from implicit_bench.params import base_params, load_params

    try:
        params = load_params(ctx.params.get("params_path") or "params.yaml")
        enabled = base_params(params).preflight
    except Exception:  # noqa: BLE001 - the stage itself reports bad params, in its own words
        return
    if not enabled:
        return
    from implicit_bench._util.redact import url
    from implicit_bench.runtime.preflight.checks import preflight_stage

    timeout = env_timeout()
    problems = preflight_stage(stage, params, timeout)
    for line in problems:
        click.echo(url(f"{stage}: preflight: {line}"), err=True)  # no URL prints its password
    if problems:
        sys.exit(1)


class ModelStageCommand(FriendlyCommand):
    """The command class of a stage that calls models: one-line errors, ``--no-preflight``, and
    the stage's preflight (:func:`run`) before its own code."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.model_stage = stage_of(self.callback)
        self.params.append(no_preflight_option())

    def run_callback(self, ctx: click.Context) -> Any:
        run(self.model_stage, ctx)
        return super().run_callback(ctx)
