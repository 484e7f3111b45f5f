"""Paper-ready tables: ``value [lo, hi]`` cells and LaTeX (booktabs) beside the CSV / Markdown.

A column ``X`` (or ``X_pct``) with bound columns ``X_ci_low`` / ``X_ci_high`` (or a lone value
column with ``ci_low`` / ``ci_high``: the one spelling of an interval in tables and plot data,
the columns of an ``Estimate``'s ``ci``, docs/metrics.md) becomes one cell
``value [lo, hi]``; percentages (``_pct`` columns) get one decimal, other numbers two. The CSV
keeps the numbers; ``tables/NAME.tex`` is a ``table`` float with ``\\toprule`` / ``\\midrule`` /
``\\bottomrule`` (needs ``\\usepackage{booktabs}``), written by pandas' ``Styler.to_latex``.
With ``table=NAME`` the caption, label and column titles come from the table registry
(:mod:`implicit_bench.analysis.table_registry`), cells print catalogue names as model names,
fraction columns the registry lists become percentages, and a wide table is set in landscape
(``\\usepackage{pdflscape}``), never shrunk.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pandas as pd

from implicit_bench.analysis.table_registry import (
    column_label,
    not_estimable_columns,
    paper_table,
    value_label,
)

WIDE_COLUMNS = 7
_BOUNDS = (("_ci_low", "_ci_high"),)
_LATEX_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "–": "--",
}


def interval_columns(frame: pd.DataFrame) -> list[tuple[str, str, str]]:
    """``(value, low, high)`` column triples found in ``frame``."""
    cols = list(frame.columns)
    found = []
    for col in cols:
        base = col[:-4] if col.endswith("_pct") else col
        for lo_suffix, hi_suffix in _BOUNDS:
            lo, hi = base + lo_suffix, base + hi_suffix
            if lo in cols and hi in cols and col not in (lo, hi):
                found.append((col, lo, hi))
                break
    if "ci_low" in cols and "ci_high" in cols:
        bound = {c for t in found for c in t}
        values = [
            c
            for c in cols
            if c not in bound | {"ci_low", "ci_high"} and pd.api.types.is_float_dtype(frame[c])
        ]
        if len(values) == 1:
            found.append((values[0], "ci_low", "ci_high"))
    return found


def _fmt(x: Any, digits: int) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, bool):
        return str(x).lower()
    if isinstance(x, int) or (isinstance(x, float) and x.is_integer() and abs(x) >= 1000):
        return f"{int(x):,}"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def with_intervals(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with each interval triple as one ``value [lo, hi]`` text
    column named as the value."""
    triples = interval_columns(frame)
    values = {col: (lo, hi) for col, lo, hi in triples}
    drop = [c for _, lo, hi in triples for c in (lo, hi)]
    if (
        not frame.columns.is_unique
        or len(values) < len(triples)
        or set(drop) & values.keys()
        or len(frame.columns) == len(set(drop))
    ):
        return _with_intervals_general(frame, triples)
    # the columns built as lists and the frame made once (the general path assigns each
    # column into an object copy of ``frame``: the same cells and dtypes, tests/unit/analysis/
    # test_latex_tables.py)
    kept = frame.columns.drop(drop)
    data: dict[Any, list[str]] = {}
    for col in kept:
        if col in values:
            lo, hi = values[col]
            digits = 1 if col.endswith("_pct") or "pct" in col else 2
            data[col] = [
                _interval_cell(v, a, b, digits)
                for v, a, b in zip(frame[col], frame[lo], frame[hi], strict=True)
            ]
        else:
            digits = 1 if "_pct" in col or col.startswith("pct_") else 2
            data[col] = [_fmt(v, digits) for v in frame[col].astype(object)]
    out = pd.DataFrame(data, index=frame.index, columns=kept)
    return out.rename(columns={c: c[:-4] + " (%)" for c in out.columns if c.endswith("_pct")})


def _interval_cell(v: Any, a: Any, b: Any, digits: int) -> str:
    value = _fmt(v, digits)
    return (
        value
        if value == "–" or _fmt(a, digits) == "–"
        else f"{value} [{_fmt(a, digits)}, {_fmt(b, digits)}]"
    )


def _with_intervals_general(
    frame: pd.DataFrame, triples: list[tuple[str, str, str]]
) -> pd.DataFrame:
    """``with_intervals`` column by column into an object copy of ``frame`` (any columns)."""
    out = frame.copy().astype(object)
    for col, lo, hi in triples:
        digits = 1 if col.endswith("_pct") or "pct" in col else 2
        out[col] = [
            _interval_cell(v, a, b, digits)
            for v, a, b in zip(frame[col], frame[lo], frame[hi], strict=True)
        ]
    drop = [c for _, lo, hi in triples for c in (lo, hi)]
    out = out.drop(columns=drop)
    for col in out.columns:
        if col not in {t[0] for t in triples}:
            digits = 1 if "_pct" in col or col.startswith("pct_") else 2
            out[col] = [_fmt(v, digits) for v in out[col]]
    return out.rename(columns={c: c[:-4] + " (%)" for c in out.columns if c.endswith("_pct")})


