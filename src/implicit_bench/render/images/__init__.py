"""Packed image storage."""

from implicit_bench.render.images.store import (
    ImageKey,
    ImageRecord,
    ImageStore,
    StoreLockedError,
    published_stores,
    read_index,
    unpublish,
)

__all__ = [
    "ImageKey",
    "ImageRecord",
    "ImageStore",
    "StoreLockedError",
    "published_stores",
    "read_index",
    "unpublish",
]
