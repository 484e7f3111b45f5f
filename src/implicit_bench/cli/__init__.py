"""The implicit-bench command: one module per command group."""
