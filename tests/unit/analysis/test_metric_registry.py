"""The metric registry: evaluate() as a loop, selection by params, and the documented worked
example "Adding a metric" (docs/extending.md) performed step by step."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from implicit_bench.analysis.context import EvalContext
from implicit_bench.analysis.load import load_tables
from implicit_bench.analysis.metrics import (
    METRICS,
    MetricSpec,
    run_metrics,
    selected_metrics,
)
from implicit_bench.analysis.params import EvaluateParams
from implicit_bench.analysis.stage import evaluate
from implicit_bench.errors import ConfigError
from implicit_bench.protocol.estimate import Estimate
from tests.helpers.analysis_fixtures import BLIND_A, rows, units
from tests.helpers.paths import REPO_ROOT

TYPES = {"u1": "gender", "u2": "gender", "u3": "race"}
# neutral requests per unit (3 seeds): u1 refused once, u2 never, u3 twice (and one failure);
# the stereotype refusal of u2 is not a neutral request
STATUS = {
    "u1": ["refused", "ok", "ok"],
    "u2": ["ok", "ok", "ok"],
    "u3": ["refused", "refused", "failed"],
}


@pytest.fixture()
def tables(tmp_path):
    units(TYPES).to_csv(tmp_path / "u.csv", index=False)
    blind = {u: BLIND_A[u] for u in TYPES}
    pd.DataFrame(rows("gen", "A", "blind", blind)).to_csv(tmp_path / "j.csv", index=False)
    index = [
        {"config": "gen", "unit_id": u, "variant": "neutral", "seed": seed, "status": st}
        for u, statuses in STATUS.items()
        for seed, st in zip((42, 1042, 2042), statuses, strict=True)
    ]
    index.append(
        {"config": "gen", "unit_id": "u2", "variant": "stereotype", "seed": 42, "status": "refused"}
    )
    pd.DataFrame(index).to_csv(tmp_path / "index.csv", index=False)
    return load_tables(tmp_path / "u.csv", [tmp_path / "j.csv"], [tmp_path / "index.csv"])


def _params(**kw) -> EvaluateParams:
    return EvaluateParams(bootstrap={"n": 2000, "seed": 1}, **kw)


def _check_refusal_rate(rate: dict) -> None:
    gen = rate["gen"]
    assert list(gen) == ["race", "gender", "_all"]  # schema.BIAS_TYPES order, then pooled
    # gender: u1 1 + u2 0 refused of 3 + 3 neutral requests = 1/6; race: u3 2 of 3; all: 3 of 9
    gender = Estimate.from_json(gen["gender"])
    assert gender.value == pytest.approx(1 / 6) and gender.n == 2 and gender.level == 0.95
    # two units: a resample is [u1,u1] (2/6, p 1/4), [u2,u2] (0, p 1/4) or mixed (1/6, p 1/2);
    # each extreme holds about 25 % > 2.5 % of 2,000 draws: the 95 % interval is [0, 1/3]
    assert gender.ci == pytest.approx((0.0, 1 / 3))
    # one unit: every resample is u3, a degenerate interval at the estimate
    assert Estimate.from_json(gen["race"]).to_json() == {
        "value": pytest.approx(2 / 3),
        "ci": pytest.approx([2 / 3, 2 / 3]),
        "n": 1,
        "level": 0.95,
    }
    assert Estimate.from_json(gen["_all"]).value == pytest.approx(3 / 9) and gen["_all"]["n"] == 3


def _documented_steps() -> tuple[str, str]:
    """The two code blocks of docs/extending.md, "Adding a metric": module, registry line."""
    text = (REPO_ROOT / "docs" / "extending.md").read_text(encoding="utf-8")
    section = text[text.index("### Adding a metric") :]
    section = section[: section.index("\n## ", 1)] if "\n## " in section[1:] else section
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 2, (
        "the worked example has two code blocks: the module and the registry line"
    )
    return blocks[0], blocks[1].strip()


def test_worked_example_of_the_docs(tables, tmp_path, monkeypatch):
    module_text, line = _documented_steps()
    # the documented code is the code in the repository (the docs do not rot)
    real = (REPO_ROOT / "src/implicit_bench/analysis/refusal_rate.py").read_text(encoding="utf-8")
    assert (
        real.endswith(module_text)
        and line in (REPO_ROOT / "src/implicit_bench/analysis/metrics.py").read_text()
    )
    name, target = re.fullmatch(r'"(\w+)": MetricSpec\("([\w.]+:\w+)"\),', line).groups()
    # step 1: the module, as a new file (here outside the package, under another name)
    (tmp_path / "my_refusals.py").write_text(module_text, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    # step 2: the registry line (the copy's target points at the new file), at the end; the
    # registry is restored in its own order afterwards (monkeypatch's undo of a delete re-adds
    # the key at the end, which would run refusal_rate after the leaderboard in later tests)
    saved = list(METRICS.items())
    try:
        del METRICS[name]
        METRICS[name] = MetricSpec(
            target.replace("implicit_bench.analysis.refusal_rate", "my_refusals")
        )
        ev = evaluate(tables, tables.units, _params())
    finally:
        METRICS.clear()
        METRICS.update(saved)
    _check_refusal_rate(ev.benchmark[name])
    assert list(ev.benchmark)[-3:] == [
        name,
        "diagnostic_types",
        "bootstrap",
    ]  # its place: the registry's end


def test_registered_refusal_rate_runs_with_every_evaluation(tables):
    ev = evaluate(tables, tables.units, _params())
    _check_refusal_rate(ev.benchmark["refusal_rate"])
    # no image index: an empty table, not an error
    tables.images = None
    assert (
        evaluate(tables, tables.units, _params(metrics=["refusal_rate"])).benchmark["refusal_rate"]
        == {}
    )


def test_params_select_metrics_with_what_they_require(tables):
    assert selected_metrics(["headline"]) == ["blind_rates", "headline"]
    assert selected_metrics(None) == list(METRICS)
    ev = evaluate(tables, tables.units, _params(metrics=["headline"]))
    assert list(ev.benchmark) == [
        "config",
        "primary_judge",
        "blind_judges",
        "units",
        "seeds",
        "n_seeds",
        "judges",
        "default_rate",
        "success_stereotype",
        "success_anti",
        "gap",
        "a_to_s",
        "label_shares",
        "by_default_strength",
        "by_bias_type",
        "diagnostic_types",
        "bootstrap",
    ]
    assert list(ev.lean) == ["bootstrap"] and set(ev.tables) == {
        "benchmark_summary",
        "table21_label_shares",
        "by_bias_type",
    }
    full = evaluate(tables, tables.units, _params())
    assert (
        ev.benchmark["default_rate"] == full.benchmark["default_rate"]
    )  # streams per unit set: same draws
    with pytest.raises(ConfigError, match="unknown metric"):
        selected_metrics(["nope"])


def test_a_key_written_twice_is_an_error(tables, monkeypatch):
    monkeypatch.setitem(
        METRICS, "again", MetricSpec("implicit_bench.analysis.builtin_metrics:by_config")
    )
    ctx = EvalContext.build(tables, tables.units, _params())
    with pytest.raises(ConfigError, match="'by_config'"):
        run_metrics(ctx, ["by_config", "again"])
