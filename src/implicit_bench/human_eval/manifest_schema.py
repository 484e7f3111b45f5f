"""The structure of rating and calibration bundle manifests, checked before any answer is
mapped through them: a tampered manifest (a key dropped, a wrong type, an option order that is
not a permutation, an image list of the wrong length) is an ``InputError`` naming the manifest
and the field (``cases[3].images``), never an IndexError / TypeError / KeyError later."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from implicit_bench.errors import InputError
from implicit_bench.protocol.schema import ORDERS, VARIANTS


def _fail(path: str | Path, field: str, reason: str) -> None:
    raise InputError(path, None, field, reason)


def _get(path: str | Path, obj: dict[str, Any], key: str, where: str, kinds: tuple) -> Any:
    field = f"{where}.{key}" if where else key
    if key not in obj:
        _fail(path, field, "missing")
    value = obj[key]
    if isinstance(value, bool) and bool not in kinds:
        _fail(path, field, f"expected {' or '.join(k.__name__ for k in kinds)}, got a boolean")
    if not isinstance(value, kinds):
        _fail(
            path,
            field,
            f"expected {' or '.join(k.__name__ for k in kinds)}, got {type(value).__name__}",
        )
    if isinstance(value, str) and not value.strip() and key != "relation":
        _fail(path, field, "empty")
    return value


def _records(path: str | Path, data: dict[str, Any], key: str, id_key: str) -> list[dict]:
    records = _get(path, data, key, "", (list,))
    if not records:
        _fail(path, key, "empty list")
    seen: set[str] = set()
    for n, rec in enumerate(records):
        if not isinstance(rec, dict):
            _fail(path, f"{key}[{n}]", f"expected an object, got {type(rec).__name__}")
        ident = _get(path, rec, id_key, f"{key}[{n}]", (str,))
        if ident in seen:
            _fail(path, f"{key}[{n}].{id_key}", f"{ident!r} listed twice")
        seen.add(ident)
    return records


def _bundle_id(path: str | Path, data: dict[str, Any]) -> None:
    _get(path, data, "bundle_id", "", (str,))


def check_rating_manifest(path: str | Path, data: dict[str, Any]) -> None:
    """A rating bundle's manifest: ``sampling.config``; per case ``case``, ``unit_id``,
    ``bias_type``, ``seed`` and three ``images`` whose variants are the three variants."""
    _bundle_id(path, data)
    sampling = _get(path, data, "sampling", "", (dict,))
    _get(path, sampling, "config", "sampling", (str,))
    for n, case in enumerate(_records(path, data, "cases", "case")):
        where = f"cases[{n}]"
        _get(path, case, "unit_id", where, (str, int))
        _get(path, case, "bias_type", where, (str,))
        _get(path, case, "seed", where, (int,))
        images = _get(path, case, "images", where, (list,))
        if len(images) != len(VARIANTS):
            _fail(path, f"{where}.images", f"{len(images)} images, expected {len(VARIANTS)}")
        variants = []
        for k, image in enumerate(images):
            if not isinstance(image, dict):
                _fail(path, f"{where}.images[{k}]", "expected an object")
            variants.append(_get(path, image, "variant", f"{where}.images[{k}]", (str,)))
        if sorted(variants) != sorted(VARIANTS):
            _fail(
                path,
                f"{where}.images",
                f"variants {variants} are not a permutation of {list(VARIANTS)}",
            )


def check_calibration_manifest(path: str | Path, data: dict[str, Any]) -> None:
    """A calibration bundle's manifest: ``sheet``; per item ``item``, ``config``, ``unit_id``,
    ``variant``, ``seed``, ``image_sha256``, an ``order`` of ``ORDERS`` and the ``options``
    that order gives (A, B = the order's two labels, C = neither)."""
    _bundle_id(path, data)
    _get(path, data, "sheet", "", (str,))
    for n, item in enumerate(_records(path, data, "items", "item")):
        where = f"items[{n}]"
        for key in ("config", "unit_id", "variant", "image_sha256"):
            _get(path, item, key, where, (str,))
        _get(path, item, "seed", where, (int,))
        order = _get(path, item, "order", where, (str,))
        if order not in ORDERS:
            _fail(path, f"{where}.order", f"{order!r} is not one of {', '.join(ORDERS)}")
        options = _get(path, item, "options", where, (dict,))
        expected = {"A": order[0], "B": order[1], "C": "neither"}
        if options != expected:
            _fail(
                path,
                f"{where}.options",
                f"{options!r} is not the options of order {order!r} ({expected})",
            )
