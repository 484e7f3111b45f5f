"""Errors that name the offending input precisely."""

from __future__ import annotations

from pathlib import Path


class InputError(ValueError):
    """Bad input: names the file, the row (1-based data row, or a record id) and the field."""

    def __init__(self, path: str | Path, row: int | str | None, field: str | None, reason: str):
        self.path = str(path)
        self.row = row
        self.field = field
        self.reason = reason
        where = self.path
        if row is not None:
            where += f", row {row}"
        if field is not None:
            where += f", field '{field}'"
        super().__init__(f"{where}: {reason}")


class ConfigError(ValueError):
    """A params.yaml section or backend config that does not validate."""
