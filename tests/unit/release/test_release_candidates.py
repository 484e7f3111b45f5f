"""Pre-filter CLIP (Table 3), lean by bias type x source (B.4), SD3 kept vs rejected
(release/candidates.py) on a fixture in the release's layout; values worked out by hand."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from implicit_bench.errors import InputError
from implicit_bench.release.candidates import (
    lean_by_source,
    lean_by_source_table,
    prefilter_clip,
    sd3_kept_vs_rejected,
)
from implicit_bench.release.importer import (
    Release,
    import_release,
    read_scores,
    read_units,
    write_imported,
)
from tests.helpers.release_fixtures import write_prefilter, write_release


@pytest.fixture
def release(tmp_path):
    return write_prefilter(write_release(tmp_path / "IMPLICIT-Bench"))


def test_prefilter_clip_all_kept_rejected(release):
    r = Release(release)
    report = prefilter_clip(r, read_units(r), None)
    assert report["rows"] == 13 and report["units"] == 4
    assert report["units_by_source"] == {"crows_pairs": 2, "stereoset": 2}
    assert report["rows_by_seed_index"] == {"0": 4, "1": 4, "2": 4, "3": 1}
    sel = report["groups"]["selection_seeds"]
    # all 12 values: (0.1 - 0.1 + 0.3) + (-0.6) + (0.6) + (-0.6) = -0.3 -> -0.025
    assert sel["all"]["mean"] == pytest.approx(-0.025)
    assert sel["kept"]["mean"] == pytest.approx(0.9 / 6)  # a1 and 007
    assert sel["rejected"]["mean"] == pytest.approx(-0.2)
    assert sel["kept"]["lean_s"] == pytest.approx(4 / 6)  # 0.1, 0.3, 0.4, 0.2 > 0
    every = report["groups"]["all_seeds"]
    assert every["all"]["n"] == 13 and every["all"]["mean"] == pytest.approx(-0.1 / 13)
    assert every["all"]["mean_of_unit_means"] == pytest.approx((0.125 - 0.2 + 0.2 - 0.2) / 4)
    assert report["kept_units_found"] == 2 and report["kept_units_missing"] == 0


def test_prefilter_bad_value_names_the_row(release):
    path = release / "data/pre_filter/crows-pairs/clip_similarities.csv"
    path.write_text(path.read_text().replace("0.4,0.7", "x,0.7"))
    with pytest.raises(InputError, match=r"row 5.*sim_neutral_stereotype.*not a number"):
        prefilter_clip(Release(release), read_units(Release(release)), None)


def test_lean_by_source_splits_bias_type_by_dataset(release):
    r = Release(release)
    units = read_units(r)
    base, _ = read_scores(r)
    report = lean_by_source(base, units, None)
    # qwen dx: a1 (stereoset, profession) 2, 0; 007 (crows, race-color) -3, 0
    assert report["qwen3vl"]["profession"]["stereoset"]["mean"] == pytest.approx(1.0)
    assert report["qwen3vl"]["race-color"]["crows_pairs"]["mean"] == pytest.approx(-1.5)
    # CLIP lean: a1 0.1, -0.25; 007 0, 0.25
    assert report["clip"]["race-color"]["crows_pairs"]["mean"] == pytest.approx(0.125)
    table = lean_by_source_table(report).set_index(["bias_type", "source"])
    assert table.loc[("profession", "stereoset"), "lean_s_qwen3vl"] == pytest.approx(0.5)


def test_sd3_comparison_says_why_it_is_absent(release):
    r = Release(release)
    out = sd3_kept_vs_rejected(r, read_units(r))
    assert out["available"] is False and "kept units only" in out["reason"]
    # an SD3 file scoring a candidate outside the kept set: the comparison is made
    (release / "cache/eval_results/sd3_eval.csv").write_text(
        "case_id,source,target,bias_type,image_type,seed,image_path,score,justification\n"
        "a1,StereoSet,t,b,neutral,0,/x,4,ok\na1,StereoSet,t,b,stereotype,0,/x,5,ok\n"
        "b2,StereoSet,t,b,neutral,0,/x,1,ok\nb2,StereoSet,t,b,neutral,1,/x,2,ok\n"
    )
    out = sd3_kept_vs_rejected(r, read_units(r))
    entry = out["files"]["cache/eval_results/sd3_eval.csv"]
    assert out["available"] is True and entry["units_outside_kept_set"] == 1
    assert (entry["mean_neutral_kept"], entry["mean_neutral_rejected"]) == (4.0, 1.5)
    assert entry["mean_neutral_all"] == pytest.approx(7 / 3, abs=1e-4)


def test_import_writes_candidates_and_tables(release, tmp_path):
    imported = import_release(release)
    assert "data/pre_filter/stereoset/clip_similarities.csv" in imported.manifest["files"]
    out = tmp_path / "out"
    write_imported(imported, out)
    report = json.loads((out / "candidates.json").read_text())
    assert report["prefilter_clip"]["groups"]["selection_seeds"]["all"]["mean"][
        "value"
    ] == pytest.approx(-0.025)
    table = pd.read_csv(out / "tables/table03_clip_prefilter.csv")
    row = table[(table["units"] == "all") & (table["seeds"] == "selection_seeds")].iloc[0]
    assert row["mean_lean_x1000"] == pytest.approx(-25.0)
    assert (out / "tables/lean_by_source.md").exists()
