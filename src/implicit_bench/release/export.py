"""``implicit-bench export-dataset``: the benchmark as a Hugging Face dataset folder.

Writes Parquet files and a dataset card (``README.md``) that ``datasets.load_dataset(DIR,
CONFIG)`` reads with no network: config ``triplets`` (default; one row per unit with its
prompt triplet and the extra prompt variants) and config ``units`` (the bias KG: one row per
unit). JSON-list columns become lists of strings. The card gives the licence (CC BY-SA 4.0,
inherited from StereoSet and CrowS-Pairs), a content warning, the construction settings
taken from params.yaml, and the citation. docs/export-dataset.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from implicit_bench._util.dirswap import check_owned, staged_dir
from implicit_bench.errors import InputError
from implicit_bench.params import base_params

CONFIGS = ("triplets", "units")
LIST_COLUMNS = (
    "stereotype_tails",
    "anti_stereotype_tails",
    "stereotype_evidence",
    "anti_stereotype_evidence",
)
CITATION = """@article{dai2026implicitbench,
  title   = {{IMPLICIT-Bench}: Stereotyped Defaults and Prompt Following in
             Text-to-Image Generation},
  author  = {Dai, Yue and Liu, Ziyang and Cheong, Marc and Han, Caren},
  journal = {arXiv preprint arXiv:2609.24228},
  year    = {2026},
  url     = {https://arxiv.org/abs/2609.24228}
}"""


def _as_list(value: Any, path: str, row: int, column: str) -> list[str] | None:
    """One JSON-list cell -> a list of strings (null stays null); a malformed cell is an
    ``InputError`` naming the file, the 1-based data row and the column."""
    if value is None or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, (list, tuple)):
        items: Any = list(value)
    else:
        try:
            items = json.loads(value) if isinstance(value, str) else value
        except ValueError as exc:
            raise InputError(
                path, row, column, f"not a JSON list of strings ({exc.msg}): {str(value)[:80]!r}"
            ) from None
    if not isinstance(items, list) or not all(
        isinstance(x, (str, int, float)) and not isinstance(x, bool) for x in items
    ):
        raise InputError(path, row, column, f"not a JSON list of strings: {str(value)[:80]!r}")
    return [str(x) for x in items]


def _lists(frame: pd.DataFrame, path: str = "<table>") -> pd.DataFrame:
    """JSON-list string columns -> Python lists of strings (null stays null)."""
    frame = frame.copy()
    for col in LIST_COLUMNS:
        if col in frame.columns:
            frame[col] = [_as_list(v, path, i, col) for i, v in enumerate(frame[col], start=1)]
    return frame


def construction_settings(params: dict[str, Any]) -> dict[str, Any]:
    """The parameters that determine the exported rows: sources, kg, triplets (only the ``llms``
    entries actually used, without anything but backend and model)."""
    out: dict[str, Any] = {"profile": base_params(params).profile}
    sources = params.get("sources") or {}
    out["sources"] = {k: v for k, v in sources.items() if k != "on_bad_row"}
    llms = params.get("llms") or {}
    for name, mode_key in (("kg", "extractor"), ("triplets", "writer")):
        block = dict(params.get(name) or {})
        if block.get(mode_key) == "llm":
            chosen = llms.get(block.get("llm"), {}) or {}
            block["llm_model"] = {k: chosen.get(k) for k in ("backend", "model")}
        else:
            block.pop("llm", None)
            block.pop("max_tokens", None)
        out[name] = block
    return out


def _counts(frame: pd.DataFrame, column: str) -> str:
    if column not in frame.columns or frame.empty:
        return "(none)"
    counts = frame[column].astype(str).value_counts().sort_index()
    return ", ".join(f"{k}: {v:,}" for k, v in counts.items())


def dataset_card(triplets: pd.DataFrame, units: pd.DataFrame, settings: dict[str, Any]) -> str:
    """The README.md of the dataset folder: YAML metadata for the Hub, then the card."""
    n = len(triplets)
    size = "n<1K" if n < 1000 else "1K<n<10K" if n < 10_000 else "10K<n<100K"
    meta = {
        "license": "cc-by-sa-4.0",
        "language": ["en"],
        "pretty_name": "IMPLICIT-Bench",
        "size_categories": [size],
        "task_categories": ["text-to-image"],
        "tags": ["bias", "stereotypes", "fairness", "knowledge-graph", "prompt-following"],
        "configs": [
            {
                "config_name": "triplets",
                "default": True,
                "data_files": [{"split": "train", "path": "triplets/train-*.parquet"}],
            },
            {
                "config_name": "units",
                "data_files": [{"split": "train", "path": "units/train-*.parquet"}],
            },
        ],
    }
    fields_t = ", ".join(f"`{c}`" for c in triplets.columns)
    fields_u = ", ".join(f"`{c}`" for c in units.columns)
    return f"""---
{yaml.safe_dump(meta, sort_keys=False).strip()}
---

# IMPLICIT-Bench: prompt triplets and bias knowledge graph

> **Content warning.** This dataset is built from StereoSet and CrowS-Pairs and states social
> stereotypes (about gender, race, religion, age, disability, nationality, sexual orientation,
> physical appearance, socio-economic status and more), some of them offensive. They are
> recorded to *measure* stereotyped behaviour of text-to-image models, not to endorse them.
> Do not use the data to generate or reinforce stereotyped content.

Each row of `triplets` describes one scene with three prompts: a neutral prompt (measures the
model's default), a stereotype prompt and an anti-stereotype prompt (measure whether the model
follows an explicit request on either side of the stereotype). Each row of `units` is one unit
of the bias knowledge graph: a head (the subject), an optional relation, and the stereotype /
anti-stereotype attributes.

```python
from datasets import load_dataset
triplets = load_dataset("PATH_OR_HUB_ID", "triplets", split="train")
units = load_dataset("PATH_OR_HUB_ID", "units", split="train")
```

## Contents

- `triplets`: {n:,} rows. By bias type: {_counts(triplets, "bias_type")}. By source:
  {_counts(triplets, "source")}. Fields: {fields_t}.
- `units`: {len(units):,} rows. By bias type: {_counts(units, "bias_type")}. Fields: {fields_u}.

`*_tails` are lists of attribute strings; `stereotype` / `anti_stereotype` join them with ", ".
Prompt columns beyond the three core prompts (`prompt_negated_*`, `prompt_subject`) are extra
variants for the audits; a null prompt failed its checks (`*_check` says why).

## Construction settings

Exported by `implicit-bench export-dataset` from the pipeline of
[implicit-bench](https://arxiv.org/abs/2609.24228) with these parameters (params.yaml):

```yaml
{yaml.safe_dump(settings, sort_keys=False, allow_unicode=True).strip()}
```

With the default deterministic construction (`kg.extractor: minimal_pair`, `triplets.writer:
template`) the units are the token differences of each sentence pair and the prompts are
templates ("a photo of {{subject}}"); the paper's units and prompts come from GPT-5.4-mini
(`kg.extractor: llm`, `triplets.writer: llm`, profile `paper`).

## Licence

CC BY-SA 4.0. The rows are derived from StereoSet (Nadeem et al., 2021; dev split) and
CrowS-Pairs (Nangia et al., 2020), both CC BY-SA 4.0, and are shared under the same licence:
attribute both sources and this dataset, and share derivatives under CC BY-SA 4.0. The code
that builds the dataset is MIT.

## Citation

```bibtex
{CITATION}
```

Please also cite StereoSet and CrowS-Pairs.
"""


# every file export-dataset writes; a folder holding others is refused (they would be lost)
DATASET_FILES = (
    r"(?:triplets|units)/train-\d{5}-of-\d{5}\.parquet",
    r"README\.md",
    r"(?:.*/)?\.[^/]+\.tmp",
)


def export_dataset(
    kg_units: pd.DataFrame,
    triplets: pd.DataFrame,
    out: str | Path,
    params: dict[str, Any],
    sources: tuple[str, str] = ("<kg units>", "<triplets>"),
) -> dict[str, int]:
    """Write ``out/{{triplets,units}}/train-00000-of-00001.parquet`` and ``out/README.md``,
    into a fresh folder swapped in at the end: a kill leaves the old dataset or the new one."""
    out = Path(out)
    frames = {"triplets": _lists(triplets, sources[1]), "units": _lists(kg_units, sources[0])}
    check_owned(out, DATASET_FILES, "export-dataset")
    with staged_dir(out) as tmp:
        for name, frame in frames.items():
            folder = tmp / name
            folder.mkdir(parents=True)
            table = pa.Table.from_pandas(frame.reset_index(drop=True), preserve_index=False)
            # an all-null column (e.g. no relation in this run) is a nullable string, not type null
            schema = pa.schema(
                [f.with_type(pa.string()) if pa.types.is_null(f.type) else f for f in table.schema]
            )
            pq.write_table(table.cast(schema), folder / "train-00000-of-00001.parquet")
        card = dataset_card(frames["triplets"], frames["units"], construction_settings(params))
        (tmp / "README.md").write_text(card, encoding="utf-8")
    return {name: len(frame) for name, frame in frames.items()}
