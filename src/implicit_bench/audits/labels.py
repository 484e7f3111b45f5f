"""Blind labels per image, as the audits read them from a JUDGEMENTS table.

One image is ``(config, unit_id, variant, seed)``; a blind judgement row adds ``judge`` and
``order`` (``sa``: s was option A; ``as``: a was option A). Labels are the attributes
(s | a | neither), never letters. Invalid answers (``valid`` false or ``value`` null) are
kept as rows but carry no label.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from implicit_bench.errors import InputError
from implicit_bench.protocol.schema import BLIND_LABELS, CYCLIC_ORDERS, ORDERS

IMAGE_KEY: tuple[str, ...] = ("config", "unit_id", "variant", "seed")
_CODE = {"s": "s", "a": "a", "neither": "n"}

OrderOf = Callable[[str, int, str], str]


def blind_rows(judgements: pd.DataFrame, source: str = "judgements") -> pd.DataFrame:
    """The blind rows of a JUDGEMENTS table, with a ``label`` column (null when invalid)."""
    needed = [*IMAGE_KEY, "judge", "task", "value"]
    missing = [c for c in needed if c not in judgements.columns]
    if missing:
        raise InputError(source, None, missing[0], "column missing from the judgements table")
    rows = judgements[judgements["task"] == "blind"].copy()
    if "order" not in rows.columns:
        rows["order"] = None
    valid = rows["valid"].fillna(False).astype(bool) if "valid" in rows.columns else True
    value = rows["value"].astype("string")
    bad = value.notna() & ~value.isin(BLIND_LABELS)
    if bad.any():
        first = rows.index[bad.to_numpy()][0]
        raise InputError(
            source,
            int(first) + 1,
            "value",
            f"blind value {value[first]!r} is not one of {', '.join(BLIND_LABELS)}",
        )
    label = value.where(valid & value.notna()).astype(object)
    rows["label"] = label.where(label.notna(), None)  # plain objects: comparisons give plain bools
    rows["unit_id"] = rows["unit_id"].astype(str)
    for col in ("variant", "config", "judge", "order"):
        rows[col] = rows[col].astype(object).where(rows[col].notna(), None)
    rows["seed"] = rows["seed"].astype(int)
    bad_order = rows["order"].notna() & ~rows["order"].isin((*ORDERS, *CYCLIC_ORDERS))
    if bad_order.any():
        first = rows.index[bad_order.to_numpy()][0]
        raise InputError(
            source,
            int(first) + 1,
            "order",
            f"order {rows.at[first, 'order']!r} is not sa, as or a cyclic order",
        )
    dup = rows.duplicated([*IMAGE_KEY, "judge", "order"], keep=False)
    if dup.any():
        first = rows.index[dup.to_numpy()][0]
        raise InputError(
            source, int(first) + 1, None, "duplicate blind judgement of one image, judge and order"
        )
    return rows.reset_index(drop=True)


def slot_of(label: pd.Series, order: pd.Series) -> pd.Series:
    """Presentation slot of each answer: A, B (the s/a options) or C (neither) under a
    two-letter order; under a cyclic order the slot where the chosen candidate was shown.
    Null if invalid."""
    slot = pd.Series(pd.NA, index=label.index, dtype="string")
    slot[(label == "s") & (order == "sa")] = "A"
    slot[(label == "a") & (order == "as")] = "A"
    slot[(label == "a") & (order == "sa")] = "B"
    slot[(label == "s") & (order == "as")] = "B"
    slot[(label == "neither") & ~order.isin(CYCLIC_ORDERS)] = "C"
    cyclic = order.isin(CYCLIC_ORDERS) & label.notna()
    for idx in label.index[cyclic.to_numpy()]:
        slot[idx] = "ABC"[str(order[idx]).index(_CODE[label[idx]])]
    return slot


def primary_labels(blind: pd.DataFrame, order_of: OrderOf | None = None) -> pd.DataFrame:
    """One row per (image, judge): the answer under the image's primary order.

    The primary order is the hash-fixed order the judge uses when it asks once
    (``order_of(unit_id, seed, variant)``). An image asked once keeps its only row whatever
    its order; an image asked under both orders keeps the primary one (``sa`` when
    ``order_of`` is None).
    """
    counts = blind.groupby([*IMAGE_KEY, "judge"], sort=False)["order"].transform("size")
    single = blind[counts == 1]
    multi = blind[counts > 1]
    if len(multi):
        from implicit_bench.protocol.schema import cyclic_order

        cyclic = multi["order"].isin(CYCLIC_ORDERS).to_numpy()
        if order_of is None:
            wanted = pd.Series("sa", index=multi.index)
        else:
            wanted = pd.Series(
                [
                    order_of(u, int(s), v)
                    for u, s, v in zip(
                        multi["unit_id"], multi["seed"], multi["variant"], strict=True
                    )
                ],
                index=multi.index,
            )
        # an image asked under the three cyclic orders keeps its order 1 (the hash-drawn rotation)
        wanted[cyclic] = [
            cyclic_order(u, int(s), v)
            for u, s, v in zip(
                multi["unit_id"][cyclic],
                multi["seed"][cyclic],
                multi["variant"][cyclic],
                strict=True,
            )
        ]
        multi = multi[multi["order"] == wanted]
    return pd.concat([single, multi]).sort_values([*IMAGE_KEY, "judge"]).reset_index(drop=True)


def order_pairs(blind: pd.DataFrame) -> pd.DataFrame:
    """Images asked under both orders: one row per (image, judge) with
    ``label_sa``, ``label_as``."""
    key = [*IMAGE_KEY, "judge"]
    sa = blind.loc[blind["order"] == "sa", [*key, "label"]].rename(columns={"label": "label_sa"})
    as_ = blind.loc[blind["order"] == "as", [*key, "label"]].rename(columns={"label": "label_as"})
    return sa.merge(as_, on=key, how="inner").sort_values(key).reset_index(drop=True)
