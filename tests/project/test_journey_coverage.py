"""The README's and the docs' recipes and the journeys are kept in step: every command of a
```bash block of README.md, docs/experiments.md and docs/byo-judgements.md is typed by a
journey (tests/helpers/journey_recipes.py: JOURNEYS) or named with the reason no journey runs it
(NOT_JOURNEYS); neither list names a command the docs no longer hold."""

from __future__ import annotations

from tests.helpers.journey_recipes import JOURNEYS, NOT_JOURNEYS, commands, doc_commands
from tests.helpers.paths import REPO_ROOT


def test_every_bash_command_has_a_journey_or_a_reason():
    uncovered = [
        f"{rel}: {cmd}"
        for rel, cmds in doc_commands(REPO_ROOT).items()
        for cmd in cmds
        if cmd not in JOURNEYS and cmd not in NOT_JOURNEYS
    ]
    assert not uncovered, (
        "```bash commands with no journey (add one in tests/journeys/ and to recipes.JOURNEYS, "
        "or give the reason in recipes.NOT_JOURNEYS):\n" + "\n".join(uncovered)
    )


def test_the_registry_names_only_commands_the_docs_hold():
    held = {cmd for cmds in doc_commands(REPO_ROOT).values() for cmd in cmds}
    stale = sorted((set(JOURNEYS) | set(NOT_JOURNEYS)) - held)
    assert not stale, f"commands no longer in the docs: {stale}"
    assert not set(JOURNEYS) & set(NOT_JOURNEYS)


def test_each_journey_named_exists():
    for cmd, test in JOURNEYS.items():
        path, _, name = test.split(" ")[0].partition("::")
        assert f"def {name}(" in (REPO_ROOT / path).read_text(encoding="utf-8"), (cmd, test)


def test_commands_are_read_as_typed():
    text = "```bash\nmake repro   # a comment\n# only a comment\nfoo --a \\\n    --b\n```\n"
    assert commands(text) == ["make repro", "foo --a --b"]
