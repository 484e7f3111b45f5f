"""``implicit-bench run --sequential``: render and judge in rounds, stop when the targets hold.

The units are taken in one uniformly random order fixed by ``subset.seed`` (``subset.order:
random``); round ``r`` runs the pipeline (``dvc exp run -S subset.max_units=N_r``) on the first
``N_r`` units, so every round holds the previous one and the model-call cache makes the earlier
rounds free. After each round the anytime-valid intervals of every look so far are computed
(``analysis.looks``: valid at every look at once, so stopping on them keeps their level) and the
run stops when every target holds: each named estimand's half-width at most ``--target-width``,
each ``--resolve A,B`` pair's bias-score difference excluding 0; or when the next round would
pass ``--max-gpu-hours`` (the plan's render and judge GPU-hours of that round); or after the
last round. ``logs/sequential-NAME.json`` records each finished round and, at the end, which
round stopped and why; a killed run started again with the same settings resumes after its
last finished round (docs/experiments.md, "Sequential runs").
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from implicit_bench._util.files import atomic_write_text
from implicit_bench.analysis.looks import parse_counts
from implicit_bench.errors import ConfigError
from implicit_bench.planning.sequential_record import changed_keys, check_resumable, load_record
from implicit_bench.protocol.tables import TRIPLETS_PATH

STATE_DIR = Path("logs")


DEFAULT_ROUNDS = 16  # default rounds: every N/16 units


def parse_rounds(text: str | None, n_units: int) -> list[int]:
    """``--rounds N1,N2,...`` (increasing unit counts; the last capped at every unit), or by
    default ``DEFAULT_ROUNDS`` rounds of an equal share of the units each (every 16th: the
    doubling N/8, N/4, N/2, N of before among them): a run renders at most N/16 units more
    than the unit count at which its targets first hold."""
    if text is None:
        rounds = [max(1, k * n_units // DEFAULT_ROUNDS) for k in range(1, DEFAULT_ROUNDS + 1)]
        return sorted(set(rounds))
    rounds = parse_counts(text, "--rounds")
    return sorted({min(n, n_units) for n in rounds})


def parse_pairs(pairs: tuple[str, ...]) -> list[tuple[str, str]]:
    out = []
    for pair in pairs:
        a, sep, b = pair.partition(",")
        if not sep or not a or not b or a == b:
            raise ConfigError(f"--resolve {pair}: give two configurations as A,B")
        out.append((a, b))
    return out


#: the DVC targets of a round (``run --stages``): evaluate and what it needs
ROUND_TARGETS: list[str] = ["evaluate"]


def dvc_round(max_units: int, targets: list[str] | None = None) -> None:
    """Run the pipeline on the first ``max_units`` units of the order (``dvc exp run``): the
    stages ``targets`` need (default ``ROUND_TARGETS``; empty: the whole pipeline)."""
    # unnamed: a round run again (new targets, a resumed kill) must not clash with an earlier
    # experiment of the same name; logs/sequential-NAME.json names the rounds
    from implicit_bench.runtime.dvc import dvc_command

    targets = ROUND_TARGETS if targets is None else targets
    cmd = dvc_command("exp", "run", "-S", f"subset.max_units={max_units}", *targets)
    print(f"round: dvc {' '.join(cmd[3:])}", flush=True)
    done = subprocess.run(cmd, check=False)
    if done.returncode != 0:
        raise SystemExit(done.returncode)


GENERATOR_ESTIMANDS = ("bias_score", "alignment")  # per generator (analysis.looks)


def check_estimands(names: list[str], configs: list[str]) -> None:
    """A one-line ``ConfigError`` for an ``--estimand`` no round can report, before anything is
    written or run: a headline rate, ``bias_score|alignment/CONFIG`` or ``.../A-B`` of the
    run's generators (``analysis.looks.estimands`` names them so)."""
    from implicit_bench.protocol import metric_schema

    pairs = {f"{a}-{b}" for a in configs for b in configs if a != b}
    known = list(metric_schema.headline())  # the headline rates (analysis.looks)
    known += [f"{m}/{c}" for m in GENERATOR_ESTIMANDS for c in [*configs, *sorted(pairs)]]
    for name in names:
        if name not in known:
            raise ConfigError(
                f"--estimand {name}: not an estimand of this run; known: "
                f"{', '.join(known[: 4 + 2 * len(configs)])} (and METRIC/A-B of two generators)"
            )


