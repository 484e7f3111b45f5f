"""``implicit-bench import``: the authors' release -> UNITS, JUDGEMENTS, image index and
retrieval tables that ``implicit-bench analyze`` reads (docs/import.md).

Nothing is averaged, imputed or rounded: a rubric value is written as the release states it
(a fractional value is the mean of repeated judgements; analyze accepts and counts it), a blank
score becomes an invalid judgement (``valid = false``), and an image the release does not hold
for a generator of Table 4 becomes an image-index row with status ``refused`` (the release
cannot tell a refusal from a failure: docs/import.md).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import shlex
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.files import write_json, write_table
from implicit_bench.errors import InputError
from implicit_bench.release import layout

PROMPTS = "data/benchmark_prompts.csv"
SCORES = "data/benchmark_scores.csv"
RETRIEVAL = "data/retrieval_results.csv"
EVAL_DIR = "cache/eval_results"


# bounds on what ``import`` reads (docs/errors.md): a 412 KB zip bomb once made a 419 MB units.csv
MAX_MEMBERS = 100_000  # entries in a zip archive
MAX_FILE_BYTES = 512 * 2**20  # one file (uncompressed), zip member or checkout file
MAX_TOTAL_BYTES = 2 * 2**30  # all zip members together (uncompressed, as their headers state)
MAX_RATIO = 200  # uncompressed / compressed size of one member above 1 MiB (CSV: about 5-20)


class Release:
    """Read-only access to a checkout directory or a ``.zip`` download (its files may sit
    under one top-level folder, as GitHub's archives do). Every file read is bounded in size
    (a zip's member count, total size and compression ratio too), and a checkout's files must
    resolve inside it (a symlink pointing out is refused). When several folders hold the
    release's files, the shallowest one is read; two at the same depth are an error."""

    def __init__(self, source: str | Path):
        self.source = Path(source)
        self._zip: zipfile.ZipFile | None = None
        self._prefix = ""
        if self.source.is_file() and zipfile.is_zipfile(self.source):
            self._zip = zipfile.ZipFile(self.source)
            self._check_zip()
            names = self._zip.namelist()
            self._prefix = _release_root(
                [n[: -len(rel)] for n in names for rel in (PROMPTS, SCORES) if n.endswith(rel)],
                str(self.source),
            )
        elif self.source.is_dir():
            if not (self.source / "data").is_dir():
                subs = [
                    p
                    for p in self.source.iterdir()
                    if p.is_dir() and not p.is_symlink() and (p / "data").is_dir()
                ]
                if len(subs) == 1:
                    self.source = subs[0]
        else:
            raise InputError(source, None, None, "not a directory or a .zip archive of the release")

    def _check_zip(self) -> None:
        assert self._zip is not None
        infos = self._zip.infolist()
        if len(infos) > MAX_MEMBERS:
            raise InputError(
                self.source,
                None,
                None,
                f"{len(infos)} zip entries, more than the bound {MAX_MEMBERS}",
            )
        total = sum(i.file_size for i in infos)
        if total > MAX_TOTAL_BYTES:
            raise InputError(
                self.source,
                None,
                None,
                f"{total} bytes uncompressed, more than the bound {MAX_TOTAL_BYTES} (a zip bomb?)",
            )
        for info in infos:
            if info.file_size > MAX_FILE_BYTES:
                raise InputError(
                    f"{self.source}!{info.filename}",
                    None,
                    None,
                    f"{info.file_size} bytes uncompressed, more than the bound {MAX_FILE_BYTES}",
                )
            if info.file_size > 2**20 and info.file_size > MAX_RATIO * max(info.compress_size, 1):
                raise InputError(
                    f"{self.source}!{info.filename}",
                    None,
                    None,
                    "compression ratio "
                    f"{info.file_size // max(info.compress_size, 1)}:1, above the "
                    f"bound {MAX_RATIO}:1 (a zip bomb?)",
                )

    def _path(self, rel: str) -> Path:
        """A checkout file, resolved; outside the checkout (a symlink pointing out) is an error."""
        path = self.source / rel
        real, root = path.resolve(), self.source.resolve()
        if not real.is_relative_to(root):
            raise InputError(
                path,
                None,
                None,
                f"resolves to {real}, outside the release checkout {root}: refused",
            )
        return path

    def exists(self, rel: str) -> bool:
        if self._zip is not None:
            return self._prefix + rel in self._zip.namelist()
        return (self.source / rel).is_file()

    def read_bytes(self, rel: str) -> bytes:
        if self._zip is not None:
            try:
                with self._zip.open(self._prefix + rel) as fh:
                    data = fh.read(MAX_FILE_BYTES + 1)  # an understated size stops here
            except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
                # a bad CRC, corrupt deflate data, a truncated member, an unknown method
                raise InputError(
                    self.where(rel),
                    None,
                    None,
                    f"corrupt zip member ({type(exc).__name__}: {' '.join(str(exc).split())}); "
                    "download the release again",
                ) from None
        else:
            path = self._path(rel)
            if path.stat().st_size > MAX_FILE_BYTES:
                raise InputError(
                    path,
                    None,
                    None,
                    f"{path.stat().st_size} bytes, more than the bound {MAX_FILE_BYTES}",
                )
            with path.open("rb") as fh:
                data = fh.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise InputError(
                self.where(rel), None, None, f"more than the bound of {MAX_FILE_BYTES} bytes"
            )
        return data

    def listdir(self, rel: str) -> list[str]:
        if self._zip is not None:
            base = self._prefix + rel.rstrip("/") + "/"
            return sorted(
                n[len(base) :]
                for n in self._zip.namelist()
                if n.startswith(base) and "/" not in n[len(base) :] and n != base
            )
        folder = self.source / rel
        return sorted(p.name for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []

    def where(self, rel: str) -> str:
        return (
            f"{self.source}!{self._prefix}{rel}"
            if self._zip is not None
            else str(self.source / rel)
        )

    def table(self, rel: str, required: tuple[str, ...]) -> pd.DataFrame:
        """A CSV of the release as strings (blank cells stay ''); required columns checked."""
        data = self.read_bytes(rel)
        if data.startswith(b"version https://git-lfs"):
            raise InputError(
                self.where(rel),
                None,
                None,
                "a Git LFS pointer, not the file: fetch it with git lfs pull",
            )
        _check_utf8(data, self.where(rel))
        try:
            frame = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
        except pd.errors.ParserError as exc:
            ragged = _ragged_row(data)
            if ragged is None:
                raise InputError(
                    self.where(rel), None, None, f"not a readable CSV ({_one_line(exc)})"
                ) from None
            row, cells, width = ragged
            raise InputError(
                self.where(rel), row, None, f"{cells} cells but the header has {width} columns"
            ) from None
        except (
            ValueError
        ) as exc:  # not UTF-8, empty, unbalanced quotes (pandas' errors are ValueErrors)
            raise InputError(
                self.where(rel),
                None,
                None,
                f"not a readable CSV ({type(exc).__name__}: {_one_line(exc)[:120]})",
            ) from None
        missing = [c for c in required if c not in frame.columns]
        if missing:
            raise InputError(
                self.where(rel), None, missing[0], f"missing column(s) {', '.join(missing)}"
            )
        return frame


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def _check_utf8(data: bytes, where: str) -> None:
    """A release CSV is UTF-8 text: the first byte that is not is an ``InputError`` naming its
    data row (1-based; the header: no row), its column and its byte offset in the file."""
    try:
        data.decode("utf-8")
        return
    except UnicodeDecodeError as exc:
        offset = exc.start
    # the bad bytes become lone surrogates (U+DC80..U+DCFF), found again in the parsed cells
    text = data.decode("utf-8", errors="surrogateescape").removeprefix("\ufeff")
    row: int | None = None
    column: str | None = None
    header: list[str] = []
    place = ""
    try:
        for number, cells in enumerate(csv.reader(io.StringIO(text, newline=""))):
            hit = next((i for i, c in enumerate(cells) if _has_surrogate(c)), None)
            if number == 0:
                header = cells
                place = "in the header, " if hit is not None else ""
            elif hit is not None:
                row, column = number, header[hit] if hit < len(header) else None
            if hit is not None:
                break
    except csv.Error:  # a CSV broken before the byte: the offset still says where
        pass
    raise InputError(
        where,
        row,
        column,
        f"not UTF-8 text ({place}byte 0x{data[offset]:02x} at byte offset {offset}); "
        "save it as UTF-8",
    )


_SURROGATE = re.compile("[\udc80-\udcff]")


def _has_surrogate(cell: str) -> bool:
    return _SURROGATE.search(cell) is not None


def _ragged_row(data: bytes) -> tuple[int, int, int] | None:
    """(1-based data row, its cells, the header's columns) of the first row with more cells
    than the header, or None."""
    try:
        rows = csv.reader(io.StringIO(data.decode("utf-8-sig"), newline=""))
        width = len(next(rows))
        for row_no, row in enumerate(rows, start=1):
            if len(row) > width:
                return row_no, len(row), width
    except (UnicodeDecodeError, csv.Error, StopIteration):
        return None
    return None


def _release_root(prefixes: list[str], where: str) -> str:
    """The folder of a zip holding the release's files: the shallowest; two are an error."""
    roots = sorted(
        {p for p in prefixes if p == "" or p.endswith("/")}, key=lambda p: (p.count("/"), p)
    )
    if not roots:
        return ""
    shallowest = [p for p in roots if p.count("/") == roots[0].count("/")]
    if len(shallowest) > 1:
        raise InputError(
            where,
            None,
            None,
            "several folders hold the release's files "
            f"({', '.join(p or './' for p in shallowest)}): give one",
        )
    return roots[0]


@dataclass
class Imported:
    """The tables written by ``import_release`` and what was read to write them."""

    units: pd.DataFrame
    judgements: dict[str, pd.DataFrame]  # file stem -> JUDGEMENTS rows
    images: pd.DataFrame
    retrieval: pd.DataFrame | None
    manifest: dict[str, Any] = field(default_factory=dict)
    human_study: dict[str, Any] | None = None  # frames + ``report`` (release/human_study.py)
    prompt_labels: dict[str, Any] | None = None  # Appendix B.3 report (release/prompt_labels.py)
    # pre-filter CLIP (Table 3), lean by bias type x source (B.4), SD3 kept vs rejected
    candidates: dict[str, Any] | None = None  # release/candidates.py


def _seed(series: pd.Series, where: str) -> pd.Series:
    index = pd.to_numeric(series, errors="coerce")
    bad = index.isna() | (index != index.round()) | (index < 0)
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0]) + 1
        raise InputError(
            where, row, "seed", f"expected a seed index 0, 1, 2, ..., got {series[bad].iloc[0]!r}"
        )
    return index.astype("int64").map(layout.seed_of)


def _source(value: str, where: str, row: int) -> str:
    key = value.strip().lower().replace(" ", "").replace("_", "-")
    if key not in layout.SOURCES:
        raise InputError(
            where, row, "source", f"unknown source {value!r}; expected StereoSet or CrowS-Pairs"
        )
    return layout.SOURCES[key]


def read_units(release: Release) -> pd.DataFrame:
    """UNITS from benchmark_prompts.csv (plus ``flagged_by`` from benchmark_scores.csv)."""
    cols = (
        "source",
        "id",
        "bias_type",
        "head",
        "relation",
        "stereotype_tails",
        "anti_stereotype_tails",
        "prompt_neutral",
        "prompt_stereotype",
        "prompt_anti_stereotype",
    )
    p = release.table(PROMPTS, cols)
    where = release.where(PROMPTS)
    if p.empty:  # a benchmark of no unit would plan, render and score nothing (exit 0)
        raise InputError(where, None, None, "a header and no row: the release holds no unit")
    dup = p["id"].duplicated()
    if dup.any():
        raise InputError(
            where,
            int(np.flatnonzero(dup.to_numpy())[0]) + 1,
            "id",
            f"duplicate id {p['id'][dup].iloc[0]!r}",
        )
    units = pd.DataFrame(
        {
            "unit_id": p["id"].str.strip(),
            "source": [_source(v, where, i) for i, v in enumerate(p["source"], start=1)],
            "bias_type": p["bias_type"].str.strip(),
            "head": p["head"],
            "relation": p["relation"].where(p["relation"].str.strip() != "", None),
            "stereotype": p["stereotype_tails"],
            "anti_stereotype": p["anti_stereotype_tails"],
            "prompt_neutral": p["prompt_neutral"],
            "prompt_stereotype": p["prompt_stereotype"],
            "prompt_anti_stereotype": p["prompt_anti_stereotype"],
            "target": p.get("target"),
            "axis": p.get("bias_axis"),
            "stereotype_tails": p["stereotype_tails"].map(
                lambda t: json.dumps([t], ensure_ascii=False)
            ),
            "anti_stereotype_tails": p["anti_stereotype_tails"].map(
                lambda t: json.dumps([t], ensure_ascii=False)
            ),
        }
    )
    return units


def _value(text: str) -> str | None:
    """A score cell as written (``"4.0"`` -> ``"4"``), None when blank."""
    text = str(text).strip()
    if text == "" or text.lower() == "nan":
        return None
    number = float(text)
    return str(int(number)) if number.is_integer() else repr(number)


def _rows(
    unit_ids: pd.Series,
    variant: str,
    *,
    seeds: pd.Series,
    config: str,
    judge: str,
    task: str,
    values: list[str | None],
    model: str,
) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "unit_id": unit_ids.to_numpy(),
            "variant": variant,
            "seed": seeds.to_numpy(),
            "config": config,
            "judge": judge,
            "task": task,
            "value": values,
            "valid": [v is not None for v in values],
            "model": model,
        }
    )


