"""Loading and validating UNITS / JUDGEMENTS: ids as strings, rejects, invalid rows, duplicates."""

from __future__ import annotations

import pandas as pd
import pytest

from implicit_bench.analysis.load import load_tables, rubric_fractional
from implicit_bench.errors import InputError
from implicit_bench.protocol.tables import IMAGE_INDEX, UNITS
from implicit_bench.protocol.tables.judgements import check_judgements
from tests.helpers.analysis_fixtures import units

HEADER = "unit_id,variant,seed,config,judge,task,value,valid\n"


def _units_csv(path):
    u = units({"007": "gender", "12": "Race_color"})
    u.loc[0, "relation"] = "nan"
    u.to_csv(path, index=False)
    return path


def test_units_ids_stay_strings_and_types_normalised(tmp_path):
    u, rejects = UNITS.check(_units_csv(tmp_path / "u.csv"))
    assert u["unit_id"].tolist() == ["007", "12"]  # not 7, not 12.0
    assert u["bias_type"].tolist() == ["gender", "race-color"]
    assert u["relation"].isna().all()  # "nan" is absent, never the string
    assert len(rejects) == 0


def test_units_bad_rows(tmp_path):
    u = units({"a": "gender", "b": "astrology", "c": "race", "d": "race"})
    u.loc[2, "head"] = ""
    u = pd.concat([u, u.iloc[[3]]])  # "d" twice
    u.to_csv(tmp_path / "u.csv", index=False)
    good, rejects = UNITS.check(tmp_path / "u.csv")
    assert good["unit_id"].tolist() == ["a"]
    r = rejects.set_index("row")
    assert r.at[2, "field"] == "bias_type" and "astrology" in r.at[2, "reason"]
    assert r.at[3, "field"] == "head" and r.at[3, "reason"] == "empty"
    assert set(rejects.loc[rejects["field"] == "unit_id", "row"]) == {4, 5}
    assert (rejects["file"] == str(tmp_path / "u.csv")).all()
    with pytest.raises(InputError) as exc:
        UNITS.check(tmp_path / "u.csv", on_bad_row="error")
    assert exc.value.row == 2 and exc.value.field == "bias_type" and "u.csv" in str(exc.value)


def test_judgement_bad_rows_name_file_row_field(tmp_path):
    u, _ = UNITS.check(_units_csv(tmp_path / "u.csv"))
    (tmp_path / "j.csv").write_text(
        HEADER
        + "007,neutral,42,gen,A,rubric,4,true\n"  # row 1 ok
        + "007,neutral,1042,gen,A,rubric,7,true\n"  # row 2 score out of range
        + "007,neutral,42,gen,A,blind,A,true\n"  # row 3 option letter
        + "007,sideways,42,gen,A,blind,s,true\n"  # row 4 unknown variant
        + "999,neutral,42,gen,A,blind,s,true\n"  # row 5 unknown unit
        + "007,neutral,x,gen,A,blind,s,true\n"  # row 6 bad seed
        + "007,neutral,42,gen,A,alignment,maybe,true\n"  # row 7 bad alignment
        + "007,neutral,2042,gen,A,rubric,3,false\n"  # row 8 invalid but value set
        + "007,neutral,2042,gen,A,blind,,false\n"  # row 9 invalid answer: kept as missing
        + "12,stereotype,42,gen,A,clip_lean,0.1,true\n"  # row 10 clip_lean on a non-neutral image
        + "12,neutral,42,gen,A,clip_lean,-0.25,true\n"  # row 11 ok
        + "12,neutral,42,gen,A,rubric,2.5,true\n"  # row 12 ok: a mean of repeated judgements
        + "12,neutral,1042,gen,A,rubric,-0.5,true\n"  # row 13 below the scale
        + "12,neutral,1042,gen,A,alignment,True,\n"  # row 14 ok: blank valid = has a value
    )
    j, rejects, dups = check_judgements([tmp_path / "j.csv"], u)
    r = rejects.set_index("row")
    assert sorted(r.index) == [2, 3, 4, 5, 6, 7, 8, 10, 13]
    assert r.at[2, "field"] == "value" and "number in 0..5" in r.at[2, "reason"]
    assert r.at[13, "field"] == "value" and "number in 0..5" in r.at[13, "reason"]
    assert "option letter" in r.at[3, "reason"]
    assert r.at[4, "field"] == "variant"
    assert r.at[5, "field"] == "unit_id" and r.at[5, "unit_id"] == "999"
    assert r.at[6, "field"] == "seed"
    assert r.at[7, "field"] == "value"
    assert "valid is false" in r.at[8, "reason"]
    assert r.at[10, "field"] == "variant"
    assert (rejects["file"] == str(tmp_path / "j.csv")).all()
    assert len(j) == 5 and len(dups) == 0
    assert j.set_index("row").at[12, "score"] == 2.5
    assert rubric_fractional(j) == {
        "rubric_fractional": 1,
        "rubric_fractional_by_judge": {"A": 1},
        "rubric_fractional_parts": [0.5],
    }
    invalid = j[~j["valid"]]
    assert invalid["row"].tolist() == [9] and invalid["value"].isna().all()
    assert j.set_index("row").at[11, "score"] == pytest.approx(-0.25)
    assert j.set_index("row").at[14, "score"] == 1.0
    with pytest.raises(InputError) as exc:
        check_judgements([tmp_path / "j.csv"], u, on_bad_row="error")
    assert (exc.value.row, exc.value.field) == (2, "value")


