"""The simulated world's image-selection pools and selection judge (When the Judge Acts).

Planted: ``world.selection.pools`` pools of 3 or 4 candidates (``four_share`` of them with 4),
in ``groups`` groups; each candidate has a quality q ~ Beta(quality) and ``annotators`` ratings
in {0, 0.5, 1} (Binomial(2, q) / 2), its utility h the mean rating (the paper's human reference
utility). The simulated selection judge answers the real request (``selection_protocol``) in
text the real parser reads: with probability ``invalid`` prose (no valid choice, an abstention);
otherwise with probability ``first_slot`` (per output contract and label kind: the protocol's
planted effect, §5.5) the first-presented candidate, else a content choice with
P(i) proportional to exp(``content`` x h_i) (a simulation device: the judge reads the planted
utilities; no pixels are drawn). Seconds per call are lognormal with median
``seconds_median`` (a simulated clock, labelled as such in the outputs).

``selection_truth`` gives each audited quantity's expected value on exactly these pools (ratio
of expectations over the judge's planted choice probabilities, all choice combinations of the K
orders enumerated), which ``recovery`` puts beside the audit's estimates.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import numpy as np

from implicit_bench._util.hashing import derive_seed
from implicit_bench.audits.image_pick import GATES, Pools, near_ties, policy, pool_outcomes
from implicit_bench.audits.image_pick_protocol import (
    Protocol,
    order_of,
    parse_answer,
    request_text,
    slot_labels,
)
from implicit_bench.world.params import SelectionJudgeWorld, SelectionScorerWorld, SelectionWorld

# the §5.5 ablations as protocols (the main protocol: 3 cyclic orders, letters, ranking)
PROTOCOLS: dict[str, Protocol] = {
    "main": Protocol(),
    "choice_only": Protocol(contract="choice_only"),
    "opaque_labels": Protocol(labels="opaque"),
    "full_rotation": Protocol(full_rotation=True),
}


def slot_bias(judge: SelectionJudgeWorld, protocol: Protocol) -> float:
    """The judge's planted first-slot preference under a protocol's contract and label kind."""
    if protocol.contract == "choice_only" and judge.first_slot_choice_only is not None:
        return judge.first_slot_choice_only
    if protocol.labels == "opaque" and judge.first_slot_opaque is not None:
        return judge.first_slot_opaque
    return judge.first_slot


def planted_pools(world: SelectionWorld, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(utilities (P, 4) with NaN for 3-candidate pools, groups (P,)): one draw per pool from
    ``derive_seed(seed, "selection/pool/<p>")``, so a pool does not depend on the others."""
    u = np.full((world.pools, 4), np.nan)
    groups = np.empty(world.pools, dtype=object)
    for p in range(world.pools):
        ratings = _ratings(world, seed, p)
        u[p, : len(ratings)] = ratings.mean(axis=1)
        groups[p] = f"group_{p % world.groups}"
    return u, groups


def _ratings(world: SelectionWorld, seed: int, p: int) -> np.ndarray:
    """Pool p's individual alignment ratings (m, annotators) in {0, 0.5, 1}."""
    rng = np.random.default_rng(derive_seed(seed, f"selection/pool/{p}"))
    m = 4 if rng.random() < world.four_share else 3
    q = rng.beta(*world.quality, size=m)
    return rng.binomial(2, q[:, None], size=(m, world.annotators)) / 2


