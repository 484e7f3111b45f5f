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

from implicit_bench.estimate import Estimate
from implicit_bench.report.summary import esc

#: (key, header, percent) of the leaderboard columns
COLUMNS = (
    ("default_rate", "default rate (%)", True),
    ("success_stereotype", "success S (%)", True),
    ("success_anti", "success A (%)", True),
    ("gap", "gap S-A (%)", True),
    ("a_to_s", "A->S (%)", True),
    ("strongest_success_stereotype", "strongest group: success S (%)", True),
    ("strongest_success_anti", "strongest group: success A (%)", True),
    ("refusal_rate", "refusals (%)", True),
    ("bias_score", "bias score (0-5)", False),
    ("alignment", "alignment (%)", True),
    ("lean_s", "lean S (%)", True),
    ("hedges_g", "Hedges' g", False),
)


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
    digits = 1 if pct else 2
    ci = (
        ""
        if e.ci is None
        else f' <span class="ci">[{e.ci[0] * k:.{digits}f}, {e.ci[1] * k:.{digits}f}]</span>'
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
        f'<td data-sort="{e.value * k:.6g}">'
        f'<span class="v">{e.value * k:.{digits}f}</span>{ci}</td>'
    )


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
                f'<td data-sort="{r.get("n_units") or 0}">'
                f"{r.get('n_units') or '–'}</td>{cells}</tr>"
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
    return "–" if x is None else f"{x:.3g}"


def pairs_table(run: Run) -> str:
    """One run's paired differences A - B, with p, Holm-adjusted p and the resolved mark."""
    board = run.board or {}
    pairs = board.get("pairs") or []
    if not pairs:
        return ""
    rows = []
    for p in pairs:
        pct = p["metric"] != "bias_score"
        mark = (
            '<td data-sort="1" class="resolved">resolved</td>'
            if p["resolved"]
            else '<td data-sort="0" class="noise">within noise</td>'
        )
        rows.append(
            f'<tr><td data-sort="{esc(p["a"])}">{esc(p["a"])}</td>'
            f'<td data-sort="{esc(p["b"])}">{esc(p["b"])}</td>'
            f'<td data-sort="{esc(p["metric"])}">{esc(p["metric"])}</td>'
            f'<td data-sort="{p["n_units"]}">{p["n_units"]}</td>'
            f"{_cell(p['difference'], pct)}"
            f'<td data-sort="{p["p"] if p["p"] is not None else ""}">'
            f"{_p(p['p'])}</td>"
            '<td data-sort="'
            f'{p["p_holm"] if p["p_holm"] is not None else ""}">'
            f"{_p(p['p_holm'])}</td>{mark}</tr>"
        )
    level = 1 - float(board.get("alpha") or 0.05)
    note = (
        f'<p class="small">{_source(run)}: differences A - B on the '
        "units and seeds both generators have "
        f"(paired cluster bootstrap over units, {level:.0%} intervals; "
        "percentage points, the bias score in "
        "points of 0-5). p: two-sided bootstrap p; Holm-adjusted "
        f"over the {len(pairs)} differences; "
        f"resolved when the adjusted p &lt; {board.get('alpha')}; the "
        "resamples cannot give an adjusted p "
        f"below {board.get('min_p_holm') or 0:.3g}.</p>"
    )
    return (
        note + '<table class="leaderboard-pairs sortable"><thead><tr><th>A</th>'
        "<th>B</th><th>metric</th><th>units</th>"
        "<th>A - B</th><th>p</th><th>p (Holm)</th><th>verdict</th></tr>"
        f"</thead><tbody>{''.join(rows)}</tbody></table>"
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
    )
