"""Every internal link of the Markdown files resolves, and every ``docs/NAME.md`` that code,
tests or docs name exists (a link to a moved or missing page fails here)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.helpers.paths import REPO_ROOT

LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
DOC_PATH = re.compile(r"\bdocs/[\w.-]+\.md\b")


def tracked(*patterns: str) -> list[Path]:
    """The files git tracks or would track (not ignored) matching ``patterns``."""
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z", "--", *patterns],
        cwd=REPO_ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    return [REPO_ROOT / p for p in out.split("\0") if p and (REPO_ROOT / p).is_file()]


def broken_links(files: list[Path], root: Path) -> list[str]:
    """``file: target`` for each relative link whose file does not exist (web, mail and
    in-page ``#anchor`` links are not checked; a link's own ``#anchor`` is dropped)."""
    found = []
    for md in files:
        text = re.sub(r"```.*?```", "", md.read_text(encoding="utf-8"), flags=re.S)
        for target in LINK.findall(text):
            if re.match(r"^(?:[a-z][a-z0-9+.-]*:|#)", target):
                continue
            path = target.split("#", 1)[0]
            if path and not (md.parent / path).exists():
                found.append(f"{md.relative_to(root)}: {target}")
    return found


def missing_doc_paths(files: list[Path], root: Path) -> list[str]:
    """``file: docs/NAME.md`` for each page a file names that does not exist."""
    return [
        f"{f.relative_to(root)}: {name}"
        for f in files
        for name in sorted(set(DOC_PATH.findall(f.read_text(encoding="utf-8", errors="replace"))))
        if not (root / name).exists()
    ]


def test_every_internal_markdown_link_resolves():
    assert broken_links(tracked("*.md"), REPO_ROOT) == []


def test_every_named_docs_page_exists():
    files = tracked("src", "stages", "scripts", "benchmarks", "tests", "docs", "*.md", "Makefile")
    files = [
        f
        for f in files
        if f.suffix in (".py", ".md", ".yaml", ".txt", "") and f.name != "test_doc_links.py"
    ]
    assert missing_doc_paths(files, REPO_ROOT) == []


def test_the_checks_find_a_broken_link(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text(
        "[ok](b.md#x) [web](https://x.org) [here](#top) [gone](missing.md)\n"
        "```\n[in code](nowhere.md)\n```\n"
    )
    (tmp_path / "docs" / "b.md").write_text("see docs/a.md and docs/nope.md\n")
    files = [tmp_path / "docs" / "a.md", tmp_path / "docs" / "b.md"]
    assert broken_links(files, tmp_path) == ["docs/a.md: missing.md"]
    assert missing_doc_paths(files, tmp_path) == ["docs/b.md: docs/nope.md"]
