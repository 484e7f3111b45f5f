"""The authors' release as a benchmark (release/benchmark.py) on a fixture in its layout."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from implicit_bench.errors import InputError
from implicit_bench.release.benchmark import BENCHMARK_COLUMN, benchmark_units
from implicit_bench.tables import UNITS
from tests.release_fixtures import PROMPTS, write_release


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
