"""docs/publishing.md's worked example, command for command, on a copy of the default
profile's committed outputs: each command succeeds and prints what the page says it printed
(the record names are UUIDs derived from the run's commit, so they are matched as such)."""

from __future__ import annotations

import re
import shlex

from click.testing import CliRunner

from implicit_bench.cli.main import main
from tests.helpers.paths import REPO_ROOT, enter_project_copy

DOC = REPO_ROOT / "docs" / "publishing.md"


def _blocks(kind: str) -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## Worked example") : text.index("## The Every Eval Ever record")]
    return re.findall(rf"```{kind}\n(.*?)```", section, re.S)


def test_the_worked_example_runs_as_written(tmp_path, monkeypatch):
    enter_project_copy(tmp_path, monkeypatch)
    commands = _blocks("bash")[0].strip().splitlines()
    assert len(commands) == 3 and all(c.startswith("implicit-bench ") for c in commands)
    printed = []
    for command in commands:
        res = CliRunner().invoke(main, shlex.split(command)[1:], catch_exceptions=False)
        assert res.exit_code == 0, (command, res.output)
        printed += res.output.strip().splitlines()
    expected = _blocks("text")[0].strip().splitlines()
    uuid = "[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
    assert len(printed) == len(expected)
    for got, want in zip(printed, expected, strict=True):
        pattern = re.escape(want).replace(re.escape("<uuid>"), uuid)
        assert re.fullmatch(pattern, got), (got, want)
    assert len(list((tmp_path / "published/eee").rglob("*.json"))) == 2
    assert (tmp_path / "published/card/.eval_results/implicit-bench.yaml").exists()
    assert 'id="leaderboard"' in (tmp_path / "published/site/index.html").read_text()
