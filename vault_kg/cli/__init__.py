"""The `kg` command line (a face): the entry point, the typer app, one module per feature under `commands/`, and the no-op fast path of `kg update`."""
