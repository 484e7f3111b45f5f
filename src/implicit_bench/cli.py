"""The ``implicit-bench`` command: pipeline stages and stand-alone tools.

Tools are registered lazily as ``"module:attribute"`` so that ``implicit-bench --help`` does not
import torch. Add a tool by adding one line to ``TOOLS``.
"""

from __future__ import annotations

import importlib
import runpy
import sys
from pathlib import Path

import click

TOOLS: dict[str, str] = {
    # name: "module:click_command"
    "llm-export-replay": "implicit_bench.llm.cli:export_replay_command",
    "profile": "implicit_bench.profiles:profile_command",
    "image": "implicit_bench.images.tool:image_command",
    "human-eval": "implicit_bench.human_eval.cli:human_eval",
    "analyze": "implicit_bench.analysis.cli:analyze",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *TOOLS])

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in TOOLS:
            module_name, _, attr = TOOLS[name].partition(":")
            return getattr(importlib.import_module(module_name), attr)
        return super().get_command(ctx, name)


@click.group(cls=LazyGroup)
@click.version_option(package_name="implicit-bench")
def main() -> None:
    """IMPLICIT-Bench: stereotyped defaults and prompt following in text-to-image models."""


@main.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("name")
@click.pass_context
def stage(ctx: click.Context, name: str) -> None:
    """Run the pipeline stage NAME (stages/NAME.py) outside DVC; extra args go to the stage."""
    script = Path("stages") / f"{name}.py"
    if not script.exists():
        known = sorted(p.stem for p in Path("stages").glob("*.py")) if Path("stages").is_dir() else []
        raise click.UsageError(
            f"no stage '{name}' in ./stages (run from the repository root); known: {', '.join(known)}"
        )
    sys.argv = [str(script), *ctx.args]
    runpy.run_path(str(script), run_name="__main__")


if __name__ == "__main__":
    main()