def read_scores(release: Release) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(JUDGEMENTS of the Qwen-Image construction run, per-unit ``flagged_by``)."""
    score_cols = tuple(f"{j}_{v}" for j in layout.RUBRIC_JUDGES for v in layout.SCORE_VARIANTS)
    s = release.table(
        SCORES, ("id", "seed", *score_cols, "sim_neutral_stereotype", "sim_neutral_anti_stereotype")
    )
    where = release.where(SCORES)
    seeds = _seed(s["seed"], where)
    ids = s["id"].str.strip()
    frames = []
    for prefix, judge in layout.RUBRIC_JUDGES.items():
        for short, variant in layout.SCORE_VARIANTS.items():
            col = f"{prefix}_{short}"
            values = [_checked(v, where, i, col) for i, v in enumerate(s[col], start=1)]
            frames.append(
                _rows(
                    ids,
                    variant,
                    seeds=seeds,
                    config=layout.BASE_CONFIG,
                    judge=judge,
                    task="rubric",
                    values=values,
                    model=f"release:{SCORES}:{col}",
                )
            )
    sim_s = pd.to_numeric(s["sim_neutral_stereotype"].replace("", np.nan), errors="coerce")
    sim_a = pd.to_numeric(s["sim_neutral_anti_stereotype"].replace("", np.nan), errors="coerce")
    lean = [None if np.isnan(x) else repr(float(x)) for x in (sim_s - sim_a).to_numpy()]
    frames.append(
        _rows(
            ids,
            "neutral",
            seeds=seeds,
            config=layout.BASE_CONFIG,
            judge=layout.CLIP_JUDGE,
            task="clip_lean",
            values=lean,
            model=f"release:{SCORES}:sim_neutral_*",
        )
    )
    flagged = (
        s[["id", "flagged_by"]].drop_duplicates("id")
        if "flagged_by" in s.columns
        else pd.DataFrame(columns=["id", "flagged_by"])
    )
    return pd.concat(frames, ignore_index=True), flagged.rename(columns={"id": "unit_id"})


def _checked(text: str, where: str, row: int, column: str) -> str | None:
    try:
        return _value(text)
    except ValueError:
        raise InputError(where, row, column, f"not a number: {text!r}") from None


def eval_files(release: Release) -> tuple[dict[tuple[int, bool, str], str], list[str]]:
    """(experiment, alpha1, kind) -> file name, preferring ``exp_NN_kind.csv`` over its
    ``_local`` twin; and the files left out (shards, JSONL, other names)."""
    chosen: dict[tuple[int, bool, str], str] = {}
    skipped: list[str] = []
    for name in release.listdir(EVAL_DIR):
        m = layout.EVAL_FILE.match(name)
        if m is None:
            skipped.append(name)
            continue
        key = (int(m["exp"]), m["alpha1"] is not None, m["kind"])
        if key in chosen and not m["local"]:
            skipped.append(chosen[key])
        elif key in chosen:
            skipped.append(name)
            continue
        chosen[key] = name
    return dict(sorted(chosen.items())), sorted(skipped)


def read_eval(release: Release, name: str, exp: int, kind: str, config: str) -> pd.DataFrame:
    """JUDGEMENTS rows of one eval (rubric) or alignment file: neutral images, Qwen3-VL."""
    rel = f"{EVAL_DIR}/{name}"
    column = "score" if kind == "eval" else "aligned"
    frame = release.table(rel, ("case_id", "seed", column))
    where = release.where(rel)
    # a row repeated verbatim (every column, justification included) is one judgement written
    # twice (merged shards): kept once and counted; conflicting repeats stay for analyze to report
    copies = frame.duplicated()
    frame = frame[~copies].reset_index(drop=True)
    if "experiment_id" in frame.columns:
        other = frame["experiment_id"].str.strip().replace("", str(exp)).astype(float) != exp
        if other.any():
            row = int(np.flatnonzero(other.to_numpy())[0]) + 1
            raise InputError(
                where, row, "experiment_id", f"expected experiment {exp} (the file name)"
            )
    if kind == "eval":
        values = [_checked(v, where, i, column) for i, v in enumerate(frame[column], start=1)]
        task = "rubric"
    else:
        values = [_aligned(v, where, i) for i, v in enumerate(frame[column], start=1)]
        task = "alignment"
    out = _rows(
        frame["case_id"].str.strip(),
        "neutral",
        seeds=_seed(frame["seed"], where),
        config=config,
        judge=layout.EVAL_JUDGE,
        task=task,
        values=values,
        model=f"release:{rel}",
    )
    out.attrs["verbatim_copies"] = int(copies.sum())
    return out


def _aligned(text: str, where: str, row: int) -> str | None:
    from implicit_bench._util.booleans import parse_bool

    if str(text).strip() == "":
        return None
    value = parse_bool(text)
    if value is None:
        raise InputError(where, row, "aligned", f"expected True or False, got {text!r}")
    return "true" if value else "false"


def read_retrieval(release: Release) -> pd.DataFrame | None:
    """The retrieval table (``unit_id, own_hit, own_rank, score_full``) from
    ``rank_prompt2kg`` (rank of the own unit among all units for the neutral prompt)."""
    if not release.exists(RETRIEVAL):
        return None
    r = release.table(RETRIEVAL, ("id", "rank_prompt2kg"))
    where = release.where(RETRIEVAL)
    rank = pd.to_numeric(r["rank_prompt2kg"], errors="coerce")
    bad = rank.isna() | (rank < 1) | (rank != rank.round())
    if bad.any():
        raise InputError(
            where,
            int(np.flatnonzero(bad.to_numpy())[0]) + 1,
            "rank_prompt2kg",
            "expected a rank >= 1",
        )
    out = pd.DataFrame(
        {"unit_id": r["id"].str.strip(), "own_hit": rank == 1, "own_rank": rank.astype("int64")}
    )
    if "sim_prompt2kg" in r.columns:
        out["score_own"] = pd.to_numeric(r["sim_prompt2kg"], errors="coerce")
    return out


def image_index(
    units: pd.DataFrame, judgements: pd.DataFrame, configs: list[str], seeds: list[int]
) -> pd.DataFrame:
    """Neutral image index of the Table 4 generators: ``ok`` where the release holds a rubric
    or alignment judgement for (unit, seed), else ``refused`` (not returned)."""
    frames = []
    for config in configs:
        held = judgements[judgements["config"] == config][["unit_id", "seed"]].drop_duplicates()
        grid = pd.MultiIndex.from_product(
            [units["unit_id"], seeds], names=["unit_id", "seed"]
        ).to_frame(index=False)
        grid = grid.merge(held.assign(_held=True), on=["unit_id", "seed"], how="left")
        ok = grid["_held"].eq(True).to_numpy()
        frames.append(
            pd.DataFrame(
                {
                    "config": config,
                    "unit_id": grid["unit_id"],
                    "variant": "neutral",
                    "seed": grid["seed"],
                    "status": np.where(ok, "ok", "refused"),
                    "reason": np.where(
                        ok, None, "absent from the release (refused or not returned)"
                    ),
                }
            )
        )
    cols = ["config", "unit_id", "variant", "seed", "status", "reason"]
    return pd.concat(frames, ignore_index=True)[cols] if frames else pd.DataFrame(columns=cols)


def _sha256(release: Release, rel: str) -> str:
    return hashlib.sha256(release.read_bytes(rel)).hexdigest()


def import_release(source: str | Path, human_params: Any = None) -> Imported:
    """Read the release and build every table (nothing is written). ``human_params``: the
    ``HumanEvalParams`` of the human-study analysis (default: the paper's rater screening)."""
    release = Release(source)
    for rel in (PROMPTS, SCORES):
        if not release.exists(rel):
            raise InputError(
                release.where(rel),
                None,
                None,
                "file not found: is this a checkout of ydai94/IMPLICIT-Bench?",
            )
    units = read_units(release)
    base, flagged = read_scores(release)
    units = units.merge(flagged, on="unit_id", how="left")
    known = set(units["unit_id"])
    unknown = sorted(set(base["unit_id"]) - known)
    if unknown:
        raise InputError(
            release.where(SCORES),
            None,
            "id",
            f"{len(unknown)} id(s) not in {PROMPTS}, e.g. {unknown[0]!r}",
        )
    chosen, skipped = eval_files(release)
    groups: dict[str, list[pd.DataFrame]] = {
        "benchmark": [base],
        "unmodified": [],
        "debias": [],
        "debias_alpha1": [],
        "generators": [],
    }
    used: list[str] = [PROMPTS, SCORES]
    unknown_exp: list[str] = []
    copies: dict[str, int] = {}
    for (exp, alpha1, kind), name in chosen.items():
        if exp in layout.EXPERIMENTS:
            config = layout.EXPERIMENTS[exp]
            group = "debias_alpha1" if alpha1 else ("unmodified" if exp == 0 else "debias")
        elif exp in layout.GENERATORS and not alpha1:
            config, group = layout.GENERATORS[exp], "generators"
        else:
            unknown_exp.append(name)
            continue
        rows = read_eval(release, name, exp, kind, config)
        stray = sorted(set(rows["unit_id"]) - known)
        if stray:
            raise InputError(
                release.where(f"{EVAL_DIR}/{name}"),
                None,
                "case_id",
                f"{len(stray)} case id(s) not in {PROMPTS}, e.g. {stray[0]!r}",
            )
        groups[group].append(rows)
        if rows.attrs["verbatim_copies"]:
            copies[name] = rows.attrs["verbatim_copies"]
        used.append(f"{EVAL_DIR}/{name}")
    judgements = {
        f"judgements_{k}": pd.concat(v, ignore_index=True) for k, v in groups.items() if v
    }
    seeds = sorted(int(s) for s in base["seed"].unique())
    # Table 4: experiment 0 (the unmodified Qwen-Image run) and experiments 12-14
    table4 = pd.concat(
        [
            judgements[k]
            for k in ("judgements_unmodified", "judgements_generators")
            if k in judgements
        ]
        or [base.iloc[0:0]]
    )
    gen_configs = [
        c
        for c in (layout.EXPERIMENTS[0], *layout.GENERATORS.values())
        if c in set(table4["config"])
    ]
    images = image_index(units, table4, gen_configs, seeds)
    retrieval = read_retrieval(release)
    if retrieval is not None:
        used.append(RETRIEVAL)
    human = _human_study(release, known, human_params)
    labels = _prompt_labels(release, known)
    for extra in (human, labels):
        if extra is not None:
            used += extra["files"]
    candidates = _candidates(release, units, base)
    used += candidates["files"]
    rubric = pd.concat([f[f["task"] == "rubric"] for f in judgements.values()], ignore_index=True)
    rubric_values = pd.to_numeric(rubric["value"], errors="coerce")
    manifest = {
        "source": str(Path(source)),
        "files": {rel: _sha256(release, rel) for rel in used},
        "skipped_files": skipped + unknown_exp,
        "seeds": {str(i): layout.seed_of(i) for i in range(len(seeds))},
        "experiments": {str(k): v for k, v in {**layout.EXPERIMENTS, **layout.GENERATORS}.items()},
        "base_config": layout.BASE_CONFIG,
        "judges": {
            **{f"{k}_*": v for k, v in layout.RUBRIC_JUDGES.items()},
            "sim_neutral_* (CLIP)": layout.CLIP_JUDGE,
            "eval / alignment files": layout.EVAL_JUDGE,
        },
        "units": int(len(units)),
        "judgements": {k: int(len(v)) for k, v in judgements.items()},
        "invalid_judgements": {k: int((~v["valid"]).sum()) for k, v in judgements.items()},
        "verbatim_copies_dropped": copies,
        "rubric_fractional": int(
            (rubric_values.notna() & (rubric_values != rubric_values.round())).sum()
        ),
        "image_index": {
            c: {str(k): int(v) for k, v in g["status"].value_counts().sort_index().items()}
            for c, g in images.groupby("config")
        },
        "retrieval_rows": None if retrieval is None else int(len(retrieval)),
        "reproduces": layout.REPRODUCIBLE,
        "does_not_reproduce": layout.NOT_REPRODUCIBLE,
    }
    return Imported(units, judgements, images, retrieval, manifest, human, labels, candidates)


def _candidates(release: Release, units: pd.DataFrame, base: pd.DataFrame) -> dict[str, Any]:
    """Table 3's pre-filter CLIP lean, B.4's lean by bias type and source, SD3 kept vs
    rejected (release/candidates.py); intervals from 1,000 resamples, seed 42."""
    from implicit_bench.analysis.bootstrap import Bootstrap
    from implicit_bench.release.candidates import (
        PRE_FILTER,
        SD3_FILES,
        lean_by_source,
        prefilter_clip,
        sd3_kept_vs_rejected,
    )

    boot = Bootstrap(n=1000, seed=42)
    files = [rel for rel in PRE_FILTER.values() if release.exists(rel)]
    files += [rel for rel, *_ in SD3_FILES if release.exists(rel)]
    return {
        "files": files,
        "bootstrap": {"n": boot.n, "seed": boot.seed, "level": boot.level},
        "prefilter_clip": prefilter_clip(release, units, boot),
        "lean_by_source": lean_by_source(base, units, boot),
        "sd3_kept_vs_rejected": sd3_kept_vs_rejected(release, units),
    }


# The paper's rater screening (Appendix D.4): mean pairwise Pearson r against the rest of the
# round below 0.40 -> excluded before any analysis.
PAPER_SCREENING = {"screen_rule": "mean_pairwise", "screen_threshold": 0.40}


def _human_study(release: Release, known: set[str], params: Any) -> dict[str, Any] | None:
    from implicit_bench.human_eval.bundle import HumanEvalParams
    from implicit_bench.human_eval.study import study_report
    from implicit_bench.release.human_study import read_human_study

    study = read_human_study(release)
    if study is None:
        return None
    stray = sorted((set(study["ratings"]["unit_id"]) | set(study["kg"]["unit_id"])) - known)
    if stray:
        raise InputError(
            release.where("data/human_eval*/manifest.csv"),
            None,
            "case_id",
            f"{len(stray)} case id(s) not in {PROMPTS}, e.g. {stray[0]!r}",
        )
    params = params or HumanEvalParams(**PAPER_SCREENING)
    study["report"] = study_report(
        study["ratings"], study["kg"], study["scores"], params, answers={"rounds": study["counts"]}
    )
    return study


def _prompt_labels(release: Release, known: set[str]) -> dict[str, Any] | None:
    from implicit_bench.release.prompt_labels import read_prompt_labels

    report = read_prompt_labels(release)
    if report is not None:
        for protocol, ids in report.pop("unit_ids").items():
            stray = sorted(ids - known)
            if stray:
                raise InputError(
                    release.where(f"data/labeled_{protocol}.csv"),
                    None,
                    "id",
                    f"{len(stray)} id(s) not in {PROMPTS}, e.g. {stray[0]!r}",
                )
    return report


def write_imported(imported: Imported, out: str | Path) -> dict[str, str]:
    """Write every table as CSV (ids as strings), ``analyze.yaml`` and ``manifest.json``;
    returns name -> path."""
    out = Path(out)
    paths: dict[str, str] = {}

    def put(frame: pd.DataFrame, name: str) -> None:
        path = out / f"{name}.csv"
        write_table(frame, path)
        paths[name] = str(path)

    put(imported.units, "units")
    for name, frame in imported.judgements.items():
        put(frame, name)
    if len(imported.images):
        put(imported.images, "images")
    if imported.retrieval is not None:
        put(imported.retrieval, "retrieval")
    paths.update(_write_studies(imported, out, put))
    for name, recipe in RECIPES.items():
        if all(f in paths for f in recipe["files"]):
            path = out / f"analyze_{name}.yaml"
            path.write_text(
                _yaml(analyze_params(recipe, paths, len(imported.manifest["seeds"]))),
                encoding="utf-8",
            )
            paths[f"analyze_{name}.yaml"] = str(path)
    manifest = {
        **imported.manifest,
        "written": {k: str(PurePosixPath(Path(v).name)) for k, v in paths.items()},
        "commands": commands(out, paths),
    }
    write_json(out / "manifest.json", manifest)
    paths["manifest.json"] = str(out / "manifest.json")
    return paths


def _write_studies(imported: Imported, out: Path, put: Any) -> dict[str, str]:
    """The human study (long-form ratings, KG answers, judge scores, ``human_eval.json``,
    tables) and the prompt labels (``prompt_labels.json``, tables)."""
    from implicit_bench.analysis.paper_tables import clean, write_tables

    paths: dict[str, str] = {}
    if imported.human_study is not None:
        from implicit_bench.human_eval.tables import human_study_tables

        study = imported.human_study
        put(study["ratings"], "human_ratings")
        put(study["kg"], "human_kg")
        put(study["scores"], "human_scores")
        write_json(out / "human_eval.json", clean(study["report"]))
        paths["human_eval.json"] = str(out / "human_eval.json")
        for p in write_tables(out, human_study_tables(study["report"])):
            paths[str(Path(p).relative_to(out))] = p
    if imported.candidates is not None:
        from implicit_bench.release.candidates import lean_by_source_table, prefilter_table

        report = {k: v for k, v in imported.candidates.items() if k != "files"}
        write_json(out / "candidates.json", clean(report))
        paths["candidates.json"] = str(out / "candidates.json")
        tables = {"lean_by_source": lean_by_source_table(report["lean_by_source"])}
        if report["prefilter_clip"] is not None:
            tables["table03_clip_prefilter"] = prefilter_table(report["prefilter_clip"])
        for p in write_tables(out, tables):
            paths[str(Path(p).relative_to(out))] = p
    if imported.prompt_labels is not None:
        from implicit_bench.release.prompt_labels import flips_table, kappa_table, table11

        report = imported.prompt_labels
        write_json(out / "prompt_labels.json", clean(report))
        paths["prompt_labels.json"] = str(out / "prompt_labels.json")
        tables = {
            "prompt_labels_table11": table11(report),
            "prompt_labels_kappa": kappa_table(report),
            "prompt_labels_flips": flips_table(report),
        }
        for p in write_tables(out, tables):
            paths[str(Path(p).relative_to(out))] = p
    return paths


# One analyze run per recipe: judgement files, the configuration analysed and selected on.
RECIPES: dict[str, dict[str, Any]] = {
    # Tables 3 / 9 / 10 (kept set), 12, 13, 14, 18 and B.1 on the selected units, Figure 6
    "benchmark": {
        "files": ("judgements_benchmark",),
        "config": layout.BASE_CONFIG,
        "judges": tuple(layout.RUBRIC_JUDGES.values()),
    },
    # Table 4: experiment 0 (Qwen-Image, unmodified) against experiments 12-14, with refusals
    "generators": {
        "files": ("judgements_unmodified", "judgements_generators"),
        "config": layout.EXPERIMENTS[0],
        "judges": (layout.EVAL_JUDGE,),
        "refusals": True,
    },
    # Tables 7 and 31 (alpha 2) with the retrieval figures and the full-KG rows
    "debias": {
        "files": ("judgements_unmodified", "judgements_debias"),
        "config": layout.EXPERIMENTS[0],
        "judges": (layout.EVAL_JUDGE,),
        "retrieval": True,
    },
    # Table 32: the steering configurations at alpha 1
    "debias_alpha1": {
        "files": ("judgements_unmodified", "judgements_debias_alpha1"),
        "config": layout.EXPERIMENTS[0],
        "judges": (layout.EVAL_JUDGE,),
        "retrieval": True,
    },
}


def analyze_params(recipe: dict[str, Any], paths: dict[str, str], n_seeds: int) -> dict[str, Any]:
    """The ``--params`` file of one recipe's ``analyze`` run."""
    scoring: dict[str, Any] = {
        "unmodified": layout.EXPERIMENTS[0],
        "rubric_judge": layout.EVAL_JUDGE,
        "alignment_judge": layout.EVAL_JUDGE,
    }
    if recipe.get("retrieval") and "retrieval" in paths:
        scoring["retrieval"] = paths["retrieval"]
    return {
        "select": {
            "config": recipe["config"],
            "judges": list(recipe["judges"]),
            "pairs": None,
            "extracted": None,
        },
        "evaluate": {
            "config": recipe["config"],
            "rubric_judges": list(recipe["judges"]),
            "n_seeds": n_seeds,
        },
        "debias": {"scoring": scoring},
    }


def _yaml(payload: dict[str, Any]) -> str:
    import yaml

    return "# written by implicit-bench import (docs/import.md)\n" + yaml.safe_dump(
        payload, sort_keys=False
    )


def commands(out: Path, paths: dict[str, str]) -> dict[str, str]:
    """recipe -> the ``implicit-bench analyze`` command on the imported files."""
    out_commands: dict[str, str] = {}
    for name, recipe in RECIPES.items():
        params = paths.get(f"analyze_{name}.yaml")
        if params is None:
            continue
        q = shlex.quote  # paths come from --out: quoted, so a pasted command runs nothing else
        parts = [
            f"implicit-bench analyze --units {q(str(paths['units']))} --params {q(str(params))}"
        ]
        parts += [f"--judgements {q(str(paths[f]))}" for f in recipe["files"]]
        if recipe.get("refusals") and "images" in paths:
            parts.append(f"--refusals {q(str(paths['images']))}")
        parts.append(f"--out {q(str(out / 'analysis' / name))}")
        out_commands[name] = " ".join(parts)
    return out_commands
