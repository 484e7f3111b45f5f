"""The Estimate model: JSON form, strict reading, NaN handling."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from pydantic import ValidationError

from implicit_bench.errors import ConfigError
from implicit_bench.protocol.estimate import (
    FIELDS,
    Estimate,
    estimate_json,
    is_estimate,
    json_schema,
    read_estimate,
)
from tests.helpers.paths import REPO_ROOT


def test_json_form_round_trips():
    e = Estimate.of(np.float64(0.25), (np.float64(0.1), 0.4), np.int64(12), 0.95)
    payload = e.to_json()
    assert payload == {"value": 0.25, "ci": [0.1, 0.4], "n": 12, "level": 0.95}
    assert list(payload) == list(FIELDS)
    assert Estimate.from_json(json.loads(json.dumps(payload))) == e
    assert (e.low, e.high) == (0.1, 0.4)


def test_undefined_values_become_null():
    e = Estimate.of(float("nan"), [float("nan"), 1.0], 3, 0.95)
    assert e.to_json() == {"value": None, "ci": None, "n": 3, "level": 0.95}
    assert estimate_json(None) == {"value": None, "ci": None, "n": None, "level": None}


@pytest.mark.parametrize(
    "bad",
    [
        {"value": 1.0, "ci": [0, 2], "n": 3},  # a key missing
        {"value": 1.0, "ci": [0, 2], "n": 3, "level": 0.95, "stream": "x"},  # an extra key
        {"value": 1.0, "ci_low": 0, "ci_high": 2, "n": 3, "level": 0.95},  # another spelling
        {"value": 1.0, "ci": [2, 0], "n": 3, "level": 0.95},  # low > high
        {"value": 1.0, "ci": [0, 2], "n": 3, "level": None},  # an interval without its level
        {"value": 1.0, "ci": [0, 2], "n": 2.5, "level": 0.95},  # n not whole
        {"value": True, "ci": None, "n": 1, "level": None},
        [1.0, [0, 2]],
    ],
)
def test_from_json_accepts_exactly_the_form(bad):
    with pytest.raises(ConfigError):
        Estimate.from_json(bad)


def test_json_schema_is_checked_in():
    """docs/estimate.schema.json is generated from the model (regenerate: ``python -c "import json;
    from implicit_bench.protocol.estimate import json_schema;
    print(json.dumps(json_schema(), indent=2))"``)."""
    schema = json.loads((REPO_ROOT / "docs" / "estimate.schema.json").read_text(encoding="utf-8"))
    assert schema == json_schema()
    assert schema["required"] == list(FIELDS) and schema["additionalProperties"] is False


def test_helpers():
    assert is_estimate({"value": None, "ci": None, "n": None, "level": None})
    assert not is_estimate({"value": 1.0, "ci": None})
    assert read_estimate(None) is None
    pct = Estimate.of(0.5, (0.25, 0.75), 4, 0.95).scaled(100)
    assert pct.to_json() == {"value": 50.0, "ci": [25.0, 75.0], "n": 4, "level": 0.95}
    with pytest.raises(ValidationError):
        pct.value = 3.0  # frozen


BOUND_KEYS = re.compile(
    r"(^|_)(ci|lo|hi|low|high|lower|upper|ci_low|ci_high|ci_lo|ci_hi|interval)$"
)


def _walk(obj, path="$"):
    if isinstance(obj, dict):
        yield path, obj
        for k, v in obj.items():
            yield from _walk(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _walk(v, f"{path}[{i}]")


def test_every_interval_written_by_analyze_is_an_estimate(tmp_path):
    """analyze (evaluate, selection, audits, debias extensions) on synthetic tables: every object
    with an interval is exactly an Estimate, and no other spelling of a bound is written."""
    from click.testing import CliRunner

    from implicit_bench.cli.main import main as cli_main
    from tests.helpers.synthetic_tables import synthetic_judgements, synthetic_units

    u = synthetic_units(16)
    parts = [
        synthetic_judgements(
            u, judges=("qwen3vl",), tasks=("rubric", "alignment"), config=name, seed=i
        )
        for i, name in enumerate(("unmodified", "rewrite_own"))
    ]
    blind = synthetic_judgements(
        u, judges=("qwen3vl", "gpt"), tasks=("blind",), config="unmodified", seed=5
    )
    j = pd.concat([*parts, blind])
    j["order"] = np.where(
        j["task"] == "blind", np.where(np.arange(len(j)) % 2 == 0, "sa", "as"), None
    )
    index = j[j["task"] == "rubric"][["config", "unit_id", "variant", "seed"]].drop_duplicates()
    index["status"] = np.where(np.arange(len(index)) % 7 == 0, "refused", "ok")
    u.to_parquet(tmp_path / "u.parquet")
    j.to_parquet(tmp_path / "j.parquet")
    index.to_parquet(tmp_path / "index.parquet")
    res = CliRunner().invoke(
        cli_main,
        [
            "analyze",
            "--units",
            str(tmp_path / "u.parquet"),
            "--judgements",
            str(tmp_path / "j.parquet"),
            "--refusals",
            str(tmp_path / "index.parquet"),
            "--out",
            str(tmp_path / "out"),
            "--config",
            "unmodified",
            "--bootstrap-n",
            "20",
            "--selection",
            "union",
        ],
    )
    assert res.exit_code == 0, res.output
    files = sorted((tmp_path / "out" / "metrics").glob("*.json"))
    assert {f.stem for f in files} >= {
        "benchmark",
        "lean",
        "selection",
        "judge_audit",
        "negation",
        "diversity",
        "debias",
    }
    estimates = 0
    for f in files:
        for path, obj in _walk(json.loads(f.read_text())):
            if "ci" in obj:
                Estimate.from_json(obj)  # exactly the four keys, valid
                estimates += 1
            stray = [k for k in obj if BOUND_KEYS.search(k) and k != "ci"]
            assert not stray, f"{f.name} {path}: {stray}"
    assert estimates > 100


@pytest.mark.parametrize(
    "bad",
    [
        {"value": 0.5, "ci": [0.4, 0.6], "n": float("-inf"), "level": 0.95},
        {"value": [1], "ci": None, "n": 1, "level": 0.95},
        {"value": 10**400, "ci": None, "n": 1, "level": 0.95},
        {"value": 1.0, "ci": 5, "n": 1, "level": 0.95},
        {"value": 1.0, "ci": None, "n": {}, "level": 0.95},
    ],
)
def test_from_json_of_non_numbers_and_infinite_n_is_a_config_error(bad):
    """Found by tests/unit/report/test_report_input_fuzz.py: these raised OverflowError / TypeError,
    which escape pydantic's validation (no field, no one-line error)."""
    with pytest.raises(ConfigError, match="invalid Estimate"):
        Estimate.from_json(bad)
