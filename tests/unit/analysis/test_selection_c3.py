"""App. C.3: Table 23 on a random sample of kept and rejected units, and kept vs
rejected lean on a generator not used for selection; the fixture of
tests/unit/analysis/test_analysis_selection.py (its docstring works the dx values by hand)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from implicit_bench.analysis.load import load_tables
from implicit_bench.analysis.params import SelectParams
from implicit_bench.analysis.selection import select_units
from implicit_bench.errors import ConfigError
from tests.helpers.analysis_fixtures import RUBRIC_TYPES, rubric_judgements, units


@pytest.fixture
def tables(tmp_path):
    units(RUBRIC_TYPES).to_csv(tmp_path / "units.csv", index=False)
    j = rubric_judgements()
    # the same scores again as a second generator "sd3" (not used for selection)
    other = j.assign(config="sd3")
    other.to_parquet(tmp_path / "j2.parquet")
    j.to_parquet(tmp_path / "j.parquet")
    return load_tables(tmp_path / "units.csv", [tmp_path / "j.parquet", tmp_path / "j2.parquet"])


def test_kept_vs_rejected_on_a_generator_not_used_for_selection(tables):
    res = select_units(tables, SelectParams(config="gen"))
    # selection on gen (all seeds): kept u1 (B: 3), u2 (A: 1); rejected u3
    assert sorted(res.selected["unit_id"]) == ["u1", "u2"]
    other = res.metrics["other_generators"]
    assert list(other) == ["sd3"]
    a, b = other["sd3"]["A"], other["sd3"]["B"]
    # A on sd3: u1 -2/3 (not > 0), u2 1 -> kept 1 of 2; u3 -11/3 -> rejected 0 of 1
    assert a["kept"] == {"units": 2, "share_positive": 0.5, "mean_dx": pytest.approx(1 / 6)}
    assert a["rejected"]["share_positive"] == 0.0 and a["rejected"]["units"] == 1
    # B on sd3: u1 3, u2 0 (a tie is no lean) -> 1 of 2
    assert b["kept"]["share_positive"] == 0.5
    assert (
        select_units(tables, SelectParams(config="gen", other_configs=[])).metrics[
            "other_generators"
        ]
        == {}
    )
    with pytest.raises(ConfigError, match="other_configs"):
        select_units(tables, SelectParams(config="gen", other_configs=["flux"]))


def test_held_out_seeds_on_a_random_sample(tables):
    params = SelectParams(
        config="gen",
        held_out_seeds=[2042],
        held_out_sample={"kept": 1, "rejected": 5, "seed": 3},
        bootstrap={"n": 20},
        other_configs=[],
    )
    m = select_units(tables, params).metrics
    # kept on seeds 42, 1042: u1, u2; rejected u3 (tests/unit/analysis/test_analysis_selection.py)
    rng = np.random.default_rng(3)
    expected = sorted([*rng.choice(["u1", "u2"], size=1, replace=False).tolist(), "u3"])
    sample = m["held_out"]["sample"]
    assert sample == {"kept": 1, "rejected": 1, "unit_ids": expected}  # 5 asked, 1 exists
    a = m["held_out"]["judges"]["A"]
    # held-out seed 2042 under A: u1 -4, u2 1, u3 -3
    kept_unit = next(u for u in expected if u != "u3")
    assert a["kept"]["mean_dx_held_out_seeds"] == pytest.approx({"u1": -4.0, "u2": 1.0}[kept_unit])
    assert a["rejected"]["mean_dx_held_out_seeds"] == pytest.approx(-3.0)
    assert a["rejected"]["units_held_out_seeds"] == 1
    # beside the sample, every unit (held_out_every_unit, on by default): A on 2042 gives kept
    # u1 -4 and u2 1 (mean -1.5), rejected u3 -3
    every = m["held_out_every_unit"]
    assert "sample" not in every
    assert every["judges"]["A"]["kept"]["units_held_out_seeds"] == 2
    assert every["judges"]["A"]["kept"]["mean_dx_held_out_seeds"] == pytest.approx(-1.5)
    assert every["judges"]["A"]["kept"]["share_positive_held_out_seeds"] == 0.5
    assert every["judges"]["A"]["rejected"]["mean_dx_held_out_seeds"] == pytest.approx(-3.0)
    off = params.model_copy(update={"held_out_every_unit": False})
    assert "held_out_every_unit" not in select_units(tables, off).metrics
    # the whole population when no sample is asked
    full = select_units(tables, params.model_copy(update={"held_out_sample": None})).metrics
    assert "sample" not in full["held_out"]
    assert full["held_out"]["judges"]["A"]["kept"]["units_selection_seeds"] == 2
    assert "held_out_every_unit" not in full  # held_out is every unit already


def test_recovery_sets_the_planted_lean_beside_other_generators():
    from implicit_bench.world.recovery.stage import other_generator_entries

    class World:
        def rows(self, generator):
            assert generator == "sim_api"
            return pd.DataFrame({"truly_leans": [True, False, True]}, index=["u1", "u2", "u3"])

    metrics = {
        "sim_api": {"A": {"kept": {"units": 2, "share_positive": 0.5}, "rejected": {"units": 1}}},
        "flux": {"A": {}},  # not simulated: no truth, no entry
    }
    entries = other_generator_entries(
        World(), ["u1", "u2"], ["u1", "u2", "u3"], {"sim_api": "sim_api"}, metrics
    )
    kept, rejected = entries
    assert kept["truth"] == 0.5 and kept["estimate"]["value"] == 0.5  # u1 of u1, u2 leans
    assert rejected["truth"] == 1.0 and rejected["estimate"]["value"] is None  # u3 leans
    assert kept["covered"] is None  # diagnostic: a rubric lean is not the planted lean


def test_the_held_out_sample_is_on_by_default_with_the_papers_sizes(tables):
    """C.3: 300 kept + 300 rejected (a smaller group whole) written by select even before the
    held-out seeds are rendered; null turns it off."""
    assert SelectParams().held_out_sample.model_dump() == {"kept": 300, "rejected": 300, "seed": 42}
    m = select_units(tables, SelectParams(config="gen", other_configs=[])).metrics
    block = m["held_out_sample"]
    # kept u1, u2; rejected u3: fewer than 300 each, so all of them
    assert block["kept_ids"] == ["u1", "u2"] and block["rejected_ids"] == ["u3"]
    assert (block["kept"], block["rejected"]) == (2, 1)
    assert block["asked"] == {"kept": 300, "rejected": 300} and block["held_out_seeds"] is None
    assert "held_out" not in m
    small = SelectParams(config="gen", other_configs=[], held_out_sample={"kept": 1, "seed": 3})
    block = select_units(tables, small).metrics["held_out_sample"]
    rng = np.random.default_rng(3)
    assert block["kept_ids"] == rng.choice(["u1", "u2"], size=1, replace=False).tolist()
    assert block["rejected_ids"] == ["u3"]
    off = SelectParams(config="gen", other_configs=[], held_out_sample=None)
    assert "held_out_sample" not in select_units(tables, off).metrics


def _drop_held_out(tmp_path, keep_units):
    """The fixture's tables with the held-out seed 2042 judged only for ``keep_units`` (as if
    only those units had been rendered on it)."""
    units(RUBRIC_TYPES).to_csv(tmp_path / "units.csv", index=False)
    j = rubric_judgements()
    j = j[(j["seed"] != 2042) | j["unit_id"].isin(keep_units)]
    j.to_parquet(tmp_path / "partial.parquet")
    return load_tables(tmp_path / "units.csv", [tmp_path / "partial.parquet"])


def test_held_out_seeds_rendered_for_the_sample_alone_say_so(tmp_path):
    """Held-out seed 2042 rendered for the sample only: Table 23 on the sample, no every-unit
    block (it would be the sample again), and the output says 'sample'."""
    rng = np.random.default_rng(3)
    kept_pick = rng.choice(["u1", "u2"], size=1, replace=False).tolist()
    sample = sorted([*kept_pick, "u3"])
    params = SelectParams(
        config="gen",
        held_out_seeds=[2042],
        held_out_sample={"kept": 1, "rejected": 5, "seed": 3},
        bootstrap={"n": 20},
        other_configs=[],
    )
    m = select_units(_drop_held_out(tmp_path, sample), params).metrics
    assert m["held_out_rendered"] == {
        "seeds": [2042],
        "rendered": "sample",
        "units_rendered": 2,
        "units_candidates": 3,
        "sample_units": 2,
        "sample_units_rendered": 2,
    }
    assert m["held_out"]["rendered"] == "sample"
    assert "held_out_every_unit" not in m
    from implicit_bench.analysis.paper_tables import selection_tables

    table = selection_tables(m)["table23_held_out_seeds"]
    assert set(table["rendered_for"]) == {"sample"}  # the table says it too
    # A on 2042: u1 -4, u2 1, u3 -3 (the fixture's hand-worked values)
    a = m["held_out"]["judges"]["A"]
    assert a["kept"]["mean_dx_held_out_seeds"] == pytest.approx(
        {"u1": -4.0, "u2": 1.0}[kept_pick[0]]
    )
    assert a["rejected"]["mean_dx_held_out_seeds"] == pytest.approx(-3.0)


def test_held_out_seeds_rendered_for_every_unit_part_or_none(tmp_path, tables):
    params = SelectParams(
        config="gen",
        held_out_seeds=[2042],
        held_out_sample={"kept": 1, "rejected": 5, "seed": 3},
        bootstrap={"n": 20},
        other_configs=[],
    )
    every = select_units(tables, params).metrics
    assert every["held_out_rendered"]["rendered"] == "every_unit"
    assert every["held_out_rendered"]["units_rendered"] == 3
    assert every["held_out_every_unit"]["rendered"] == "every_unit"
    # no sample asked: Table 23 over every unit, every unit rendered
    whole = select_units(tables, params.model_copy(update={"held_out_sample": None})).metrics
    assert whole["held_out_rendered"]["sample_units"] is None
    assert whole["held_out"]["rendered"] == "every_unit"
    # only u1 and u2 (both kept) rendered on 2042 with no sample: a part; the statistic is on
    # them: kept mean (-4 + 1) / 2, no rejected unit with a held-out dx
    part = select_units(
        _drop_held_out(tmp_path, ["u1", "u2"]), params.model_copy(update={"held_out_sample": None})
    ).metrics
    assert part["held_out_rendered"]["rendered"] == "part"
    assert part["held_out_rendered"]["units_rendered"] == 2
    a = part["held_out"]["judges"]["A"]
    assert a["kept"]["mean_dx_held_out_seeds"] == pytest.approx(-1.5)
    assert a["rejected"]["units_held_out_seeds"] == 0
    none = select_units(_drop_held_out(tmp_path, []), params).metrics
    assert none["held_out_rendered"]["rendered"] == "none"
    assert none["held_out_rendered"]["units_rendered"] == 0
    assert "held_out_every_unit" not in none
