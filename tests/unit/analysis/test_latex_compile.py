"""Every LaTeX table compiles (pdflatex from Debian's texlive packages; `.ci/run` installs it),
takes its caption and labels from the table registry, and says SIMULATED when simulated."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from implicit_bench.analysis.paper_tables import write_tables
from implicit_bench.analysis.table_registry import REGISTRY
from tests.helpers.paths import REPO_ROOT

PREAMBLE = r"""\documentclass{article}
\usepackage[T1]{fontenc}
\usepackage{booktabs}
\usepackage{pdflscape}
\begin{document}
"""
# internal spellings that must not reach a printed table (raw names, catalogue keys, file names)
LEAKS = re.compile(
    r"\\_|textasciitilde|\bqwen3vl\b|\bgemma4\b|\bgpt54\b|\bsim_(local|api)\b|\\resizebox|\\caption\{table\d"
)


def _pipeline_tables() -> dict[str, pd.DataFrame]:
    """The committed CSV tables of the default run (their numbers; written again below)."""
    out = {}
    for csv in sorted((REPO_ROOT / "tables").glob("*.csv")):
        if csv.stem in ("rejected_rows", "duplicate_keys"):
            continue
        frame = pd.read_csv(csv)
        out[csv.stem] = frame.drop(columns=[c for c in ("simulated",) if c in frame.columns])
    return out


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tex")
    tables = _pipeline_tables()
    tables["odd_characters"] = pd.DataFrame(
        {
            "bias_type": ["race & colour_50% #1 ~ {x} ^"],
            "share_pct": [12.5],
            "share_ci_low": [5.0],
            "share_ci_high": [20.0],
        }
    )
    write_tables(out, tables, prov={"simulated": True})
    return out / "tables"


def test_every_pipeline_table_is_registered_and_reads_like_a_paper(written):
    names = [p.stem for p in written.glob("*.tex") if p.stem != "odd_characters"]
    assert names, "no tables/*.csv to check"
    assert sorted(set(names) - set(REGISTRY)) == []
    for name in names:
        tex = (written / f"{name}.tex").read_text()
        assert (
            rf"\caption{{{REGISTRY[name].caption}" in tex
            and rf"\label{{{REGISTRY[name].label}}}" in tex
        )
        body = tex.split(r"\midrule", 1)[0].split(r"\toprule", 1)[1] + tex.split(r"\midrule", 1)[1]
        assert not LEAKS.search(body), (name, LEAKS.search(body)[0])
        assert "SIMULATED" in tex, name
        assert "SIMULATED" in (written / f"{name}.csv").read_text(), name


def test_wide_tables_are_landscape_or_split_not_shrunk(written):
    # each float (a table, or one part of a split table) wider than 7 columns sits in landscape;
    # whether it fits is checked by the compile test (no overfull box)
    for tex_path in written.glob("*.tex"):
        tex = tex_path.read_text()
        assert r"\resizebox" not in tex
        for part in re.split(r"(?=\\begin\{table\})", tex)[1:]:
            n_cols = len(re.search(r"\\begin\{tabular\}\{(\w+)\}", part)[1])
            if n_cols > 7:
                assert part.split(r"\end{table}")[1].startswith("\n\\end{landscape}"), tex_path.name


def test_percentages_have_one_format_per_table(written):
    # a fraction column is printed as a percentage: e.g. 0.9081 coverage -> 90.8 in a "(%)" column
    coverage = float(
        pd.read_csv(REPO_ROOT / "tables" / "table04_generators.csv")["coverage"].iloc[0]
    )
    pct, frac = f"{100 * coverage:.1f}", f"{coverage:.2f}"
    tex = (written / "table04_generators.tex").read_text()
    assert r"Coverage (\%)" in tex and re.search(rf"& {re.escape(pct)}( &| \\\\)", tex)
    assert not re.search(rf"& {re.escape(frac)}\d* ", tex)
    assert (
        "n/a" in (written / "table05_recoverability.tex").read_text()
    )  # CLIP cannot answer "neither"


def test_every_table_compiles(written, tmp_path):
    tex_files = sorted(written.glob("*.tex"))
    doc = (
        PREAMBLE + "\n\\clearpage\n".join(p.read_text() for p in tex_files) + "\n\\end{document}\n"
    )
    (tmp_path / "all.tex").write_text(doc)
    engine = shutil.which("pdflatex")
    if engine is None:
        # no LaTeX engine installed: parse every table and check its environments balance
        pylatexenc = pytest.importorskip(
            "pylatexenc.latexwalker", reason="neither pdflatex nor pylatexenc installed"
        )
        for p in tex_files:
            nodes, _, _ = pylatexenc.LatexWalker(
                p.read_text(), tolerant_parsing=False
            ).get_latex_nodes()
            assert nodes, p.name
        return
    run = subprocess.run(
        [engine, "-interaction=nonstopmode", "-halt-on-error", "all.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    log = (
        (tmp_path / "all.log").read_text(errors="replace")
        if (tmp_path / "all.log").exists()
        else run.stdout
    )
    assert run.returncode == 0, log[-3000:]
    overfull = re.findall(
        r"Overfull \\hbox \(([\d.]+)pt too wide\) in paragraph at lines (\d+)", log
    )
    assert [o for o in overfull if float(o[0]) > 2] == [], (
        "tables wider than the page (pt, line of all.tex)"
    )
