"""The judge-task registry (YAML files + answer kinds) and the debias-method registry:
discovery, validation on load, and the params checks that read them."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from implicit_bench.backends.judges.params import JudgeStageParams
from implicit_bench.debias.configs import TABLE_27, ConfigSpec
from implicit_bench.debias.methods import METHODS, get_method
from implicit_bench.errors import ConfigError
from implicit_bench.protocol.answer_kinds import AnswerKind, get_kind, kind_names
from implicit_bench.protocol.judge_tasks import TaskRegistry, builtin_folder, load_task, task_names

YES_NO = (
    "name: {name}\nsource: test\nprompt: 'Is it? {{\"{key}\": true | false}}'\n"
    "answer: {{key: {key}, kind: {kind}, allowed: [true, false]}}\n"
)


def _folder(tmp_path: Path, **files: str) -> Path:
    folder = tmp_path / "tasks"
    folder.mkdir(parents=True, exist_ok=True)
    for stem, text in files.items():
        (folder / f"{stem}.yaml").write_text(text, encoding="utf-8")
    return folder


def test_registry_finds_every_task_file_and_no_list_elsewhere():
    names = task_names()
    stems = sorted(p.stem for p in builtin_folder().glob("*.yaml"))
    assert set(names) == set(stems) - {"blind_cyclic"}  # a prompt of blind, not a task
    assert {"rubric", "blind", "alignment", "clip_lean", "single_person"} <= set(names)
    assert (
        load_task("blind").option_order
        and TaskRegistry([builtin_folder()]).cyclic("blind").name == "blind"
    )
    assert not load_task("clip_lean").asked and load_task("clip_lean").producer == "clip"
    with pytest.raises(ConfigError, match="unknown judge task 'nope'"):
        load_task("nope")


def test_registry_rejects_inconsistent_folders(tmp_path: Path):
    with pytest.raises(ConfigError, match="a task's file is <name>.yaml"):
        TaskRegistry(
            [_folder(tmp_path, other=YES_NO.format(name="screen", key="ok", kind="boolean"))]
        )
    with pytest.raises(ConfigError, match="unknown answer kind 'likert'"):
        TaskRegistry(
            [_folder(tmp_path / "b", screen=YES_NO.format(name="screen", key="ok", kind="likert"))]
        )
    with pytest.raises(ConfigError, match="also in"):  # one name, two folders
        TaskRegistry(
            [
                builtin_folder(),
                _folder(
                    tmp_path / "c", rubric=YES_NO.format(name="rubric", key="ok", kind="boolean")
                ),
            ]
        )
    extra = TaskRegistry(
        [
            builtin_folder(),
            _folder(tmp_path / "d", screen=YES_NO.format(name="screen", key="ok", kind="boolean")),
        ]
    )
    assert "screen" in extra.names() and extra.get("screen").parse('{"ok": "TRUE"}').answer is True


class Percent(AnswerKind):
    """A kind of one's own, named in a task YAML as "module:Class"."""

    name = "percent"
    json_type = "integer"

    def is_value(self, value):
        return type(value) is int and 0 <= value <= 100

    def normalise(self, value, answer):
        if isinstance(value, str) and value.strip().endswith("%"):
            value = int(value.strip()[:-1])
        if value in answer.allowed:
            return value, False
        raise ValueError(f"{value!r} is not a percentage")


def test_a_kind_of_ones_own_is_named_by_module_and_class(tmp_path: Path):
    spec = (
        "name: share\nsource: test\nprompt: 'How much? {\"share\": <0-100>}'\n"
        "answer: {key: share, kind: "
        "'test_task_method_registries:Percent', allowed: [0, "
        "50, 100]}\n"
    )
    task = TaskRegistry([_folder(tmp_path, share=spec)]).get("share")
    assert task.parse('{"share": "50%"}').answer == 50 and task.stored_value(50) == "50"
    assert not task.parse('{"share": 7}').valid
    assert (
        "percent" not in kind_names()
        and type(get_kind("test_task_method_registries:Percent")).__name__ == "Percent"
    )
    with pytest.raises(ConfigError, match="cannot be imported"):
        get_kind("tests.nowhere:Kind")