def test_duplicates_reported_not_averaged(tmp_path):
    u, _ = UNITS.check(_units_csv(tmp_path / "u.csv"))
    (tmp_path / "a.csv").write_text(
        HEADER + "007,neutral,42,gen,A,rubric,4,true\n12,neutral,42,gen,A,rubric,1,true\n"
    )
    pd.DataFrame(
        [
            {
                "unit_id": "007",
                "variant": "neutral",
                "seed": 42,
                "config": "gen",
                "judge": "A",
                "task": "rubric",
                "value": "2",
                "valid": True,
            }
        ]
    ).to_parquet(tmp_path / "b.parquet")
    j, rejects, dups = check_judgements([tmp_path / "a.csv", tmp_path / "b.parquet"], u)
    # the key (007, neutral, 42, gen, A, rubric) occurs in both files: both rows left out
    assert j["unit_id"].tolist() == ["12"]
    assert len(dups) == 1 and dups.iloc[0]["n_rows"] == 2
    assert dups.iloc[0]["rows"] == f"{tmp_path / 'a.csv'}:1;{tmp_path / 'b.parquet'}:1"
    assert len(rejects) == 2 and rejects["reason"].str.contains("duplicate key").all()
    with pytest.raises(InputError) as exc:
        check_judgements([tmp_path / "a.csv", tmp_path / "b.parquet"], u, on_duplicate="error")
    assert exc.value.path == str(tmp_path / "b.parquet") and exc.value.row == 1


def test_missing_column_and_format(tmp_path):
    u, _ = UNITS.check(_units_csv(tmp_path / "u.csv"))
    (tmp_path / "j.csv").write_text("unit_id,variant,seed,config,judge,task\n")
    with pytest.raises(InputError, match="missing column"):
        check_judgements([tmp_path / "j.csv"], u)
    (tmp_path / "j.json").write_text("{}")
    with pytest.raises(InputError, match="expected a .csv or .parquet"):
        check_judgements([tmp_path / "j.json"], u)


def test_parquet_integer_ids_become_strings(tmp_path):
    u = units({"1": "gender"})
    u["unit_id"] = [1]
    u.to_parquet(tmp_path / "u.parquet")
    pd.DataFrame(
        [
            {
                "unit_id": 1,
                "variant": "neutral",
                "seed": 42.0,
                "config": "gen",
                "judge": "A",
                "task": "blind",
                "value": "s",
            }
        ]
    ).to_parquet(tmp_path / "j.parquet")
    t = load_tables(tmp_path / "u.parquet", [tmp_path / "j.parquet"])
    assert t.units["unit_id"].tolist() == ["1"]
    assert t.judgements["unit_id"].tolist() == ["1"] and t.judgements["seed"].tolist() == [42]
    assert t.judgements["valid"].tolist() == [True]  # no valid column: valid = has a value
    s = t.summary()
    assert s["units"] == 1 and s["judgements"] == 1 and s["rejected_rows"] == 0


def test_image_index(tmp_path):
    pd.DataFrame(
        {
            "config": ["g", "g", "g"],
            "unit_id": ["u", "u", "u"],
            "variant": ["neutral"] * 3,
            "seed": [1, 2, 2],
            "status": ["ok", "refused", "refused"],
        }
    ).to_csv(tmp_path / "i.csv", index=False)
    images, rejects = IMAGE_INDEX.check([tmp_path / "i.csv"])
    assert images["seed"].tolist() == [1] and set(rejects["row"]) == {2, 3}


