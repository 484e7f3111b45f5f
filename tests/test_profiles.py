from __future__ import annotations

import yaml
from click.testing import CliRunner

from implicit_bench.cli import main
from implicit_bench.profiles import deep_merge


def test_deep_merge_overrides_nested_and_replaces_lists():
    base = {"a": {"x": 1, "y": [1, 2]}, "b": 2}
    assert deep_merge(base, {"a": {"y": [3]}, "c": 4}) == {"a": {"x": 1, "y": [3]}, "b": 2, "c": 4}


def test_profile_command_writes_merged_params(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "params.yaml").write_text("base:\n  seed: 42\n  profile: default\nrender:\n  steps: 2\n")
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "paper.yaml").write_text("base:\n  profile: paper\nrender:\n  steps: 50\n")
    result = CliRunner().invoke(main, ["profile", "paper", "--out", "merged.yaml"])
    assert result.exit_code == 0, result.output
    merged = yaml.safe_load((tmp_path / "merged.yaml").read_text())
    assert merged == {"base": {"seed": 42, "profile": "paper"}, "render": {"steps": 50}}
    missing = CliRunner().invoke(main, ["profile", "nope"])
    assert missing.exit_code == 1 and "no such profile" in missing.output
    assert "Traceback" not in missing.output and len(missing.output.strip().splitlines()) == 1


def test_profile_command_keeps_params_comments_in_place(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "params.yaml").write_text(
        "# header comment\nbase:\n  seed: 42  # the seed\n  profile: default  # old note\n"
        "# render section\nrender:\n  steps: 2\n"
    )
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "paper.yaml").write_text("base:\n  profile: paper  # the paper\nrender:\n  steps: 50\n")
    result = CliRunner().invoke(main, ["profile", "paper"])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "params.yaml").read_text()
    assert yaml.safe_load(text) == {"base": {"seed": 42, "profile": "paper"}, "render": {"steps": 50}}
    for comment in ("# header comment", "# the seed", "# render section", "# the paper"):
        assert comment in text
    assert "# old note" not in text  # it described the replaced value


def test_docs_profiles_has_a_row_for_every_params_section():
    from tests.conftest import REPO_ROOT

    doc = (REPO_ROOT / "docs/profiles.md").read_text(encoding="utf-8")
    sections = set(yaml.safe_load((REPO_ROOT / "params.yaml").read_text()))
    for profile in (REPO_ROOT / "profiles").glob("*.yaml"):
        sections |= set(yaml.safe_load(profile.read_text()) or {})
    missing = sorted(s for s in sections if f"| `{s}` |" not in doc)
    assert not missing, f"docs/profiles.md has no row for: {missing}"
