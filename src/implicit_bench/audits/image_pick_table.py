"""A selection-decisions file (your own judge's picks, e.g. on CulturalFrames) as ``Pools``.

One row per candidate and presentation order: ``pool_id``, ``candidate_id``, ``utility`` (the
reference rating, the same in every order), ``order`` (1..K), ``slot`` (0-based presentation
position under that order), ``chosen`` (true for the judge's pick under that order; no true row:
the call gave no valid answer, an abstention); optional ``group`` (e.g. country) and
``seconds`` (the call's wall time, the same on every row of one call). Candidates are indexed in
identifier order (canonical order, so majority ties break to the lowest identifier).

Optional columns for the secondary outcomes and breakdowns (each the same in every order of a
candidate, or of a pool, or on every row of a call):

- per candidate: ``stereotype``, ``missing_explicit``, ``missing_implicit`` (the share of
  annotators flagging the error, in [0, 1]), ``quality`` and ``satisfaction`` (in [0, 1]:
  rescale a 1-5 rating as (x - 1) / 4), ``generator``, ``rating_variance`` (the variance of the
  candidate's individual alignment ratings; empty with fewer than two ratings; a pool's
  annotator disagreement is the mean over its candidates that have one);
- per pool: ``category``;
- per call: ``status`` (``exact``, ``recovered``, ``parse_fail``, ``runtime_fail``) and ``json``
  (true when the raw answer was JSON).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from implicit_bench._util.files import read_table
from implicit_bench.audits.image_pick import Pools
from implicit_bench.errors import InputError

REQUIRED = ("pool_id", "candidate_id", "utility", "order", "slot", "chosen")
RATES = ("stereotype", "missing_explicit", "missing_implicit", "quality", "satisfaction")
STATUSES = ("exact", "recovered", "parse_fail", "runtime_fail")
BOOLS = {"true": True, "false": False, "1": True, "0": False}


def _fail(path: str, frame: pd.DataFrame, mask: pd.Series, field: str, reason: str) -> None:
    if mask.any():
        raise InputError(path, int(np.flatnonzero(mask.to_numpy())[0]) + 1, field, reason)


def read_decisions(path: str | Path) -> Pools:
    """Validate a decisions file and build the pools (errors: one line naming file, row, field)."""
    path = str(path)
    frame = read_table(path)
    for col in REQUIRED:
        if col not in frame.columns:
            raise InputError(path, None, col, "column missing from the decisions file")
    frame = frame.reset_index(drop=True)
    util = pd.to_numeric(frame["utility"], errors="coerce")
    _fail(path, frame, util.isna() | ~np.isfinite(util), "utility", "not a finite number")
    order = pd.to_numeric(frame["order"], errors="coerce")
    _fail(path, frame, order.isna() | (order < 1) | (order % 1 != 0), "order", "not 1, 2, ...")
    slot = pd.to_numeric(frame["slot"], errors="coerce")
    _fail(path, frame, slot.isna() | (slot < 0) | (slot % 1 != 0), "slot", "not 0, 1, ...")
    chosen = frame["chosen"].map(lambda v: BOOLS.get(str(v).strip().lower()))
    _fail(path, frame, chosen.isna(), "chosen", "not true / false")
    frame = frame.assign(
        utility=util,
        order=order.astype(int),
        slot=slot.astype(int),
        chosen=chosen.astype(bool),
        pool_id=frame["pool_id"].astype(str),
        candidate_id=frame["candidate_id"].astype(str),
    )
    _fail(
        path,
        frame,
        frame.duplicated(["pool_id", "candidate_id", "order"], keep="first"),
        "candidate_id",
        "the same candidate twice in one pool and order",
    )
    n_chosen = frame.groupby(["pool_id", "order"])["chosen"].transform("sum")
    _fail(path, frame, n_chosen > 1, "chosen", "more than one pick in one pool and order")
    pools = sorted(frame["pool_id"].unique())
    cands = frame.drop_duplicates(["pool_id", "candidate_id"]).sort_values(
        ["pool_id", "candidate_id"]
    )
    util_spread = frame.groupby(["pool_id", "candidate_id"])["utility"].transform("nunique")
    _fail(path, frame, util_spread > 1, "utility", "differs between orders of one candidate")
    sizes = cands.groupby("pool_id").size().reindex(pools).to_numpy()
    m_max = int(sizes.max())
    k_max = int(frame["order"].max())
    index = {pid: i for i, pid in enumerate(pools)}
    pos = cands.groupby("pool_id").cumcount().to_numpy()
    cand_index = {
        (p, c): int(j) for p, c, j in zip(cands["pool_id"], cands["candidate_id"], pos, strict=True)
    }
    utilities = np.full((len(pools), m_max), np.nan)
    utilities[[index[p] for p in cands["pool_id"]], pos] = cands["utility"].to_numpy()
    choices = np.full((len(pools), k_max), -1, dtype=np.int64)
    slots = np.full((len(pools), k_max), -1, dtype=np.int64)
    picks = frame[frame["chosen"]]
    for p, c, k, s in zip(
        picks["pool_id"], picks["candidate_id"], picks["order"], picks["slot"], strict=True
    ):
        choices[index[p], k - 1] = cand_index[(p, c)]
        slots[index[p], k - 1] = s
    seconds = None
    if "seconds" in frame.columns:
        seconds = np.full((len(pools), k_max), np.nan)
        per_call = frame.groupby(["pool_id", "order"])["seconds"].first()
        for (p, k), v in per_call.items():
            seconds[index[p], int(k) - 1] = float(v)
    groups = (
        frame.drop_duplicates("pool_id").set_index("pool_id")["group"].reindex(pools).astype(str)
        if "group" in frame.columns
        else pd.Series("all", index=pools)
    )
    rows = [index[p] for p in cands["pool_id"]]
    positions = np.full((len(pools), k_max, m_max), -1, dtype=np.int64)
    positions[
        [index[p] for p in frame["pool_id"]],
        frame["order"].to_numpy() - 1,
        [cand_index[(p, c)] for p, c in zip(frame["pool_id"], frame["candidate_id"], strict=True)],
    ] = frame["slot"].to_numpy()
    extras = _optional(path, frame, cands, rows, pos, (len(pools), m_max), index, k_max)
    return Pools(
        utilities,
        choices,
        groups.to_numpy(dtype=object),
        slots,
        seconds,
        positions=positions,
        pool_ids=np.array(pools, dtype=object),
        **extras,
    )


def _optional(
    path: str,
    frame: pd.DataFrame,
    cands: pd.DataFrame,
    rows: list[int],
    pos: np.ndarray,
    shape: tuple[int, int],
    index: dict[str, int],
    k_max: int,
) -> dict:
    """The optional per-candidate, per-pool and per-call arrays of ``Pools``."""
    out: dict = {}
    outcomes = {}
    for col in RATES:
        if col not in frame.columns:
            continue
        x = pd.to_numeric(frame[col], errors="coerce")
        _fail(path, frame, x.isna() | (x < 0) | (x > 1), col, "not a number in [0, 1]")
        spread = frame.assign(**{col: x}).groupby(["pool_id", "candidate_id"])[col]
        _fail(path, frame, spread.transform("nunique") > 1, col, "differs between orders")
        arr = np.full(shape, np.nan)
        arr[rows, pos] = x.loc[cands.index].to_numpy(dtype=float)
        outcomes[col] = arr
    if outcomes:
        out["outcomes"] = outcomes
    if "generator" in frame.columns:
        _fail(path, frame, frame["generator"].isna(), "generator", "empty")
        gen = np.full(shape, "", dtype=object)
        gen[rows, pos] = cands["generator"].astype(str).to_numpy()
        out["generators"] = gen
    if "rating_variance" in frame.columns:
        x = pd.to_numeric(frame["rating_variance"], errors="coerce")
        bad = frame["rating_variance"].notna() & (x.isna() | (x < 0))
        _fail(path, frame, bad, "rating_variance", "not a non-negative number")
        var = np.full(shape, np.nan)
        var[rows, pos] = x.loc[cands.index].to_numpy(dtype=float)
        defined = np.isfinite(var)
        count = defined.sum(axis=1)
        total = np.where(defined, var, 0.0).sum(axis=1)
        out["disagreement"] = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    if "category" in frame.columns:
        firsts = frame.drop_duplicates("pool_id").set_index("pool_id")["category"]
        out["categories"] = (
            firsts.reindex(sorted(index, key=index.get)).astype(str).to_numpy(dtype=object)
        )
    calls = frame.drop_duplicates(["pool_id", "order"])
    p_idx = [index[p] for p in calls["pool_id"]]
    k_idx = calls["order"].to_numpy() - 1
    if "status" in frame.columns:
        st = frame["status"].astype(str).str.strip().str.lower()
        _fail(path, frame, ~st.isin(STATUSES), "status", f"not one of {', '.join(STATUSES)}")
        spread = st.groupby([frame["pool_id"], frame["order"]]).transform("nunique")
        _fail(path, frame, spread > 1, "status", "differs between rows of one call")
        status = np.full((len(index), k_max), "", dtype=object)
        status[p_idx, k_idx] = st.loc[calls.index].to_numpy()
        out["status"] = status
    if "json" in frame.columns:
        js = frame["json"].map(lambda v: BOOLS.get(str(v).strip().lower()))
        _fail(path, frame, js.isna(), "json", "not true / false")
        spread = js.astype(str).groupby([frame["pool_id"], frame["order"]]).transform("nunique")
        _fail(path, frame, spread > 1, "json", "differs between rows of one call")
        ok = np.full((len(index), k_max), None, dtype=object)
        ok[p_idx, k_idx] = js.loc[calls.index].to_numpy()
        out["json_ok"] = ok
    return out