def test_blind_images_asked_under_both_orders(tmp_path):
    u, _ = UNITS.check(_units_csv(tmp_path / "u.csv"))
    (tmp_path / "j.csv").write_text(
        "unit_id,variant,seed,config,judge,task,value,order\n"
        "007,neutral,42,gen,A,blind,s,sa\n"  # row 1: primary (sa) answer of this image
        "007,neutral,42,gen,A,blind,a,as\n"  # row 2: the other order: counted, not analysed
        "007,neutral,1042,gen,A,blind,neither,as\n"  # row 3: asked once: kept whatever its order
        "12,neutral,42,gen,A,blind,s,as\n"  # rows 4-5: same order twice: a duplicate key
        "12,neutral,42,gen,A,blind,a,as\n"
        "12,neutral,1042,gen,A,blind,s,\n"  # rows 6-7: two answers, none under the primary order
        "12,neutral,1042,gen,A,blind,a,as\n"
        "12,neutral,2042,gen,A,blind,s,ab\n"  # row 8: not an order
    )
    j, rejects, dups = check_judgements([tmp_path / "j.csv"], u, primary_order="sa")
    assert sorted(j["row"]) == [1, 3]
    assert j.attrs["secondary_order_rows"] == 1
    assert len(dups) == 1 and dups.iloc[0]["order"] == "as"
    r = rejects.set_index("row")
    assert sorted(r.index) == [4, 5, 6, 7, 8]
    assert "primary order" in r.at[6, "reason"] and r.at[8, "field"] == "order"
    t = load_tables(tmp_path / "u.csv", [tmp_path / "j.csv"], primary_order="as")
    # primary "as": row 2 is the image's answer, row 1 the secondary one; rows 6-7 keep row 7
    assert sorted(t.judgements["row"]) == [2, 3, 7] and t.summary()["secondary_order_rows"] == 2


def test_hash_primary_order_is_the_judge_stage_order(tmp_path):
    from implicit_bench.protocol.schema import blind_order

    u, _ = UNITS.check(_units_csv(tmp_path / "u.csv"))
    lines = ["unit_id,variant,seed,config,judge,task,value,order"]
    for seed in (42, 1042, 2042, 3042):
        lines += [f"007,neutral,{seed},gen,A,blind,s,sa", f"007,neutral,{seed},gen,A,blind,a,as"]
    (tmp_path / "j.csv").write_text("\n".join(lines) + "\n")
    j, rejects, _ = check_judgements([tmp_path / "j.csv"], u, primary_order="hash")
    assert len(rejects) == 0 and len(j) == 4 and j.attrs["secondary_order_rows"] == 4
    for row in j.itertuples():
        assert row.order == blind_order("007", row.seed, "neutral")
        assert row.value == ("s" if row.order == "sa" else "a")


def test_an_empty_table_beside_others_is_no_rows_all_empty_is_an_error(tmp_path):
    """A benchmark phase that asked nothing writes a header-only table: next to another table it
    adds no rows; alone, or with every table empty, it is the one-line error of an empty file."""
    u, _ = UNITS.check(_units_csv(tmp_path / "u.csv"))
    (tmp_path / "a.csv").write_text(HEADER + "007,neutral,42,gen,A,rubric,4,true\n")
    (tmp_path / "empty.csv").write_text(HEADER)
    j, rejects, dups = check_judgements([tmp_path / "a.csv", tmp_path / "empty.csv"], u)
    assert j["unit_id"].tolist() == ["007"] and rejects.empty and dups.empty
    (tmp_path / "empty2.csv").write_text(HEADER)
    for paths in ([tmp_path / "empty.csv"], [tmp_path / "empty.csv", tmp_path / "empty2.csv"]):
        with pytest.raises(InputError, match="a header but no data rows"):
            check_judgements(paths, u)


def test_rows_of_variants_other_stages_read_are_set_aside_and_counted(tmp_path):
    """A subject-only (scene check) or direct-arm row is neither analysed nor rejected: it is
    counted per variant, and the accounting still adds up; an unknown variant is rejected."""
    (tmp_path / "j.csv").write_text(
        HEADER + "007,neutral,42,gen,A,rubric,3,true\n"
        "007,subject,42,gen,A,blind,neither,true\n"
        "007,subject,1042,gen,A,blind,neither,true\n"
        "007,direct_neutral,42,gen,A,rubric,2,true\n"
        "007,no_such_variant,42,gen,A,rubric,2,true\n"
    )
    tables = load_tables(_units_csv(tmp_path / "u.csv"), [tmp_path / "j.csv"])
    assert tables.other_variant_rows == {"direct_neutral": 1, "subject": 2}
    assert len(tables.judgements) == 1 and len(tables.rejects) == 1
    assert tables.rejects.iloc[0]["field"] == "variant"
    entry = tables.accounting()["judgements"]
    assert entry["other_variants"] == 3 and entry["rows_in"] == 5 and entry["conserved"] == 1
    assert tables.summary()["other_variant_rows"] == {"direct_neutral": 1, "subject": 2}
