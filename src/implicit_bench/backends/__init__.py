"""Model backends, one package per kind, each behind a registry configured from params:
``generators`` (text-to-image), ``judges`` (vision-language judges), ``llm`` (writers),
``clip``, ``embedders``, ``faces``, ``vendor_batch`` (vendor batch APIs) and ``tiny`` (the
randomly initialised models of every kind that the ``models`` stage builds)."""
