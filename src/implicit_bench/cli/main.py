"""The ``implicit-bench`` command: pipeline stages and stand-alone tools.

Tools are registered lazily as ``"module:attribute"`` so that ``implicit-bench --help`` does not
import torch. Add a tool: its module ``cli/<name>.py`` (one module per command) and one line in
``TOOLS``.
"""

from __future__ import annotations

import importlib
import os

import click

from implicit_bench._util.friendly_errors import FriendlyGroup, enable_debug

# No pydantic plugins in this command (unless the caller sets the variable, e.g. to ""): with it
# unset, pydantic's first model scans the entry points of every installed distribution (~40 ms
# CPU of a 2 s ``analyze``; docs/analysis.md, "Speed"). None is installed for the project.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

TOOLS: dict[str, str] = {
    # name: "implicit_bench.cli.<name, '-' -> '_'>:click_command" (one module per command;
    # `import` is cli/import_.py: `import` is a Python keyword)
    "stage": "implicit_bench.cli.stage:stage",
    "llm": "implicit_bench.cli.llm:llm",
    "llm-export-replay": "implicit_bench.cli.llm:export_replay_alias",
    "profile": "implicit_bench.cli.profile:profile_command",
    "image": "implicit_bench.cli.image:image_command",
    "human-eval": "implicit_bench.cli.human_eval:human_eval",
    "analyze": "implicit_bench.cli.analyze:analyze",
    "export-dataset": "implicit_bench.cli.export_dataset:export_dataset_command",
    "export": "implicit_bench.cli.export:export_group",
    "import": "implicit_bench.cli.import_:import_command",
    "recovery": "implicit_bench.cli.recovery:recovery_group",
    "simulate": "implicit_bench.cli.recovery:simulate_alias",
    "plan": "implicit_bench.cli.plan:plan_command",
    "agreement": "implicit_bench.cli.agreement:agreement_command",
    "diff": "implicit_bench.cli.diff:diff_command",
    "exps": "implicit_bench.cli.exps:exps_command",
    "report": "implicit_bench.cli.report:report_command",
    "results": "implicit_bench.cli.results:results_command",
    "check": "implicit_bench.cli.check:check_command",
    "run": "implicit_bench.cli.run:run_command",
    "calibration": "implicit_bench.cli.calibration:calibration",
    "audit": "implicit_bench.cli.audit:audit_group",
    "scm-prompts": "implicit_bench.cli.scm_prompts:scm_prompts_command",
    "prompt-labels": "implicit_bench.cli.prompt_labels:prompt_labels_command",
    "construction-rating": "implicit_bench.cli.construction_rating:construction_rating_command",
}

#: hidden old names, kept working: old name -> the command whose module holds them
ALIASES: dict[str, str] = {"llm-export-replay": "llm", "simulate": "recovery"}


class LazyGroup(FriendlyGroup):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *TOOLS])

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in TOOLS:
            module_name, _, attr = TOOLS[name].partition(":")
            return getattr(importlib.import_module(module_name), attr)
        return super().get_command(ctx, name)


@click.group(cls=LazyGroup)
@click.version_option(package_name="implicit-bench")
@click.option(
    "--debug",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=enable_debug,
    help="Print full tracebacks (also: IMPLICIT_BENCH_DEBUG=1); errors are one line otherwise.",
)
def main() -> None:
    """IMPLICIT-Bench: stereotyped defaults and prompt following in text-to-image models."""


def run() -> None:
    """The console script (pyproject's ``implicit-bench``): :func:`main`."""
    main()


if __name__ == "__main__":
    run()
