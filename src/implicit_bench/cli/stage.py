"""``implicit-bench stage NAME``: run one pipeline stage (``stages/*.py``) outside DVC.

Stage names are the DVC stage names of dvc.yaml; a stage whose script has another name is
listed in ``ALIASES`` (``select`` runs ``stages/select_units.py``, see docs/architecture.md).
``implicit-bench stage --help`` lists the stages found in ``./stages``; every argument after
the stage name, ``--help`` included, goes to the stage script.
"""

from __future__ import annotations

import ast
import runpy
import sys
from pathlib import Path

import click

#: DVC stage name -> script stem, where the two differ
ALIASES: dict[str, str] = {"select": "select_units"}
STAGES_DIR = Path("stages")


def stage_scripts(stages_dir: Path = STAGES_DIR) -> dict[str, Path]:
    """Stage name -> script under ``stages_dir`` (relative to the working directory)."""
    if not stages_dir.is_dir():
        return {}
    by_stem = {p.stem: p for p in sorted(stages_dir.glob("*.py")) if not p.name.startswith("_")}
    reverse = {stem: name for name, stem in ALIASES.items()}
    return {reverse.get(stem, stem): path for stem, path in by_stem.items()}


def _summary(script: Path) -> str:
    """First line of the script's module docstring, without the ``Stage `x`:`` prefix."""
    try:
        doc = ast.get_docstring(ast.parse(script.read_text(encoding="utf-8"))) or ""
    except (OSError, SyntaxError):
        return ""
    line = " ".join(doc.strip().split("\n\n", 1)[0].split()) if doc.strip() else ""
    return line.split(":", 1)[1].strip() if line.startswith("Stage `") and ":" in line else line


def _runner(name: str, script: Path) -> click.Command:
    @click.pass_context
    def run(ctx: click.Context) -> None:
        sys.argv = [str(script), *ctx.args]
        runpy.run_path(str(script), run_name="__main__")

    return click.Command(
        name,
        callback=run,
        help=_summary(script),
        short_help=_summary(script),
        add_help_option=False,  # `--help` goes to the stage's own click command
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    )


class StageGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(stage_scripts())

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        scripts = stage_scripts()
        script = scripts.get(name) or scripts.get(name.replace("-", "_"))
        if script is None and name in ALIASES.values():  # the script's own name works too
            script = STAGES_DIR / f"{name}.py"
        return _runner(name, script) if script is not None else None

    def resolve_command(self, ctx: click.Context, args: list[str]):  # type: ignore[no-untyped-def]
        name = args[0] if args else ""
        if self.get_command(ctx, name) is None:
            known = ", ".join(self.list_commands(ctx)) or "none (run from the repository root)"
            raise click.UsageError(
                f"no stage '{name}' in ./stages (run from the repository root); known: {known}", ctx
            )
        return super().resolve_command(ctx, args)


@click.group("stage", cls=StageGroup)
def stage() -> None:
    """Run one pipeline stage outside DVC: `implicit-bench stage NAME [ARGS]...`.

    NAME is the DVC stage name (dvc.yaml); ARGS go to stages/NAME.py (try `stage NAME --help`).
    Run from the repository root.
    """
