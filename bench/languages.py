"""Benchmark: every language ra claims, chunked right (issue 31).

    .venv/bin/python bench/languages.py [--corpus NAME=DIR]... [--work DIR] [--rev REV] [--no-search]
                                        [--examples N] [--label TEXT] [--no-record]

1. Corpora: a public repository per language at a fixed commit (CORPORA): fmtlib/fmt (C++; its
   headers are `.h`), antirez/sds (C), expressjs/express (JavaScript, CommonJS), google/gson
   (Java), sinatra/sinatra (Ruby), sindresorhus/ky (TypeScript), thephpleague/climate (PHP),
   jbogard/MediatR (C#), JakeWharton/timber (Kotlin), Alamofire/Alamofire (Swift),
   com-lihaoyi/fansi (Scala), nvim-lua/plenary.nvim (Lua), Hejsil/zig-clap (Zig) and
   elixir-plug/plug (Elixir).
   `--corpus NAME=DIR` points at a checkout; by default /tmp/code-corpora/NAME (how to get one
   is printed when it is missing).
2. Files: every file under the corpus whose language (`ra_query.sources.languages.language_of`,
   by extension) is one of the languages its include globs name, outside node_modules, vendor
   and .git, and not generated or minified (`ra_build.document.code.generated_reason`). Each is
   chunked by the real chunker, `ra_build.document.chunk.chunk_file` with the default budget
   (and a `.h` parsed as the build would: `header_language_of` the corpus's files);
   a chunk below means a code chunk of depth ≥ 1 (not the file's document node).
3. Per corpus:
   - files, chunks, files with warnings (the first few warnings printed with their paths);
   - the largest chunk in tokens (its id printed) and the chunks over 1,000 tokens;
   - **range mismatches**: a chunk whose body is not the file's bytes[byte_start:byte_end]
     decoded, or whose line_start / line_end are not the 1-based lines of byte_start and
     byte_end - 1 (no line check for an empty body);
   - **dropped ;**: a chunk whose line_end line goes on after the chunk's text with nothing but
     `;` or `,` (and spaces): the statement's terminator left out of its range;
   - **fragments**: chunks of ≤ 6 tokens, and in brackets how many of them have no text at all
     (a container whose own part is its first line alone: `impl X {`, `describe('x', () => {`,
     holds its members and no text);
   - **bad names** — a heuristic: a chunk whose slug (the id after `#`, its `-N` and `.N` part
     suffixes dropped, the last dotted segment) is empty or one of BAD_SLUGS (a keyword, a
     preprocessor directive, an annotation, a comment word, `block`: what a name taken from the
     wrong node looks like) and the title does not define that word (`def new(`, `void test(`
     are fine), or whose title starts as a comment does (`/*`, `*`, `//`, `##`; `#` in Ruby,
     PHP, Python, shell: elsewhere it opens a directive or a private name). A real definition
     may still be counted (a class `A`), so the examples printed tell;
   - **name first**: 10 names per corpus, picked by hand from its public API (NAMES: bare and
     qualified, each with the file and line it is defined at, checked against the corpus before
     anything is built), each searched as typed; a hit is a first result in that file whose
     line range holds that line (any of the lines given, for an overloaded name). The corpus
     is one tree of a fresh project (`.ra.toml` with `root = true`; include its language's
     files and `**/*.md`; HOME an empty directory) built by `ra update`, searched lexically
     through `ra_query.commands.search_command` with `ra-query search --lexical`'s defaults.
     `--no-search` skips it (chunking only: seconds, not minutes).
4. With `--rev REV` the ra measured is that revision's, checked out with `git worktree add`
   (removed after): its chunker chunks, its `ra update` builds, its ra_query searches.
5. A markdown table (a row per corpus), the examples printed below it, `bench/results/
   languages.json` (the latest figures and examples) and the table appended to
   `bench/results/languages.txt` with the commit, date and load.
"""

from __future__ import annotations

import argparse
import datetime as dt
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import code_search
from code_search import Corpus
from common import REPO, checkout, clean_env, entry_command, run_ra
from quality import default_params, load

sys.path.insert(0, str(REPO))

RESULTS_JSON = REPO / "bench" / "results" / "languages.json"
RESULTS_TXT = REPO / "bench" / "results" / "languages.txt"
CORPUS_ROOT = Path("/tmp/code-corpora")
SKIP_DIRS = frozenset({"node_modules", "vendor", ".git"})
LARGE_TOKENS = 1000
FRAGMENT_TOKENS = 6
EXAMPLES = 5  # examples printed per corpus and kind (--examples)

