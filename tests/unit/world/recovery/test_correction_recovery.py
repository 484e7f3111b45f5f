"""The recovery stage's corrected entries: a calibration set answered from the pixels of the
image store by the simulated human rater, corrected rates beside the rendered truth."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from implicit_bench._util.files import write_json, write_table
from implicit_bench.backends.generators import png_bytes
from implicit_bench.protocol.schema import blind_order
from implicit_bench.render.images import ImageStore
from implicit_bench.render.images.store import ImageKey, ImageRecord
from implicit_bench.world.model import load_world
from implicit_bench.world.params import CalibrationWorld, WorldParams
from implicit_bench.world.picture import Shown, draw
from implicit_bench.world.recovery.stage import RowTruth, calibration_entries
from implicit_bench.world.truth import plant, variant_matrix, world_json
from tests.helpers.world_fixtures import world_units

CORE = ("neutral", "stereotype", "anti_stereotype")
LABELS = ("s", "a", "neither")


def test_calibration_entries_read_the_pixels(tmp_path) -> None:
    params = WorldParams(
        generators={"g": {}},
        judges={"j": {}},
        calibration=CalibrationWorld(images=60, rater_error=0.0),
    )
    units = world_units(40)
    truth = plant(units, params)
    world_dir = tmp_path / "world"
    write_table(truth, world_dir / "truth.parquet")
    write_json(world_dir / "world.json", world_json(params))
    rt = RowTruth(load_world(str(world_dir)), {"cfg": "g"})
    rng = np.random.default_rng(0)
    rows = []
    with ImageStore(tmp_path / "images" / "cfg") as store:
        for t in truth.to_dict("records"):
            for variant in CORE:
                p = variant_matrix(pd.DataFrame([t]), variant)[0]
                for seed in (0, 1):
                    shown = int(rng.choice(3, p=p))
                    attribute = (t["shown_s"], t["shown_a"], "")[shown]
                    png = png_bytes(
                        draw(Shown(attribute, "nurse", "male", "young", noise=len(rows)))
                    )
                    record = store.put(
                        ImageRecord(ImageKey("cfg", t["unit_id"], variant, seed), "g", "p", "ok"),
                        png,
                    )
                    # a judge that reads s and a right and calls a third of them 'neither'
                    judged = shown if shown == 2 or rng.random() > 1 / 3 else 2
                    rows.append(
                        {
                            "unit_id": t["unit_id"],
                            "variant": variant,
                            "seed": seed,
                            "config": "cfg",
                            "judge": "J",
                            "task": "blind",
                            "order": blind_order(t["unit_id"], seed, variant),
                            "value": LABELS[judged],
                            "valid": True,
                            "image_sha256": record.sha256,
                            "shown": shown,
                        }
                    )
    judgements = pd.DataFrame(rows)
    ids = units["unit_id"].tolist()
    entries, block = calibration_entries(
        rt,
        judgements,
        config="cfg",
        judge="J",
        unit_ids=ids,
        params=params,
        n_boot=200,
        seed=1,
        images_dir=str(tmp_path / "images"),
        selected=ids[:25],
    )
    # the benchmark's (selected) units get their own corrected rates from the same calibration set
    chosen = [
        e for e in entries if e["group"].startswith("benchmark corrected for judge error (selected")
    ]
    assert len(chosen) == 5
    picked = judgements[
        (judgements["variant"] == "stereotype") & judgements["unit_id"].isin(ids[:25])
    ]
    rendered_sel = variant_matrix(truth.set_index("unit_id").loc[picked["unit_id"]], "stereotype")[
        :, 0
    ].mean()
    assert {e["estimand"]: e for e in chosen}["success_stereotype (corrected)"][
        "truth"
    ] == pytest.approx(rendered_sel)
    entries = [e for e in entries if e not in chosen]
    assert block["items"] == 60 and block["items_per_variant"] == {
        "anti_stereotype": 20,
        "neutral": 20,
        "stereotype": 20,
    }
    assert block["warning"] is None
    # the rater (no error) reads what each picture shows: the s row of the matrix is the judge's
    # (right or neither), never a
    assert (
        block["matrix"]["s"]["a"]["value"] == 0
        and block["matrix"]["neither"]["neither"]["value"] == 1
    )
    by_name = {e["estimand"]: e for e in entries}
    assert set(by_name) == {
        f"{n} (corrected)"
        for n in ("default_rate", "success_stereotype", "success_anti", "gap", "a_to_s")
    }
    neutral = judgements[judgements["variant"] == "neutral"]
    rendered = variant_matrix(truth.set_index("unit_id").loc[neutral["unit_id"]], "neutral")[
        :, 0
    ].mean()
    assert by_name["default_rate (corrected)"]["truth"] == pytest.approx(rendered)
    assert by_name["default_rate (corrected)"]["truth_rendered"] == pytest.approx(rendered)
    # the judged share of s understates the drawn share; the corrected one is close to it
    drawn = (neutral["shown"] == 0).mean()
    judged = (neutral["value"] == "s").mean()
    corrected = by_name["default_rate (corrected)"]["estimate"]["value"]
    assert abs(corrected - drawn) < abs(judged - drawn)
    # no calibration set: no entries
    none = params.model_copy(update={"calibration": CalibrationWorld(images=0)})
    assert calibration_entries(
        rt,
        judgements,
        config="cfg",
        judge="J",
        unit_ids=ids,
        params=none,
        n_boot=200,
        seed=1,
        images_dir=str(tmp_path / "images"),
    ) == ([], None)


def test_report_recovery_table_names_the_calibration_set() -> None:
    from implicit_bench.report.stage import recovery_table

    entry = {
        "group": "benchmark corrected for judge error (all planned units, primary blind judge)",
        "estimand": "gap (corrected)",
        "truth": 0.33,
        "truth_rendered": 0.33,
        "covered": True,
        "estimate": {"value": 0.32, "ci": [0.27, 0.37], "n": 60, "level": 0.95},
    }
    matrix = {
        c: {
            d: {"value": 0.9 if c == d else 0.05, "ci": None, "n": 200, "level": 0.95}
            for d in LABELS
        }
        for c in LABELS
    }
    html = recovery_table(
        {
            "estimands": [entry],
            "summary": {"covered": 1, "with_interval": 1},
            "truth": "t",
            "calibration": {
                "judge": "qwen3vl",
                "items": 600,
                "rater_error": 0.005,
                "matrix": matrix,
                "condition_number": 1.2,
                "warning": None,
            },
        }
    )
    assert (
        'id="calibration"' in html and "600 calibration images" in html and "s-&gt;s 0.900" in html
    )
    assert "gap (corrected)" in html and "[0.270, 0.370]" in html
    warned = recovery_table(
        {
            "estimands": [entry],
            "calibration": {
                "items": 30,
                "matrix": matrix,
                "condition_number": None,
                "warning": "ill-conditioned",
            },
        }
    )
    assert "<strong>ill-conditioned</strong>" in warned
    assert 'id="calibration"' not in recovery_table({"estimands": [entry]})


def test_report_recovery_table_shows_not_estimable_rows_as_na_with_the_reason() -> None:
    """A row without an estimate (CA_q, MGBI on 3 images a scene) reads "n/a" and says why; no
    "–" or 0.000 [0.000, 0.000] stands in for it."""
    from implicit_bench.report.stage import recovery_table

    entry = {
        "group": "diversity",
        "estimand": "MGBI",
        "truth": 0.536,
        "estimate": {"value": None, "ci": None, "n": None, "level": None},
        "covered": None,
        "note": "not estimable from the images per scene of this run",
    }
    html = recovery_table({"estimands": [entry]})
    row = html[html.index("<th>MGBI</th>") :]
    row = row[: row.index("</tr>")]
    assert row.count("<td>n/a</td>") == 4  # truth (perfect judge), estimate, interval, covers
    assert "not estimable from the images per scene of this run" in row
    assert "0.000" not in row and "–" not in row
