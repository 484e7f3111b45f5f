"""A pilot of a fixed unit set (``run --benchmark REL --units N``): each bias type keeps its share,
the order is fixed by the seed, and a larger pilot holds every unit of a smaller one."""

from __future__ import annotations

import json

import pandas as pd

from implicit_bench.bench.pilot import write_pilot_units
from implicit_bench.construction.triplets.subset import stratified_subset
from implicit_bench.protocol.tables import UNITS


def _units(sizes: dict[str, int]) -> pd.DataFrame:
    rows = []
    for bias_type, n in sizes.items():
        for i in range(n):
            rows.append({"unit_id": f"{bias_type}-{i:03d}", "bias_type": bias_type})
    return pd.DataFrame(rows)


def test_proportional_order_keeps_each_share_and_nests():
    units = _units({"gender": 60, "race": 30, "religion": 10})
    small = stratified_subset(units, 10, 42, order="proportional")
    large = stratified_subset(units, 40, 42, order="proportional")
    # systematic allocation: type k of size n holds units at (r + 1/2) / n, so the first 10 on
    # that scale are 6 gender, 3 race, 1 religion (exactly proportional here)
    assert small["bias_type"].value_counts().to_dict() == {"gender": 6, "race": 3, "religion": 1}
    assert large["bias_type"].value_counts().to_dict() == {"gender": 24, "race": 12, "religion": 4}
    assert set(small["unit_id"]) <= set(large["unit_id"])
    again = stratified_subset(units.sample(frac=1, random_state=3), 10, 42, order="proportional")
    assert list(again["unit_id"]) == list(small["unit_id"])  # row order does not matter
    other = stratified_subset(units, 10, 7, order="proportional")
    assert set(other["unit_id"]) != set(small["unit_id"])  # the seed does


def test_every_prefix_is_within_one_unit_of_proportional():
    units = _units({"a": 37, "b": 23, "c": 11, "d": 3})
    shares = units["bias_type"].value_counts(normalize=True)
    previous: set[str] = set()
    for n in range(1, len(units) + 1):
        chosen = stratified_subset(units, n, 42, order="proportional")
        counts = chosen["bias_type"].value_counts()
        for bias_type, share in shares.items():
            assert abs(counts.get(bias_type, 0) - share * n) <= 1, (n, bias_type)
        assert previous <= set(chosen["unit_id"])
        previous = set(chosen["unit_id"])


def test_the_pilot_file_names_its_source(tmp_path):
    from tests.helpers.render_fixtures import units_frame

    source = tmp_path / "units.parquet"
    UNITS.write(units_frame(), source)
    pilot = write_pilot_units(source, 2, 42, str(tmp_path / "pilot.parquet"))
    assert (pilot.n_units, pilot.of_units) == (2, 4)
    assert len(UNITS.read(tmp_path / "pilot.parquet")) == 2
    meta = json.loads((tmp_path / "pilot.parquet.json").read_text())
    assert meta["units"] == 2 and meta["of_units"] == 4 and meta["seed"] == 42
    assert len(meta["source_sha256"]) == 64
