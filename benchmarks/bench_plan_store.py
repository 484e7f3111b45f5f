"""Benchmark: ``build_plan`` of N units with a published image store (the judge plan's exact
lookup: ``plan.UnitRows``, ``plan.RenderPlanKeys``).

Builds WS once: N synthetic units (``tests/helpers/synthetic_tables.write_units_parquet``) and
an empty published store of generator ``g``; the params: one diffusers generator, an
``openai`` judge (no server is called), 3 variants x 3 seeds. Prints the judge row; time it
from outside:

    PYTHONPATH=SRC /usr/bin/time -f "%e s %U user %M KB" \\
        python benchmarks/bench_plan_store.py WS 1000000
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests/helpers: the synthetic units table

PARAMS = {
    "subset": {"max_units": 0},
    "generators": {"g": {"backend": "diffusers", "model": "m"}},
    "judges": {
        "j": {
            "backend": "openai",
            "model": "m",
            "base_url": "http://127.0.0.1:9/v1",
            "api_key_env": None,
        }
    },
    "render": {
        "run": ["g"],
        "seeds": [42, 1042, 2042],
        "variants": ["neutral", "stereotype", "anti_stereotype"],
    },
    "judge": {"tasks": {"rubric": None}},
}


def main(root: Path, n_units: int) -> None:
    from implicit_bench.planning.plan import build_plan
    from implicit_bench.render.images import ImageStore
    from tests.helpers.synthetic_tables import write_units_parquet

    if not (root / "data/interim/units.parquet").exists():
        write_units_parquet(root / "data/interim/units.parquet", n_units)
        ImageStore(root / "data/images/g").finalize(keys=[])
    plans, _ = build_plan(PARAMS, root)
    print({p.stage: (p.items, p.cached, p.note) for p in plans if p.stage == "judge"})


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]))