def planted_extras(world: SelectionWorld, seed: int) -> dict[str, Any]:
    """The planted secondary ratings, generators, categories and annotator disagreement of the
    pools (``Pools``' optional arrays), from streams of their own (``selection/extras/<p>``), so
    the utilities and the judge's choices do not change with them. Disagreement: the mean over
    candidates of the sample variance (ddof 1) of their individual alignment ratings (App. I;
    NaN with one annotator)."""
    u, _ = planted_pools(world, seed)
    n, m_max = u.shape
    names = sorted(world.generators)
    out: dict[str, Any] = {
        "outcomes": {k: np.full((n, m_max), np.nan) for k in world.outcomes} or None,
        "generators": np.full((n, m_max), "", dtype=object) if names else None,
        "categories": np.empty(n, dtype=object) if world.categories else None,
        "disagreement": np.full(n, np.nan),
    }
    for p in range(n):
        ratings = _ratings(world, seed, p)
        m = len(ratings)
        if world.annotators > 1:
            out["disagreement"][p] = float(np.mean(np.var(ratings, axis=1, ddof=1)))
        rng = np.random.default_rng(derive_seed(seed, f"selection/extras/{p}"))
        gens = [names[i] for i in rng.permutation(len(names))[:m]] if names else []
        if names:
            out["generators"][p, :m] = gens
        if world.categories:
            out["categories"][p] = world.categories[int(rng.integers(len(world.categories)))]
        for name in sorted(world.outcomes):
            spec = world.outcomes[name]
            shift = np.array([world.generators[g].get(name, 0.0) for g in gens]) if gens else 0.0
            prob = np.clip(spec.intercept + spec.slope * u[p, :m] + shift, 0.0, 1.0)
            trials = world.annotators * spec.levels
            out["outcomes"][name][p, :m] = rng.binomial(trials, prob) / trials
    return out


def _subset(protocol: Protocol, u: np.ndarray) -> np.ndarray:
    """Pools a protocol runs on: full rotation only on the largest pools (the paper: 4 orders on
    the 200 four-image pools)."""
    sizes = np.sum(~np.isnan(u), axis=1)
    return sizes == sizes.max() if protocol.full_rotation else np.ones(len(u), bool)


def choice_probs(
    h: np.ndarray, judge: SelectionJudgeWorld, protocol: Protocol, k: int
) -> np.ndarray:
    """P(candidate i | a valid answer under order k) of one pool (canonical candidate order)."""
    m = len(h)
    z = np.exp(judge.content * (h - h.max()))
    content = z / z.sum()
    p = (1 - slot_bias(judge, protocol)) * content
    p[order_of(m, k)[0]] += slot_bias(judge, protocol)
    return p


def answer(
    rng: np.random.Generator,
    h_slots: np.ndarray,
    labels: list[str],
    judge: SelectionJudgeWorld,
    protocol: Protocol,
) -> str:
    """The simulated judge's answer text to one request (candidates in slot order)."""
    if rng.random() < judge.invalid:
        return "I would return the first image, it looks the most festive."
    z = np.exp(judge.content * (h_slots - h_slots.max()))
    p = (1 - slot_bias(judge, protocol)) * z / z.sum()
    p[0] += slot_bias(judge, protocol)
    slot = int(rng.choice(len(h_slots), p=p / p.sum()))
    if protocol.contract == "choice_only":
        return json.dumps({"choice": labels[slot]})
    ranking = [labels[slot]] + [lab for j, lab in enumerate(labels) if j != slot]
    return json.dumps({"choice": labels[slot], "ranking": ranking})


def simulate_selection(
    world: SelectionWorld, seed: int, judge_name: str, protocol: Protocol
) -> tuple[Pools, dict[str, int]]:
    """Run the protocol on the planted pools with the simulated judge: requests written and
    answers parsed by the real protocol code. Returns the pools and the parse counts."""
    judge = world.judges[judge_name]
    u_all, g_all = planted_pools(world, seed)
    keep = _subset(protocol, u_all)
    u, groups = u_all[keep], g_all[keep]
    ids = np.flatnonzero(keep)
    sizes = np.sum(~np.isnan(u), axis=1)
    k_max = int(max(protocol.orders(int(m)) for m in sizes)) if len(u) else protocol.n_orders
    choices = np.full((len(u), k_max), -1, dtype=np.int64)
    slots = np.full((len(u), k_max), -1, dtype=np.int64)
    seconds = np.full((len(u), k_max), np.nan)
    positions = np.full((len(u), k_max, u.shape[1]), -1, dtype=np.int64)
    status = np.full((len(u), k_max), "", dtype=object)
    json_ok = np.full((len(u), k_max), None, dtype=object)
    invalid = 0
    for row, (p, m) in enumerate(zip(ids, sizes, strict=True)):
        h = u[row, :m]
        for k in range(protocol.orders(int(m))):
            rng = np.random.default_rng(
                derive_seed(seed, f"selection/{judge_name}/{protocol}/{p}/{k}")
            )
            shown = order_of(int(m), k)
            labels = slot_labels(f"pool-{p}", int(m), k, protocol.labels, seed)
            request_text(f"pool {p}", labels, protocol.contract)  # what the judge is sent
            text = answer(rng, h[shown], labels, judge, protocol)
            seconds[row, k] = judge.seconds_median * float(
                np.exp(judge.seconds_log_sd * rng.standard_normal())
            )
            positions[row, k, shown] = np.arange(int(m))
            chosen = parse_answer(text, labels, protocol.contract)
            json_ok[row, k] = text.lstrip().startswith("{")
            status[row, k] = "parse_fail" if chosen is None else "exact"
            if chosen is None:
                invalid += 1
                continue
            slot = labels.index(chosen)
            slots[row, k] = slot
            choices[row, k] = shown[slot]
    calls = int(np.isfinite(seconds).sum())
    extras = planted_extras(world, seed)
    pools = Pools(
        u,
        choices,
        groups,
        slots,
        seconds,
        outcomes=None
        if extras["outcomes"] is None
        else {k: x[keep] for k, x in extras["outcomes"].items()},
        generators=None if extras["generators"] is None else extras["generators"][keep],
        categories=None if extras["categories"] is None else extras["categories"][keep],
        disagreement=extras["disagreement"][keep],
        positions=positions,
        status=status,
        json_ok=json_ok,
    )
    return pools, {"calls": calls, "invalid": invalid}


