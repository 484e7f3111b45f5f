"""``implicit-bench llm ...``: tools for the LLM backends (``llm export-replay``)."""

from __future__ import annotations

import click

from implicit_bench.backends.llm.base import DEFAULT_CACHE


@click.group("llm")
def llm() -> None:
    """LLM backend tools (docs/llm-backends.md)."""


@llm.command("export-replay")
@click.option("--cache", "cache_path", default=DEFAULT_CACHE, show_default=True)
@click.option("--out", required=True, help="replay JSONL to write")
def export_replay_command(cache_path: str, out: str) -> None:
    """Export every cached LLM answer as {request_hash, text, backend, model} lines."""
    from implicit_bench.backends.llm.replay import export_replay

    n = export_replay(cache_path, out)
    click.echo(f"{n} answers -> {out}")


#: ``implicit-bench llm-export-replay``: the old top-level name, kept working but hidden
export_replay_alias = click.Command(
    "llm-export-replay",
    callback=export_replay_command.callback,
    params=export_replay_command.params,
    help="Old name of `implicit-bench llm export-replay`.",
    hidden=True,
)