def release_path(params: dict[str, Any]) -> str | None:
    """The authors' release the params name (``benchmark.path``, ``evaluate.beside_release``)."""
    from implicit_bench._util.nested import dig

    bench = params.get("benchmark")
    path = bench.get("path") if isinstance(bench, dict) else None
    return path or dig(params, "evaluate", "beside_release")


def look(
    params: dict[str, Any],
    looks: list[int],
    covariates: str = "none",
    target: float | None = None,
) -> dict[str, Any]:
    """The anytime-valid intervals at ``looks`` from the workspace's tables (``covariates``:
    ``analysis.covariates``; ``target``: the half-width the bets are tuned to)."""
    import pandas as pd

    from implicit_bench.analysis.byo.covariates import load_covariates
    from implicit_bench.analysis.context import EvalContext
    from implicit_bench.analysis.looks import anytime_report
    from implicit_bench.analysis.stage import evaluate_inputs
    from implicit_bench.construction.triplets.subset import random_order

    subset = params.get("subset") or {}
    triplets = pd.read_parquet(TRIPLETS_PATH, columns=["unit_id"])
    order = random_order(triplets["unit_id"].astype(str).tolist(), int(subset.get("seed", 42)))
    ev, tables = evaluate_inputs(params, "params.yaml")  # the evaluate stage's own inputs
    ctx = EvalContext.build(tables, tables.units, ev)
    judged = set(tables.units["unit_id"].astype(str))
    reached = next((i for i, u in enumerate(order) if u not in judged), len(order))
    where = f"subset order (random, seed {subset.get('seed', 42)})"
    known = load_covariates(covariates, release_path(params))
    return anytime_report(ctx, order, looks, where, reached, covariates=known, target=target)


def targets_hold(
    report: dict[str, Any],
    target: float | None,
    names: list[str],
    pairs: list[tuple[str, str]],
) -> dict[str, Any]:
    """Each target at the last look: its interval and whether it holds."""
    est = report["estimands"]
    out: dict[str, Any] = {}
    if target is not None:
        for name in names or [n for n, e in est.items() if e["group"] != "paired"]:
            if name not in est:
                raise ConfigError(f"--estimand {name}: not among {sorted(est)}")
            ci = est[name]["looks"][-1]["anytime"]
            held = ci is not None and (ci[1] - ci[0]) / 2 <= target
            out[name] = {"anytime": ci, "target_half_width": target, "holds": held}
    for a, b in pairs:
        name = f"bias_score/{a}-{b}" if f"bias_score/{a}-{b}" in est else f"bias_score/{b}-{a}"
        if name not in est:
            raise ConfigError(f"--resolve {a},{b}: no bias scores of both configurations")
        ci = est[name]["looks"][-1]["anytime"]
        out[name] = {
            "anytime": ci,
            "resolve": True,
            "holds": ci is not None and (ci[0] > 0 or ci[1] < 0),
        }
    return out


def next_round_gpu_hours(params: dict[str, Any], max_units: int) -> float:
    """The plan's render and judge GPU-hours still to spend for a round of ``max_units``."""
    from implicit_bench.planning.plan import build_plan

    # raw: a params overlay for one trial (the stages validate it)
    trial = {**params, "subset": {**(params.get("subset") or {}), "max_units": max_units}}
    plans, _ = build_plan(trial)
    return sum(p.hours or 0 for p in plans if p.gpu and p.stage.startswith(("render", "judge")))


