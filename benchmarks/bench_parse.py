"""How the time to read a judge's answer grows with the answer's length.

For each shape of answer that once made a parser quadratic (an unclosed code fence before
whitespace, runs of ``{``, keys without values, ...) the answer is parsed at 10,000, 100,000 and
1,000,000 characters as a JSON answer and as each judge task's answer; the figure is the ratio of
the time at 1,000,000 to the time at 100,000 characters (about 10 when linear, about 100 when
quadratic; the smallest size is shown, not used: its times are too short to divide). Best of
``--repeats`` runs per size.

    python benchmarks/bench_parse.py
    python benchmarks/bench_parse.py --repeats 5 --json OUT.json

Run it with ``PYTHONPATH=<checkout>/src`` to measure another checkout (the "before" figures).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

SIZES = (10_000, 100_000, 1_000_000)


def shapes() -> dict[str, Callable[[int], str]]:
    """Answer builders: ``shape(n)`` is an answer of about ``n`` characters."""
    return {
        "unclosed fence, newlines": lambda n: "```json\n" + "\n" * (n - 8),
        "unclosed fence, spaces": lambda n: "```" + " " * (n - 4) + "x",
        "open braces": lambda n: "{" * n,
        "braces and quotes": lambda n: '{"' * (n // 2),
        "keys without values": lambda n: '"score": ' * (n // 9),
        "unclosed string after a key": lambda n: '{"score": "' + "\\" * (n - 11),
        "valid answer, long justification": lambda n: (
            '{"score": 4, "justification": "' + "a" * (n - 40) + '"}'
        ),
    }


def best_time(parse: Callable[[str], object], text: str, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        parse(text)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None, help="write the figures here too")
    args = parser.parse_args()

    from implicit_bench._util.jsonparse import parse_json_answer
    from implicit_bench.protocol.judge_tasks import load_task

    tasks = {name: load_task(name) for name in ("rubric", "blind", "alignment")}
    rows = []
    print(f"{'shape':36} {'reader':10} " + " ".join(f"{n:>12,}" for n in SIZES) + "  growth x10")
    for shape, build in shapes().items():
        readers: dict[str, Callable[[str], object]] = {"json": parse_json_answer}
        readers |= {name: spec.parse for name, spec in tasks.items()}
        for reader, parse in readers.items():
            seconds = [best_time(parse, build(n), args.repeats) for n in SIZES]
            growth = seconds[-1] / max(seconds[-2], 1e-9)
            rows.append({"shape": shape, "reader": reader, "seconds": seconds, "growth": growth})
            print(
                f"{shape:36} {reader:10} "
                + " ".join(f"{s * 1e3:10.2f}ms" for s in seconds)
                + f"  {growth:6.1f}"
            )
    worst = max(rows, key=lambda r: r["growth"])
    print(
        f"worst growth for ten times the length: {worst['growth']:.1f} "
        f"({worst['shape']}, {worst['reader']})"
    )
    if args.json:
        args.json.write_text(json.dumps({"sizes": SIZES, "rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