def latex_escape(text: str) -> str:
    return "".join(_LATEX_ESCAPES.get(ch, ch) for ch in str(text))


def stacked(title: str, width: int = 12) -> str:
    """A column title broken into lines of about ``width`` characters (a one-column tabular,
    no package needed) so that headers do not set a table's width."""
    lines: list[str] = []
    for word in title.split(" "):
        if lines and len(_visible(lines[-1])) + 1 + len(_visible(word)) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return (
        title
        if len(lines) == 1
        else r"\begin{tabular}[b]{@{}c@{}}" + r" \\ ".join(lines) + r"\end{tabular}"
    )


def _visible(tex: str) -> str:
    """``tex`` as the characters it prints (roughly: commands count as one character)."""
    tex = tex.replace(r"\begin{tabular}[b]{@{}c@{}}", "").replace(r"\end{tabular}", "")
    tex = re.sub(
        r"\\[a-zA-Z]+(\{\})?", "x", tex.replace(r"\%", "%").replace(r"\&", "&").replace(r"\_", "_")
    )
    return tex.replace("$", "").replace("{", "").replace("}", "")


YES_NO = {"true": "yes", "false": "no"}


def _printed(value: Any, labelled: bool) -> Any:
    """A cell as printed: catalogue names (``labelled``: a text column), booleans as yes / no."""
    if not isinstance(value, str):
        return value
    if labelled:
        value = value_label(value)
    return YES_NO.get(value, value)


