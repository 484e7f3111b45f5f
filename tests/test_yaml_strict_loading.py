"""Every YAML file goes through the strict loader (yamlsafe.py; issue 37): ``exps`` and
``results`` read params.yaml with it, so an anchor bomb is a one-line error at once (plain
``yaml.safe_load`` ran 37 s into a MemoryError), and no source file parses YAML another way."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from implicit_bench.cli import main as cli_main
from implicit_bench.yamlsafe import MAX_NODES
from tests.test_hardening_round2_yaml import BOMB

REPO = Path(__file__).resolve().parents[1]


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def _repo_with_params(root: Path, committed: str, workspace: str | None = None) -> None:
    _git(root, "init", "-q")
    (root / "metrics").mkdir()
    (root / "metrics/summary.json").write_text('{"default_rate_pct": 50.0}')
    (root / "params.yaml").write_bytes(committed.encode())
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "run")
    if workspace is not None:
        (root / "params.yaml").write_text(workspace)


@pytest.mark.parametrize(
    ("command", "where"),
    [("exps", "workspace"), ("exps", "committed"), ("results", "workspace")],
)
def test_an_anchor_bomb_in_params_is_a_one_line_error_at_once(
    tmp_path, monkeypatch, command, where
):
    monkeypatch.delenv("IMPLICIT_BENCH_DEBUG", raising=False)
    if where == "workspace":
        _repo_with_params(tmp_path, "debias: {alpha: 1}\n", workspace=BOMB)
    else:  # the baseline revision's params.yaml (git show HEAD:params.yaml)
        _repo_with_params(tmp_path, BOMB, workspace="debias: {alpha: 1}\n")
    t0 = time.perf_counter()
    res = CliRunner().invoke(cli_main, [command, "--repo", str(tmp_path)])
    took = time.perf_counter() - t0
    assert res.exit_code == 1, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), lines
    assert "params.yaml" in lines[0]
    assert f"more than {MAX_NODES} values once aliases are expanded" in lines[0]
    if where == "committed":
        assert "params.yaml at HEAD" in lines[0]
    assert took < 5.0  # plain yaml.safe_load: a MemoryError after 37 s


def test_no_source_file_parses_yaml_but_through_the_strict_loader():
    plain = re.compile(r"\byaml\.(safe_load|load|full_load|unsafe_load|load_all|safe_load_all)\(")
    offenders = [
        f"{path.relative_to(REPO)}:{n}"
        for folder in ("src", "stages")
        for path in sorted((REPO / folder).rglob("*.py"))
        if path.name != "yamlsafe.py"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if plain.search(line)
    ]
    assert offenders == []
