"""`implicit-bench plan` on a large units table: the table is read once, only the columns the
plan counts from (a projection), checked, and the retrieval texts are counted column-wise
with the same result as the row-by-row texts (plan of 10^6 units bounded)."""

from __future__ import annotations

import tracemalloc

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import implicit_bench.protocol.tables.columnar as columnar
from implicit_bench.debias.retrieval import RetrievalTextParams, query_text, unit_text
from implicit_bench.debias.retrieval_columns import distinct_texts
from implicit_bench.errors import InputError
from implicit_bench.planning.plan import DEBIAS_PLAN_COLUMNS, build_plan
from implicit_bench.protocol.tables import UNITS, UNITS_PATH
from implicit_bench.protocol.tables.columnar import PY_WHITESPACE
from implicit_bench.protocol.tables.spec import TableSpec
from tests.helpers.synthetic_tables import write_units_parquet

PARAMS = {
    "subset": {"max_units": 0},
    "generators": {"g": {"backend": "diffusers", "model": "m"}},
    "judges": {"j": {"backend": "transformers", "model": "x"}},
    "render": {"run": ["g"], "seeds": [42], "variants": ["neutral", "stereotype"]},
    "judge": {"tasks": {"rubric": None}},
    "debias": {
        "units": UNITS_PATH,
        "subset": {"max_units": 5, "seed": 42},
        "generator": "g",
        "configs": {"unmodified": {"exp": 0, "method": "none"}},
        "seeds": [42],
    },
}


def _by_stage(root) -> dict:  # noqa: ANN001
    plans, info = build_plan(PARAMS, root)
    return {p.stage: p for p in plans} | {"info": info}


def test_python_whitespace_is_what_str_strip_removes():
    assert "".join(c for c in map(chr, range(0x110000)) if c.isspace()) == PY_WHITESPACE


def test_the_units_table_is_read_once_with_a_projection_and_never_whole(tmp_path, monkeypatch):
    n = 2_000
    write_units_parquet(tmp_path / UNITS_PATH, n)
    # a column the plan does not use holds a value the full checks refuse: not read, not checked
    table = pq.read_table(tmp_path / UNITS_PATH)
    bad = pa.array(["no such bias type"] * n)
    pq.write_table(table.set_column(2, "bias_type", bad), tmp_path / UNITS_PATH)
    reads: list[tuple[str, ...]] = []
    real = columnar.read_columns

    def spy(spec, path, columns, require=None, batch_rows=columnar.BATCH_ROWS):  # noqa: ANN001
        reads.append(tuple(columns))
        return real(spec, path, columns, require, batch_rows)

    def whole(*args, **kwargs):  # noqa: ANN002, ANN003
        raise AssertionError("the whole units table was read")

    monkeypatch.setattr(columnar, "read_columns", spy)
    monkeypatch.setattr(TableSpec, "read", whole)
    by = _by_stage(tmp_path)
    assert reads == [DEBIAS_PLAN_COLUMNS]  # one read: the plan's count and the debias texts
    assert by["info"]["units"] == n and by["info"]["units_from"] == UNITS_PATH
    assert by["render g"].items == n * 2
    # every unit's document and query are distinct texts
    assert by["retrieve"].items == 2 * n
    assert by["debias_render@unmodified"].items == 5


def _write(path, frame: pd.DataFrame) -> None:  # noqa: ANN001
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_parquet(path, index=False)


def _units(n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "unit_id": [f"u{i}" for i in range(n)],
            "head": [f"h{i}" for i in range(n)],
            "relation": ["r"] * n,
            "stereotype": ["s"] * n,
            "anti_stereotype": ["a"] * n,
            "prompt_neutral": [f"p{i}" for i in range(n)],
            "prompt_stereotype": ["ps"] * n,
            "prompt_anti_stereotype": ["pa"] * n,
        }
    )


