"""IMPLICIT-Bench: stereotyped defaults and prompt following in text-to-image models."""

from implicit_bench._util.moved_modules import install as _keep_old_module_names

__version__ = "0.1.0"
_keep_old_module_names()
