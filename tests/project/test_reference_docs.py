"""The reference docs say what the project is, not how it got there: no tracker numbers in the
code, tests or docs; no path of one machine in the docs; no per-commit timing tables in
docs/testing.md (the history is in docs/decisions.md and git); docs/architecture.md short."""

from __future__ import annotations

import re
from pathlib import Path

from tests.helpers.paths import REPO_ROOT

TRACKER = re.compile(r"\b[Ii]ssue [0-9]+")
MACHINE_PATH = re.compile(r"/work\b|/tmp/rel\b|/home\b")
TIMING_HEADER = re.compile(r"\b(commit|wall time|load average)\b|\(s\)", re.IGNORECASE)


def _texts(*folders: str) -> list[Path]:
    suffixes = {".py", ".md", ".yaml", ".yml", ".txt", ".toml"}
    return [
        p
        for folder in folders
        for p in sorted((REPO_ROOT / folder).rglob("*"))
        if p.is_file() and p.suffix in suffixes and "__pycache__" not in p.parts
    ]


def _hits(pattern: re.Pattern[str], files: list[Path]) -> list[str]:
    return [
        f"{p.relative_to(REPO_ROOT)}:{i}: {line.strip()}"
        for p in files
        for i, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
        if pattern.search(line)
    ]


def test_no_tracker_numbers_in_code_tests_or_docs():
    assert _hits(TRACKER, _texts("src", "tests", "docs")) == []


def test_no_machine_paths_in_the_docs():
    files = [*sorted((REPO_ROOT / "docs").glob("*.md")), REPO_ROOT / "benchmarks" / "README.md"]
    assert _hits(MACHINE_PATH, files) == []


def test_testing_md_has_no_timing_tables():
    lines = (REPO_ROOT / "docs" / "testing.md").read_text(encoding="utf-8").splitlines()
    headers = [
        line
        for i, line in enumerate(lines[:-1])
        if line.startswith("|") and lines[i + 1].startswith("| ---")
    ]
    assert [h for h in headers if TIMING_HEADER.search(h)] == []


def test_architecture_md_is_at_most_250_lines():
    assert (
        len((REPO_ROOT / "docs" / "architecture.md").read_text(encoding="utf-8").splitlines())
        <= 250
    )


def test_the_checks_catch_what_they_look_for():
    assert TRACKER.search("fixed in Issue " + "52") and not TRACKER.search("an issue with 3 units")
    assert MACHINE_PATH.search("cd /work/main") and not MACHINE_PATH.search("/repo and /workdir")
    assert TIMING_HEADER.search("| commit | wall time |") and not TIMING_HEADER.search("| file |")