@pytest.mark.parametrize(
    ("column", "row", "value", "message"),
    [
        ("head", 7, "  ", "row 7, field 'head': empty"),
        ("prompt_neutral", 3, None, "row 3, field 'prompt_neutral': empty"),
        ("unit_id", 5, "u1", "row 2, field 'unit_id': duplicate unit_id (2 rows)"),
    ],
)
def test_a_bad_cell_in_a_column_read_is_a_one_line_error(tmp_path, column, row, value, message):
    frame = _units(10)
    frame.loc[row - 1, column] = value
    _write(tmp_path / UNITS_PATH, frame)
    with pytest.raises(InputError) as err:
        build_plan(PARAMS, tmp_path)
    assert str(err.value) == f"{tmp_path / UNITS_PATH}, {message}"
    assert "\n" not in str(err.value)


def test_a_missing_column_the_debias_stage_needs_is_named(tmp_path):
    _write(tmp_path / UNITS_PATH, _units(4).drop(columns="prompt_stereotype"))
    with pytest.raises(InputError, match="missing column.s. prompt_stereotype .units table."):
        build_plan(PARAMS, tmp_path)


def test_projection_gives_the_full_checks_values(tmp_path):
    """Padded text, null tokens, numbers as ids: the projection's cells are those of
    ``UNITS.read`` (the fast path when nothing needs changing, the checks otherwise)."""
    frame = _units(6)
    frame["relation"] = ["r", "NaN", " none ", "", None, " r2\u3000"]
    frame.loc[1, "head"] = "\u2003h1 "
    _write(tmp_path / "padded.parquet", frame)
    _write(tmp_path / "clean.parquet", _units(6).assign(relation=["r", "Null", None, "", "x", "y"]))
    for name in ("padded.parquet", "clean.parquet"):
        path = tmp_path / name
        got = columnar.read_columns(UNITS, path, DEBIAS_PLAN_COLUMNS).to_pandas()
        want = UNITS.read(path, require=("unit_id",))[list(DEBIAS_PLAN_COLUMNS)]
        assert got.astype(object).where(got.notna(), None).equals(want.astype(object)), name


def _row_by_row(rows: list[dict], texts: RetrievalTextParams) -> set[str]:
    return {unit_text(r, texts) for r in rows} | {
        query_text(r["prompt_neutral"], texts) for r in rows
    }


@pytest.mark.parametrize(
    "texts",
    [
        RetrievalTextParams(),
        RetrievalTextParams(query_template="{prompt}"),
        RetrievalTextParams(query_template="Q: {prompt} → x"),
        RetrievalTextParams(query_template="{prompt} {prompt}"),
        RetrievalTextParams(query_template="{prompt!r}", document_template="{head:>4} {relation}"),
    ],
)
def test_distinct_texts_count_what_the_retrieve_stage_embeds(texts):
    rows = [
        {"head": "a", "relation": None, "stereotype": "s", "anti_stereotype": "x"},
        {"head": "a", "relation": None, "stereotype": "s", "anti_stereotype": "x"},  # same doc
        {"head": "b", "relation": "r", "stereotype": "t", "anti_stereotype": "y"},
        {"head": "Q: a", "relation": None, "stereotype": "s", "anti_stereotype": "x → x"},
        {"head": "b", "relation": "r | t", "stereotype": "y", "anti_stereotype": "z"},
    ]
    prompts = ["p", "p", "a | s → x", "b | r | t → y", "a | s → x a | s → x"]
    rows = [{**r, "prompt_neutral": p} for r, p in zip(rows, prompts, strict=True)]
    want = _row_by_row(rows, texts)
    table = pa.Table.from_pylist(rows)
    assert distinct_texts(table, texts)[0] == len(want)
    n, listed = distinct_texts(table, texts, want_texts=True)
    assert n == len(want) and sorted(listed.to_pylist()) == sorted(want)


