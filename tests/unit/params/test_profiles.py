from __future__ import annotations

import yaml
from click.testing import CliRunner

from implicit_bench.cli.main import main
from implicit_bench.params.profiles import deep_merge


def test_deep_merge_overrides_nested_and_replaces_lists():
    base = {"a": {"x": 1, "y": [1, 2]}, "b": 2}
    assert deep_merge(base, {"a": {"y": [3]}, "c": 4}) == {"a": {"x": 1, "y": [3]}, "b": 2, "c": 4}


def test_profile_command_writes_merged_params(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "params.yaml").write_text(
        "base:\n  seed: 42\n  profile: default\nrender:\n  steps: 2\n"
    )
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "paper.yaml").write_text(
        "base:\n  profile: paper\nrender:\n  steps: 50\n"
    )
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
    (tmp_path / "profiles" / "paper.yaml").write_text(
        "base:\n  profile: paper  # the paper\nrender:\n  steps: 50\n"
    )
    result = CliRunner().invoke(main, ["profile", "paper"])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "params.yaml").read_text()
    assert yaml.safe_load(text) == {
        "base": {"seed": 42, "profile": "paper"},
        "render": {"steps": 50},
    }
    for comment in ("# header comment", "# the seed", "# render section", "# the paper"):
        assert comment in text
    assert "# old note" not in text  # it described the replaced value


def test_docs_profiles_has_a_row_for_every_params_section():
    from tests.helpers.paths import REPO_ROOT

    doc = (REPO_ROOT / "docs/profiles.md").read_text(encoding="utf-8")
    sections = set(yaml.safe_load((REPO_ROOT / "params.yaml").read_text()))
    for profile in (REPO_ROOT / "profiles").glob("*.yaml"):
        sections |= set(yaml.safe_load(profile.read_text()) or {})
    missing = sorted(s for s in sections if f"| `{s}` |" not in doc)
    assert not missing, f"docs/profiles.md has no row for: {missing}"


def _switch_copy(tmp_path, names):
    """params.yaml and profiles/ copied to tmp_path, switched through ``names`` in order."""
    import shutil

    from tests.helpers.paths import REPO_ROOT

    shutil.copy(REPO_ROOT / "params.yaml", tmp_path / "params.yaml")
    shutil.copytree(REPO_ROOT / "profiles", tmp_path / "profiles", dirs_exist_ok=True)
    for name in names:
        result = CliRunner().invoke(main, ["profile", name])
        assert result.exit_code == 0, (names, result.output)
    return (tmp_path / "params.yaml").read_text(encoding="utf-8")


def test_profile_switches_in_every_order_equal_one_switch_from_the_default(tmp_path, monkeypatch):
    import itertools

    monkeypatch.chdir(tmp_path)
    profiles = ("default", "paper", "tiny")
    one_switch, one_switch_text = {}, {}
    for name in profiles:
        one_switch_text[name] = _switch_copy(tmp_path, [name])
        one_switch[name] = yaml.safe_load(one_switch_text[name])
    for length in (2, 3):
        for order in itertools.permutations(profiles, length):  # every order of the three
            text = _switch_copy(tmp_path, list(order))
            # byte for byte (paper then default lost the blank line before bootstrap)
            assert text == one_switch_text[order[-1]], order
    # the hybrid: paper then tiny left gpt54 with the paper's
    # HTTP keys; now it is the tiny entry whole
    tiny = one_switch["tiny"]
    assert "base_url" not in tiny["judges"]["gpt54"] and "extra_body" not in tiny["judges"]["gpt54"]
    assert "revision" not in tiny["clip"]["model"]
    # and back to the default: the catalogues lose the profile's entries, comments stay
    text = _switch_copy(tmp_path, ["paper", "tiny", "default"])
    from tests.helpers.paths import REPO_ROOT

    assert text == (REPO_ROOT / "params.yaml").read_text(encoding="utf-8")
    for comment in (
        "# The paper profile (real models",
        "# sim_*: the simulated world's (docs/world.md)",
        "# 0 = all 5,737 pairs",
    ):
        assert comment in text


def test_profiles_default_yaml_is_current():
    from implicit_bench.params.profiles import default_snapshot_text
    from tests.helpers.paths import REPO_ROOT

    expected = default_snapshot_text(REPO_ROOT / "params.yaml", REPO_ROOT / "profiles")
    assert (REPO_ROOT / "profiles/default.yaml").read_text(encoding="utf-8") == expected, (
        "profiles/default.yaml is stale: run `implicit-bench profile "
        "--save-default` (params.yaml on the default profile)"
    )


def test_backend_blocks_are_replaced_whole():
    from implicit_bench.params.profiles import deep_merge

    base = {
        "judges": {"j": {"backend": "openai", "base_url": "u", "api_key_env": "K"}},
        "clip": {"model": {"backend": "transformers", "revision": "abc"}, "margin": 0.0},
    }
    over = {
        "judges": {"j": {"backend": "transformers", "model": "m"}},
        "clip": {"model": {"backend": "sim"}},
    }
    assert deep_merge(base, over) == {
        "judges": {"j": {"backend": "transformers", "model": "m"}},
        "clip": {"model": {"backend": "sim"}, "margin": 0.0},
    }


def test_no_way_back_without_the_default_snapshot_is_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "params.yaml").write_text("base: {profile: paper}\n")
    (tmp_path / "profiles").mkdir()
    result = CliRunner().invoke(main, ["profile", "default"])
    assert result.exit_code == 1 and "no way back to the default" in result.output


def test_held_out_profile_renders_the_held_out_seeds_for_every_unit(tmp_path, monkeypatch):
    """App. C.3: the held_out profile adds the held-out seeds to the construction render (every
    unit drawn on them), tells select which they are, and keeps evaluate on the selection
    seeds; switching back to the default restores params.yaml byte for byte."""
    from tests.helpers.paths import REPO_ROOT

    monkeypatch.chdir(tmp_path)
    params = yaml.safe_load(_switch_copy(tmp_path, ["held_out"]))
    held = params["select"]["held_out_seeds"]
    assert held == [3042, 4042, 5042]
    assert params["render"]["seeds"] == [42, 1042, 2042, *held]
    assert params["evaluate"]["seeds"] == [42, 1042, 2042]
    assert not set(held) & set(params["evaluate"]["seeds"])
    assert params["base"]["profile"] == "held_out"
    back = _switch_copy(tmp_path, ["held_out", "default"])
    assert back == (REPO_ROOT / "params.yaml").read_text(encoding="utf-8")