CORPORA: dict[str, Corpus] = {
    "fmt": Corpus(
        "fmtlib/fmt", "60ccad511fd680cb91d8b60a315759f71c67bef9", "cpp", ("**/*.h", "**/*.cc", "**/*.md")
    ),
    "sds": Corpus(
        "antirez/sds", "5347739b1581fcba74fd5cab1fc21d2aef317d71", "c", ("**/*.c", "**/*.h", "**/*.md")
    ),
    "express": Corpus(
        "expressjs/express", "a3714473feb3d2908add734d340e7755fd85e0a3", "javascript", ("**/*.js", "**/*.md")
    ),
    "gson": Corpus(
        "google/gson", "9835b6f90192f79cdf5300c528fc6212455fb6c1", "java", ("**/*.java", "**/*.md")
    ),
    "sinatra": Corpus(
        "sinatra/sinatra", "cb22afd7902b566b6eaba6c4ea89739494a65d12", "ruby", ("**/*.rb", "**/*.md")
    ),
    "ky": Corpus(
        "sindresorhus/ky", "3419113b48e034fdcf8fa6bd3be3da7b3d0d758f", "typescript", ("**/*.ts", "**/*.md")
    ),
    "climate": Corpus(
        "thephpleague/climate", "f2d78fbc504740bcd0209e40a4586c886567ddc9", "php", ("**/*.php", "**/*.md")
    ),
    "MediatR": Corpus(
        "jbogard/MediatR", "8a64581e2570e7410c5f44835d9ea112beccbe6b", "csharp", ("**/*.cs", "**/*.md")
    ),
    "timber": Corpus(
        "JakeWharton/timber", "d226eb0391d6d32547dad7b2c77da84010d61aac", "kotlin", ("**/*.kt", "**/*.md")
    ),
    "Alamofire": Corpus(
        "Alamofire/Alamofire", "7595cbcf59809f9977c5f6378500de2ad73b7ddb", "swift", ("**/*.swift", "**/*.md")
    ),
    "fansi": Corpus(
        "com-lihaoyi/fansi", "c8d4e5b56c46f2b360a441ca6d35620819a1ee52", "scala", ("**/*.scala", "**/*.md")
    ),
    "plenary": Corpus(
        "nvim-lua/plenary.nvim", "b9fd5226c2f76c951fc8ed5923d85e4de065e509", "lua", ("**/*.lua", "**/*.md")
    ),
    "zig-clap": Corpus(
        "Hejsil/zig-clap", "e91d66b1abba2024cd2e816426f14d233d3dad9a", "zig", ("**/*.zig", "**/*.md")
    ),
    "plug": Corpus(
        "elixir-plug/plug",
        "a898c454a04ca5ffad306bd751a15c7ac9ff6927",
        "elixir",
        ("**/*.ex", "**/*.exs", "**/*.md"),
    ),
}

