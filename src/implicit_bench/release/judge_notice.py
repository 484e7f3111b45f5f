"""The line ``run --benchmark`` prints before it starts when a judge of the run is not the
release's Table 4 judge (docs/import.md, "Beside the paper"). Apart from release/beside.py so
that the evaluate stage does not depend on the judge backends."""

from __future__ import annotations

from typing import Any

from implicit_bench.protocol.judge_identity import differences, judge_identity
from implicit_bench.release.beside import DIFFERENT_JUDGE, RELEASE_JUDGE_MODEL, release_judge
from implicit_bench.release.importer import Release


def judge_notice(judges: dict[str, Any], path: str, task: str = "rubric") -> list[str]:
    """One line per judge (catalogue name -> backend block) that differs from the release's
    Table 4 judge for ``task``: what ``run --benchmark`` prints before it starts. Builds each
    backend to read its identity; loads no model."""
    from implicit_bench.backends.judges.stage import judge_backends
    from implicit_bench.protocol.judge_tasks import load_task

    theirs = release_judge(Release(path), task)
    _, identities = judge_backends(judges)
    template = load_task(task).prompt
    lines = []
    for name, ident in sorted(identities.items()):
        ours = judge_identity(ident["identity"], ident["decoding"], template)
        diff = differences(ours, theirs)
        if diff:
            lines.append(
                f"judge {name} ({ours.get('model')}) is not the release's Table 4 judge "
                f"({RELEASE_JUDGE_MODEL}): it differs in {', '.join(diff)}; {DIFFERENT_JUDGE}"
            )
    return lines
