"""``analyze --order`` with ``unit_id,seed`` lines: a sequence over images instead of units,
worked by hand on the shared fixtures (tests/helpers/analysis_fixtures.py)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from click.testing import CliRunner

from implicit_bench.analysis.looks import read_order
from implicit_bench.cli.main import main as cli_main
from tests.helpers.analysis_fixtures import (
    BLIND_TYPES,
    SEEDS,
    analyze_in_order,
    blind_judgements,
    order_inputs,
    rubric_judgements,
    units,
)

EVERY_IMAGE = [(u, s) for u in ("u3", "u1", "u4", "u2") for s in SEEDS]


_analyze = analyze_in_order


def _order(draws) -> str:
    return "".join(f"{u},{s}\n" for u, s in draws)


def test_an_image_order_averages_over_images(tmp_path):
    res = _analyze(tmp_path, _order(EVERY_IMAGE), "1,3,12")
    assert res.exit_code == 0, res.output
    report = json.loads((tmp_path / "out" / "anytime.json").read_text())
    assert report["order"] == {"file": "order.txt", "draw": "image", "units": 12, "judged": 12}
    # default rate of judge A per neutral image: u3 0 0 0, u1 1 1 1, u4 1 1 (one invalid),
    # u2 1 0 0 -> 6 of the 11 images with a valid label (per unit it would be 7/12)
    rate = report["estimands"]["default_rate"]
    assert rate["population_units"] == 11 and rate["population_value"] == round(6 / 11, 10)
    assert [look["estimate"] for look in rate["looks"][:2]] == [0.0, 0.0]  # u3's three images
    assert rate["looks"][-1]["anytime"] == [round(6 / 11, 10)] * 2
    # Table 4's bias score is the mean over every judged neutral image (analysis.generators):
    # judge A's neutral scores u3 0 1 2, u1 4 2 1, u2 3 (invalid) 2, u4 none -> 15 / 8
    bias = report["estimands"]["bias_score/gen"]
    assert bias["population_units"] == 8 and bias["population_value"] == 15 / 8
    assert [look["n"] for look in bias["looks"]] == [1, 3, 8]
    assert bias["looks"][-1]["anytime"] == [15 / 8, 15 / 8]


def test_one_seed_per_unit_is_the_unit_sequence_of_that_seed(tmp_path):
    """Images of one seed only, one per unit: the same values (so the same intervals) as the
    unit order over judgements of that seed alone."""
    seed = SEEDS[0]
    images = _analyze(tmp_path / "i", _order((u, seed) for u in ("u3", "u1", "u4", "u2")), "2,4")
    assert images.exit_code == 0, images.output
    one = tmp_path / "u"
    one.mkdir()
    units(BLIND_TYPES).to_csv(one / "units.csv", index=False)
    j = pd.concat([blind_judgements(), rubric_judgements()], ignore_index=True)
    j[j["seed"] == seed].to_parquet(one / "judgements.parquet")
    (one / "order.txt").write_text("u3\nu1\nu4\nu2\n")
    args = ["--units", str(one / "units.csv"), "--judgements", str(one / "judgements.parquet")]
    args += ["--out", str(one / "out"), "--bootstrap-n", "20", "--looks", "2,4"]
    done = CliRunner().invoke(cli_main, ["analyze", *args, "--order", str(one / "order.txt")])
    assert done.exit_code == 0, done.output
    a = json.loads((tmp_path / "i" / "out" / "anytime.json").read_text())["estimands"]
    b = json.loads((one / "out" / "anytime.json").read_text())["estimands"]
    assert a.keys() == b.keys()
    for name in a:
        assert a[name]["looks"] == b[name]["looks"], name


def test_image_order_errors_name_file_and_row(tmp_path):
    (tmp_path / "o.txt").write_text(f"u1,{SEEDS[0]}\nu2\n")
    msg = ""
    try:
        read_order(tmp_path / "o.txt", {"u1", "u2"})
    except Exception as exc:  # noqa: BLE001 - the message is what is checked
        msg = str(exc)
    assert "o.txt, row 2, field 'unit_id'" in msg and "images (unit_id,seed)" in msg
    res = _analyze(tmp_path / "d", f"u1,{SEEDS[0]}\nu1,{SEEDS[1]}\nu1\t{SEEDS[0]}\n", "1")
    assert res.exit_code != 0 and "Traceback" not in res.output
    assert f"row 3, field 'unit_id': image 'u1' seed {SEEDS[0]} already on row 1" in res.output
    res = _analyze(tmp_path / "s", "u1,first\n", "1")
    assert "row 1, field 'seed'" in res.output and "'unit_id,seed'" in res.output


def test_looks_past_the_judged_images_are_refused(tmp_path):
    res = _analyze(tmp_path, _order([("u1", SEEDS[0]), ("u1", 7), ("u2", SEEDS[0])]), "1,3")
    assert res.exit_code != 0
    assert "reach only the first 1 images of order.txt (image 'u1' seed 7 at position 2" in (
        res.output
    )


def test_read_order_keeps_unit_orders_as_they_were(tmp_path):
    (tmp_path / "o.txt").write_text("u2\nu1\n")
    assert read_order(tmp_path / "o.txt", {"u1", "u2"}) == ["u2", "u1"]
    (tmp_path / "o.txt").write_text(f"u2,{SEEDS[1]}\nu1\t{SEEDS[0]}\n")
    assert read_order(tmp_path / "o.txt", {"u1", "u2"}) == [("u2", SEEDS[1]), ("u1", SEEDS[0])]
    assert np.isscalar(read_order(tmp_path / "o.txt", {"u1", "u2"})[0][1])


def test_a_refused_image_is_reached_without_a_value(tmp_path):
    """An image the generator refused has no judgement; with the image index (--refusals) it
    counts as rendered: the looks go past it and it leaves every estimand's population."""
    draws = [("u1", SEEDS[0]), ("u4", SEEDS[0]), ("u2", SEEDS[0])]
    judged = tmp_path / "j"
    res = _analyze(judged, _order(draws), "3")
    assert res.exit_code == 0, res.output  # u4 has blind rows at that seed, no rubric
    folder = tmp_path / "r"
    u, j = order_inputs(folder)
    frame = pd.read_parquet(j)
    refused = (frame["unit_id"] == "u4") & (frame["seed"] == SEEDS[0])
    frame[~refused].to_parquet(j)
    index = pd.DataFrame(
        [
            {"config": "gen", "unit_id": unit, "variant": v, "seed": seed, "status": status}
            for unit, seed in draws
            for v in ("neutral", "stereotype", "anti_stereotype")
            for status in ["refused" if unit == "u4" else "ok"]
        ]
    )
    index.to_csv(folder / "images.csv", index=False)
    (folder / "order.txt").write_text(_order(draws))
    args = ["analyze", "--units", str(u), "--judgements", str(j), "--out", str(folder / "out")]
    args += ["--order", str(folder / "order.txt"), "--looks", "1,3", "--bootstrap-n", "20"]
    without = CliRunner().invoke(cli_main, args)
    assert without.exit_code != 0
    assert "(image 'u4' seed 42 at position 2 has none)" in without.output
    done = CliRunner().invoke(cli_main, [*args, "--refusals", str(folder / "images.csv")])
    assert done.exit_code == 0, done.output
    report = json.loads((folder / "out" / "anytime.json").read_text())
    assert report["order"]["judged"] == 3
    rate = report["estimands"]["default_rate"]  # u1 s, u2 s at the first seed; u4 refused
    assert [look["n"] for look in rate["looks"]] == [1, 2]
    assert rate["population_units"] == 2 and rate["population_value"] == 1.0