_TIMBER_LINT = "timber-lint/src/main/java/timber/lint"
_FANSI = "fansi/src/fansi/Fansi.scala"
# name typed → (the file it is defined in, the line of its definition; several for an overload)
NAMES: dict[str, tuple[tuple[str, str, tuple[int, ...]], ...]] = {
    "fmt": (
        ("basic_memory_buffer", "include/fmt/format.h", (775,)),
        ("format_int", "include/fmt/format.h", (4202,)),
        ("text_style", "include/fmt/color.h", (236,)),
        ("dynamic_format_arg_store", "include/fmt/args.h", (74,)),
        ("buffered_file", "include/fmt/os.h", (165,)),
        ("group_digits", "include/fmt/format.h", (4083,)),
        ("styled", "include/fmt/color.h", (665,)),
        ("basic_format_arg", "include/fmt/base.h", (2464,)),  # declared at 632 first
        ("file::dup", "src/os.cc", (288,)),
        ("buffered_file::close", "src/os.cc", (183,)),
    ),
    "sds": (
        ("sdsnewlen", "sds.c", (89,)),
        ("sdscatfmt", "sds.c", (616,)),  # declared in sds.h too
        ("sdsMakeRoomFor", "sds.c", (204,)),
        ("sdssplitlen", "sds.c", (835,)),
        ("sdscatrepr", "sds.c", (898,)),
        ("sdssplitargs", "sds.c", (973,)),
        ("sdsrange", "sds.c", (756,)),
        ("sdstrim", "sds.c", (725,)),
        ("sdshdr8", "sds.h", (51,)),
        ("sdslen", "sds.h", (87,)),
    ),
    "express": (
        ("app.use", "lib/application.js", (190,)),
        ("res.send", "lib/response.js", (126,)),
        ("res.redirect", "lib/response.js", (815,)),
        ("View.prototype.render", "lib/view.js", (133,)),
        ("req.accepts", "lib/request.js", (127,)),
        ("app.listen", "lib/application.js", (598,)),
        ("compileTrust", "lib/utils.js", (194,)),
        ("createApplication", "lib/express.js", (36,)),
        ("createETagGenerator", "lib/utils.js", (249,)),
        ("res.cookie", "lib/response.js", (745,)),
    ),
    "gson": (
        ("FieldNamingPolicy", "gson/src/main/java/com/google/gson/FieldNamingPolicy.java", (31,)),
        ("JsonReader.peek", "gson/src/main/java/com/google/gson/stream/JsonReader.java", (542,)),
        ("GsonBuilder.setPrettyPrinting", "gson/src/main/java/com/google/gson/GsonBuilder.java", (549,)),
        ("JsonParser.parseString", "gson/src/main/java/com/google/gson/JsonParser.java", (91,)),
        ("TypeToken", "gson/src/main/java/com/google/gson/reflect/TypeToken.java", (54,)),
        ("GsonBuilder", "gson/src/main/java/com/google/gson/GsonBuilder.java", (93,)),
        ("ToNumberPolicy", "gson/src/main/java/com/google/gson/ToNumberPolicy.java", (36,)),
        ("JsonWriter.name", "gson/src/main/java/com/google/gson/stream/JsonWriter.java", (499,)),
        ("registerTypeAdapter", "gson/src/main/java/com/google/gson/GsonBuilder.java", (740,)),
        ("TypeAdapter", "gson/src/main/java/com/google/gson/TypeAdapter.java", (122,)),
    ),
    "sinatra": (
        ("Base.route", "lib/sinatra/base.rb", (1776,)),
        ("Helpers.redirect", "lib/sinatra/base.rb", (310,)),
        ("Helpers.send_file", "lib/sinatra/base.rb", (426,)),
        ("Base.halt", "lib/sinatra/base.rb", (1028,)),
        ("Templates.erb", "lib/sinatra/base.rb", (753,)),
        ("TemplateCache", "lib/sinatra/base.rb", (949,)),
        ("IndifferentHash", "lib/sinatra/indifferent_hash.rb", (41,)),
        ("ShowExceptions", "lib/sinatra/show_exceptions.rb", (12,)),
        ("Base.set", "lib/sinatra/base.rb", (1347,)),
        ("process_route", "lib/sinatra/base.rb", (1098,)),
    ),
    "ky": (
        ("Ky.create", "source/core/Ky.ts", (152,)),
        ("createInstance", "source/index.ts", (10,)),
        ("HTTPError", "source/errors/HTTPError.ts", (15,)),
        ("calculateRetryTimingDelay", "source/core/retry-timing.ts", (151,)),
        ("getBodySize", "source/utils/body.ts", (7,)),
        ("mergeHeaders", "source/utils/merge.ts", (64,)),
        ("isHTTPError", "source/utils/type-guards.ts", (57,)),
        ("RetryMarker", "source/core/constants.ts", (153,)),
        ("KyInstance", "source/types/ky.ts", (5,)),
        ("normalizeRetryOptions", "source/utils/normalize.ts", (28,)),
    ),
    "climate": (
        ("CLImate", "src/CLImate.php", (87,)),
        ("CLImate.extend", "src/CLImate.php", (209,)),
        ("forceAnsiOn", "src/CLImate.php", (221,)),
        ("Spinner.advance", "src/TerminalObject/Dynamic/Spinner.php", (114,)),
        ("Checkboxes", "src/TerminalObject/Dynamic/Checkboxes.php", (8,)),
        ("ParserFactory", "src/Decorator/Parser/ParserFactory.php", (8,)),
        ("Parser.arguments", "src/Argument/Parser.php", (118,)),
        ("Logger", "src/Logger.php", (17,)),
        ("Table.result", "src/TerminalObject/Basic/Table.php", (136,)),
        ("UtilFactory", "src/Util/UtilFactory.php", (8,)),
    ),
    "MediatR": (
        ("Mediator", "src/MediatR/Mediator.cs", (16,)),
        ("Mediator.Send", "src/MediatR/Mediator.cs", (42, 59, 77)),
        ("AddMediatR", "src/MediatR/MicrosoftExtensionsDI/ServiceCollectionExtensions.cs", (26, 42)),
        ("IPipelineBehavior", "src/MediatR/IPipelineBehavior.cs", (20,)),
        ("Unit", "src/MediatR.Contracts/Unit.cs", (9,)),
        (
            "MediatRServiceConfiguration.AddOpenBehavior",
            "src/MediatR/MicrosoftExtensionsDI/MediatrServiceConfiguration.cs",
            (203,),
        ),
        (
            "RegisterServicesFromAssembly",
            "src/MediatR/MicrosoftExtensionsDI/MediatrServiceConfiguration.cs",
            (119,),
        ),
        ("ServiceRegistrar.AddMediatRClasses", "src/MediatR/Registration/ServiceRegistrar.cs", (42,)),
        (
            "RequestExceptionProcessorBehavior.Handle",
            "src/MediatR/Pipeline/RequestExceptionProcessorBehavior.cs",
            (26,),
        ),
        ("INotificationHandler", "src/MediatR/INotificationHandler.cs", (10,)),
    ),
    "timber": (
        ("Timber.Forest.plant", "timber/src/main/java/timber/log/Timber.kt", (405,)),
        ("plant", "timber/src/main/java/timber/log/Timber.kt", (405,)),
        ("DebugTree", "timber/src/main/java/timber/log/Timber.kt", (196,)),
        ("createStackElementTag", "timber/src/main/java/timber/log/Timber.kt", (216,)),
        ("prepareLog", "timber/src/main/java/timber/log/Timber.kt", (146,)),
        ("getStackTraceString", "timber/src/main/java/timber/log/Timber.kt", (174,)),
        ("uprootAll", "timber/src/main/java/timber/log/Timber.kt", (434,)),
        ("Forest.forest", "timber/src/main/java/timber/log/Timber.kt", (442,)),
        ("WrongTimberUsageDetector", f"{_TIMBER_LINT}/WrongTimberUsageDetector.kt", (70,)),
        ("TimberIssueRegistry", f"{_TIMBER_LINT}/TimberIssueRegistry.kt", (11,)),
    ),
    "Alamofire": (
        ("Session", "Source/Core/Session.swift", (30,)),
        ("HTTPHeaders", "Source/Core/HTTPHeaders.swift", (28,)),
        ("AFError", "Source/Core/AFError.swift", (33,)),
        ("SessionDelegate", "Source/Core/SessionDelegate.swift", (28,)),
        ("Request.cURLDescription", "Source/Core/Request.swift", (909, 931, 1179)),  # overloads
        ("cURLDescription", "Source/Core/Request.swift", (909, 931, 1179)),
        ("RequestInterceptor", "Source/Features/RequestInterceptor.swift", (119,)),
        ("AuthenticationInterceptor.retry", "Source/Features/AuthenticationInterceptor.swift", (325,)),
        ("MultipartFormData", "Source/Features/MultipartFormData.swift", (45,)),
        ("URLEncodedFormEncoder", "Source/Features/URLEncodedFormEncoder.swift", (54,)),
    ),
    "fansi": (
        ("Str.splitAt", _FANSI, (55,)),
        ("Str.substring", _FANSI, (71,)),
        ("Str.render", _FANSI, (129,)),
        ("render", _FANSI, (129,)),
        ("Str.overlay", _FANSI, (166,)),
        ("overlay", _FANSI, (166,)),
        ("Str.apply", _FANSI, (264, 365)),  # overloads
        ("ErrorMode", _FANSI, (424,)),
        ("Attr", _FANSI, (620,)),
        ("Color", _FANSI, (741,)),
    ),
    "plenary": (
        ("Path:new", "lua/plenary/path.lua", (219,)),
        ("Path.joinpath", "lua/plenary/path.lua", (298,)),
        ("absolute", "lua/plenary/path.lua", (302,)),
        ("Path.make_relative", "lua/plenary/path.lua", (342,)),
        ("Path.normalize", "lua/plenary/path.lua", (364,)),
        ("Path:mkdir", "lua/plenary/path.lua", (472,)),
        ("Job.new", "lua/plenary/job.lua", (83,)),
        ("Job:shutdown", "lua/plenary/job.lua", (215,)),
        ("Job.sync", "lua/plenary/job.lua", (452,)),
        ("close_safely", "lua/plenary/job.lua", (26,)),
    ),
    "zig-clap": (
        ("Names.longest", "clap.zig", (12,)),
        ("parseParams", "clap.zig", (79,)),
        ("Diagnostic.report", "clap.zig", (541,)),
        ("ParseOptions", "clap.zig", (629,)),
        ("parseEx", "clap.zig", (742,)),
        ("HelpOptions", "clap.zig", (1327,)),
        ("usage", "clap.zig", (2054,)),
        ("Clap.next", "clap/streaming.zig", (45,)),
        ("enumeration", "clap/parsers.zig", (104,)),
        ("SliceIterator", "clap/args.zig", (11,)),
    ),
    "plug": (
        ("Plug.Conn.put_resp_header", "lib/plug/conn.ex", (913, 917)),
        ("put_resp_header", "lib/plug/conn.ex", (913, 917)),
        ("Plug.Conn.fetch_query_params", "lib/plug/conn.ex", (1105,)),
        ("Plug.Conn.send_resp", "lib/plug/conn.ex", (437,)),
        ("Plug.Conn.Query.decode", "lib/plug/conn/query.ex", (107,)),
        ("Plug.BasicAuth.basic_auth", "lib/plug/basic_auth.ex", (98,)),
        ("Plug.Static", "lib/plug/static.ex", (1,)),
        ("Plug.Static.call", "lib/plug/static.ex", (196, 235)),
        ("Plug.Router", "lib/plug/router.ex", (1,)),
        ("Plug.CSRFProtection", "lib/plug/csrf_protection.ex", (1,)),
    ),
}

