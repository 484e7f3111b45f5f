"""Private leaf helpers (files, hashing, parsing, redaction); they import only errors."""
