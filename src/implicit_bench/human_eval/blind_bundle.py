"""Calibration bundles: the images of a calibration sheet (``implicit-bench
calibration sample``) with the blind judge's A / B / C question, for people to label.

Each sheet row becomes one item: the image (from the image stores, checked against the sheet's
``image_sha256``) and the ``blind`` task's prompt (Appendix F.5) filled with the unit's head,
stereotype and anti-stereotype, s and a in the item's option order: ``"sa"`` (s is option A) or
``"as"``, drawn from a hash of (bundle seed, config, unit, seed, variant) as the judge's order
is drawn from a hash of (unit, seed, variant); C is always "neither". The order is recorded in
the manifest (never in the form); items are shown in a random order.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.hashing import derive_seed, stable_hash
from implicit_bench.errors import InputError
from implicit_bench.human_eval.blind_form import (
    BLIND_ANSWER_COLUMNS,
    question_parts,
    render_blind_form,
)
from implicit_bench.human_eval.bundle import (
    HumanEvalParams,
    _data_uri,
    _open_stores,
    write_bundle,
)
from implicit_bench.protocol.judge_tasks import load_task, task_fields
from implicit_bench.protocol.prompt_fields import unit_fields
from implicit_bench.protocol.schema import ORDERS
from implicit_bench.protocol.tables import CALIBRATION, UNITS

KIND = "calibration"
KEY = ("config", "unit_id", "variant", "seed")


def item_order(seed: int, config: str, unit_id: str, image_seed: int, variant: str) -> str:
    """The option order of one item: ``"sa"`` (s is option A) or ``"as"``."""
    return ORDERS[derive_seed(seed, "blind", config, unit_id, int(image_seed), variant) % 2]


def option_labels(order: str) -> dict[str, str]:
    """Letter -> stored label for an order: ``"sa"`` -> A = s, B = a, C = neither."""
    return {"A": order[0], "B": order[1], "C": "neither"}


def _image_shas(sheet: pd.DataFrame, sheet_path: Path, params: HumanEvalParams, root: Path):
    index, stores = _open_stores(params.image_roots, root)
    ok = index[index["status"] == "ok"].copy()
    ok["seed"] = ok["seed"].astype(int)
    ok["config"] = ok["config"].astype(str)
    keyed = ok.set_index(list(KEY))["sha256"]
    shas = []
    for i, row in enumerate(sheet.itertuples(index=False), start=1):
        key = (str(row.config), str(row.unit_id), str(row.variant), int(row.seed))
        if key not in keyed.index:
            raise InputError(
                sheet_path, i, "unit_id", f"image {key} has no ok image in {params.image_roots}"
            )
        sha = str(keyed.loc[key])
        given = row.image_sha256
        if isinstance(given, str) and given and given != sha:
            raise InputError(
                sheet_path,
                i,
                "image_sha256",
                f"{given[:12]}... is not the stored image of {key} ({sha[:12]}...)",
            )
        shas.append(sha)
    return shas, stores


def export_calibration_bundle(
    params: HumanEvalParams,
    sheet_path: str | Path,
    out_dir: str | Path,
    root: str | Path = ".",
    bundle_id: str | None = None,
) -> dict[str, Any]:
    """Write ``form.html`` (blind question per sheet image), ``manifest.json`` (per item the
    image key, hash and option order; keep it from raters) and ``README.txt`` into ``out_dir``."""
    root, sheet_path = Path(root), Path(sheet_path)
    sheet = CALIBRATION.read(sheet_path)
    if sheet.empty:
        raise InputError(sheet_path, None, None, "the calibration sheet has no images")
    units = UNITS.read(root / params.units).set_index("unit_id")
    shas, stores = _image_shas(sheet, sheet_path, params, root)
    task = load_task("blind")
    rng = np.random.default_rng(derive_seed(params.seed, "calibration-bundle"))
    items = []
    for n, i in enumerate(rng.permutation(len(sheet)), start=1):
        row = sheet.iloc[int(i)]
        uid = str(row["unit_id"])
        if uid not in units.index:
            raise InputError(sheet_path, int(i) + 1, "unit_id", f"unit {uid} not in {params.units}")
        order = item_order(params.seed, row["config"], uid, row["seed"], row["variant"])
        fields = unit_fields({"unit_id": uid, **units.loc[uid].to_dict()}, params.units)
        items.append(
            {
                "item": f"k{n:04d}",
                "config": str(row["config"]),
                "unit_id": uid,
                "variant": str(row["variant"]),
                "seed": int(row["seed"]),
                "sheet_row": int(i) + 1,
                "image_sha256": shas[int(i)],
                "order": order,
                "options": option_labels(order),
                "prompt": task.render(task_fields(task, fields, order)),
            }
        )
    record = {"sheet": str(sheet_path), "items": len(items), "seed": params.seed}
    bundle_id = bundle_id or "k-" + stable_hash([record, [it["image_sha256"] for it in items]], 10)
    form_items = [
        {
            "item": it["item"],
            "unit_id": it["unit_id"],
            "image": _data_uri(stores[it["config"]], it["image_sha256"], params.image_size),
            "question": question_parts(it["prompt"]),
        }
        for it in items
    ]
    out = Path(out_dir)
    manifest = {
        "bundle_id": bundle_id,
        "kind": KIND,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "sheet": str(sheet_path),
        "sampling": record,
        "question": task.prompt,
        "question_source": task.source,
        "answer_columns": list(BLIND_ANSWER_COLUMNS),
        "items": items,
    }
    write_bundle(
        out,
        manifest,
        render_blind_form(bundle_id, form_items),
        f"Calibration bundle {bundle_id}: {len(items)} images of {sheet_path}.\n"
        "Send form.html to each rater (it works offline in any browser; answers are saved in\n"
        "the browser as they go). Each rater downloads their answers as a CSV at the end.\n"
        "Keep manifest.json private: it says which option is the stereotype.\n"
        "Import: implicit-bench human-eval import --manifest manifest.json ANSWERS.csv ...\n",
    )
    return {"bundle_id": bundle_id, "n_items": len(items), "out": str(out), **record}
