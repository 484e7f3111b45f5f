"""IMPLICIT-Bench: stereotyped defaults and prompt following in text-to-image models."""

__version__ = "0.1.0"