def selection_truth(
    world: SelectionWorld, seed: int, judge_name: str, protocol: Protocol, margin: float = 0.0
) -> dict[str, Any]:
    """Expected value of each audited quantity on the planted pools under the judge's planted
    choice probabilities: per policy (ratio of expectations over the pools it acts on) regret,
    gain, below-mean rate, best-rated share, coverage, worst-group regret (the plug-in max of the
    group truths); the first-slot share over calls and the flip rate; with planted secondary
    ratings, each one's selected minus pool mean (``delta_<name>``) on the same terms."""
    judge = world.judges[judge_name]
    u_all, g_all = planted_pools(world, seed)
    keep = _subset(protocol, u_all)
    u, groups = u_all[keep], g_all[keep]
    sizes = np.sum(~np.isnan(u), axis=1)
    valid = 1 - judge.invalid
    names = ("direct", *GATES)
    extra = {k: x[keep] for k, x in (planted_extras(world, seed)["outcomes"] or {}).items()}
    keys = (*_KEYS, *(f"delta_{k}" for k in sorted(extra)))
    acc = {n: {"w": np.zeros(len(u)), **{k: np.zeros(len(u)) for k in keys}} for n in names}
    first = flip = 0.0
    calls = 0.0
    for row, m in enumerate(sizes):
        m = int(m)
        h = u[row, :m]
        k_n = protocol.orders(m)
        probs = [choice_probs(h, judge, protocol, k) for k in range(k_n)]
        for k in range(k_n):
            first += probs[k][order_of(m, k)[0]]
            calls += 1
        combos = np.array(list(itertools.product(range(m), repeat=k_n)), dtype=np.int64)
        pc = np.prod([probs[k][combos[:, k]] for k in range(k_n)], axis=0)
        flip += 1 - pc[(combos == combos[:, :1]).all(axis=1)].sum()
        uu = np.broadcast_to(np.pad(h, (0, 4 - m), constant_values=np.nan), (len(combos), 4))
        for name in names:
            chosen, acts = policy(combos, 4, name)
            out = pool_outcomes(uu, chosen, margin)
            w = pc * acts * (valid if name == "direct" else valid**k_n)
            acc[name]["w"][row] = w.sum()
            for key in _KEYS:
                acc[name][key][row] = float(np.sum(w * np.nan_to_num(out[key])))
            for key, x in extra.items():
                d = x[row, :m] - x[row, :m].mean()
                acc[name][f"delta_{key}"][row] = float(np.sum(w * d[np.maximum(chosen, 0)]))
    result: dict[str, Any] = {
        "first_slot_share": first / calls if calls else None,
        "flip_rate": flip / len(u) if len(u) else None,
        "policies": {},
    }
    gkey = np.array([str(g) for g in groups])
    for name in names:
        a = acc[name]
        total = a["w"].sum()
        block = {k: float(a[k].sum() / total) if total > 0 else None for k in keys}
        block["coverage"] = float(total / len(u)) if len(u) else None
        per_group = [
            a["regret"][gkey == g].sum() / a["w"][gkey == g].sum()
            for g in sorted(set(gkey))
            if a["w"][gkey == g].sum() > 0
        ]
        block["worst_group_regret"] = float(max(per_group)) if per_group else None
        result["policies"][name] = block
    ties = near_ties(u, 0.05)
    result["pools"] = int(len(u))
    result["pools_with_near_ties"] = int((ties > 1).sum())
    return result


