"""The recipes of README.md and the docs that the journeys type, and the ones they do not.

A recipe is one command of a ```bash block (continuation lines joined, trailing comments and
runs of spaces dropped: ``commands``). ``JOURNEYS`` maps each command a journey types,
character for character, to that journey's test; ``NOT_JOURNEYS`` names the commands no journey
runs and why. tests/project/test_journey_coverage.py fails when a ```bash block of a file in
``DOCS`` holds a command in neither, or when either names a command the docs no longer hold.
"""

from __future__ import annotations

import re
from pathlib import Path

DOCS = ("README.md", "docs/experiments.md", "docs/byo-judgements.md", "docs/publishing.md")

QUICK_START = "make repro"
BASELINE = "dvc repro && git add -A && git commit -m baseline"
TWO_SEEDS = "dvc exp run -S 'render.seeds=[42,1042]'"
METRICS_DIFF = "dvc metrics diff"
THREE_SEEDS = "dvc exp run -S 'render.seeds=[42,1042,2042]'"
PLAN_PAPER = "implicit-bench plan --profile paper"
DVC_REPRO = "dvc repro"
PILOT_100 = (
    "implicit-bench run --benchmark REL --generator sim_api --judge qwen3vl --tables 4 "
    "--units 100 --name pilot --report site-pilot"
)
PILOT_200 = (
    "implicit-bench run --benchmark REL --generator sim_api --judge qwen3vl --tables 4 "
    "--units 200 --name pilot200 --report site-pilot200"
)
# a user's broken local model directory (test_render_failure.py; not a docs recipe)
BROKEN_MODEL = (
    "implicit-bench run --benchmark REL --generator ./my-model --judge qwen3vl --tables 4 "
    "--units 20 --name broken"
)
EXPORT_EEE = 'implicit-bench export eee . --out published/eee --organization "My Lab"'
EXPORT_HF = (
    "implicit-bench export hf-eval-results . --model-id my-org/my-model --out published/card"
)
REPORT_EEE = (
    'implicit-bench report . published/eee --label "this run" --label "My Lab (EEE)" '
    "--out published/site"
)
BYO = "implicit-bench analyze --units units.csv --judgements judgements.csv --out out"
SEQUENTIAL = (
    "implicit-bench run --generator sim_local --judge qwen3vl --sequential --target-width 0.3 "
    "--rounds 60,120,240 --name seq"
)

# command -> the journey test that types it
JOURNEYS: dict[str, str] = {
    QUICK_START: "tests/journeys/test_quick_start.py::test_quick_start",
    BASELINE: "tests/journeys/test_quick_start.py::test_seed_experiments",
    TWO_SEEDS: "tests/journeys/test_quick_start.py::test_seed_experiments",
    METRICS_DIFF: "tests/journeys/test_quick_start.py::test_seed_experiments",
    THREE_SEEDS: "tests/journeys/test_quick_start.py::test_seed_experiments",
    PLAN_PAPER: "tests/journeys/test_quick_start.py::test_seed_experiments",
    DVC_REPRO: "tests/journeys/test_quick_start.py::test_quick_start (make repro runs it)",
    BYO: "tests/journeys/test_byo_judgements.py::test_byo_judgements",
    SEQUENTIAL: "tests/journeys/test_quick_start.py::test_sequential_run",
    PILOT_100: "tests/journeys/test_beside_paper.py::test_beside_the_paper",
    PILOT_200: "tests/journeys/test_beside_paper.py::test_beside_the_paper",
    EXPORT_EEE: "tests/journeys/test_publishing.py::test_publishing",
    EXPORT_HF: "tests/journeys/test_publishing.py::test_publishing",
    REPORT_EEE: "tests/journeys/test_publishing.py::test_publishing",
}

# command -> why no journey types it
SPEED = (
    "the speed measurement of docs/publishing.md (a paper-sized synthetic run, minutes of "
    "export); the export and report it times are typed by test_publishing.py, and "
    "tests/unit/publish checks them on the same kind of tables"
)
NOT_JOURNEYS: dict[str, str] = {
    'python -c "import pandas as pd; from tests.helpers.synthetic_tables import synthetic_units, '
    "synthetic_judgements as sj; u = synthetic_units(1831); u.to_csv('u.csv', index=False); "
    "pd.concat([sj(u, judges=('judge-a',), config=c, seed=i) for i, c in "
    "enumerate(('genA', 'genB'))]).to_parquet('j.parquet')\"": SPEED,
    "implicit-bench analyze --units u.csv --judgements j.parquet --out run --config genA": SPEED,
    "time implicit-bench export eee run --out eee": SPEED,
    "time implicit-bench report run eee --out site": SPEED,
    "make test": "the test suite itself (CI's `make test`); a journey running it would recurse",
    "implicit-bench check": "the preflight of the Evaluate-your-model block, whose judge is a "
    "vLLM server on a GPU node (network); the offline path is `run --benchmark` "
    "(test_beside_paper.py)",
    "implicit-bench run --generator stabilityai/stable-diffusion-3-medium-diffusers --judge "
    "openai:Qwen/Qwen3-VL-8B-Instruct@http://localhost:8000/v1 --units 50 --seeds 42,1042 "
    "--dry-run": "needs the SD3 weights from the hub and a vLLM judge server (network, GPU)",
    "implicit-bench run --generator stabilityai/stable-diffusion-3-medium-diffusers --judge "
    "openai:Qwen/Qwen3-VL-8B-Instruct@http://localhost:8000/v1 --units 50 --seeds 42,1042 "
    "--name sd3": "needs the SD3 weights from the hub and a vLLM judge server (network, GPU)",
    "implicit-bench profile default": "the last line of the Evaluate-your-model block (network, "
    "GPU); profiles are checked by tests/project/test_doc_recipes.py",
    "implicit-bench run --generator <hub id | local dir | openai-images:MODEL | gemini:MODEL | "
    "generators entry> --judge <hub id | openai:MODEL[@BASE_URL] | judges entry> [--judge ...] "
    "[--units N] [--seeds 42,1042] [--profile NAME] [--name EXP] [--dry-run] [--queue]": "a "
    "synopsis with placeholders, not a command; its offline instance is test_beside_paper.py",
    "implicit-bench analyze --units UNITS --judgements JUDGEMENTS [--judgements MORE ...] --out "
    "DIR [--selection none|union|intersection] [--config NAME] [--blind-judge NAME ...] "
    "[--refusals INDEX ...] [--pairs PAIRS] [--params PARAMS.yaml] [--retrieval RETRIEVAL] "
    "[--bootstrap-n 1000] [--bootstrap-seed 42]": "a synopsis with placeholders; its worked "
    "example is test_byo_judgements.py",
}


def commands(text: str) -> list[str]:
    """The commands of the ```bash blocks of ``text``: continuation lines joined, comment
    lines and trailing comments dropped, runs of spaces made one."""
    found = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            line = re.sub(r"(^|\s+)#.*$", "", line.strip())
            if line:
                found.append(" ".join(line.split()))
    return found


def doc_commands(root: Path) -> dict[str, list[str]]:
    """file -> its ```bash commands, for each file of ``DOCS``."""
    return {rel: commands((root / rel).read_text(encoding="utf-8")) for rel in DOCS}


def csv_block(text: str, after: str) -> str:
    """The first ```csv block after the line ``after`` (docs/byo-judgements.md's tables)."""
    start = text.index(after)
    m = re.search(r"```csv\n(.*?)```", text[start:], re.S)
    assert m is not None, f"no ```csv block after {after!r}"
    return m.group(1)
