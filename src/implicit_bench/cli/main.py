"""The ``implicit-bench`` command: pipeline stages and stand-alone tools.

Tools are registered lazily as ``"module:attribute"`` so that ``implicit-bench --help`` does not
import torch. Add a tool by adding one line to ``TOOLS``.
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
    # name: "module:click_command"
    "stage": "implicit_bench.cli.stages:stage",
    "llm": "implicit_bench.llm.cli:llm",
    # hidden; old name of `llm export-replay`
    "llm-export-replay": "implicit_bench.llm.cli:export_replay_alias",
    "profile": "implicit_bench.params.profiles:profile_command",
    "image": "implicit_bench.images.cli:image_command",
    "human-eval": "implicit_bench.human_eval.cli:human_eval",
    "analyze": "implicit_bench.analyze.cli:analyze",
    "export-dataset": "implicit_bench.release.export:export_dataset_command",
    "import": "implicit_bench.release.cli:import_command",
    "recovery": "implicit_bench.recovery.cli:recovery_group",
    # hidden; old name of `recovery`
    "simulate": "implicit_bench.recovery.cli:simulate_alias",
    "plan": "implicit_bench.planning.plan:plan_command",
    "agreement": "implicit_bench.cli.agreement:agreement_command",
    "diff": "implicit_bench.compare.cli:diff_command",
    "exps": "implicit_bench.compare.cli:exps_command",
    "report": "implicit_bench.report.cli:report_command",
    "results": "implicit_bench.compare.cli:results_command",
    "check": "implicit_bench.cli.check:check_command",
    "run": "implicit_bench.cli.run:run_command",
    "calibration": "implicit_bench.analysis.cli:calibration",
    "audit": "implicit_bench.audits.cli:audit_group",
    "scm-prompts": "implicit_bench.audits.scm_prompts:scm_prompts_command",
    "construction-rating": (
        "implicit_bench.audits.construction_ablation:construction_rating_command"
    ),
}


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


if __name__ == "__main__":
    main()