def test_answer_kinds_check_stored_values():
    values = pd.Series(["true", "0", "maybe", "YES"])
    problems, score = load_task("single_person").kind.check_stored(
        values, load_task("single_person")
    )
    ((bad, reason),) = problems
    assert (
        bad.tolist() == [False, False, True, False]
        and "single_person value must be true or false" in reason[2]
    )
    assert score.tolist()[:2] == [1.0, 0.0] and score.tolist()[3] == 1.0
    rubric = load_task("rubric")
    ((bad, _),) = rubric.kind.check_stored(pd.Series(["2.5", "6", "x"]), rubric)[0]
    assert bad.tolist() == [False, True, True]
    blind = load_task("blind")
    problems, _ = blind.kind.check_stored(pd.Series(["s", "A", "neither", "z"]), blind)
    assert [b.tolist() for b, _ in problems] == [
        [False, True, False, False],
        [False, True, False, True],
    ]
    clip = load_task("clip_lean")
    ((bad, reason),) = clip.kind.check_stored(pd.Series(["0.25", "3"]), clip)[0]
    assert bad.tolist() == [False, True] and "cos(N, S) - cos(N, A)" in reason[1]


def test_judge_tasks_params_are_checked_against_the_registry():
    judges = {"j": {"backend": "sim", "model": "sim:judge_a"}}
    assert JudgeStageParams(judges=judges, tasks={"single_person": None}).tasks == {
        "single_person": None
    }
    with pytest.raises(ValueError, match="unknown task"):
        JudgeStageParams(judges=judges, tasks={"photo_realism": None})
    with pytest.raises(ValueError, match="not asked of a judge"):
        JudgeStageParams(judges=judges, tasks={"clip_lean": None})


def test_method_registry_lists_modules_and_validates_each_methods_keys():
    assert {"none", "rewrite", "steer", "suffix"} <= set(METHODS.names())
    assert (
        get_method("steer").reads == "debias.alpha" and get_method("suffix").reads == "debias.seeds"
    )
    flat = {
        "exp": 5,
        "method": "steer",
        "info": "removed",
        "signal": "attributes",
        "reads": "debias.alpha",
    }
    spec = ConfigSpec.model_validate(flat)
    assert (
        spec == TABLE_27["sv_attributes_removed"] and spec.model_dump() == flat
    )  # flat round trip
    assert (spec.info, spec.signal, spec.label) == ("removed", "attributes", "SV attributes")
    assert TABLE_27["unmodified"].info == "none" and TABLE_27["rewrite_own"].label == "Rewrite"
    with pytest.raises(ValueError, match="unknown debias method 'dpo'"):
        ConfigSpec.model_validate({"method": "dpo"})
    with pytest.raises(ValueError, match="method steer"):  # steering needs a unit and a signal
        ConfigSpec.model_validate({"method": "steer", "info": "none", "reads": "debias.alpha"})
    with pytest.raises(ValueError, match="must read 'debias.alpha'"):
        ConfigSpec.model_validate({"method": "steer", "info": "own", "signal": "explicit"})
    with pytest.raises(ValueError, match="method suffix"):  # unknown key of the method
        ConfigSpec.model_validate({"method": "suffix", "suffix": "x", "signal": "explicit"})
    with pytest.raises(ValueError, match="method none"):
        ConfigSpec.model_validate({"method": "none", "info": "own"})
    with pytest.raises(ValueError, match="method rewrite"):  # alpha is the steer method's key
        ConfigSpec.model_validate({"method": "rewrite", "info": "own", "alpha": 1.0})


def test_alpha_goes_to_the_steering_configurations_only():
    """``debias.alpha`` fills in the steer method's own ``alpha`` (a configuration may set its
    own); the other methods' options never carry it; the settings hash follows the strength."""
    from implicit_bench.debias.methods.steer import steering_settings
    from implicit_bench.debias.params import DebiasParams

    steer = {"method": "steer", "info": "own", "reads": "debias.alpha"}
    params = DebiasParams.model_validate(
        {
            "alpha": 1.5,
            "configs": {
                "unmodified": {"method": "none"},
                "rewrite_own": {"method": "rewrite", "info": "own"},
                "sv_a": {**steer, "signal": "attributes"},
                "sv_e": {**steer, "signal": "explicit", "alpha": 0.5},
            },
        }
    )
    configs = params.configs
    assert (configs["sv_a"].options.alpha, configs["sv_e"].options.alpha) == (1.5, 0.5)
    assert "alpha" not in configs["rewrite_own"].options.model_dump()
    assert "alpha" not in configs["unmodified"].options.model_dump()
    assert configs["sv_a"].impl.describe(configs["sv_a"].options)["alpha"] == 1.5
    # the default configurations (Table 27) get debias.alpha too
    assert {s.options.alpha for s in DebiasParams(alpha=3.0).configs.values() if s.signal} == {3.0}
    texts = {"u1": ("a woman", "a man")}
    assert steering_settings("g", configs["sv_a"].options, texts) != steering_settings(
        "g", configs["sv_a"].options.model_copy(update={"alpha": 2.0}), texts
    )
    with pytest.raises(ValueError, match="finite"):
        DebiasParams.model_validate(
            {"configs": {"sv": {**steer, "signal": "attributes", "alpha": float("nan")}}}
        )