# a slug's last segment that names no definition (a heuristic: see the docstring); one the title
# shows being defined (`def new(`, `void test(`, `class Minitest::Test`) is not counted
BAD_SLUGS = frozenset({
    # C and C++ preprocessor directives
    "if", "ifdef", "ifndef", "elif", "else", "endif", "define", "undef", "include", "pragma", "error",
    # keywords and modifiers
    "friend", "template", "constexpr", "namespace", "static", "public", "private", "protected", "const",
    "extern", "inline", "typedef", "using", "return", "new", "this", "This", "self", "super", "export",
    "default", "import", "require", "module_function", "attr_reader", "attr_accessor", "alias",
    # annotations and attributes
    "Override", "SuppressWarnings", "Deprecated", "SafeVarargs", "FunctionalInterface", "Test",
    "Obsolete", "Serializable",
    # comment words, a lone type parameter, the fallback name of a block of statements, a test call
    "TODO", "NOTE", "FIXME", "A", "T", "block", "test",
})  # fmt: skip
_PART_SUFFIX = re.compile(r"(?:-\d+)?(?:\.\d+)*$")  # `name-1.2`: the repeat and the part
_COMMENT_TITLES = ("/*", "*/", "* ", "//", "##")
# where `#` opens a comment (elsewhere a directive, a private name or an attribute `#[`)
_HASH_COMMENT_LANGUAGES = frozenset({"python", "ruby", "bash", "php", "toml", "yaml"})


