"""Render stages stop on failures: every item failed, or more than ``max_failure_rate``, is a
non-zero exit with the first reason; a deterministic error is not tried again."""

from __future__ import annotations

import pytest

from implicit_bench.backends.generators import validate_config
from implicit_bench.backends.generators.base import RenderResult
from implicit_bench.errors import InputError
from implicit_bench.render import stage as render_stage
from implicit_bench.render.params import RenderParams
from implicit_bench.runtime.execution import ExecutorConfig, WorkItem, run_items
from implicit_bench.runtime.failures import LLMUnavailableError
from tests.helpers.render_fixtures import tiny_config, units_frame


def _params(tiny_generator_dir, max_failure_rate: float = 0.5) -> RenderParams:
    return RenderParams(
        configs={"tiny": validate_config(tiny_config(tiny_generator_dir))},
        seeds=[42],
        variants=["neutral"],
        max_failure_rate=max_failure_rate,
        executor=ExecutorConfig(max_attempts=3, progress=False),
    )


def _failing_worker(calls: list[str], fail_units: set[str], exc: type[Exception]):
    def factory(_cfg):
        def generate(requests):
            calls.extend(r.item_id for r in requests)
            unit = requests[0].item_id.split("/")[1]
            if unit in fail_units:
                if exc is InputError:
                    raise InputError("render request", requests[0].item_id, "unit_id", "unknown")
                raise exc("the server is busy")
            return [RenderResult.refused("a refusal is an answer") for _ in requests]

        return generate

    return factory


def test_every_item_failing_is_an_error_with_the_first_reason(
    tiny_generator_dir, tmp_path, monkeypatch
):
    calls: list[str] = []
    units = units_frame()
    all_units = set(units["unit_id"])
    monkeypatch.setattr(
        render_stage, "generate_worker", _failing_worker(calls, all_units, InputError)
    )
    params = _params(tiny_generator_dir)
    with pytest.raises(LLMUnavailableError) as err:
        render_stage.render_config("tiny", params.configs["tiny"], units, tmp_path / "tiny", params)
    message = str(err.value)
    assert message.startswith(f"render tiny: all {len(units)} render calls failed")
    assert "first error: deterministic: InputError" in message and "field 'unit_id'" in message
    # a deterministic error is tried once per item, not max_attempts (3) times
    assert len(calls) == len(units)


def test_a_share_above_the_rate_fails_and_one_below_passes(
    tiny_generator_dir, tmp_path, monkeypatch
):
    units = units_frame()  # 4 units, one neutral image each
    failing = set(units["unit_id"][:2])  # 2 of 4 = 0.5
    calls: list[str] = []
    monkeypatch.setattr(
        render_stage, "generate_worker", _failing_worker(calls, failing, InputError)
    )
    params = _params(tiny_generator_dir, max_failure_rate=0.25)
    with pytest.raises(LLMUnavailableError, match=r"render tiny: 2 of 4 render calls failed"):
        render_stage.render_config("tiny", params.configs["tiny"], units, tmp_path / "a", params)
    params = _params(tiny_generator_dir, max_failure_rate=0.5)  # 2 of 4 is not above 0.5
    result = render_stage.render_config(
        "tiny", params.configs["tiny"], units, tmp_path / "b", params
    )
    assert result["by_status"] == {"ok": 0, "refused": 2, "failed": 2}


def test_transient_errors_are_retried_and_deterministic_ones_are_not():
    seen: dict[str, int] = {}

    def make_worker():
        def work(payload):
            seen[payload] = seen.get(payload, 0) + 1
            if payload == "bad":
                raise InputError("units.parquet", 3, "unit_id", "not a unit")
            raise RuntimeError("connection reset")

        return work

    outcomes = {}
    run_items(
        [WorkItem("a", "bad"), WorkItem("b", "flaky")],
        make_worker,
        ExecutorConfig(max_attempts=3, progress=False),
        lambda o: outcomes.__setitem__(o.item.id, o),
    )
    assert seen == {"bad": 1, "flaky": 3}
    assert outcomes["a"].attempts == 1 and outcomes["a"].error.startswith("deterministic: ")
    assert outcomes["b"].attempts == 3 and outcomes["b"].error.startswith("RuntimeError")


def test_a_file_level_input_error_is_retried():
    """A cache locked by another process (an InputError about the whole file) may pass."""
    from implicit_bench.runtime.execution import is_deterministic

    assert not is_deterministic(InputError("cache.sqlite", None, None, "database is locked"))
    assert is_deterministic(InputError("render request", "x/u/neutral/42", "unit_id", "unknown"))


def test_no_store_to_render_still_writes_the_output_folder(tiny_generator_dir, tmp_path):
    """`render.run: []` (a run on a fixed unit set, `--stages all`): DVC finds its output."""
    import json

    params = _params(tiny_generator_dir).model_copy(update={"run": []})
    assert render_stage.render_all(params, units_frame(), tmp_path / "images") == {}
    manifest = tmp_path / "images" / render_stage.STORES_MANIFEST
    assert json.loads(manifest.read_text()) == {"stores": []}
