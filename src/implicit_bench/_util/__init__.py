"""Private leaf helpers (files, hashing, parsing, redaction, closed-form and agreement
statistics); they import only errors."""