def test_plan_of_many_units_keeps_no_python_object_per_unit(tmp_path):
    """Python-side memory of the plan (tracemalloc: objects and numpy arrays) stays far below
    a row of Python strings per unit: about 70 bytes per unit (numpy key codes), 2,000 when
    every column was read into pandas and checked twice; the columns live in Arrow buffers."""
    n = 100_000
    write_units_parquet(tmp_path / UNITS_PATH, n)
    tracemalloc.start()
    try:
        by = _by_stage(tmp_path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert by["retrieve"].items == 2 * n
    assert peak / n < 250, f"{peak / n:.0f} bytes per unit"


def _store_of(root, params: dict, units: pd.DataFrame) -> int:  # noqa: ANN001
    """Refused records in the image store of ``render.run[0]`` for every planned item of
    ``units``, written as the render stage writes them (settings and batch signature): the
    count the plan must find cached."""
    from implicit_bench.backends.generators import settings_hash
    from implicit_bench.params import section
    from implicit_bench.render.images import ImageRecord, ImageStore
    from implicit_bench.render.params import RenderParams
    from implicit_bench.render.stage import config_signatures, plan_items

    render = section(params, "render", RenderParams, attach={"generators": "configs"})
    name = render.run[0]
    cfg = render.configs[name]
    planned = plan_items(units, name, render.seeds, render.variants)
    signatures = config_signatures(cfg, planned)
    extra = {"settings": settings_hash(cfg)}
    rows = [
        (
            ImageRecord(
                i.key,
                "m",
                i.prompt,
                "refused",
                "no",
                extra={**extra, "batch": signatures.get(i.key)},
            ),
            None,
        )
        for i in planned
    ]
    with ImageStore(root / "data/images" / name) as store:
        store.acquire_writer()
        store.put_many(rows)
    return len(rows)


def test_the_render_plan_counts_a_store_chunk_by_chunk_as_the_stage_does(tmp_path, monkeypatch):
    """With an image store to look up, the render plan is built a chunk of units at a time
    (``plan.CHUNK_UNITS``): the cached count is the stage's, whatever the chunk size; an extra
    variant whose prompt column the table lacks plans no item (it was a ``KeyError``)."""
    import implicit_bench.planning.plan as plan

    n = 300
    write_units_parquet(tmp_path / UNITS_PATH, n)
    units = UNITS.read(tmp_path / UNITS_PATH)
    params = {**PARAMS, "render": {**PARAMS["render"], "seeds": [42, 1042]}}
    params["generators"] = {"g": {"backend": "diffusers", "model": "m", "batch_size": 3}}
    stored = _store_of(tmp_path, params, units.iloc[::7])  # every 7th unit rendered
    assert stored == len(units.iloc[::7]) * 2 * 2
    counts = set()
    for chunk in (7, 64, 50_000):
        monkeypatch.setattr(plan, "CHUNK_UNITS", chunk)
        by = {p.stage: p for p in build_plan(params, tmp_path)[0]}
        counts.add((by["render g"].items, by["render g"].cached))
    assert counts == {(n * 2 * 2, stored)}
    extra = {
        **params,
        "render": {**params["render"], "variants": [*params["render"]["variants"], "negated_0_1"]},
    }
    by = {p.stage: p for p in build_plan(extra, tmp_path)[0]}
    assert by["render g"].cached == stored


def test_the_render_plan_with_a_store_keeps_no_planned_item_per_unit(tmp_path, monkeypatch):
    """Python-side memory of the plan with a store to look up: the planned items of one chunk
    at a time, not of every unit (10^6 units x 3 variants x 3 seeds held 4.3 GB of items and
    ended in ``MemoryError`` under a 6 GB cap)."""
    import implicit_bench.planning.plan as plan

    n = 40_000
    write_units_parquet(tmp_path / UNITS_PATH, n)
    _store_of(tmp_path, PARAMS, UNITS.read(tmp_path / UNITS_PATH).head(10))
    monkeypatch.setattr(plan, "CHUNK_UNITS", 2_000)
    tracemalloc.start()
    try:
        by = _by_stage(tmp_path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert by["render g"].cached == 10 * 2 and by["render g"].items == n * 2
    assert peak / n < 400, f"{peak / n:.0f} bytes per unit"


def test_the_judge_plan_looks_units_up_on_demand_with_the_same_counts(tmp_path):
    """With a published store, the judge plan's exact lookup reads the units' rows on demand
    and tests render-plan membership without listing every key: its counts are those of the
    row dicts and the full key set it used (computed here as it computed them), and images of
    units outside the plan are left out alike."""
    import io

    from PIL import Image

    from implicit_bench.backends.generators import settings_hash
    from implicit_bench.backends.judges import judge_params
    from implicit_bench.backends.judges.params import JudgeStageParams
    from implicit_bench.backends.judges.stage import judge_backends, plan_judgements
    from implicit_bench.params import section
    from implicit_bench.planning.plan import RenderPlanKeys, UnitRows
    from implicit_bench.render.images import ImageRecord, ImageStore
    from implicit_bench.render.params import RenderParams
    from implicit_bench.render.stage import config_signatures, plan_items

    n = 40
    write_units_parquet(tmp_path / UNITS_PATH, n)
    units = UNITS.read(tmp_path / UNITS_PATH)
    params = {
        **PARAMS,
        "judges": {
            "j": {
                "backend": "openai",
                "model": "m",
                "base_url": "http://127.0.0.1:9/v1",
                "api_key_env": None,
            }
        },
    }
    render = section(params, "render", RenderParams, attach={"generators": "configs"})
    cfg = render.configs["g"]
    # the store holds 10 units at the plan's seed and at a seed the plan does not have
    planned = plan_items(units.head(10), "g", [*render.seeds, 1042], render.variants)
    signatures = config_signatures(cfg, planned)
    buffer = io.BytesIO()
    Image.new("RGB", (4, 4)).save(buffer, format="PNG")
    rows = []
    for i, item in enumerate(planned):
        extra = {"settings": settings_hash(cfg), "batch": signatures.get(item.key)}
        status = "refused" if i % 5 == 0 else "ok"
        png = buffer.getvalue()[:-1] + bytes([i % 250]) if status == "ok" else None
        record = ImageRecord(item.key, "m", item.prompt, status, None, extra=extra)
        rows.append((record, png))
    with ImageStore(tmp_path / "data/images/g") as store:
        store.put_many(rows)
        store.finalize()
    by = _by_stage_of(params, tmp_path)
    # as it was computed: a dict per unit and the set of every planned key
    judge = section(params, "judge", JudgeStageParams, attach={"judges": "judges"})
    for name, block in judge.judges.items():
        judge_params(block, f"judges.{name}")
    _, identities = judge_backends(judge.judges)
    by_id = {str(r["unit_id"]): dict(r) for r in units.to_dict("records")}
    every, _, _ = plan_judgements(judge, by_id, identities, tmp_path)
    keys = {
        (i.key.config, i.key.unit_id, i.key.variant, i.key.seed)
        for i in plan_items(units, "g", render.seeds, render.variants)
    }
    want = {p.key for p in every if (p.config, p.unit_id, p.variant, int(p.seed)) in keys}
    pending = n * 2 - 10 * 2  # planned images not in the index yet, each counted
    assert len(want) == 16  # 10 units x 2 variants at the plan's seed, 4 of them refused
    assert by["judge"].items == len(want) + pending and by["judge"].cached == 0
    assert "4 refused" in by["judge"].note
    # the membership test agrees with the key set on every stored and planned key
    lookup = RenderPlanKeys(render, UnitRows(tmp_path / UNITS_PATH))
    for item in planned:
        key = (item.key.config, item.key.unit_id, item.key.variant, item.key.seed)
        assert (key in lookup) == (key in keys)


def _by_stage_of(params: dict, root) -> dict:  # noqa: ANN001
    plans, _ = build_plan(params, root)
    return {p.stage: p for p in plans}
