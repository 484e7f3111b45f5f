"""``implicit-bench llm-export-replay``: write an LLM cache's answers as a replay JSONL file."""

from __future__ import annotations

import click

from implicit_bench.llm.base import DEFAULT_CACHE


@click.command("llm-export-replay")
@click.option("--cache", "cache_path", default=DEFAULT_CACHE, show_default=True)
@click.option("--out", required=True, help="replay JSONL to write")
def export_replay_command(cache_path: str, out: str) -> None:
    """Export every cached LLM answer as {request_hash, text, backend, model} lines."""
    from implicit_bench.llm.replay import export_replay

    n = export_replay(cache_path, out)
    click.echo(f"{n} answers -> {out}")
