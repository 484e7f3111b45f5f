"""Vendor batch APIs (OpenAI Batch API, Gemini batch mode) behind ``batch: true`` on an entry.

:mod:`implicit_bench.backends.vendor_batch.base` writes the requests, submits them, records the
batch
ids in a model-call cache (:class:`implicit_bench.runtime.cache.DiskCache`) before polling, polls
under a deadline and a cap, and maps the answers back by custom id;
:mod:`~implicit_bench.backends.vendor_batch.openai` and
:mod:`~implicit_bench.backends.vendor_batch.gemini`
speak the two vendors' endpoints. docs/judging.md, "Vendor batch APIs".
"""