def hint(name: str, target: Path) -> str:
    """How to put corpus `name` at `target`."""
    return code_search.hint(name, target, CORPORA)


def languages_of(corpus: Corpus) -> frozenset[str]:
    """The code languages a corpus's include globs name (`**/*.h` → c)."""
    from ra_query.sources.languages import CODE_LANGUAGES, language_of

    return frozenset(
        lang
        for glob in corpus.include
        if (lang := language_of("x" + glob.rsplit("*", 1)[-1])) in CODE_LANGUAGES
    )


def source_files(folder: Path, languages: frozenset[str]) -> list[tuple[str, bytes]]:
    """(path relative to `folder`, bytes) of every file of `languages` under it, outside
    SKIP_DIRS, not generated or minified; sorted by path."""
    from ra_build.document.code import generated_reason
    from ra_query.sources.languages import language_of

    out: list[tuple[str, bytes]] = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in names:
            path = Path(root) / name
            rel = path.relative_to(folder).as_posix()
            if language_of(rel) not in languages or not path.is_file():
                continue
            data = path.read_bytes()
            if generated_reason(data) is None:
                out.append((rel, data))
    return sorted(out)


# ---- chunking -----------------------------------------------------------------------------------


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def range_problem(chunk: Any, data: bytes) -> str | None:
    """What is wrong with a chunk's byte and line ranges against the file's bytes, or None."""
    text = data[chunk.byte_start : chunk.byte_end].decode("utf-8", errors="replace")
    if chunk.body != text:
        return f"body ≠ bytes[{chunk.byte_start}:{chunk.byte_end}] ({len(chunk.body)} vs {len(text)} chars)"
    if not chunk.body:
        return None
    lines = (_line_of(data, chunk.byte_start), _line_of(data, chunk.byte_end - 1))
    if (chunk.line_start, chunk.line_end) != lines:
        return f"lines {chunk.line_start}-{chunk.line_end}, bytes are on {lines[0]}-{lines[1]}"
    return None


