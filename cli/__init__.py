"""The `skillet` command line: one module per command group, `main(argv) -> int`."""
