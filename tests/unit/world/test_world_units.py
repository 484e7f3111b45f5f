"""``world.units`` names which units the world plants; it is no part of the world's fingerprint
(data/world/world.json), so a pilot that grows to the whole unit set keeps every image."""

from __future__ import annotations

from implicit_bench.world.params import WorldParams
from implicit_bench.world.truth import plant, world_json
from tests.helpers.render_fixtures import units_frame


def test_the_units_planted_leave_the_world_json_alone():
    a = world_json(WorldParams(units="data/raw/pilot_units.parquet"))
    b = world_json(WorldParams(units="data/raw/benchmark_units.parquet"))
    assert a == b and "units" not in a["params"]


def test_a_units_truth_does_not_depend_on_the_other_units_planted():
    units = units_frame()
    whole = plant(units, WorldParams())
    part = plant(units.iloc[:2], WorldParams())
    key = ["generator", "unit_id"]
    merged = part.merge(whole, on=key, suffixes=("", "_whole"))
    assert len(merged) == len(part)
    for column in ("p_s", "p_a", "p_n", "succ_a"):
        assert (merged[column] == merged[f"{column}_whole"]).all()
