"""The `ra` command line: the entry point, the fast argparse commands and the typer app."""
