"""The `ra` command line: a thin typer layer over ra_build and ra_query.

Each command parses its options, calls one function, and renders the typed result. Errors a
user can cause are `RaError`s: printed as one line on stderr with a documented exit code
(README "Exit codes"), never as a traceback.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import orjson
import typer

from ra_build.cli.console import PROG, home, load_config, warn
from ra_build.refresh.current import Freshness
from ra_build.refresh.refreshed import refreshed_store
from ra_query.cli_common import guarded, quiet_stdout
from ra_query.errors import InputError
from ra_query.version import __version__

if TYPE_CHECKING:
    from collections.abc import Callable

    from ra_build.config.model import Config

app = typer.Typer(
    name="ra",
    help="ra — a research assistant for agents: index folders of markdown, search them by chunk.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
inspect_app = typer.Typer(help="Show how ra sees a file (debugging).", no_args_is_help=True)
app.add_typer(inspect_app, name="inspect")

ArtifactsOpt = Annotated[
    str | None,
    typer.Option(
        "--artifacts",
        help="Artifact directory (default: $RA_ARTIFACTS, else .ra/ beside the nearest .ra.toml).",
    ),
]


def _show_version(value: bool) -> None:
    if value:
        print(f"ra {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", help="Print ra's version and exit.", callback=_show_version, is_eager=True),
    ] = False,
) -> None:
    """ra — a research assistant for agents: index folders of markdown, search them by chunk."""


def _out(text: str) -> None:
    """Write a command's output; a reader that went away (`ra ls … | head`) is no error: exit 0.

    Flushed here, inside the command: click turns a broken pipe it sees into exit 1.
    """
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        quiet_stdout()
        raise typer.Exit(0) from None


@app.command()
def init(
    global_: Annotated[
        bool, typer.Option("--global", help="Write ~/.ra.toml instead of ./.ra.toml.")
    ] = False,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
) -> None:
    """Write a starter .ra.toml that defines a working tree."""
    from ra_build.config.starter import init_config

    result = init_config(Path.cwd(), home(), global_=global_, force=force)
    print(f"wrote {result.path} (tree '{result.tree_name}' → {result.tree_path})")
    if result.code is not None:
        print(result.code.summary())
    for created in result.created_dirs:
        print(f"created {created}")
    if result.gitignore is not None:
        print(f"added .ra/ to {result.gitignore}")
    print("next: ra update, then ra search WORDS")


@app.command("config")
def config_cmd(
    json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """Show the effective merged configuration and where each tree came from."""
    from ra_build.config.render import config_to_dict, render_config

    config = load_config(require_paths=False)
    if json:
        sys.stdout.write(orjson.dumps(config_to_dict(config), option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        sys.stdout.write(render_config(config))


@inspect_app.command("ctx")
def inspect_ctx(
    file: Annotated[Path, typer.Argument(help="The file whose context signals to show.")],
    artifacts: ArtifactsOpt = None,
) -> None:
    """Show the context signals ra context reads from FILE: each term, its source and weight, the query."""
    from ra_build.cli.context_config import context_options, context_rules, input_files
    from ra_query.search.context import analyze, explain_lines

    config = load_config()
    store = refreshed_store(config, artifacts, notify=warn)
    analysis = analyze(
        store, input_files(config, [str(file)]), rules=context_rules(config), options=context_options(config)
    )
    for warning in analysis.warnings:
        warn(warning)
    _out("\n".join(explain_lines(analysis)) + "\n")


@inspect_app.command("doc")
def inspect_doc(
    file: Annotated[Path, typer.Argument(help="A markdown, reStructuredText, text or code file.")],
) -> None:
    """Show file type, a page's language (and the page it translates), frontmatter and every chunk
    ra makes of FILE."""
    from ra_build.cli.inspection import render_inspect
    from ra_build.document.chunk import chunk_file, kind_for_path
    from ra_query.sources.languages import DOC_EXTENSIONS
    from ra_query.text.files import looks_binary, read_named
    from ra_query.text.locales import DEFAULT_LOCALE

    data = read_named(str(file), str(file), directory=" — give a markdown or text file")
    if looks_binary(data):
        raise InputError(f"{file}: binary file — ra indexes only markdown, text and code (it skips this one)")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{file}: not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}) — "
            "convert it to UTF-8; a build indexes it with replacement characters"
        ) from None
    from ra_build.document.code import generated_reason

    if kind_for_path(file.name) == "code" and (why := generated_reason(data)) is not None:
        warn(f"{file}: {why} by a build; below are the chunks it would make of it")
    if file.suffix.lower().lstrip(".") not in DOC_EXTENSIONS and kind_for_path(file.name) != "code":
        warn(
            f"{file}: not a markdown, reStructuredText, text or code file (.md, .rst, .txt, .py, .go, "
            "…) — shown as markdown, as a build reads it when a tree's include names it"
        )
    config = load_config(require_paths=False)
    tree, rel = _locate(file.resolve(), config)
    doc, _ = chunk_file(
        tree,
        rel,
        data,
        max_chunk_size=config.settings.max_chunk_size,
        code_chunk_size=config.settings.code_chunk_size,
        header_language=_header_language(config, tree),
    )
    assert doc is not None  # not binary: looked at above
    from ra_query.text.textsafe import printable

    found = config.trees.get(tree)
    language = found.language if found is not None else DEFAULT_LOCALE  # the tree's, as a build reads it
    report = render_inspect(
        doc, display_path=str(file), max_chunk_size=config.settings.max_chunk_size, language=language
    )
    sys.stdout.write(printable(report))


def _header_language(config: Config, tree: str) -> str:
    """What a `.h` of `tree` is parsed as, as its last build decided it (the tree's setting; for
    "auto", its files in the last snapshot) — "auto" (by the header's text) when unknown."""
    found = config.trees.get(tree)
    if found is None or found.header_language != "auto":
        return found.header_language if found is not None else "auto"
    from ra_build.artifacts.layout import Layout
    from ra_build.pipeline.discover import read_snapshot
    from ra_query.sources.languages import header_language_of

    try:
        snapshot = read_snapshot(Layout(config.artifacts(None, os.environ)), tree)
    except (OSError, ValueError):
        return "auto"
    return header_language_of(path for path, _, _ in snapshot.get("files", ()))


def _locate(path: Path, config: Config) -> tuple[str, str]:
    """(tree name, relative path) of `path` in the first configured tree holding it."""
    for tree in config.trees.values():
        try:
            return tree.name, path.relative_to(tree.path.resolve()).as_posix()
        except ValueError:
            continue
    return "file", path.name


@app.command()
def update(
    full: Annotated[bool, typer.Option("--full", help="Rebuild everything from scratch.")] = False,
    no_wait: Annotated[
        bool,
        typer.Option(
            "--no-wait",
            help="Exit with code 3 instead of waiting when another build runs; leave an upstream tree "
            "that another sync holds to it.",
        ),
    ] = False,
    artifacts: ArtifactsOpt = None,
    cluster: Annotated[
        str | None,
        typer.Option(
            "--cluster",
            metavar="SPEC",
            help="Parse and build the index shards on a Dask cluster: local:N (N worker processes "
            "here) or tcp://HOST:PORT (a running scheduler). Needs: pip install 'ra-kb\\[dask]'.",
        ),
    ] = None,
    refresh_upstream: Annotated[
        bool,
        typer.Option(
            "--refresh-upstream",
            help="Fetch every page of the upstream trees now (conditional requests), not only those due.",
        ),
    ] = False,
) -> None:
    """Bring the index up to date with the configured trees (incrementally); first fetch the
    upstream trees' pages that are missing or due."""
    from ra_build.cli.update import update_command

    # a plain `ra update` reaches update_command without typer (ra_build.cli.update.plain_update)
    update_command(
        full=full, no_wait=no_wait, artifacts=artifacts, cluster=cluster, refresh_upstream=refresh_upstream
    )


@app.command()
def status(
    json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    long: Annotated[
        bool,
        typer.Option("-l", "--long", help="List each upstream page: its URL, id, fetches and next due."),
    ] = False,
    artifacts: ArtifactsOpt = None,
) -> None:
    """Show config files, trees with resolved paths and counts, and the index state (-l: and
    every page of the upstream trees; --json always lists them)."""
    from ra_build.cli.reports import render_status
    from ra_build.cli.reports import status as collect

    config = load_config(require_paths=False)
    st = collect(config, config.artifacts(artifacts, os.environ))
    if json:
        sys.stdout.write(orjson.dumps(st, default=_jsonable, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        sys.stdout.write(render_status(st, long=long))


def _jsonable(obj: object) -> object:
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, Freshness):
        return obj._asdict()  # {"state": …, "changed": N}
    raise TypeError


@app.command("ls")
def ls_cmd(
    what: Annotated[str, typer.Argument(help="trees, docs or chunks")] = "trees",
    prefix: Annotated[
        str, typer.Argument(help="Only the names or ids that start with this, e.g. docs:guide/.")
    ] = "",
    long: Annotated[bool, typer.Option("-l", "--long", help="Show details.")] = False,
    artifacts: ArtifactsOpt = None,
) -> None:
    """List configured trees, indexed documents, or indexed chunks (those starting with PREFIX)."""
    from ra_build.cli.reports import ls_lines

    if what not in ("trees", "docs", "chunks"):
        raise InputError(f"cannot list {what!r} — use: ra ls trees, ra ls docs or ra ls chunks")
    config = load_config(require_paths=False)
    target = config.artifacts(artifacts, os.environ)
    from ra_query.text.textsafe import printable

    lines = ls_lines(config, target, what, long, prefix)  # type: ignore[arg-type]
    _out(printable("".join(f"{line}\n" for line in lines)))
    if not lines:  # nothing matched, as `ra-query ls` says it
        raise typer.Exit(1)


@app.command()
def check(artifacts: ArtifactsOpt = None) -> None:
    """Validate configuration, sources and index: exit 0 ok, 1 warnings, 2 errors."""
    from ra_build.cli.reports import check as run_check

    config = load_config()
    findings = run_check(config, config.artifacts(artifacts, os.environ))
    for finding in findings:
        print(finding.render())
    errors = sum(f.level == "error" for f in findings)
    warnings = sum(f.level == "warning" for f in findings)
    print(
        f"{errors} errors, {warnings} warnings"
        if errors or warnings
        else "ok: configuration, sources and index are fine"
    )
    raise typer.Exit(2 if errors else 1 if warnings else 0)


_PASS_THROUGH = {"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []}


@app.command(context_settings=_PASS_THROUGH, add_help_option=False)
def search(ctx: typer.Context) -> None:
    """Search and print matching chunks; the index is refreshed first (ra search --help)."""
    from ra_build.cli.fast import run_search

    raise typer.Exit(run_search(ctx.args))


@app.command(context_settings=_PASS_THROUGH, add_help_option=False)
def context(ctx: typer.Context) -> None:
    """Find the documentation that fits the files you are working on (ra context --help)."""
    from ra_build.cli.fast import run_context

    raise typer.Exit(run_context(ctx.args))


@app.command(context_settings=_PASS_THROUGH, add_help_option=False)
def likethis(ctx: typer.Context) -> None:
    """Find the chunks most like an indexed chunk, a document or a file (ra likethis --help)."""
    from ra_build.cli.fast import run_likethis

    raise typer.Exit(run_likethis(ctx.args))


@app.command("eval", context_settings=_PASS_THROUGH, add_help_option=False)
def eval_(ctx: typer.Context) -> None:
    """Score the index on a file of questions: hit@5, MRR, nDCG@10, misses (ra eval --help)."""
    raise typer.Exit(run_eval(ctx.args))


def run_eval(argv: list[str]) -> int:
    """`ra eval QUESTIONS`: `ra-query eval` over the index, refreshed first."""
    import argparse

    from ra_query.cli_common import EVAL_DESCRIPTION, add_eval_options, eval_output, help_formatter

    parser = argparse.ArgumentParser(
        prog="ra eval", description=EVAL_DESCRIPTION, formatter_class=help_formatter()
    )
    add_eval_options(parser)
    parser.add_argument(
        "--artifacts", help="artifact directory (default: $RA_ARTIFACTS, else .ra/ beside .ra.toml)"
    )
    args = parser.parse_args(argv)
    config = load_config()
    output = eval_output(refreshed_store(config, args.artifacts, notify=warn), args)
    sys.stdout.write(output.text)
    return int(output.code)


@app.command(context_settings=_PASS_THROUGH, add_help_option=False)
def get(ctx: typer.Context) -> None:
    """Print a chunk, or a whole document in document order, by id (ra get --help)."""
    from ra_build.cli.fast import run_get

    raise typer.Exit(run_get(ctx.args))


@app.command()
def pack(
    output: Annotated[
        Path, typer.Option("--output", "-o", help="The archive to write (default: ra-artifacts.tar.gz).")
    ] = Path("ra-artifacts.tar.gz"),
    with_tables: Annotated[
        bool, typer.Option("--with-tables", help="Ship the chunk tables (Parquet) too.")
    ] = False,
    artifacts: ArtifactsOpt = None,
) -> None:
    """Pack the index into a release artifact (.tar.gz and .sha256) that ra-query opens anywhere."""
    from ra_build.artifacts.pack import pack as pack_artifacts

    config = load_config()
    refreshed_store(config, artifacts, notify=warn)  # a current index, as every reader gets
    target = config.artifacts(artifacts, os.environ)
    path, digest = pack_artifacts(target, output, with_tables=with_tables)
    _out(f"{path} ({path.stat().st_size:,} bytes)\nsha256 {digest}\n")


@app.command()
def agents(
    claude: Annotated[bool, typer.Option("--claude", help="Also write CLAUDE.md.")] = False,
    gemini: Annotated[bool, typer.Option("--gemini", help="Also write GEMINI.md.")] = False,
    all_: Annotated[bool, typer.Option("--all", help="Write AGENTS.md, CLAUDE.md and GEMINI.md.")] = False,
    stdout: Annotated[bool, typer.Option("--stdout", help="Print the file instead of writing it.")] = False,
    diff: Annotated[bool, typer.Option("--diff", help="Show what would change; write nothing.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="Do not show the changes written.")] = False,
) -> None:
    """Write AGENTS.md: .agents.md, then ~/.agents.md, then a section that teaches agents to use ra."""
    from ra_build.cli.agents import code_languages, compose, plan, write
    from ra_query.errors import ConfigError

    config = load_config(require_paths=False)
    try:
        artifacts: Path | None = config.artifacts(None, os.environ)
    except ConfigError:  # no .ra.toml: no index either
        artifacts = None
    code = code_languages(config, artifacts)  # what the index has, else what the trees include
    if stdout:
        _out(compose(config, home(), code))
        return
    which = ["agents", "claude", "gemini"] if all_ else ["agents"] + ["claude"] * claude + ["gemini"] * gemini
    planned = plan(config, home(), which, code)
    if diff:
        _out("".join(p.diff() for p in planned))
        return
    written = write(planned)
    if not quiet:
        _out("".join(p.diff() for p in written))
    for p in planned:
        print(f"{p.path}: {'written' if p in written else 'up to date'}", file=sys.stderr)


@app.command("mcp")
def mcp_cmd(artifacts: ArtifactsOpt = None) -> None:
    """Serve search, context, get and list_sources to an agent over MCP (stdio, or HTTP with --http)."""
    from ra_build.cli.fast import run_mcp

    # `ra mcp` reaches ra_build.cli.fast.run_mcp without typer; this entry serves `ra --help`
    raise typer.Exit(run_mcp(["--artifacts", artifacts] if artifacts else []))


def run_app() -> int:
    """Run the typer app on `sys.argv`; its exit code, or the documented one for what it raised."""
    return guarded(lambda: _typer_codes(lambda: app(standalone_mode=False)), PROG)


def _typer_codes(run: Callable[[], object]) -> int:
    """Run `run`, turning typer's and click's exceptions into their exit codes."""
    try:
        code = run()
    except typer.Exit as exc:
        return int(exc.exit_code)
    except typer.TyperException as exc:  # a usage error: typer's usage line and message, exit 2
        if getattr(exc, "ctx", False) is None:  # click's parser names no command for some errors
            exc.ctx = _context_of(sys.argv[1:])  # pyright: ignore[reportAttributeAccessIssue]
        show = getattr(exc, "show", None)
        if callable(show):
            show()
        else:
            print(f"Error: {exc.format_message()}", file=sys.stderr)
        return int(exc.exit_code)
    except typer.Abort:
        raise KeyboardInterrupt from None
    # click returns an Exit's code instead of raising it when standalone_mode is off
    return code if isinstance(code, int) else 0


def _context_of(argv: list[str]) -> Any:
    """The click context of the command `argv` names (`ra inspect doc …`), for its usage line;
    None when none is found. Click leaves it out of errors such as `--full=x` ("does not take a
    value"), which then lacked the usage line every other usage error starts with."""
    command: Any = typer.main.get_command(app)
    context: Any = None
    try:
        context = command.make_context("ra", [], resilient_parsing=True)
        for word in argv:
            sub = command.get_command(context, word) if hasattr(command, "get_command") else None
            if sub is None:
                break
            command = sub
            context = command.make_context(word, [], parent=context, resilient_parsing=True)
    except Exception:  # only the usage line is at stake: the error is still shown
        return None
    return context
