"""Every YAML file goes through the strict loader (yamlsafe.py): ``exps`` and
``results`` read params.yaml with it, so an anchor bomb is a one-line error at once (plain
``yaml.safe_load`` ran 37 s into a MemoryError), and no source file parses YAML another way."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from implicit_bench._util.yamlsafe import MAX_NODES
from implicit_bench.cli.main import main as cli_main
from tests.helpers.paths import REPO_ROOT
from tests.helpers.yaml_fixtures import BOMB


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def _bytes(text: str | bytes) -> bytes:
    return text if isinstance(text, bytes) else text.encode()


def _repo_with_params(
    root: Path, committed: str | bytes, workspace: str | bytes | None = None
) -> None:
    _git(root, "init", "-q")
    (root / "metrics").mkdir()
    (root / "metrics/summary.json").write_text('{"default_rate_pct": 50.0}')
    (root / "params.yaml").write_bytes(_bytes(committed))
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "run")
    if workspace is not None:
        (root / "params.yaml").write_bytes(_bytes(workspace))


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
        f"{path.relative_to(REPO_ROOT)}:{n}"
        for folder in ("src", "stages", "scripts")
        for path in sorted((REPO_ROOT / folder).rglob("*.py"))
        if path.name != "yamlsafe.py"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if plain.search(line)
    ]
    assert offenders == []


def _nested(depth: int, shape: str) -> str:
    """A params.yaml whose ``base`` holds collections ``depth`` deep in all."""
    if shape == "flow":
        return "base: " + "[" * (depth - 1) + "]" * (depth - 1) + "\n"
    if shape == "block":
        return (
            "".join("  " * i + f"k{i}:\n" for i in range(depth - 1)) + "  " * (depth - 1) + "v: 1\n"
        )
    chain = "".join(f"a{i}: &a{i} [*a{i - 1}]\n" for i in range(1, depth - 1))
    return "a0: &a0 [x]\n" + chain  # aliases: written 2 deep, expanded depth deep


@pytest.mark.parametrize("shape", ["flow", "block", "aliases"])
def test_yaml_nested_995_deep_is_a_one_line_error_naming_the_file(tmp_path, shape):
    from implicit_bench._util.yamlsafe import MAX_DEPTH
    from implicit_bench.errors import ConfigError
    from implicit_bench.params import load_params

    path = tmp_path / "params.yaml"
    path.write_text(_nested(MAX_DEPTH, shape))
    assert isinstance(load_params(path), dict)  # the bound itself is allowed
    path.write_text(_nested(995, shape))  # was a RecursionError in the strict loader
    with pytest.raises(
        ConfigError, match=rf"params.yaml: not valid YAML: nested more than {MAX_DEPTH} deep"
    ):
        load_params(path)


def test_exps_on_a_995_deep_params_is_one_line(tmp_path, monkeypatch):
    monkeypatch.delenv("IMPLICIT_BENCH_DEBUG", raising=False)
    _repo_with_params(tmp_path, "debias: {alpha: 1}\n", workspace=_nested(995, "flow"))
    res = CliRunner().invoke(cli_main, ["exps", "--repo", str(tmp_path)])
    lines = res.output.strip().splitlines()
    assert res.exit_code == 1 and len(lines) == 1, lines
    assert "params.yaml: not valid YAML: nested more than" in lines[0]


@pytest.mark.parametrize("where", ["workspace", "committed"])
def test_a_latin1_params_yaml_is_one_line_naming_the_file(tmp_path, monkeypatch, where):
    monkeypatch.delenv("IMPLICIT_BENCH_DEBUG", raising=False)
    latin1 = "debias: {alpha: 1}\nbase: {name: Jos\xe9}\n".encode("latin-1")
    good = "debias: {alpha: 1}\n"
    if where == "workspace":
        _repo_with_params(tmp_path, good, workspace=latin1)
    else:  # the baseline revision's params.yaml (git show HEAD:params.yaml)
        _repo_with_params(tmp_path, latin1, workspace=good)
    res = CliRunner().invoke(cli_main, ["exps", "--repo", str(tmp_path)])
    lines = res.output.strip().splitlines()
    assert res.exit_code == 1 and len(lines) == 1, lines
    at = "" if where == "workspace" else " at HEAD"
    assert f"params.yaml{at}: not UTF-8 text (byte 0xe9 on line 2)" in lines[0], lines
    assert "UnicodeDecodeError" not in res.output and "codec" not in res.output
