"""The authors' release as a benchmark (release/benchmark.py) on a fixture in its layout."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from implicit_bench.cli.plan import plan_command
from implicit_bench.errors import InputError
from implicit_bench.planning.plan import build_plan, format_plan
from implicit_bench.protocol.tables import UNITS
from implicit_bench.release.benchmark import BENCHMARK_COLUMN, benchmark_units
from tests.helpers.release_fixtures import PROMPTS, write_generated_release, write_release


def test_units_from_a_checkout(tmp_path: Path) -> None:
    root = write_release(tmp_path / "IMPLICIT-Bench")
    b = benchmark_units(root)
    assert b.n_units == 2
    assert b.sha256 == hashlib.sha256(PROMPTS.encode()).hexdigest()
    assert b.seeds == {42: 0, 1042: 1, 2042: 2}
    assert b.seed_index(1042) == 1
    u = b.units.set_index("unit_id")
    assert u.loc["a1", "prompt_neutral"] == "a nurse at work"
    assert u.loc["a1", "prompt_stereotype"] == "a woman nurse at work"
    assert u.loc["007", "source"] == "crows_pairs" and u.loc["a1", "source"] == "stereoset"
    assert u.loc["007", "bias_type"] == "race-color"
    assert pd.isna(u.loc["007", "relation"])
    assert set(b.units[BENCHMARK_COLUMN]) == {b.sha256}
    UNITS.write(b.units, tmp_path / "units.parquet")  # the UNITS spec accepts the table
    assert list(UNITS.read(tmp_path / "units.parquet")["unit_id"]) == ["a1", "007"]  # release order


def test_a_zip_download_gives_the_same_benchmark(tmp_path: Path) -> None:
    root = write_release(tmp_path / "IMPLICIT-Bench-main")
    archive = tmp_path / "release.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for f in root.rglob("*"):
            if f.is_file():
                z.write(f, f.relative_to(tmp_path).as_posix())
    a, b = benchmark_units(root), benchmark_units(archive)
    assert a.sha256 == b.sha256
    assert a.units.equals(b.units)


def test_seed_outside_the_release_is_an_error(tmp_path: Path) -> None:
    b = benchmark_units(write_release(tmp_path / "r"))
    with pytest.raises(InputError, match="seed 3042 is not a seed of the release"):
        b.seed_index(3042)


def test_bad_rows_name_file_row_and_field(tmp_path: Path) -> None:
    root = write_release(tmp_path / "r")
    path = root / "data/benchmark_prompts.csv"
    path.write_text(PROMPTS.replace("a woman nurse at work", ""), encoding="utf-8")
    with pytest.raises(InputError, match=r"row 1.*prompt_stereotype.*empty"):
        benchmark_units(root)
    path.write_text(PROMPTS.replace("race-color", "colour"), encoding="utf-8")
    with pytest.raises(InputError, match=r"row 2.*bias_type.*unknown bias type"):
        benchmark_units(root)
    path.unlink()
    with pytest.raises(InputError, match="not a copy of the authors' release"):
        benchmark_units(root)


PLAN_PARAMS = {
    "subset": {"max_units": 5},
    "kg": {"extractor": "llm", "max_pairs": 0},
    "triplets": {"writer": "template"},
    "generators": {
        "old": {"backend": "diffusers", "model": "m"},
        "new": {"backend": "diffusers", "model": "m"},
    },
    "judges": {"j1": {"backend": "transformers", "model": "x"}},
    "render": {"run": ["old"], "seeds": [42, 1042, 2042]},  # construction: skipped
    "judge": {"tasks": {"rubric": {"judges": ["j1"]}}},
    "bench": {
        "generators": {
            "new": {
                "variants": ["neutral", "stereotype", "anti_stereotype", "negated_0_1"],
                "seeds": [42, 1042, 2042],
            }
        },
        "tasks": {"rubric": {"judges": ["j1"], "variants": ["neutral"]}},
    },
}


def test_plan_benchmark_counts_the_release_units(tmp_path: Path) -> None:
    root = write_generated_release(tmp_path / "release", 1831)
    table4 = {**PLAN_PARAMS, "benchmark": {"path": str(root), "variants": ["neutral"]}}
    plans, info = build_plan(table4, tmp_path)
    by = {p.stage: p for p in plans}
    assert info["units"] == 1831 and "benchmark" in info["units_from"]
    assert info["selected"] == 1831
    # construction skipped: no KG extraction, no construction render or judge
    assert not any(p.phase == "construction" for p in plans)
    assert "kg" not in by and "render old" not in by
    assert by["bench_render new"].items == 5493  # 1,831 units x 3 seeds, neutral: Table 4 row
    assert by["bench_judge rubric j1"].items == 5493  # one rubric answer per neutral image
    b = info["benchmark"]
    assert b["seed_index"] == {"42": 0, "1042": 1, "2042": 2}
    assert (b["table4_images_per_generator"], b["all_tables_images_per_generator"]) == (
        5493,
        16479,
    )
    text = format_plan(plans, info)
    assert "Table 4 row (neutral) 5,493 images" in text and b["sha256"] in text
    # no benchmark.variants: the entry's variants the release has prompts for (no negated ones)
    plans, info = build_plan({**PLAN_PARAMS, "benchmark": {"path": str(root)}}, tmp_path)
    assert {p.stage: p for p in plans}["bench_render new"].items == 1831 * 3 * 3
    assert info["benchmark"]["variants"] == {"new": ["neutral", "stereotype", "anti_stereotype"]}


def test_plan_command_benchmark_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_release(tmp_path / "release")
    monkeypatch.chdir(tmp_path)
    bench = {**PLAN_PARAMS["bench"]}
    bench["generators"] = {"new": {"variants": ["neutral"], "seeds": [42, 3042]}}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump({**PLAN_PARAMS, "bench": bench}))
    result = CliRunner().invoke(plan_command, ["--benchmark", str(root)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "units: 2 (benchmark" in result.output and "42 -> 0" in result.output
    assert "seeds the release never used (no paired release judgement): 3042" in result.output
    out = json.loads(CliRunner().invoke(plan_command, ["--benchmark", str(root), "--json"]).output)
    assert [s["stage"] for s in out["stages"]] == ["bench_render new", "bench_judge rubric j1"]
    assert out["stages"][0]["items"] == 2 * 2  # 2 units x 2 seeds, neutral


def test_write_benchmark_units_for_the_benchmark_phase(tmp_path: Path) -> None:
    from implicit_bench.release.benchmark import write_benchmark_units

    root = write_release(tmp_path / "release")
    out = tmp_path / "data/raw/benchmark_units.parquet"
    bench = write_benchmark_units(root, out)
    units = UNITS.read(out)
    assert list(units["unit_id"]) == ["a1", "007"] and set(units[BENCHMARK_COLUMN]) == {
        bench.sha256
    }
    side = json.loads(out.with_suffix(".parquet.json").read_text())
    assert side["benchmark_sha256"] == bench.sha256 and side["units"] == 2
    assert side["seed_index"] == {"42": 0, "1042": 1, "2042": 2}


# ----- the prompts file: a header without a row, a byte that is not UTF-8 -----------------
HEADER = PROMPTS.splitlines()[0] + "\n"


def test_a_header_and_no_row_is_refused_in_one_line(tmp_path, monkeypatch):
    root = write_release(tmp_path / "release")
    prompts = root / "data/benchmark_prompts.csv"
    prompts.write_text(HEADER)
    with pytest.raises(InputError, match="a header and no row: the release holds no unit"):
        benchmark_units(root)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(PLAN_PARAMS))
    result = CliRunner().invoke(plan_command, ["--benchmark", str(root)])
    assert result.exit_code == 1
    (line,) = result.output.strip().splitlines()
    assert line == f"Error: {prompts}: a header and no row: the release holds no unit"


def _with_byte(text: str, before: str, byte: bytes = b"\xe9") -> bytes:
    """``text`` as UTF-8 with ``byte`` put before the first ``before``."""
    data = text.encode()
    at = data.index(before.encode())
    return data[:at] + byte + data[at:]


def test_a_byte_that_is_not_utf8_names_its_row_column_and_offset(tmp_path):
    root = write_release(tmp_path / "release")
    prompts = root / "data/benchmark_prompts.csv"
    data = _with_byte(PROMPTS, "poor Black")  # row 2 (007), prompt_stereotype
    prompts.write_bytes(data)
    offset = data.index(b"\xe9")
    with pytest.raises(InputError) as caught:
        benchmark_units(root)
    assert str(caught.value) == (
        f"{prompts}, row 2, field 'prompt_stereotype': not UTF-8 text (byte 0xe9 at byte "
        f"offset {offset}); save it as UTF-8"
    )
    # a quoted cell across lines still names its CSV row; a BOM does not shift the row
    quoted = PROMPTS.replace("a nurse at work,", '"a nurse\nat work",', 1)
    data = b"\xef\xbb\xbf" + _with_byte(quoted, "at work", b"\xff")
    prompts.write_bytes(data)
    with pytest.raises(InputError, match=r"row 1, field 'prompt_neutral': .*byte 0xff at byte"):
        benchmark_units(root)
    # in the header: no row, said so
    prompts.write_bytes(_with_byte(PROMPTS, "bias_type"))
    with pytest.raises(InputError, match=r"csv: not UTF-8 text \(in the header, byte 0xe9 at"):
        benchmark_units(root)


def test_the_zip_of_a_release_names_the_row_too(tmp_path):
    root = write_release(tmp_path / "release")
    archive = tmp_path / "release.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(
            "IMPLICIT-Bench-main/data/benchmark_prompts.csv", _with_byte(PROMPTS, "a man nurse")
        )
        zf.write(
            root / "data/benchmark_scores.csv", "IMPLICIT-Bench-main/data/benchmark_scores.csv"
        )
    with pytest.raises(
        InputError, match=r"benchmark_prompts.csv, row 1, field 'prompt_anti_stereo"
    ):
        benchmark_units(archive)
