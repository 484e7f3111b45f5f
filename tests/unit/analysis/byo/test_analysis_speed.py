"""The fast statistical kernels give bit-for-bit the results of the straightforward loops they
replace (docs/analysis.md, "Speed"), and ``analyze`` stays free of heavy imports.

Reference implementations below are the code before the speed-up: one flat ``bincount`` for
the multiplicities, one ``boot.ratio`` (two matrix-vector products) per rate.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from implicit_bench.analysis.blind import LabelCounts, label_counts, label_shares, rates
from implicit_bench.analysis.bootstrap import (
    Bootstrap,
    drawn_multiplicities,
    integer_bound,
    multiplicities,
    rank_rows,
)
from implicit_bench.construction.kg.stats import connected_components
from implicit_bench.protocol.schema import BLIND_LABELS, VARIANTS
from implicit_bench.protocol.tables import UNITS
from implicit_bench.protocol.tables.judgements import check_judgements
from tests.helpers.analysis_fixtures import BLIND_TYPES, blind_judgements, units
from tests.helpers.paths import REPO_ROOT

HEAVY = (
    "scipy.stats",
    "scipy.sparse",
    "torch",
    "sklearn",
    "matplotlib",
    "transformers",
    "diffusers",
)


def old_multiplicities(idx: np.ndarray, n_units: int) -> np.ndarray:
    n_boot = idx.shape[0]
    flat = (idx + (np.arange(n_boot, dtype=np.int64) * n_units)[:, None]).ravel()
    return np.bincount(flat, minlength=n_boot * n_units).reshape(n_boot, n_units).astype(float)


def old_rates(c: LabelCounts, pos: np.ndarray, boot: Bootstrap, stream: str) -> dict:
    n = len(pos)

    def ratio(num, den):
        interval, reps = boot.ratio(num[pos], den[pos], stream)
        return interval, interval["value"] if interval["value"] is not None else np.nan, reps

    out = {
        "n_units": n,
        "n_images": {v: int(c.valid[v][pos].sum()) for v in VARIANTS},
        "n_invalid": {v: int(c.invalid[v][pos].sum()) for v in VARIANTS},
    }
    dr, _, _ = ratio(c.label[("neutral", "s")], c.valid["neutral"])
    ss, ss_v, ss_r = ratio(c.label[("stereotype", "s")], c.valid["stereotype"])
    sa, sa_v, sa_r = ratio(c.label[("anti_stereotype", "a")], c.valid["anti_stereotype"])
    out["default_rate"] = dr
    out["neutral_anti_rate"] = ratio(c.label[("neutral", "a")], c.valid["neutral"])[0]
    out["neither_neutral"] = ratio(c.label[("neutral", "neither")], c.valid["neutral"])[0]
    out["success_stereotype"] = ss
    out["success_anti"] = sa
    out["gap"] = boot.interval(ss_v - sa_v, ss_r - sa_r, stream, n)
    out["a_to_s"] = ratio(c.label[("anti_stereotype", "s")], c.valid["anti_stereotype"])[0]
    out["both_succeed"] = ratio(c.both, c.pairs)[0]
    out["n_pairs"] = int(c.pairs[pos].sum())
    return out


def old_label_shares(c: LabelCounts, pos: np.ndarray, boot: Bootstrap, stream: str) -> dict:
    out = {}
    for v in VARIANTS:
        entry = {"n_images": int(c.valid[v][pos].sum()), "n_invalid": int(c.invalid[v][pos].sum())}
        for lab in BLIND_LABELS:
            entry[lab] = boot.ratio(c.label[(v, lab)][pos], c.valid[v][pos], stream)[0]
        out[v] = entry
    return out


@pytest.mark.parametrize("n_units", [0, 1, 4, 170, 1831])
def test_multiplicities_equal_one_flat_bincount(n_units):
    idx = np.random.default_rng(n_units).integers(
        0, max(n_units, 1), size=(1000, n_units), dtype=np.int32
    )
    fast = multiplicities(idx, n_units)
    assert fast.dtype == np.float64 and np.array_equal(fast, old_multiplicities(idx, n_units))
    assert (fast.sum(axis=1) == n_units).all()
    assert np.array_equal(multiplicities(idx, n_units, np.float32), fast)
    boot = Bootstrap(1000, 3)  # the cached draw: the same resamples as the old one-shot bincount
    rng = np.random.default_rng(boot.stream_seed("x"))
    old_idx = rng.integers(0, max(n_units, 1), size=(1000, n_units), dtype=np.int32)
    assert np.array_equal(boot.indices(n_units, "x"), old_idx)
    assert np.array_equal(boot.weights(n_units, "x"), old_multiplicities(old_idx, n_units))


@pytest.mark.parametrize(
    ("n_units", "n_boot"),
    [(0, 5), (1, 1000), (3, 7), (170, 1000), (1831, 1000), (1831, 1), (140_000, 7)],
)
def test_drawn_multiplicities_equal_the_count_of_the_whole_draw(n_units, n_boot):
    """Drawn and counted block by block (one row per block above BLOCK_ELEMENTS units): the
    same multiplicities as counting one whole ``integers`` draw of the same seed."""
    idx = np.random.default_rng(9).integers(
        0, max(n_units, 1), size=(n_boot, n_units), dtype=np.int32
    )
    for dtype in (np.float32, np.float64):
        blocked = drawn_multiplicities(np.random.default_rng(9), n_boot, n_units, dtype)
        assert blocked.dtype == dtype
        assert np.array_equal(blocked, old_multiplicities(idx, n_units))


@pytest.mark.parametrize(("n_units", "n_boot"), [(1831, 1000), (170, 999), (140_000, 7)])
def test_drawn_a_block_ahead_on_a_second_thread_the_same_multiplicities(
    n_units, n_boot, monkeypatch
):
    """Every draw pipelined (the threshold at 0): the same numbers as the whole draw, and the
    worker thread gone afterwards."""
    import threading

    from implicit_bench.analysis import bootstrap

    monkeypatch.setattr(bootstrap, "PIPELINE_ELEMENTS", 0)
    monkeypatch.setattr(bootstrap, "_cpus", lambda: 2)
    idx = np.random.default_rng(4).integers(0, n_units, size=(n_boot, n_units), dtype=np.int32)
    got = drawn_multiplicities(np.random.default_rng(4), n_boot, n_units, np.float32)
    assert np.array_equal(got, old_multiplicities(idx, n_units))
    assert not [t for t in threading.enumerate() if t.name.startswith("bootstrap-draw")]


def test_bootstrap_weights_without_indices_then_indices():
    """A unit set whose multiplicities were counted block by block (no index matrix kept)
    hands out the same indices afterwards, and both agree with the whole draw."""
    boot = Bootstrap(n=300, seed=5)
    n_units = 211
    w32 = boot._weights32(n_units, "s")
    assert "idx" not in boot._cache[("s", n_units)]
    idx = boot.indices(n_units, "s")
    whole = np.random.default_rng(boot.stream_seed("s")).integers(
        0, n_units, size=(300, n_units), dtype=np.int32
    )
    assert np.array_equal(idx, whole)
    assert np.array_equal(w32, old_multiplicities(whole, n_units))
    fresh = Bootstrap(n=300, seed=5)
    fresh.indices(n_units, "s")  # counted from the cached indices this time
    assert np.array_equal(fresh.weights(n_units, "s"), boot.weights(n_units, "s"))


def test_multiplicities_by_hand():
    # two resamples of 3 units: (0, 0, 2) and (1, 2, 2)
    idx = np.array([[0, 0, 2], [1, 2, 2]], dtype=np.int32)
    assert multiplicities(idx, 3).tolist() == [[2.0, 0.0, 1.0], [0.0, 1.0, 2.0]]


def test_sums_equal_one_product_per_column():
    boot = Bootstrap(500, 3)
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 4, size=(300, 7)).astype(float)
    floats = rng.normal(size=(300, 3))
    w = boot.weights(300, "s")
    assert integer_bound(counts) == 3 * 300 and integer_bound(floats) == float("inf")
    big = counts * 2.0**20  # exact in float64 only: sums reach 3 * 300 * 2^20 > 2^24
    for cols in (counts, big, floats, np.column_stack([counts, floats])):
        fast = boot.sums(cols, "s")
        assert all(
            np.array_equal(fast[:, j], w @ np.ascontiguousarray(cols[:, j]))
            for j in range(cols.shape[1])
        )
    assert (
        boot.sums(np.array([[1.0], [2.0], [3.0]]), "t").tolist()
        == (boot.weights(3, "t") @ np.array([1.0, 2.0, 3.0]))[:, None].tolist()
    )


@pytest.fixture
def hand_counts(tmp_path):
    units(BLIND_TYPES).to_csv(tmp_path / "units.csv", index=False)
    blind_judgements().to_csv(tmp_path / "j.csv", index=False)
    uu, _ = UNITS.check(tmp_path / "units.csv")
    j, _, _ = check_judgements([tmp_path / "j.csv"], uu)
    return label_counts(j, "gen", "A", ["u1", "u2", "u3", "u4"])


def test_rates_equal_the_per_rate_loop_on_the_hand_set(hand_counts):
    # the hand-worked values of tests/unit/analysis/test_analysis_blind.py: default rate 6 / 11,
    # gap 9/12 - 7/12
    for pos in (np.arange(4), np.array([0, 2]), np.array([3]), np.array([], dtype=int)):
        fast = rates(hand_counts, pos, Bootstrap(200, 7), "all")
        assert fast == old_rates(hand_counts, pos, Bootstrap(200, 7), "all")
        assert label_shares(hand_counts, pos, Bootstrap(50, 1), "all") == old_label_shares(
            hand_counts, pos, Bootstrap(50, 1), "all"
        )
    r = rates(hand_counts, np.arange(4), Bootstrap(200, 7), "all")
    assert r["default_rate"]["value"] == 6 / 11 and r["gap"]["value"] == 9 / 12 - 7 / 12


def test_rates_equal_the_per_rate_loop_on_a_random_set():
    rng = np.random.default_rng(5)
    n = 400
    valid = {v: rng.integers(0, 4, n).astype(float) for v in VARIANTS}
    label = {(v, lab): np.floor(valid[v] * rng.random(n)) for v in VARIANTS for lab in BLIND_LABELS}
    invalid = {v: rng.integers(0, 2, n).astype(float) for v in VARIANTS}
    pairs = rng.integers(0, 4, n).astype(float)
    c = LabelCounts(
        np.array([f"u{i}" for i in range(n)]),
        valid,
        label,
        invalid,
        pairs,
        np.floor(pairs * rng.random(n)),
    )
    pos = np.flatnonzero(rng.random(n) < 0.6)
    assert rates(c, pos, Bootstrap(300, 9), "r") == old_rates(c, pos, Bootstrap(300, 9), "r")
    assert label_shares(c, pos, Bootstrap(300, 9), "r") == old_label_shares(
        c, pos, Bootstrap(300, 9), "r"
    )


def old_rank_rows(values: np.ndarray, idx: np.ndarray) -> np.ndarray:
    levels, codes = np.unique(values, return_inverse=True)
    n_rows, n_levels = idx.shape[0], len(levels)
    coded = codes.reshape(-1)[idx]
    counts = np.bincount(
        (coded + (np.arange(n_rows) * n_levels)[:, None]).ravel(), minlength=n_rows * n_levels
    )
    counts = counts.reshape(n_rows, n_levels).astype(float)
    average = np.cumsum(counts, axis=1) - counts + (counts + 1) / 2
    return np.take_along_axis(average, coded, axis=1)


def test_rank_rows_equal_the_take_along_axis_version():
    rng = np.random.default_rng(4)
    for n in (1, 2, 7, 500):
        values = rng.integers(0, 4, n) / 3
        idx = rng.integers(0, n, (300, n)).astype(np.int32)
        assert np.array_equal(rank_rows(values, idx), old_rank_rows(values, idx))
    # by hand: values (0.5, 0.1, 0.5) drawn as rows (0, 1, 2) and
    # (2, 2, 1): ties share their mean rank
    assert rank_rows(np.array([0.5, 0.1, 0.5]), np.array([[0, 1, 2], [2, 2, 1]])).tolist() == [
        [2.5, 1.0, 2.5],
        [2.5, 2.5, 1.0],
    ]


def test_connected_components_match_scipy():
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components as scipy_components

    rng = np.random.default_rng(2)
    for n_nodes, n_edges in ((1, 0), (5, 0), (10, 4), (200, 150), (2000, 1900)):
        rows, cols = rng.integers(0, n_nodes, n_edges), rng.integers(0, n_nodes, n_edges)
        count, labels = connected_components(n_nodes, rows, cols)
        graph = coo_matrix((np.ones(n_edges), (rows, cols)), shape=(n_nodes, n_nodes))
        ref_count, ref_labels = scipy_components(graph, directed=False)
        assert count == ref_count
        # the same partition: label pairs map one to one
        assert len(set(zip(labels.tolist(), ref_labels.tolist(), strict=True))) == ref_count
    # by hand: 0-1, 1-2, 3-4 and an isolated 5 -> 3 components
    count, labels = connected_components(6, np.array([0, 1, 3]), np.array([1, 2, 4]))
    assert count == 3 and labels.tolist() == [0, 0, 0, 1, 1, 2]


def test_analyze_imports_no_heavy_module(tmp_path):
    """``implicit-bench analyze`` (CLI, loading, every metric, extensions)
    never imports scipy.stats,
    scipy.sparse, torch, ... (they cost seconds of start-up; docs/analysis.md, "Speed")."""
    from tests.helpers.synthetic_tables import synthetic_judgements, synthetic_units

    u = synthetic_units(24)
    u.to_csv(tmp_path / "units.csv", index=False)
    synthetic_judgements(u).to_csv(tmp_path / "j.csv", index=False)
    script = (
        "import sys\n"
        "from implicit_bench.cli.main import main\n"
        f"args = ['analyze', '--units', {str(tmp_path / 'units.csv')!r}, "
        f"'--judgements', {str(tmp_path / 'j.csv')!r},"
        f" '--out', {str(tmp_path / 'out')!r}, '--bootstrap-n', '50']\n"
        "try:\n    main(args)\nexcept SystemExit:\n    pass\n"
        "import json\n"
        "print(json.dumps(sorted(m for m in sys.modules)))\n"
    )
    # extensions in-process (IMPLICIT_BENCH_ANALYZE_JOBS=1), so
    # their imports land in this sys.modules too
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env={"PYTHONPATH": str(REPO_ROOT / "src"), "PATH": "", "IMPLICIT_BENCH_ANALYZE_JOBS": "1"},
        timeout=120,
    )
    assert (tmp_path / "out" / "metrics" / "benchmark.json").exists(), proc.stderr
    loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    heavy = [m for m in loaded if any(m == h or m.startswith(h + ".") for h in HEAVY)]
    assert heavy == []
    assert pd.read_csv(tmp_path / "out" / "tables" / "benchmark_summary.csv")["units"].tolist() == [
        24,
        24,
    ]


def _tiny_tables(
    tmp_path: Path, tasks: tuple[str, ...] = ("rubric", "blind", "alignment")
) -> tuple[str, str]:
    from tests.helpers.synthetic_tables import synthetic_judgements, synthetic_units

    u = synthetic_units(30)
    u.to_csv(tmp_path / "units.csv", index=False)
    synthetic_judgements(u, judges=("judge-a",), tasks=tasks).to_csv(
        tmp_path / "j.csv", index=False
    )
    return str(tmp_path / "units.csv"), str(tmp_path / "j.csv")


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_extensions_in_a_forked_process_write_the_same_files(tmp_path, monkeypatch):
    """With two CPUs the extensions run in a forked child while the analysis runs; the output
    directory and the summary are those of running them afterwards, in-process."""
    from implicit_bench.analysis.byo import extensions
    from implicit_bench.analysis.byo.core import run_analyze

    units_path, judgements_path = _tiny_tables(tmp_path)
    params = {"bootstrap": {"n": 40}}
    monkeypatch.setattr(extensions, "_cpus", lambda: 2)
    parallel = run_analyze(units_path, [judgements_path], str(tmp_path / "parallel"), params)
    monkeypatch.setenv(extensions.JOBS_ENV, "1")
    serial = run_analyze(units_path, [judgements_path], str(tmp_path / "serial"), params)
    assert parallel == serial and "judges" in serial["extensions"]["audits"]
    assert _files(tmp_path / "parallel") == _files(tmp_path / "serial")
    assert "metrics/judge_audit.json" in _files(tmp_path / "parallel")
    assert [p.name for p in tmp_path.iterdir() if "extensions-" in p.name] == []  # no staging left


def test_a_failing_analysis_stops_the_extensions(tmp_path, monkeypatch):
    """The analysis fails after the extensions started: none of their files reach the output."""
    from implicit_bench.analysis.byo import extensions
    from implicit_bench.analysis.byo.core import run_analyze
    from implicit_bench.errors import ConfigError

    units_path, judgements_path = _tiny_tables(tmp_path, tasks=("blind",))
    monkeypatch.setattr(extensions, "_cpus", lambda: 2)
    with pytest.raises(ConfigError, match="needs rubric judgements"):
        run_analyze(
            units_path,
            [judgements_path],
            str(tmp_path / "out"),
            {"bootstrap": {"n": 40}},
            selection="union",
        )
    assert not (tmp_path / "out" / "metrics" / "judge_audit.json").exists()
    assert [p.name for p in tmp_path.iterdir() if "extensions-" in p.name] == []


def test_no_fork_when_no_extension_has_work(tmp_path, monkeypatch):
    """Rubric rows only (no blind rows, no debiasing runs, no retrieval table): no extension has
    work, so no process is forked, and the output and summary are those of the serial run."""
    import os

    from implicit_bench.analysis.byo import extensions
    from implicit_bench.analysis.byo.core import run_analyze

    units_path, judgements_path = _tiny_tables(tmp_path, tasks=("rubric",))
    params = {"bootstrap": {"n": 40}}
    monkeypatch.setattr(extensions, "_cpus", lambda: 2)

    def no_fork() -> int:
        raise AssertionError("forked although no extension has work")

    monkeypatch.setattr(os, "fork", no_fork)
    quiet = run_analyze(units_path, [judgements_path], str(tmp_path / "quiet"), params)
    monkeypatch.setenv(extensions.JOBS_ENV, "1")
    serial = run_analyze(units_path, [judgements_path], str(tmp_path / "serial"), params)
    assert quiet == serial
    assert quiet["extensions"] == {
        "audits": {"skipped": "no blind judgements"},
        "debias": None,
        "retrieval": None,
    }
    assert _files(tmp_path / "quiet") == _files(tmp_path / "serial")


def test_work_checks_say_which_extension_has_work(tmp_path):
    """Each check answers as its extension would: audits with blind rows, debias with rows of
    the unmodified configuration, retrieval with a table named; an unknown extension (or one
    replaced in a custom registry) always counts as having work."""
    from types import SimpleNamespace

    from implicit_bench.analysis.byo.extensions import EXTENSIONS, any_work

    rows = pd.DataFrame({"task": ["rubric", "alignment"], "config": ["gen", "unmodified"]})
    tables = SimpleNamespace(judgements=rows, secondary=None)
    only = {name: EXTENSIONS[name] for name in ("audits",)}
    assert not any_work(tables, {}, only)
    blind = SimpleNamespace(judgements=rows, secondary=rows.assign(task="blind"))
    assert any_work(blind, {}, only)
    debias = {"debias": EXTENSIONS["debias"]}
    assert any_work(tables, {}, debias)  # "unmodified" rubric / alignment rows
    assert not any_work(
        tables.judgements.assign(config="gen").pipe(
            lambda j: SimpleNamespace(judgements=j, secondary=None)
        ),
        {},
        debias,
    )
    retrieval = {"retrieval": EXTENSIONS["retrieval"]}
    assert not any_work(tables, {}, retrieval)
    assert any_work(tables, {"debias": {"scoring": {"retrieval": "r.csv"}}}, retrieval)
    assert any_work(tables, {}, {"audits": "my.module:fn"})  # not ours: no check known
    assert any_work(tables, {}, {"mine": "my.module:fn"})


@pytest.mark.parametrize("first", ["w64", "w32"])
def test_multiplicities_are_the_same_whichever_precision_is_asked_first(first):
    """Counted lazily in one precision and converted to the other: both equal the flat count."""
    boot = Bootstrap(n=50, seed=3)
    n_units = 37
    columns = np.arange(n_units * 2, dtype=float).reshape(n_units, 2)
    if first == "w32":
        sums = boot.sums(columns, "s")  # integer columns: the float32 product
        w64 = boot.weights(n_units, "s")
    else:
        w64 = boot.weights(n_units, "s")
        sums = boot.sums(columns, "s")
    expected = old_multiplicities(boot.indices(n_units, "s"), n_units)
    assert np.array_equal(w64, expected) and w64.dtype == np.float64
    assert np.array_equal(sums, expected @ columns)


def test_timings_file_gets_one_line_per_process(tmp_path):
    """IMPLICIT_BENCH_TIMINGS=FILE: a process that ran phases appends one JSON line naming them."""
    out = tmp_path / "t.jsonl"
    code = (
        "from implicit_bench._util.timings import phase\n"
        "with phase('a'):\n    pass\n"
        "with phase('a'):\n    pass\n"
        "with phase('b'):\n    pass\n"
    )
    env = {**os.environ, "IMPLICIT_BENCH_TIMINGS": str(out)}
    for _ in range(2):
        subprocess.run([sys.executable, "-c", code], check=True, env=env)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 2
    assert all(set(rec["phases"]) == {"a", "b"} and rec["startup_cpu_s"] > 0 for rec in lines)


def test_timings_unset_records_nothing(tmp_path, monkeypatch):
    from implicit_bench._util import timings

    monkeypatch.delenv(timings.ENV, raising=False)
    with timings.phase("z"):
        pass
    assert "z" not in timings._phases


def test_resamples_dropped_from_a_full_cache_are_drawn_again_identically(monkeypatch):
    """The cache holds at most CACHE_BYTES of resample matrices; a unit set dropped from it is
    drawn again from its own seed, so every sum equals an unbounded cache's."""
    import implicit_bench.analysis.bootstrap as bootstrap

    columns = {n: np.arange(n, dtype=float)[:, None] % 3 for n in (40, 50, 60)}
    unbounded = Bootstrap(n=30, seed=5)
    expected = {n: unbounded.sums(c, f"s{n}") for n, c in columns.items()}
    monkeypatch.setattr(bootstrap, "CACHE_BYTES", 30 * 60 * 4 * 2)  # about one unit set
    small = Bootstrap(n=30, seed=5)
    for _ in range(2):
        for n, c in columns.items():
            assert np.array_equal(small.sums(c, f"s{n}"), expected[n])
            assert np.array_equal(small.weights(n, f"s{n}"), unbounded.weights(n, f"s{n}"))
            held = sum(a.nbytes for e in small._cache.values() for a in e.values())
            assert len(small._cache) == 1 or held <= bootstrap.CACHE_BYTES
