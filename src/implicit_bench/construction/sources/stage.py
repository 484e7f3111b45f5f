"""Source data: StereoSet dev + CrowS-Pairs -> one table of stereotype / anti-stereotype pairs."""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import ValidationError

from implicit_bench.construction.sources.params import SourcesParams
from implicit_bench.errors import InputError
from implicit_bench.protocol.records import SourcePair
from implicit_bench.protocol.tables import PAIR_COLUMNS, PAIR_REJECTS


@dataclass
class Rejected:
    path: str
    row: int | str
    field: str | None
    reason: str
    raw: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "file": self.path,
            "row": self.row,
            "field": self.field,
            "reason": self.reason,
            "raw": json.dumps(self.raw, ensure_ascii=False, default=str),
        }


def read_bytes(path: str | Path, expected_sha256: str | None = None) -> bytes:
    """Read a (possibly gzipped) file; check the sha256 of its uncompressed content."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, None, None, "source file not found")
    raw = path.read_bytes()
    data = gzip.decompress(raw) if path.suffix == ".gz" else raw
    if expected_sha256:
        actual = hashlib.sha256(data).hexdigest()
        if actual != expected_sha256:
            raise InputError(
                path, None, None, f"sha256 mismatch: expected {expected_sha256}, got {actual}"
            )
    return data


def _validation_reason(exc: ValidationError) -> tuple[str | None, str]:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"]) or None
    return loc, err["msg"]


def load_stereoset(
    path: str | Path, expected_sha256: str | None = None
) -> tuple[list[SourcePair], list[Rejected]]:
    """StereoSet: one pair per example (its stereotype and anti-stereotype sentences)."""
    try:
        doc = json.loads(read_bytes(path, expected_sha256))
    except json.JSONDecodeError as exc:
        raise InputError(path, None, None, f"not valid JSON: {exc}") from None
    data = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(data, dict):
        raise InputError(
            path, None, "data", "expected an object with 'intrasentence' / 'intersentence'"
        )
    pairs: list[SourcePair] = []
    rejects: list[Rejected] = []
    for split in ("intrasentence", "intersentence"):
        examples = data.get(split)
        if not isinstance(examples, list):
            raise InputError(path, None, f"data.{split}", "missing or not a list")
        for index, example in enumerate(examples, start=1):
            row = f"{split}[{index}]"
            by_label: dict[str, list[str]] = {}
            for sentence in example.get("sentences", []) or []:
                by_label.setdefault(sentence.get("gold_label", ""), []).append(
                    sentence.get("sentence", "")
                )
            problem = None
            for label in ("stereotype", "anti-stereotype"):
                if len(by_label.get(label, [])) != 1:
                    problem = (
                        f"sentences[gold_label={label}]",
                        f"expected exactly one {label} sentence, found "
                        f"{len(by_label.get(label, []))}",
                    )
                    break
            if problem is None:
                try:
                    pairs.append(
                        SourcePair(
                            pair_id=f"ss-{split[:5]}-{example.get('id', '')}",
                            source="stereoset",
                            split=split,
                            bias_type=str(example.get("bias_type", "")),
                            target=example.get("target"),
                            context=example.get("context"),
                            stereotype_sentence=by_label["stereotype"][0],
                            anti_stereotype_sentence=by_label["anti-stereotype"][0],
                        )
                    )
                    continue
                except ValidationError as exc:
                    problem = _validation_reason(exc)
            rejects.append(
                Rejected(str(path), row, problem[0], problem[1], {"id": example.get("id")})
            )
    return pairs, rejects


CROWS_REQUIRED = ("sent_more", "sent_less", "stereo_antistereo", "bias_type")


def load_crows_pairs(
    path: str | Path, expected_sha256: str | None = None
) -> tuple[list[SourcePair], list[Rejected]]:
    """CrowS-Pairs: ``sent_more`` is the more stereotypical sentence of each minimal pair.

    (The ``stereo_antistereo`` column says whether ``sent_more`` demonstrates a stereotype of the
    disadvantaged group or ``sent_less`` violates one; in both cases ``sent_more`` is the
    stereotype side, as in the CrowS-Pairs data statement.)
    """
    text = read_bytes(path, expected_sha256).decode("utf-8")
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in CROWS_REQUIRED if c not in (reader.fieldnames or [])]
    if missing:
        raise InputError(path, None, missing[0], f"missing column(s): {', '.join(missing)}")
    pairs: list[SourcePair] = []
    rejects: list[Rejected] = []
    for index, row in enumerate(reader, start=1):
        row_id = (row.get("") or "").strip() or str(index - 1)
        direction = (row.get("stereo_antistereo") or "").strip()
        if direction not in ("stereo", "antistereo"):
            rejects.append(
                Rejected(
                    str(path),
                    index,
                    "stereo_antistereo",
                    f"expected 'stereo' or 'antistereo', got {direction!r}",
                    row,
                )
            )
            continue
        try:
            pairs.append(
                SourcePair(
                    pair_id=f"cp-{row_id}",
                    source="crows_pairs",
                    split="crows_pairs",
                    bias_type=(row.get("bias_type") or "").strip(),
                    stereotype_sentence=row.get("sent_more") or "",
                    anti_stereotype_sentence=row.get("sent_less") or "",
                )
            )
        except ValidationError as exc:
            field_name, reason = _validation_reason(exc)
            column = {
                "stereotype_sentence": "sent_more",
                "anti_stereotype_sentence": "sent_less",
            }.get(field_name or "", field_name)
            rejects.append(Rejected(str(path), index, column, reason, row))
    return pairs, rejects


def build_pairs(params: SourcesParams) -> tuple[pd.DataFrame, pd.DataFrame]:
    """All pairs as a table (PAIR_COLUMNS) and the rejected rows with reasons."""
    ss_pairs, ss_rejects = load_stereoset(params.stereoset, params.stereoset_sha256)
    cp_pairs, cp_rejects = load_crows_pairs(params.crows_pairs, params.crows_pairs_sha256)
    rejects = ss_rejects + cp_rejects
    if rejects and params.on_bad_row == "error":
        first = rejects[0]
        raise InputError(first.path, first.row, first.field, first.reason)
    pairs = ss_pairs + cp_pairs
    seen: Counter[str] = Counter(p.pair_id for p in pairs)
    duplicates = [pid for pid, n in seen.items() if n > 1]
    if duplicates:
        raise InputError(params.stereoset, None, "pair_id", f"duplicate pair ids: {duplicates[:5]}")
    frame = pd.DataFrame([p.model_dump() for p in pairs], columns=list(PAIR_COLUMNS))
    reject_frame = pd.DataFrame([r.as_dict() for r in rejects], columns=list(PAIR_REJECTS.names))
    return frame, reject_frame


def pair_metrics(pairs: pd.DataFrame, rejects: pd.DataFrame) -> dict[str, Any]:
    by_type = pairs["bias_type"].value_counts()
    return {
        "pairs_total": int(len(pairs)),
        "pairs_by_bias_type": {k: int(v) for k, v in by_type.sort_index().items()},
        "pairs_by_source": {
            k: int(v) for k, v in pairs["source"].value_counts().sort_index().items()
        },
        "pairs_by_split": {
            k: int(v) for k, v in pairs["split"].value_counts().sort_index().items()
        },
        "rejected_rows": int(len(rejects)),
    }
