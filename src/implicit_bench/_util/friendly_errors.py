"""One-line errors for every command (the ``implicit-bench`` CLI and the stage scripts).

A command whose class is :class:`FriendlyCommand` (or :class:`FriendlyGroup`) turns any
exception raised while it runs into click's ``Error: <one line>`` on stderr and exit status 1,
as click programs do. The full traceback is printed only with ``implicit-bench --debug`` or
the environment variable ``IMPLICIT_BENCH_DEBUG=1`` (docs/errors.md). Bad input
(``InputError``, ``ConfigError``, other ``ValueError``/``OSError``) reads ``Error: <message>``;
anything else also names its type, since it is probably a bug worth a report.
"""

from __future__ import annotations

import os
from typing import Any

import click

DEBUG_ENV = "IMPLICIT_BENCH_DEBUG"


def debug_enabled() -> bool:
    """True when ``IMPLICIT_BENCH_DEBUG`` is set to anything but "", 0, false or no."""
    return os.environ.get(DEBUG_ENV, "").strip().lower() not in ("", "0", "false", "no")


def one_line(exc: BaseException) -> str:
    """The exception as one line of text (redacted: no secret reaches the terminal or a log)."""
    from implicit_bench._util.redact import redact

    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, (ValueError, OSError)) or type(exc).__module__.startswith("implicit_bench"):
        return redact(text)
    return redact(
        f"{type(exc).__name__}: {text} (rerun with --debug or {DEBUG_ENV}=1 for the traceback)"
    )


def _invoke(invoke: Any, ctx: click.Context) -> Any:
    try:
        return invoke(ctx)
    except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
        raise
    except Exception as exc:
        if debug_enabled():
            raise
        raise click.ClickException(one_line(exc)) from None


class FriendlyCommand(click.Command):
    """A click command whose errors are one line (see the module docstring). A stage script that
    calls models uses its subclass
    :class:`~implicit_bench.runtime.preflight.stage.ModelStageCommand`."""

    def invoke(self, ctx: click.Context) -> Any:
        return _invoke(self.run_callback, ctx)

    def run_callback(self, ctx: click.Context) -> Any:
        """The command's own work (click's ``invoke``); subclasses add steps before it."""
        return super().invoke(ctx)


class FriendlyGroup(click.Group):
    """A click group whose (and whose subcommands') errors are one line."""

    def invoke(self, ctx: click.Context) -> Any:
        return _invoke(super().invoke, ctx)


def enable_debug(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    """``--debug`` callback: full tracebacks here and in the stage scripts run from here."""
    if value:
        os.environ[DEBUG_ENV] = "1"
    return value
