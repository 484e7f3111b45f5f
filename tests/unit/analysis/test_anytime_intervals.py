"""Anytime-valid confidence sequences (analysis.anytime) and ``analyze --order --looks``
(analysis.looks): hand-worked small cases, a collapse at the whole population, coverage over
random orders, and one-line errors."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.optimize import brentq

from implicit_bench.analysis.anytime import bets, confidence_sequence
from implicit_bench.cli.main import main as cli_main
from tests.helpers.analysis_fixtures import (
    BLIND_TYPES,
    analyze_in_order,
    order_inputs,
    units,
)

ALPHA = 0.05


def reference_bets(x: list[float], alpha: float) -> list[float]:
    """The predictable plug-in bets written out one draw at a time."""
    out, total, squares, mu_prev = [], 0.0, 0.0, 0.5
    for i, value in enumerate(x, start=1):
        s2_prev = (0.25 + squares) / i  # sigma2_hat_{i-1} = (1/4 + sum_{j<i} ...) / i
        out.append(min(0.5, math.sqrt(2 * math.log(2 / alpha) / (s2_prev * i * math.log(i + 1)))))
        squares += (value - mu_prev) ** 2
        total += value
        mu_prev = (0.5 + total) / (i + 1)
    return out


def test_bets_equal_the_formula_drawn_one_at_a_time():
    x = np.random.default_rng(0).random(300).round(2)
    assert np.allclose(bets(x, ALPHA), reference_bets(list(x), ALPHA), rtol=1e-12)
    assert bets(np.array([0.0, 1.0]), ALPHA).tolist() == [0.5, 0.5]  # capped at c = 1/2
    assert bets(x, ALPHA)[-1] < 0.5  # a few hundred draws in, the bet is below the cap


def test_one_draw_gives_the_logical_bounds_by_hand():
    """N = 4, first draw 1: K+ <= 1 + 0.5 (1 - m) <= 1.5 and K- <= 1, far below 2 / alpha = 40,
    so only the values the three unseen units can give bound the mean: [1/4, 1]."""
    lo, hi = confidence_sequence(np.array([1.0]), 4, [1], ALPHA)
    assert (lo[0], hi[0]) == (0.25, 1.0)


def test_the_whole_population_collapses_to_its_mean():
    x = np.array([0.2, 0.9, 0.4, 0.4, 1.0])
    lo, hi = confidence_sequence(x, 5, [2, 5], ALPHA)
    assert lo[-1] == hi[-1] == pytest.approx(0.58, abs=1e-15)
    assert lo[0] <= 0.58 <= hi[0]


def test_lower_end_is_where_the_capital_reaches_two_over_alpha():
    """A huge population (draws nearly independent) of ones: the lower end L solves
    sum log(1 + l_i (1 - m_i(L))) = log(2 / alpha), found here by brentq."""
    n_pop, t = 10**9, 40
    x = np.ones(t)
    lam = bets(x, ALPHA)
    before = np.arange(t, dtype=float)

    def log_k(m: float) -> float:
        remaining = (n_pop * m - before) / (n_pop - np.arange(t))
        return float(np.log1p(lam * (x - remaining)).sum() - math.log(2 / ALPHA))

    exact = brentq(log_k, 0.0, 1 - 1e-9, xtol=1e-14)
    lo, hi = confidence_sequence(x, n_pop, [t], ALPHA)
    assert lo[0] <= exact <= lo[0] + 1e-12  # the bracket's outer point: never narrower
    assert hi[0] == 1.0


@pytest.mark.parametrize("kind", ["bernoulli", "skewed"])
def test_cover_the_population_mean_at_every_look_in_95_percent_of_orders(kind):
    rng = np.random.default_rng(7)
    n_pop = 400
    pop = (
        (rng.random(n_pop) < 0.2).astype(float) if kind == "bernoulli" else rng.beta(0.4, 3, n_pop)
    )
    orders = np.array([rng.permutation(n_pop) for _ in range(400)])
    looks = [5, 20, 50, 100, 200, 300, 400]
    lo, hi = confidence_sequence(pop[orders], n_pop, looks, ALPHA)
    mean = pop.mean()
    covered = ((lo <= mean + 1e-12) & (mean <= hi + 1e-12)).all(axis=1)
    assert covered.mean() >= 0.95
    assert np.all(np.diff(hi - lo, axis=1) <= 1e-15)  # intersected over looks: never wider


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="population"):
        confidence_sequence(np.zeros(5), 4, [5], ALPHA)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        confidence_sequence(np.array([0.5, 1.5]), 4, [2], ALPHA)
    with pytest.raises(ValueError, match="looks"):
        confidence_sequence(np.zeros(3), 4, [2, 2], ALPHA)


# ---- analyze --order --looks ---------------------------------------------------------------


_inputs = order_inputs
_analyze = analyze_in_order


def test_analyze_writes_anytime_json_worked_by_hand(tmp_path):
    res = _analyze(tmp_path, "u3\nu1\n\nu4\nu2\n", "1,2,4")
    assert res.exit_code == 0, res.output
    report = json.loads((tmp_path / "out" / "anytime.json").read_text())
    assert report["anytime_valid"] is True and report["looks"] == [1, 2, 4]
    assert report["order"] == {"file": "order.txt", "draw": "unit", "units": 4, "judged": 4}
    # default rate of judge A per unit (neutral images labelled s among valid labels):
    # u3 0, u1 3/3, u4 2/2 (one invalid), u2 1/3 -> population mean 7/12
    rate = report["estimands"]["default_rate"]
    assert rate["population_units"] == 4 and rate["population_value"] == round(7 / 12, 10)
    assert [look["estimate"] for look in rate["looks"]] == [0.0, 0.5, round(7 / 12, 10)]
    assert rate["looks"][-1]["anytime"] == [round(7 / 12, 10)] * 2
    assert rate["looks"][-1]["fixed_n"] == [round(7 / 12, 10)] * 2  # the FPC is 0 at n = N
    lo, hi = rate["looks"][0]["anytime"]
    assert lo == 0.0 and hi == 0.75  # one unit seen at 0: the three unseen can give at most 3/4
    # Table 4 bias score (neutral rubric mean of judge A): u3 1, u1 7/3, u2 5/2; u4 has none
    bias = report["estimands"]["bias_score/gen"]
    assert bias["population_units"] == 3
    assert bias["population_value"] == round((1 + 7 / 3 + 2.5) / 3, 10)
    assert [look["n"] for look in bias["looks"]] == [1, 2, 3]


def test_analyze_order_errors_name_file_and_row(tmp_path):
    res = _analyze(tmp_path, "u1\nu9\n", "1")
    assert res.exit_code != 0
    assert "order.txt, row 2, field 'unit_id': unit 'u9' is not an analysed unit" in res.output
    assert "Traceback" not in res.output
    res = _analyze(tmp_path, "u1\nu2\nu1\n", "1")
    assert "order.txt, row 3, field 'unit_id': unit 'u1' already on row 1" in res.output
    res = _analyze(tmp_path, "u1\nu2\n", "2,1")
    assert res.exit_code != 0 and "--looks" in res.output
    assert not (tmp_path / "out").exists()  # refused before anything is written


def test_looks_past_the_judged_units_are_refused(tmp_path):
    u, j = _inputs(tmp_path)
    units({**BLIND_TYPES, "u5": "race"}).to_csv(u, index=False)  # u5 not judged yet
    (tmp_path / "order.txt").write_text("u1\nu5\nu2\n")
    args = ["analyze", "--units", str(u), "--judgements", str(j), "--out", str(tmp_path / "o")]
    res = CliRunner().invoke(
        cli_main, [*args, "--order", str(tmp_path / "order.txt"), "--looks", "1,3"]
    )
    assert res.exit_code != 0
    assert "reach only the first 1 units of order.txt" in res.output


def test_order_needs_looks(tmp_path):
    u, j = _inputs(tmp_path)
    (tmp_path / "order.txt").write_text("u1\n")
    res = CliRunner().invoke(
        cli_main,
        ["analyze", "--units", str(u), "--judgements", str(j), "--out", str(tmp_path / "o")]
        + ["--order", str(tmp_path / "order.txt")],
    )
    assert res.exit_code == 2 and "--order and --looks go together" in res.output
