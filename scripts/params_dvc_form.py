"""Rewrite params.yaml (or the files given) in the form DVC's writer produces.

``dvc exp run -S key=value`` loads params.yaml with ruamel.yaml, applies the override through
Hydra / OmegaConf and dumps it again (``dvc.utils.hydra.apply_overrides``): flow lists become
block lists, needless quotes go, long scalars wrap, and a comment after a list that ends a
section is lost. A file already in that form is a fixed point, so an experiment changes only
the lines of the value it sets (``tests/project/test_params_form.py`` checks it). Run this after
editing params.yaml by hand: ``python scripts/params_dvc_form.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from implicit_bench._util.yamlsafe import load_yaml


def dvc_form(path: Path) -> bool:
    """Re-dump ``path`` through DVC's ``-S`` writer (an override that sets ``bootstrap.seed``
    to its own value); True when the file changed."""
    from dvc.utils.hydra import apply_overrides

    before = path.read_text(encoding="utf-8")
    seed = load_yaml(before)["bootstrap"]["seed"]
    apply_overrides(path, [f"bootstrap.seed={seed}"])
    after = path.read_text(encoding="utf-8")
    if load_yaml(after) != load_yaml(before):
        path.write_text(before, encoding="utf-8")
        raise SystemExit(f"{path}: DVC's writer changed a value; left unchanged")
    return after != before


if __name__ == "__main__":
    for name in sys.argv[1:] or ["params.yaml"]:
        print(name, "rewritten" if dvc_form(Path(name)) else "already in DVC's form")