def dropped_terminator(chunk: Any, data: bytes) -> str | None:
    """The rest of the chunk's last line when it is only `;` or `,` (and spaces), else None."""
    end = data.find(b"\n", chunk.byte_end)
    rest = data[chunk.byte_end : len(data) if end < 0 else end].decode("utf-8", errors="replace")
    squeezed = "".join(rest.split())
    return rest.strip() if squeezed and set(squeezed) <= {";", ","} else None


def slug_word(chunk_id: str) -> str:
    """The last dotted segment of a chunk's slug, its repeat (`-1`) and part (`.2`) suffixes dropped."""
    slug = chunk_id.split("#", 1)[1] if "#" in chunk_id else ""
    return _PART_SUFFIX.sub("", slug).rsplit(".", 1)[-1]


def bad_name(chunk: Any) -> str | None:
    """Why a chunk's name looks taken from the wrong node (BAD_SLUGS, a comment title), or None."""
    word = slug_word(chunk.id)
    title = chunk.title.lstrip()
    if not word:
        return "empty slug"
    if word in BAD_SLUGS and not _defines(title, word):
        return f"slug {word!r}"
    comment = title.startswith(_COMMENT_TITLES) or (
        title.startswith("#") and not title.startswith("#[") and chunk.language in _HASH_COMMENT_LANGUAGES
    )
    return "comment title" if comment else None


def _defines(title: str, word: str) -> bool:
    """Whether `title` is the definition of something named `word` (`def new(`, `void test(`,
    `class Minitest::Test`) or a test titled with it (`describe('error', …`), not a statement
    that happens to hold it."""
    name = re.escape(word)
    return bool(
        re.search(rf"\b(?:def|function)\s+(?:self\.)?{name}\b", title)
        or re.search(rf"^(?:[@\w][\w<>\[\]*&:,]*\s+)+{name}\s*\(", title)
        or re.search(rf"\b(?:class|module|struct|interface|enum)\s+(?:\w+::)*{name}\b", title)
        or re.search(rf"['\"`][^'\"`]*\b{name}\b", title)  # a test's title: `describe('error', …`
    )


def chunk_figures(files: list[tuple[str, bytes]], tree: str, examples: int) -> dict[str, Any]:
    """Chunk every file of a corpus and count what looks wrong; the first `examples` of each."""
    from ra_build.document.chunk import chunk_file

    f: dict[str, Any] = {
        "files": 0, "chunks": 0, "largest": 0, "largest_id": "", "over_1000": 0, "range_mismatches": 0,
        "dropped_terminator": 0, "fragments": 0, "empty": 0, "bad_names": 0, "files_with_warnings": 0,
    }  # fmt: skip
    seen: dict[str, list[str]] = {
        k: [] for k in ("warnings", "largest", "ranges", "dropped", "fragments", "bad_names")
    }
    languages: Counter[str] = Counter()
    bad_kinds: Counter[str] = Counter()
    largest: list[tuple[int, str]] = []
    # a `.h` is what the build makes it (issue 31): by the tree's other files, then its own text
    # (a revision before `header_language` parses every `.h` as C)
    options: dict[str, Any] = {}
    if "header_language" in inspect.signature(chunk_file).parameters:
        from ra_query.sources.languages import header_language_of

        options["header_language"] = header_language_of(path for path, _ in files)
    for path, data in files:
        doc, _ = chunk_file(tree, path, data, **options)
        if doc is None:
            continue
        f["files"] += 1
        languages[doc.language] += 1
        if doc.warnings:
            f["files_with_warnings"] += 1
            seen["warnings"] += [f"{path}: {w}" for w in doc.warnings]
        for chunk in doc.chunks:
            if chunk.depth < 1:
                continue
            f["chunks"] += 1
            largest.append((chunk.tokens, chunk.id))
            f["over_1000"] += chunk.tokens > LARGE_TOKENS
            if (problem := range_problem(chunk, data)) is not None:
                f["range_mismatches"] += 1
                seen["ranges"].append(f"{chunk.id}: {problem}")
            if (rest := dropped_terminator(chunk, data)) is not None:
                f["dropped_terminator"] += 1
                seen["dropped"].append(f"{chunk.id} (line {chunk.line_end} goes on with {rest!r})")
            if chunk.tokens <= FRAGMENT_TOKENS:
                f["fragments"] += 1
                f["empty"] += not chunk.body
                seen["fragments"].append(f"{chunk.id} ({chunk.tokens} tokens: {_short(chunk.body)!r})")
            if (why := bad_name(chunk)) is not None:
                f["bad_names"] += 1
                bad_kinds[why] += 1
                seen["bad_names"].append(f"{chunk.id} ({why}; title {_short(chunk.title)!r})")
    largest.sort(key=lambda t: (-t[0], t[1]))
    if largest:
        f["largest"], f["largest_id"] = largest[0]
    seen["largest"] = [f"{cid} ({tokens:,} tokens)" for tokens, cid in largest[:examples]]
    f["languages"] = dict(languages.most_common())
    f["bad_name_kinds"] = dict(bad_kinds.most_common())
    f["examples"] = {k: v[:examples] for k, v in seen.items()}
    return f


