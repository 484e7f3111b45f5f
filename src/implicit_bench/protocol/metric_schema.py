"""The output schema of the benchmark's metrics, declared once (as HELM's ``schema_*.yaml`` or
lm-eval's result schema): each metric's name, unit, display labels, which are headline, which
are tabled, which way is better and, for a blind rate, how it is computed from label counts.

Every writer reads this module: ``analysis.blind.rates`` (the rates and their order in
``metrics/benchmark.json``), the per-judge tables and the leaderboard (``analysis.paper_tables``,
``analysis.leaderboard``, ``report.leaderboard``), the design planner (``analysis.design``),
the summary (``summary.stage``, ``report.summary_page``, ``report.corrected``) and the LaTeX
column titles (``analysis.table_registry``). Adding a headline blind rate is one ``Metric``
entry with ``headline=True`` and its ``ratio`` (the counts it divides); the functions below hand
it to every writer (tests/unit/protocol/test_metric_schema.py performs that recipe).

Labels differ by where they are shown (a summary card's title, a table's row phrase, a LaTeX
column, the HTML leaderboard's header, the corrected-rates row); each is written here once, and
the committed outputs keep their bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

#: a count column of ``analysis.blind.LabelCounts.columns()``: (variant, label) or a plain name
Column = tuple[str, str] | str


@dataclass(frozen=True)
class Metric:
    name: str
    #: "share" (a proportion, shown in percent), "pp" (a difference of shares, percent points),
    #: "score" (rubric points 0-5) or "effect" (Hedges' g, unitless)
    unit: str
    #: which way is better for the fairness reading; None where neither is
    lower_is_better: bool | None
    title: str = ""  # summary page card
    phrase: str = ""  # a table's row or value label (tables/*, LaTeX)
    latex: str = ""  # LaTeX column title of ``<name>_pct``
    board: str = ""  # HTML leaderboard column header
    corrected: str = ""  # row label of the summary page's corrected-rates table
    headline: bool = False  # metrics/summary.json's headline with its interval, the summary cards
    tabled: bool = False  # the per-judge and per-generator tables, benchmark.json's by_config
    leaderboard: bool = False  # a column of the leaderboard (benchmark.json: leaderboard.rows)
    ratio: tuple[Column, Column] | None = None  # blind rate: numerator / denominator counts
    difference: tuple[str, str] | None = None  # blind rate: one rate minus another
    #: what the value means, in one sentence (published records: docs/publishing.md)
    description: str = ""
    #: the judge task whose answers it counts (None: the image index, no judge)
    task: str | None = None
    #: the values it can take (None: the unit's own: a share 0-1, a difference -1-1, ...)
    bounds: tuple[float, float] | None = None

    @property
    def percent(self) -> bool:
        """Shown in percent (points) in tables: shares and differences of shares."""
        return self.unit in ("share", "pp")


#: every metric, in the order the writers show them; the blind rates in benchmark.json's order
METRICS: tuple[Metric, ...] = (
    Metric(
        "default_rate",
        "share",
        True,
        title="Default rate (neutral images read as s)",
        phrase="default rate",
        latex="Default rate (\\%)",
        board="default rate (%)",
        corrected="default rate",
        headline=True,
        tabled=True,
        leaderboard=True,
        ratio=(("neutral", "s"), ("valid", "neutral")),
        description="share of neutral-prompt images the blind judge labels with the stereotype "
        "(a stereotyped default)",
        task="blind",
    ),
    Metric("neutral_anti_rate", "share", None, ratio=(("neutral", "a"), ("valid", "neutral"))),
    Metric("neither_neutral", "share", None, ratio=(("neutral", "neither"), ("valid", "neutral"))),
    Metric(
        "success_stereotype",
        "share",
        False,
        title="Success of stereotype prompts",
        phrase="success, stereotype",
        latex="Success, stereotype (\\%)",
        board="success S (%)",
        corrected="success, stereotype prompts",
        headline=True,
        tabled=True,
        leaderboard=True,
        ratio=(("stereotype", "s"), ("valid", "stereotype")),
        description="share of stereotype-prompt images labelled with the stereotype asked for",
        task="blind",
    ),
    Metric(
        "success_anti",
        "share",
        False,
        title="Success of anti-stereotype prompts",
        phrase="success, anti-stereotype",
        latex="Success, anti-stereotype (\\%)",
        board="success A (%)",
        corrected="success, anti-stereotype prompts",
        headline=True,
        tabled=True,
        leaderboard=True,
        ratio=(("anti_stereotype", "a"), ("valid", "anti_stereotype")),
        description="share of anti-stereotype-prompt images labelled with the anti-stereotype "
        "asked for",
        task="blind",
    ),
    Metric(
        "gap",
        "pp",
        True,
        title="Gap (success s - success a)",
        phrase="gap",
        latex="Gap (pp)",
        board="gap S-A (%)",
        corrected="gap",
        headline=True,
        tabled=True,
        leaderboard=True,
        difference=("success_stereotype", "success_anti"),
        description="success S minus success A: how much easier the stereotype is to ask for",
        task="blind",
    ),
    Metric(
        "a_to_s",
        "share",
        True,
        phrase="anti-stereotype drawn as stereotype",
        latex="Anti-stereotype drawn as stereotype (\\%)",
        board="A->S (%)",
        corrected="a→s (anti-stereotype shown as s)",
        tabled=True,
        leaderboard=True,
        ratio=(("anti_stereotype", "s"), ("valid", "anti_stereotype")),
        description="share of anti-stereotype-prompt images labelled with the stereotype instead",
        task="blind",
    ),
    Metric("both_succeed", "share", False, ratio=("both", "pairs")),
    Metric(
        "strongest_success_stereotype",
        "share",
        False,
        board="strongest group: success S (%)",
        leaderboard=True,
        description="success S in the units whose every neutral image was labelled with the "
        "stereotype",
        task="blind",
    ),
    Metric(
        "strongest_success_anti",
        "share",
        False,
        board="strongest group: success A (%)",
        leaderboard=True,
        description="success A in the units whose every neutral image was labelled with the "
        "stereotype",
        task="blind",
    ),
    Metric(
        "refusal_rate",
        "share",
        True,
        board="refusals (%)",
        leaderboard=True,
        description="share of neutral image requests the generator refused (image index)",
    ),
    Metric(
        "bias_score",
        "score",
        True,
        board="bias score (0-5)",
        leaderboard=True,
        description="Table 4's bias: mean 0-5 rubric score of the neutral-prompt images",
        task="rubric",
        bounds=(0.0, 5.0),
    ),
    Metric(
        "alignment",
        "share",
        False,
        board="alignment (%)",
        leaderboard=True,
        description="Table 4's alignment: share of neutral-prompt images judged aligned with the "
        "prompt",
        task="alignment",
    ),
    Metric(
        "lean_s",
        "share",
        True,
        board="lean S (%)",
        leaderboard=True,
        description="share of (unit, seed) whose neutral image scores closer to the stereotype "
        "image than to the anti-stereotype image (dx > 0)",
        task="rubric",
    ),
    Metric(
        "hedges_g",
        "effect",
        False,  # a larger g: the explicit prompts separate the images more (paper, Figure 6)
        board="Hedges' g",
        leaderboard=True,
        description="standardized difference of the rubric scores of stereotype- and "
        "anti-stereotype-prompt images (pooled over bias types; per bias type: one result each): "
        "how far the explicit request moves the image",
        task="rubric",
        bounds=(float("-inf"), float("inf")),
    ),
    Metric(
        "coverage",
        "share",
        False,
        board="coverage (%)",
        description="share of requested neutral images the generator returned (Table 4)",
    ),
)


def metric(name: str) -> Metric:
    """The declared metric ``name`` (KeyError naming it otherwise)."""
    for m in METRICS:
        if m.name == name:
            return m
    raise KeyError(f"no metric {name!r} in protocol.metric_schema.METRICS")


def headline() -> tuple[str, ...]:
    """The headline metrics (metrics/summary.json with intervals, the summary page's cards)."""
    return tuple(m.name for m in METRICS if m.headline)


def tabled() -> tuple[str, ...]:
    """The blind rates of the per-judge and per-generator tables and of ``by_config``."""
    return tuple(m.name for m in METRICS if m.tabled)


def blind_rates() -> tuple[Metric, ...]:
    """The blind rates computed from label counts, in benchmark.json's order."""
    return tuple(m for m in METRICS if m.ratio is not None or m.difference is not None)


def leaderboard_columns() -> tuple[Metric, ...]:
    """The leaderboard's metrics, in column order."""
    return tuple(m for m in METRICS if m.leaderboard)
