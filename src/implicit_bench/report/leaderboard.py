"""The report's Leaderboard section: every generator of this run (and of the other runs or
imported releases given to ``implicit-bench report``) side by side, and each run's paired
differences with the resolved mark (``benchmark.json: leaderboard``, docs/compare.md).

Tables are sortable (``assets/sort.js``: click a header; every cell carries its number in
``data-sort``). Rows from another run or a release are labelled with their source; a source
computed from the simulated world says SIMULATED in every row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from implicit_bench._util.nested import dig
from implicit_bench.protocol import metric_schema
from implicit_bench.protocol.estimate import Estimate
from implicit_bench.report.markup import esc, is_number, show

#: (key, header, percent) of the leaderboard columns
COLUMNS = tuple((m.name, m.board, m.percent) for m in metric_schema.leaderboard_columns())


@dataclass
class Run:
    """One source of leaderboard rows: a label, its ``benchmark.json``
    and whether it is simulated."""

    label: str
    benchmark: dict[str, Any] | None
    simulated: bool = False

    @property
    def board(self) -> dict[str, Any] | None:
        return (self.benchmark or {}).get("leaderboard")


def _cell(entry: Any, pct: bool) -> str:
    if not entry:
        return '<td data-sort="" class="na">–</td>'
    e = Estimate.from_json(entry)
    if e.value is None:
        return '<td data-sort="" class="na">–</td>'
    k = 100.0 if pct else 1.0
    digits = f".{1 if pct else 2}f"
    ci = (
        ""
        if e.ci is None
        else f' <span class="ci">[{show(e.ci[0], digits, scale=k)}, '
        f"{show(e.ci[1], digits, scale=k)}]</span>"
    )
    if (
        e.ci is not None and e.ci[0] == e.ci[1] == e.value
    ):  # degenerate: no interval to show as a finding
        ci = (
            " "
            '<span class="ci" title="every bootstrap resample gives this value">(n/a: '
            "same in every resample)</span>"
        )
    return (
        f'<td data-sort="{show(e.value, ".6g", scale=k)}">'
        f'<span class="v">{show(e.value, digits, scale=k)}</span>{ci}</td>'
    )


def _count(n: Any) -> str:
    """A units cell: the count (sorted by it), "–" when absent."""
    return f'<td data-sort="{show(n if n else 0)}">{show(n or None)}</td>'


def _source(run: Run) -> str:
    return esc(run.label) + (' <span class="sim">SIMULATED</span>' if run.simulated else "")


def leaderboard_table(runs: list[Run]) -> str:
    """Every run's generators, one row each, sortable."""
    rows = []
    used = [
        c
        for c in COLUMNS
        if any(r.get(c[0]) for run in runs for r in ((run.board or {}).get("rows") or []))
    ]
    for run in runs:
        for r in (run.board or {}).get("rows") or []:
            cells = "".join(_cell(r.get(key), pct) for key, _, pct in used)
            rows.append(
                f'<tr><td data-sort="{esc(run.label)}">{_source(run)}</td>'
                f'<th data-sort="{esc(r["config"])}">'
                f"{esc(r['config'])}</th>"
                f"{_count(r.get('n_units'))}{cells}</tr>"
            )
    if not rows:
        return ""
    head = "".join(f"<th>{esc(h)}</th>" for _, h, _ in used)
    return (
        '<table class="leaderboard sortable" id="leaderboard"><thead>'
        "<tr><th>source</th><th>generator</th>"
        f"<th>units</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _p(x: float | None) -> str:
    return f'<td data-sort="{show(x, missing="")}">{show(x, ".3g")}</td>'


def pairs_table(run: Run) -> str:
    """One run's paired differences A - B, with p, Holm-adjusted p and the resolved mark."""
    board = run.board or {}
    pairs = board.get("pairs") or []
    if not pairs:
        return ""
    rows = []
    for p in pairs:
        pct = p["metric"] != "bias_score"
        ci = dig(p, "difference", "ci")
        if ci is not None and ci[0] == ci[1]:  # every resample: one value; no verdict
            mark = '<td data-sort="0" class="na">no verdict (degenerate interval)</td>'
        elif p["resolved"]:
            mark = '<td data-sort="1" class="resolved">resolved</td>'
        else:
            mark = '<td data-sort="0" class="noise">within noise</td>'
        rows.append(
            f'<tr><td data-sort="{esc(p["a"])}">{esc(p["a"])}</td>'
            f'<td data-sort="{esc(p["b"])}">{esc(p["b"])}</td>'
            f'<td data-sort="{esc(p["metric"])}">{esc(p["metric"])}</td>'
            f'<td data-sort="{show(p.get("n_units"), missing="")}">{show(p.get("n_units"))}</td>'
            f"{_cell(p.get('difference'), pct)}{_p(p.get('p'))}{_p(p.get('p_holm'))}{mark}</tr>"
        )
    alpha = board.get("alpha") if is_number(board.get("alpha")) and board.get("alpha") else 0.05
    note = (
        f'<p class="small">{_source(run)}: differences A - B on the '
        "units and seeds both generators have "
        f"(paired cluster bootstrap over units, {show(1 - alpha, '.0%')} intervals; "
        "percentage points, the bias score in "
        "points of 0-5). p: two-sided bootstrap p; Holm-adjusted "
        f"over the {len(pairs)} differences; "
        f"resolved when the adjusted p &lt; {show(board.get('alpha'))}; the "
        "resamples cannot give an adjusted p "
        f"below {show(board.get('min_p_holm') or 0, '.3g')}.</p>"
    )
    return (
        note + '<table class="leaderboard-pairs sortable"><thead><tr><th>A</th>'
        "<th>B</th><th>metric</th><th>units</th>"
        "<th>A - B</th><th>p</th><th>p (Holm)</th><th>verdict</th></tr>"
        f"</thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _number_cell(x: Any) -> str:
    return f'<td data-sort="{show(x, missing="")}">{show(x)}</td>'


def beside_table(run: Run) -> str:
    """One run's generators beside the authors' release (``leaderboard.beside_release``):
    rows labelled with their source and judge note, then the paired differences."""
    board = (run.board or {}).get("beside_release") or {}
    rows = []
    for r in board.get("rows") or []:
        rows.append(
            f'<tr><td data-sort="{esc(r["source"])}">{esc(r["source"])}</td>'
            f'<th data-sort="{esc(r["config"])}">{esc(r["config"])}</th>'
            f"{_count(r.get('n_units'))}"
            + "".join(
                _number_cell(r.get(k))
                for k in ("requested", "returned", "refused", "missing", "judged")
            )
            + f"{_cell(r.get('bias_score'), False)}{_cell(r.get('alignment'), True)}"
            f'<td class="small">{esc(r.get("note") or "")}</td></tr>'
        )
    if not rows:
        return ""
    pairs = []
    for p in board.get("pairs") or []:
        pct = p["metric"] not in ("bias_score", "mean_lean")
        ci = dig(p, "difference", "ci")
        if ci is not None and ci[0] == ci[1]:
            mark = '<td data-sort="0" class="na">no verdict (degenerate interval)</td>'
        elif p.get("resolved"):
            mark = '<td data-sort="1" class="resolved">resolved</td>'
        else:
            mark = '<td data-sort="0" class="noise">within noise</td>'
        pairs.append(
            f"<tr><td>{esc(p['a'])} ({esc(p['a_source'])})</td>"
            f"<td>{esc(p['b'])} ({esc(p['b_source'])})</td><td>{esc(p['metric'])}</td>"
            f"{_count(p.get('n_units'))}{_cell(p.get('difference'), pct)}"
            f"{_p(p.get('p'))}{_p(p.get('p_holm'))}{mark}"
            f'<td class="small">{esc(p.get("note") or "")}</td></tr>'
        )
    bench = board.get("benchmark") or {}
    return (
        f'<h3 id="beside-release">Beside the paper: {_source(run)} and the authors\' release</h3>'
        f'<p class="small">Benchmark sha256 {esc(str(bench.get("sha256") or "?"))}, '
        f"{show(bench.get('units'))} units. Neutral images requested, returned, refused and "
        "missing are counted apart (the release cannot tell a refusal from an image not "
        "returned: its absent images are counted as refused). Differences A - B on the units "
        "and seeds both sides judged; p Holm-adjusted over all differences below.</p>"
        '<table class="leaderboard sortable" id="leaderboard-beside"><thead><tr>'
        "<th>source</th><th>generator</th><th>units</th><th>requested</th><th>returned</th>"
        "<th>refused</th><th>missing</th><th>judged</th><th>bias score (0-5)</th>"
        f"<th>alignment (%)</th><th>note</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        + (
            '<table class="leaderboard-pairs sortable"><thead><tr><th>A</th><th>B</th>'
            "<th>metric</th><th>units</th><th>A - B</th><th>p</th><th>p (Holm)</th>"
            f"<th>verdict</th><th>note</th></tr></thead><tbody>{''.join(pairs)}</tbody></table>"
            if pairs
            else ""
        )
    )


def leaderboard_section(runs: list[Run]) -> str:
    """The whole section (``<h2>`` included); "not available" when no run has a leaderboard."""
    table = leaderboard_table(runs)
    if not table:
        return (
            '<h2 id="leaderboard-section">Leaderboard</h2><p class="na">not '
            "available (metrics/benchmark.json: leaderboard)</p>"
        )
    intro = (
        '<p class="small">Every generator side by side, each metric '
        "with its interval; click a header to sort. "
        "Rows of different sources rest on different units and "
        "judges: only the paired differences below "
        "(within one source) say whether two generators differ beyond noise.</p>"
    )
    return (
        '<h2 id="leaderboard-section">Leaderboard</h2>'
        + intro
        + table
        + "".join(pairs_table(run) for run in runs)
        + "".join(beside_table(run) for run in runs)
    )