def _short(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# ---- names --------------------------------------------------------------------------------------


def check_names(name: str, folder: Path) -> list[str]:
    """What is wrong with corpus `name`'s NAMES against `folder`: a missing file, or a line that
    does not hold the name's last part (the corpus is not at its commit)."""
    problems: list[str] = []
    for typed, path, lines in NAMES.get(name, ()):
        file = folder / path
        if not file.is_file():
            problems.append(f"{name}: {typed}: no file {path}")
            continue
        text = file.read_text(encoding="utf-8", errors="replace").splitlines()
        last = re.split(r"::|\.", typed)[-1]
        for line in lines:
            if not 1 <= line <= len(text) or last not in text[line - 1]:
                problems.append(f"{name}: {typed}: {last!r} not at {path}:{line}")
    return problems


def build(name: str, folder: Path, work: Path, source: Path | None) -> Path:
    """`ra update` of `folder` as tree `name` (its include globs) in a fresh project under `work`,
    by the ra checkout at `source` (default: this one); returns the artifacts."""
    project = work / f"{name}-project"
    shutil.rmtree(project, ignore_errors=True)
    project.mkdir(parents=True)
    include = ", ".join(json.dumps(g) for g in CORPORA[name].include)
    (project / ".ra.toml").write_text(
        f"root = true\n\n[tree.{name}]\npath = {json.dumps(str(folder))}\ninclude = [{include}]\n",
        encoding="utf-8",
    )
    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)
    if source is None:
        seconds, summary = run_ra(project, home, "update")
        print(f"built {name} in {seconds:.1f} s: {summary}", file=sys.stderr)
    else:
        proc = subprocess.run(
            entry_command(source, "ra", "update"),
            cwd=project,
            env=clean_env(home),
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise SystemExit(
                f"ra update of {name} at {source} exited {proc.returncode}\n{proc.stdout}{proc.stderr}"
            )
        print(f"built {name} with {source}: {proc.stdout.strip().splitlines()[-1:]}", file=sys.stderr)
    return project / ".ra"


def name_figures(name: str, artifacts: Path) -> dict[str, Any]:
    """Each of corpus `name`'s NAMES searched lexically: how many put their definition first, and
    the misses with what came first."""
    from ra_query.artifacts.store import open_store
    from ra_query.commands import search_command

    store = open_store(artifacts)
    params = default_params(store, "lexical")
    hits = 0
    misses: list[str] = []
    for typed, path, lines in NAMES[name]:
        payload = json.loads(search_command(store, [typed], params, json=True).text)
        results = payload["queries"][0]["results"]
        first = results[0] if results else None
        ok = (
            first is not None
            and first["path"] == path
            and any(first["line_start"] <= line <= first["line_end"] for line in lines)
        )
        hits += ok
        if not ok:
            got = (
                f"{first['id']} ({first['path']}:{first['line_start']}-{first['line_end']})"
                if first
                else "nothing"
            )
            misses.append(f"{typed} (at {path}:{lines[0]}) → {got}")
    return {"names": len(NAMES[name]), "first": hits, "misses": misses}


# ---- report -------------------------------------------------------------------------------------

COLUMNS = (
    "| corpus | language | files | chunks | largest (tokens) | > 1,000 tokens | range mismatches | dropped ; "
    "| fragments ≤ 6 (no text) | bad names | warnings | name first (/10) |"
)


def table(figures: dict[str, dict[str, Any]]) -> str:
    """The markdown table: a row per corpus."""
    lines = [COLUMNS, "|---" * COLUMNS.count(" | ") + "|---|"]
    for name, f in figures.items():
        langs = "+".join(
            f"{lang} ({n})" if len(f["languages"]) > 1 else lang for lang, n in f["languages"].items()
        )
        named = f"{f['first']}" if "first" in f else "—"
        counts = ("files", "chunks", "largest", "over_1000", "range_mismatches", "dropped_terminator",
                  "fragments", "bad_names", "files_with_warnings")  # fmt: skip
        cells = [name, langs, *(f"{f[key]:,}" for key in counts), named]
        cells[8] += f" ({f['empty']:,})"
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def examples_text(figures: dict[str, dict[str, Any]]) -> str:
    """The examples behind the table, per corpus."""
    out: list[str] = []
    for name, f in figures.items():
        out.append(f"{name}:")
        if f["empty"]:
            out.append(f"  fragments: {f['empty']:,} of the {f['fragments']:,} have no text at all")
        if f["bad_name_kinds"]:
            out.append("  bad names: " + ", ".join(f"{k} {n}" for k, n in f["bad_name_kinds"].items()))
        for key, label in (
            ("largest", "largest"),
            ("ranges", "range mismatch"),
            ("dropped", "dropped ;"),
            ("fragments", "fragment"),
            ("bad_names", "bad name"),
            ("warnings", "warning"),
        ):
            for example in f["examples"][key]:
                out.append(f"  {label}: {example}")
        for miss in f.get("misses", []):
            out.append(f"  name miss: {miss}")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--corpus",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help=f"a checkout of corpus NAME ({', '.join(CORPORA)}); default: all, under {CORPUS_ROOT}/NAME",
    )
    parser.add_argument(
        "--work", type=Path, default=Path("/tmp/ra-bench-languages"), help="scratch directory"
    )
    parser.add_argument("--rev", help="measure the ra of this git revision (a worktree)")
    parser.add_argument("--no-search", action="store_true", help="chunk only: no index, no name queries")
    parser.add_argument("--examples", type=int, default=EXAMPLES, help="examples printed per corpus and kind")
    parser.add_argument("--label", default="", help="a note recorded with the figures")
    parser.add_argument("--no-record", action="store_true", help="print only")
    args = parser.parse_args()
    corpora = code_search.corpora_from(args.corpus, parser, CORPORA)
    for name, folder in corpora.items():
        if not folder.is_dir():
            raise SystemExit(hint(name, folder))
    problems = [p for name, folder in corpora.items() for p in check_names(name, folder)]
    if problems:
        raise SystemExit(
            "\n".join([*problems, "the names do not match the corpora: are they at the commits in CORPORA?"])
        )
    args.work.mkdir(parents=True, exist_ok=True)
    figures: dict[str, dict[str, Any]] = {}
    with ExitStack() as stack:
        # before anything imports ra: with --rev, that side's ra chunks, builds and searches
        source, measured = checkout(stack, args.rev, "ra-bench-languages-")
        load_before = load()
        for name, folder in corpora.items():
            files = source_files(folder, languages_of(CORPORA[name]))
            figures[name] = chunk_figures(files, name, args.examples)
            if not args.no_search:
                figures[name] |= name_figures(name, build(name, folder, args.work, source))
        load_after = load()
    stamp = dt.datetime.now(dt.UTC).replace(microsecond=0)
    heading = (
        f"languages at {measured}, {stamp:%Y-%m-%d %H:%M}, {os.cpu_count()} cores, "
        f"load {load_before} before / {load_after} after{f' — {args.label}' if args.label else ''}\n"
        + ", ".join(f"{CORPORA[n].repo}@{CORPORA[n].commit[:12]}" for n in corpora)
    )
    report = heading + "\n\n" + table(figures)
    print(report)
    print()
    print(examples_text(figures))
    if not args.no_record:
        RESULTS_JSON.write_text(
            json.dumps(
                {"git": measured, "when": stamp.isoformat(), "label": args.label, "figures": figures},
                indent=1,
                ensure_ascii=False,
            )
            + "\n",
            encoding="utf-8",
        )
        with open(RESULTS_TXT, "a", encoding="utf-8") as handle:
            handle.write(report + "\n\n")


if __name__ == "__main__":
    main()
