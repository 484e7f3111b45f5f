"""The retrieve stage's texts built column-wise from Arrow (``implicit-bench plan`` counts
them for 10^6 units without a Python string per row): the same texts as
``retrieval.unit_text`` / ``retrieval.query_text``, which stay the stage's row-by-row
definition (and the fallback for templates with format specs or conversions)."""

from __future__ import annotations

import string
from typing import Any

from implicit_bench.debias.retrieval import (
    DEFAULT_TEXTS,
    RetrievalTextParams,
    query_text,
    unit_text,
)


def template_column(template: str, columns: dict[str, Any]) -> Any:
    """``template.format(**row)`` for every row of Arrow string ``columns`` (checked text:
    stripped, so ``unit_text``'s strip changes nothing), as one Arrow array, null where a field
    is null; None when the template needs Python's formatting (a format spec, a conversion, a
    field not among ``columns``): the caller formats row by row then."""
    import pyarrow as pa
    import pyarrow.compute as pc

    parts: list[Any] = []
    for literal, name, spec, conversion in string.Formatter().parse(template):
        if literal:
            parts.append(pa.scalar(literal))
        if name is None:
            continue
        if spec or conversion or name not in columns:
            return None
        parts.append(columns[name])
    if not any(not isinstance(p, pa.Scalar) for p in parts):
        return None
    return pc.binary_join_element_wise(*parts, "")


def document_texts(
    units: Any, texts: RetrievalTextParams = DEFAULT_TEXTS, template: str | None = None
) -> Any:
    """``unit_text`` of every row of an Arrow table of checked units (``head``, ``relation``,
    ``stereotype``, ``anti_stereotype``; a null relation: the template without it), as Arrow;
    ``template``: one of the two templates for every row (rows of one kind)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    fields = {k: units.column(k) for k in ("head", "relation", "stereotype", "anti_stereotype")}
    if template is not None:
        column = template_column(template, fields)
        if column is not None:
            return column
        one = texts.model_copy(
            update={"document_template": template, "document_template_no_relation": template}
        )
        rows = zip(*(fields[k].to_pylist() for k in fields), strict=True)
        return pa.array([unit_text(dict(zip(fields, r, strict=True)), one) for r in rows])
    full = template_column(texts.document_template, fields)
    short = template_column(texts.document_template_no_relation, fields)
    if full is None or short is None:
        rows = zip(*(fields[k].to_pylist() for k in fields), strict=True)
        return pa.array([unit_text(dict(zip(fields, r, strict=True)), texts) for r in rows])
    return pc.if_else(pc.is_null(fields["relation"]), short, full)


def query_texts(prompts: Any, texts: RetrievalTextParams = DEFAULT_TEXTS) -> Any:
    """``query_text`` of every prompt of an Arrow string column, as Arrow."""
    column = template_column(texts.query_template, {"prompt": prompts})
    if column is None:
        import pyarrow as pa

        return pa.array([query_text(p, texts) for p in prompts.to_pylist()])
    return column


def _one_field(template: str, name: str) -> tuple[str, str] | None:
    """(prefix, suffix) when ``template`` is prefix + ``{name}`` + suffix (the field once, no
    format spec or conversion): then the texts it makes are distinct exactly when the values
    are."""
    parsed = list(string.Formatter().parse(template))
    fields = [(n, spec, conv) for _, n, spec, conv in parsed if n is not None]
    if fields != [(name, "", None)]:
        return None
    at = next(i for i, (_, n, _, _) in enumerate(parsed) if n is not None)
    return "".join(p[0] for p in parsed[: at + 1]), "".join(p[0] for p in parsed[at + 1 :])


def distinct_texts(
    units: Any, texts: RetrievalTextParams = DEFAULT_TEXTS, want_texts: bool = False
) -> tuple[int, Any]:
    """(how many distinct texts the retrieve stage embeds: the unit documents and the
    neutral-prompt queries of an Arrow table of checked units, those texts as an Arrow
    chunked array when ``want_texts``, else None). Column-wise: distinct documents (each
    template over its own rows) plus distinct queries less the texts that are both; with a
    query template of one ``{prompt}``, distinct queries are distinct prompts and the texts in
    both are the documents of the template's shape whose middle is a prompt (no query text
    built)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    fields = {k: units.column(k) for k in ("head", "relation", "stereotype", "anti_stereotype")}
    with_relation = pc.is_valid(fields["relation"])
    parts = []
    for template, rows in (
        (texts.document_template, with_relation),
        (texts.document_template_no_relation, pc.invert(with_relation)),
    ):
        if pc.any(rows).as_py():
            table = pa.table({k: pc.filter(v, rows) for k, v in fields.items()})
            parts.append(pc.unique(document_texts(table, texts, template)))
    docs = (
        pc.unique(pa.chunked_array(parts, type=pa.string())) if parts else pa.array([], pa.string())
    )
    del parts
    prompts = units.column("prompt_neutral")
    shape = _one_field(texts.query_template, "prompt")
    if shape is None or want_texts:
        queries = pc.unique(query_texts(prompts, texts))
        in_both = pc.is_in(queries, value_set=docs)
        n = len(docs) + len(queries) - int(pc.sum(in_both).as_py() or 0)
        if not want_texts:
            return n, None
        return n, pa.chunked_array([docs, pc.filter(queries, pc.invert(in_both))], pa.string())
    prefix, suffix = shape
    start, end = len(prefix.encode()), len(suffix.encode())
    middle = docs
    if start or end:  # (an empty pattern: pyarrow's starts_with fails on it)
        fits = pc.greater_equal(pc.binary_length(docs), start + end)
        if start:
            fits = pc.and_(fits, pc.starts_with(docs, prefix))
        if end:
            fits = pc.and_(fits, pc.ends_with(docs, suffix))
        candidates = pc.filter(docs, fits).cast(pa.binary())
        middle = pc.binary_slice(candidates, start, -end if end else None).cast(pa.string())
    in_both = int(pc.sum(pc.is_in(middle, value_set=prompts)).as_py() or 0)
    return len(docs) + len(pc.unique(prompts)) - in_both, None


__all__ = ["distinct_texts", "document_texts", "query_texts", "template_column"]