def run_sequential(
    params_of: Callable[[], dict[str, Any]],
    rounds: list[int],
    target: float | None,
    names: list[str],
    pairs: list[tuple[str, str]],
    max_gpu_hours: float | None,
    exp_name: str | None,
    run_round: Callable[[int], None] = dvc_round,
    covariates: str | None = None,
) -> dict[str, Any]:
    """Rounds until the targets hold, the budget ends or the rounds run out (resumable).
    ``covariates``: ``release``, a path or ``none`` (default: ``release`` when the params name
    one, else ``none``); the bets are tuned to ``target`` when it is set.

    Every round runs on the params the run started with: params that change between rounds
    are refused before the next round is spent (one record, one set of settings); a start
    with other settings than its record's starts again at round 1 (docs/errors.md)."""
    start = params_of()
    if covariates is None:
        covariates = "release" if release_path(start) else "none"
    settings = {
        "rounds": rounds,
        "target_half_width": target,
        "estimands": names,
        "resolve": [list(p) for p in pairs],
        "max_gpu_hours": max_gpu_hours,
        "covariates": covariates,
        "params": _params_hash(start),
    }
    path = STATE_DIR / f"sequential-{exp_name or 'run'}.json"
    state: dict[str, Any] = {"anytime_valid": True, "settings": settings, "rounds": []}
    if path.exists():
        old = load_record(path)  # checked field by field: a tampered file is one line
        if old["settings"] != settings:
            differ = [k for k in settings if old["settings"].get(k) != settings[k]]
            print(
                f"sequential: {path} was written with other settings ({', '.join(differ)}): "
                "starting again at round 1",
                flush=True,
            )
        else:
            check_resumable(old, rounds, path)
            state = old
            if state.get("stopped"):
                print(
                    f"sequential: already stopped ({state['stopped']['why']}); {path}", flush=True
                )
                return state
            print(f"sequential: resuming after round {len(state['rounds'])} ({path})", flush=True)
    spent = sum(r.get("gpu_hours", 0.0) for r in state["rounds"])
    for index in range(len(state["rounds"]), len(rounds)):
        units = rounds[index]
        params = _unchanged(start, params_of(), path, f"before round {index + 1}")
        hours = next_round_gpu_hours(params, units) if max_gpu_hours is not None else 0.0
        if max_gpu_hours is not None and spent + hours > max_gpu_hours:
            why = f"budget: round {index + 1} needs {hours:.2f} GPU-h, {spent:.2f} spent"
            state["stopped"] = {"round": index, "why": f"{why} of {max_gpu_hours}"}
            break
        run_round(units)
        spent += hours
        params = _unchanged(start, params_of(), path, f"during round {index + 1}")
        report = look(params, rounds[: index + 1], covariates, target)
        held = targets_hold(report, target, names, pairs)
        state["rounds"].append(
            {
                "round": index + 1,
                "units": units,
                "gpu_hours": round(hours, 3),
                "targets": held,
                "params": settings["params"],  # the settings this round ran on
            }
        )
        state["last_report"] = report
        if index == len(rounds) - 1:
            whole = report["order"]["judged"] == report["order"]["units"]  # intervals collapse
            why = "last round: every unit judged" if whole else "last round"
            state["stopped"] = {"round": index + 1, "why": why}
        elif held and all(t["holds"] for t in held.values()):
            state["stopped"] = {"round": index + 1, "why": "every target holds"}
        _save(path, state)  # a round counts as finished once it is recorded
        if "stopped" in state:
            break
    _save(path, state)
    print(
        f"sequential: stopped after round {state['stopped']['round']} of {len(rounds)} "
        f"({state['stopped']['why']}); anytime-valid intervals in {path}",
        flush=True,
    )
    return state


def _unchanged(start: dict[str, Any], now: dict[str, Any], path: Path, when: str) -> dict[str, Any]:
    """``now``, the params read before or after a round, when they are the run's ``start``
    params (less ``subset.max_units``); else a ``ConfigError`` naming the keys changed."""
    if _params_hash(now) == _params_hash(start):
        return now
    keys = [k for k in changed_keys(start, now) if k != "subset.max_units"]
    raise ConfigError(
        f"params changed {when} of the sequential run "
        f"({', '.join(keys[:8])}{', ...' if len(keys) > 8 else ''}): one run's rounds share one "
        f"set of settings; restore them to go on ({path} resumes), or start again with the new "
        "ones (a start with other settings begins at round 1)"
    )


def _params_hash(params: dict[str, Any]) -> str:
    """The params of the run, less ``subset.max_units`` (which each round sets)."""
    # raw: the subset keys as written, echoed in the result
    subset = {k: v for k, v in (params.get("subset") or {}).items() if k != "max_units"}
    fixed = {**params, "subset": subset}
    return hashlib.sha256(json.dumps(fixed, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _save(path: Path, state: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(state, indent=2) + "\n")