def printed_cells(frame: pd.DataFrame, table: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(numbers, cells)`` of ``frame`` as table ``table`` prints them: registry fraction
    columns (and their bounds) scaled to percentages, catalogue names as printed names."""
    spec = paper_table(table)
    numbers = frame.copy()
    for col in spec.fractions:
        for c in (col, col + "_ci_low", col + "_ci_high"):
            if c in numbers.columns:
                numbers[c] = pd.to_numeric(numbers[c], errors="coerce") * 100
    numbers = numbers.rename(
        columns={c: c + "_pct" for c in spec.fractions if c in numbers.columns}
    )
    numbers = numbers.drop(columns=[c for c in spec.drop if c in numbers.columns])
    cells = with_intervals(numbers)
    for col in cells.columns:
        labelled = not pd.api.types.is_numeric_dtype(
            numbers[col] if col in numbers.columns else cells[col]
        )
        if not cells.columns.is_unique:  # a label names several columns: each pass on all
            if labelled:
                cells[col] = [value_label(v) if isinstance(v, str) else v for v in cells[col]]
            cells[col] = [YES_NO.get(v, v) if isinstance(v, str) else v for v in cells[col]]
            continue
        values = cells[col].tolist()
        printed = [_printed(v, labelled) for v in values]
        if printed != values:  # a column is set only where a cell changes
            cells[col] = printed
    for col, reason in not_estimable_columns(list(numbers.columns)).items():
        if col in cells.columns:
            cells[col] = "n/a"
            cells.attrs.setdefault("notes", []).append(f"n/a: {reason}.")
    return numbers, cells


PORTRAIT_PT = 330.0  # article text width (345pt) less a margin
LANDSCAPE_PT = 530.0  # its text height, the width of a landscape page
CHAR_PT = 4.6  # mean glyph width at \\small; the estimate decides portrait / landscape / split
PAD_PT = 12.0  # 2 \\tabcolsep


def _width(texts: list[str]) -> float:
    return max((len(_visible(t)) for t in texts), default=1) * CHAR_PT + PAD_PT


def _float(
    cells: pd.DataFrame,
    caption: str,
    label: str,
    align: str,
    notes: list[str],
    landscape: bool,
) -> str:
    """One table float of ``cells`` (raw text; columns: LaTeX headers): booktabs rules, cells
    escaped, the notes under the tabular."""
    if cells.shape[1] == 0:  # nothing to show (e.g. a table of a stage that wrote no rows)
        cells = pd.DataFrame({"": ["(no rows)"]})
    elif cells.empty:
        cells = pd.DataFrame([["(no rows)", *[""] * (cells.shape[1] - 1)]], columns=cells.columns)
    tex = booktabs_float(cells, caption, label, "p" if landscape else "t", align)
    body, end = tex.rsplit(r"\end{table}", 1)
    tex = body + "".join(rf"\par\smallskip\footnotesize {latex_escape(n)}" + "\n" for n in notes)
    tex += r"\end{table}" + end
    return r"\begin{landscape}" + "\n" + tex + r"\end{landscape}" + "\n" if landscape else tex


def escape_cell(text: str) -> str:
    r"""``text`` escaped as pandas' ``Styler.format(escape="latex")`` escapes a cell (``\`` and
    ``& % $ # _ { } ~ ^``; a space after a command that would swallow it becomes ``\space``)."""
    return (
        text.replace("\\", "ab2§=§8yz")
        .replace("ab2§=§8yz ", "ab2§=§8yz\\space ")
        .replace("&", "\\&")
        .replace("%", "\\%")
        .replace("$", "\\$")
        .replace("#", "\\#")
        .replace("_", "\\_")
        .replace("{", "\\{")
        .replace("}", "\\}")
        .replace("~ ", "~\\space ")
        .replace("~", "\\textasciitilde ")
        .replace("^ ", "^\\space ")
        .replace("^", "\\textasciicircum ")
        .replace("ab2§=§8yz", "\\textbackslash ")
    )


def booktabs_float(
    cells: pd.DataFrame, caption: str, label: str, position: str, column_format: str
) -> str:
    """The ``table`` float that pandas' ``Styler.to_latex`` writes for ``cells`` with the index
    hidden, cells escaped, ``\\small``, booktabs rules and ``position_float="centering"``,
    byte for byte (tests/test_latex.py compares the two), without its template engine: the
    report writes dozens of small tables and Styler took a fifth of ``analyze``'s time."""
    lines = [rf"\begin{{table}}[{position}]", r"\centering"]
    if caption:
        lines.append(rf"\caption{{{caption}}}")
    lines.append(r"\small")
    if label:
        lines.append(rf"\label{{{label}}}")
    lines += [rf"\begin{{tabular}}{{{column_format}}}", r"\toprule"]
    lines.append(" & ".join(str(c) for c in cells.columns) + r" \\")
    lines.append(r"\midrule")
    rows = cells.to_numpy(dtype=object).tolist()
    lines += [
        " & ".join(escape_cell(str(v).replace("–", "--")) for v in row) + r" \\" for row in rows
    ]
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def to_booktabs(
    frame: pd.DataFrame,
    caption: str | None = None,
    label: str | None = None,
    note: str | list[str] | None = None,
    cells: pd.DataFrame | None = None,
    table: str | None = None,
) -> str:
    """A LaTeX table float (booktabs rules) of ``with_intervals(frame)`` (``cells``, when the
    caller has it already). ``table``: the registry name that gives caption, label and column
    titles (``caption`` / ``label`` override them). A table wider than the text is set in
    landscape; one wider than a landscape page is split into parts that repeat the leading
    text columns (labels ``LABEL``, ``LABEL-part2``, ...)."""
    notes = [note] if isinstance(note, str) else list(note or [])
    spec = paper_table(table) if table else None
    if spec is not None:
        frame, cells = printed_cells(frame, table)  # type: ignore[arg-type]
        notes = list(dict.fromkeys(cells.attrs.get("notes", []))) + notes
        caption_tex = caption if caption is not None else spec.caption
        label = label or spec.label
    else:
        cells = with_intervals(frame) if cells is None else cells
        caption_tex = latex_escape(caption or "")
    bounds = {c for _, lo, hi in interval_columns(frame) for c in (lo, hi)}
    kept = [c for c in frame.columns if c not in bounds]
    if spec is not None:
        heads = [stacked(column_label(str(c), table)) for c in kept]
    else:
        heads = [latex_escape(str(c).replace("_", " ")) for c in cells.columns]
    aligns = ["r" if pd.api.types.is_numeric_dtype(frame[c]) else "l" for c in kept] or ["l"]
    texts = [[latex_escape(v) for v in cells.iloc[:, j]] for j in range(len(cells.columns))]
    widths = [
        max(_width(col), _width(h.split(r" \\ "))) for col, h in zip(texts, heads, strict=True)
    ]
    lead = 0
    while lead < min(2, len(aligns) - 1) and aligns[lead] == "l":
        lead += 1
    parts: list[list[int]] = [list(range(len(kept)))]
    if spec is not None and sum(widths) > LANDSCAPE_PT and len(kept) > lead + 1:
        parts, room = [[]], LANDSCAPE_PT - sum(widths[:lead])
        for j in range(lead, len(kept)):
            if parts[-1] and sum(widths[k] for k in parts[-1]) + widths[j] > room:
                parts.append([])
            parts[-1].append(j)
        parts = [list(range(lead)) + p for p in parts]
    lines = [
        r"% generated by implicit-bench (tables/); needs \usepackage{booktabs} "
        r"(\usepackage{pdflscape} for a landscape table)" + "\n"
    ]
    for i, cols in enumerate(parts):
        landscape = (
            (sum(widths[j] for j in cols) > PORTRAIT_PT or bool(spec and spec.landscape))
            if spec is not None
            else len(kept) > WIDE_COLUMNS
        )
        part_caption = (
            caption_tex if len(parts) == 1 else f"{caption_tex} Part {i + 1} of {len(parts)}."
        )
        part = cells.iloc[:, cols].set_axis([heads[j] for j in cols], axis=1)
        lines.append(
            _float(
                part,
                part_caption,
                str(label if i == 0 else f"{label}-part{i + 1}"),
                "".join(aligns[j] for j in cols) or "l",
                notes if i == len(parts) - 1 else [],
                landscape,
            )
        )
    return "".join(lines)