_KEYS = ("regret", "gain", "below_mean", "best_rated")


def cross_model_truth(
    world: SelectionWorld,
    seed: int,
    first: str,
    second: str,
    protocol: Protocol,
    margin: float = 0.0,
) -> dict[str, Any]:
    """Expected outcomes of the cross-model gate (both judges' order-1 choices valid and equal)
    and of the first judge on the prompts it rejects, on the planted pools."""
    j1, j2 = world.judges[first], world.judges[second]
    u_all, _ = planted_pools(world, seed)
    u = u_all[_subset(protocol, u_all)]
    sizes = np.sum(~np.isnan(u), axis=1)
    v1, v2 = 1 - j1.invalid, 1 - j2.invalid
    acc = {name: {k: 0.0 for k in (*_KEYS, "w")} for name in ("gate", "first_on_rejected")}
    for row, m in enumerate(sizes):
        m = int(m)
        h = u[row, :m]
        p1 = choice_probs(h, j1, protocol, 0)
        p2 = choice_probs(h, j2, protocol, 0)
        uu = np.broadcast_to(np.pad(h, (0, 4 - m), constant_values=np.nan), (m, 4))
        out = pool_outcomes(uu, np.arange(m), margin)
        for name, w in (
            ("gate", v1 * v2 * p1 * p2),
            ("first_on_rejected", v1 * p1 * (1 - v2 * p2)),
        ):
            acc[name]["w"] += float(w.sum())
            for key in _KEYS:
                acc[name][key] += float(np.sum(w * out[key]))
    result: dict[str, Any] = {}
    for name, a in acc.items():
        result[name] = {k: a[k] / a["w"] if a["w"] > 0 else None for k in _KEYS}
        result[name]["coverage"] = a["w"] / len(u) if len(u) else None
    return result


def scorer_choices(world: SelectionWorld, seed: int, name: str) -> np.ndarray:
    """The simulated similarity scorer's pick per planted pool (order-invariant: one pick)."""
    scorer: SelectionScorerWorld = world.scorers[name]
    u, _ = planted_pools(world, seed)
    out = np.empty(len(u), dtype=np.int64)
    for p, row in enumerate(u):
        h = row[~np.isnan(row)]
        rng = np.random.default_rng(derive_seed(seed, f"selection/scorer/{name}/{p}"))
        score = scorer.content * h + rng.gumbel(size=len(h))
        out[p] = int(np.argmax(score))
    return out


def scorer_truth(
    world: SelectionWorld, seed: int, name: str, judge_name: str, margin: float = 0.0
) -> dict[str, Any]:
    """Expected regret, gain, below-mean rate and best-rated share of a simulated scorer, and its
    expected gain minus the judge's order-1 gain, on the planted pools (main protocol)."""
    scorer, judge = world.scorers[name], world.judges[judge_name]
    u, _ = planted_pools(world, seed)
    sums = {k: 0.0 for k in _KEYS}
    diff = 0.0
    for row in u:
        h = row[~np.isnan(row)]
        m = len(h)
        z = np.exp(scorer.content * (h - h.max()))
        p_scorer = z / z.sum()
        p_judge = choice_probs(h, judge, PROTOCOLS["main"], 0)
        uu = np.broadcast_to(np.pad(h, (0, 4 - m), constant_values=np.nan), (m, 4))
        out = pool_outcomes(uu, np.arange(m), margin)
        for k in _KEYS:
            sums[k] += float(np.sum(p_scorer * out[k]))
        diff += float(np.sum((p_scorer - p_judge) * out["gain"]))
    n = len(u)
    result: dict[str, Any] = {k: v / n for k, v in sums.items()}
    result["gain_minus_judge"] = diff / n
    return result
