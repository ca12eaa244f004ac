"""The build's fingerprint of the configuration: what each stage reads from it, hashed.

doit re-runs a stage when the settings it reads change (`tree_settings`, `index_settings`);
the manifest records `config_hash` and the search settings (`search_defaults`), from which
`ra search` decides whether the index is current without importing doit, pyarrow or the
build stages (ra_build.refresh.current).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ra_build.config.model import Config, TreeConfig
from ra_build.document.grammars import grammar_versions
from ra_query.artifacts.schema import SCHEMA_VERSION

# bumped when chunking output changes for the same input and settings
CHUNKER_VERSION = (
    # 2: chunk tables sharded by path; 3: github-slugger slugs, markdown-it titles, deep nests;
    # 4: `#` and `%` escaped in ids, one U+FFFD per undecodable byte (ranges slice the file);
    # 5: code files chunked by tree-sitter; kind, language and symbol columns;
    # 6: slugs of the heading's rendered text, as GitHub makes them (line breaks, images and
    # inline HTML add nothing; leading, trailing and repeated hyphens stay); 7: a code definition
    # over `code_chunk_size` bytes cut at its syntax into parts titled by their first line;
    # 8: a Go method is a child of its receiver's type (depth 2); 9: an impl, mod or namespace
    # block that is its first line alone has no text; 10: a child over the budget counted from its
    # line's start (its indentation, the `function f(x) {` it opens on) is cut inside;
    # 11 (issue 31): `.h` as C++ where the tree or the header says so; definitions inside `#if`
    # blocks and parse errors; CommonJS assignments, test blocks and Java enum constants are
    # definitions; blocks named by what they declare; a `;` after a definition is in its range;
    # doc comments across blank lines, trailing comments with their line's statement;
    # 12: the chunk table's `references` column (the names a code chunk calls or constructs);
    # 13: macros of `#define` lines and return types left alone, the head of `namespace {` in
    # the chunk after it, RSpec.describe and any script in test titles, chained CommonJS
    # assignments, license comments left out of definitions, calls alone in references;
    # 14: a macro named as an attribute blanked before a constructor or destructor;
    # 15 (issue 33): the `locale` and `translation` columns (a docs chunk's natural language);
    # 16: angle-bracket text that is no HTML element (`<T>`, `<Foo>`) is text in slugs and titles,
    # every HTML element's tags, custom ones too, are not (`The Result<T> Type!` → `the-resultt-type`);
    # 17 (issue 30): a long definition is never cut before its body's first statement (its
    # signature alone was a part, its doc comment and code the next); 18: the `members` column
    # (the fields, variants and properties a type's chunk declares); 19: the `forwards` column (the
    # same-named definition a wrapper's whole body calls); 20: a Python `@overload` signature
    # forwards to its implementation; 21: the `defines` column (a code chunk's kind of definition);
    # 22: a Docusaurus blog post's and page's `translation` (`blog/…`, `src/pages/…`: the docs'
    # version-folder rule had been applied to them); 23: a page's language — a top folder named as
    # a language checked against its text (`ml/` of an English site), `lang: no` read as Norwegian,
    # BCP 47 tags — and a Docusaurus earlier release's translation (`versioned_docs/version-2.0/…`);
    # 24: overload signatures right before their implementation are part of its chunk (Python's
    # `@overload` stubs, TypeScript's signatures): the name's id is the implementation's; 25: a
    # PHP enum's cases are its members (`Level.Debug`), Rust's `mod x;` is no definition; 26: shell
    # functions inside a `{ … }` that wraps the script or in the branches of an `if` are definitions;
    # 27: C++ test macros are tests (`TEST(Suite, Case)`: `Suite.Case`; Catch2's `TEST_CASE("title")`);
    # 28: a macro that is a statement's first word before its block (`SPDLOG_TRY {`) blanked; 29: a
    # JavaScript object of functions is a definition (`object`) holding them as its methods; 30: the
    # functions inside a JavaScript module wrapper (`(function () {…})()`, UMD's factory) are definitions;
    # 31: a definition's last part of a line or two moves the cut before it up (the two even); 32:
    # C#'s `#region`/`#pragma` join the code they mark, `#endif`/`#endregion` alone are no chunk; 33:
    # `.rst` pages are reStructuredText, chunked by their sections (they were read as markdown); 34:
    # TypeScript's declared method and function signatures are definitions (a `.d.ts`'s API); 35:
    # the review's mends: `elif` conditions, `TEST_F` heads, wrapper tails, `# else:` comments kept;
    # 36: Ruby's `attr_accessor :a` and a C++ type declared inside a class are members; 37: a Java
    # enum constant's `Data {` alone is no text; a comment on a body's opening line is the head's;
    # 38: what a JavaScript module exports by default (`export default function () {…}`, a class,
    # an object of functions) is a definition named `default`; `{…} as const` an object of functions;
    # 39: an `.rst` section's range begins at the hyperlink targets above its title (`.. _label:`);
    # 40: a line of `-` or `=` under a table is no setext heading (GitHub's tables); 41: an HTML
    # image's alt text is in a heading's title (`# <img alt="chi" …>`), as a markdown image's is;
    # 42: Kotlin (`.kt`, `.kts`) is code; an object's members are listed as a type's; 43: Swift
    # (`.swift`) is code; members' backticks (`default`) left out; 44: `// MARK:`, `// region` and
    # `// endregion` comments join the code they mark; 45: a block inside a nested type is named
    # under the type's qualified name (`Outer.Inner.count`, not `Inner.count`); 46: Swift's `#if`
    # joins the code after it, `#endif` the code before it; 47: what a syntax error swallowed (in
    # no definition of the partial tree) becomes blocks; 48: Kotlin's lines of annotations alone
    # are parsed as comments (the grammar misread `@A\n@B\nopen class X {…}` as an expression);
    # 49: Kotlin extension functions named by their receiver type (`Foo.bar`); a Swift extension
    # that conforms or constrains keeps its first line; Swift properties name their blocks; 50:
    # VS Code's `//#region` marks; Kotlin annotation lines with CRLF line breaks; 51: the review's
    # mends: no `#endif`/`end` recovered alone, a mark ending a code line is that line's, only
    # types adopt a Kotlin extension, `data-alt` is no alt text; 52: `export default {…} satisfies
    # T` and `export default function* ()` are definitions, and `} as const` is in a chunk; 53:
    # a Kotlin interface defines `interface`, an `enum class` `enum`; 54: `fun <T> T.f()` has no owner;
    # 55: Lua (`.lua`) is code; `---` comments document what follows across blank lines; 56: Scala
    # (`.scala`, `.sc`) is code; 57: a Kotlin annotation on a primary constructor is left as it is
    # (a comment there broke okhttp's Hpack.kt); a title stops before a `/**` in it, a part's title
    # reads past the annotations that lead its line; 58: Scala 3 `extension`s, `given`s and
    # package objects are definitions; 59: a Lua table of functions holds them (`M.git.run`), a
    # block of `M.defaults = {…}` is `M.defaults`, a Lua function's title ends at its parameters;
    # 60: Zig; a statement assigning `_` is not named `_`; 61: a later part of a long run of
    # statements is titled by the run's first line, as a definition's part is by its signature;
    # 62: Elixir; 63: Elixir definitions inside `if`/`for`, `defimpl` names, `@type` blocks; a
    # `//!` comment documents no definition after it; a Zig type function's members its struct's;
    # a signature over several lines leaves out the comments between its parameters; 64: Python
    # definitions inside `if`/`try`, C# members inside `#if`, a Rust `mod`'s (a C++ namespace's)
    # functions are functions, Playwright's `test.describe` groups, an arrow function's title runs
    # to its `=>`, `pub`/`use`/`crate` name no block; 65: a JavaScript `const` of a function a
    # call wraps (`React.forwardRef(function …)`, `memo(…)`) is a definition; 66: C# operators,
    # indexers and destructors, C++ friend functions defined in their class; `}  // namespace x`
    # is no chunk; 67: a JavaScript class field whose value is a function is a method; 68: a Rust
    # impl for a reference, tuple or slice named by a word (`str`, `tuple`, `slice`); 69: a
    # statement with its docstring below it is a block of its own; 70: a C++ pure virtual method
    # is a definition; 71: a C++ annotation macro after a declaration (`GUARDED_BY(mu_)`) or
    # between `class` and its name is blanked before parsing; 72: `ABSL_NAMESPACE_END` alone after
    # a blank line is in no chunk; 73: an annotation macro named by its first word (`GUARDED_BY`)
    # too, and on a line of its own only below a signature; 74: JavaScript class expressions hold
    # their methods, a function in two wrapping calls or a wrapped default export is one, a test
    # with a timeout, a joined title or a wrapped function is one, `} satisfies T` ends the last
    # block, `typeof`, `void`, `as`… never name a block; 75: Python: `@overload  # comment` is an
    # overload, an `if`/`try` block is named by what it defines, a long decorator is a part before
    # the `def` line's; 76: parts cut inside a statement longer than what its definition is over
    # the budget by, between a Go table's entries, never after `case x:` or `{` or below a comment;
    # 77: Go's embedded `*http.Server` and a grouped type's fields are members; 78: a statement
    # within the budget is cut inside only when the cuts between statements leave a piece over it;
    # 79: a Rust macro invocation named by the item it declares; a doc comment with no room for
    # the signature and its first statement is parts before the node; 80: a doc comment cut from
    # its signature only when over half the budget; a run cut at line breaks at a blank line,
    # before a comment that follows code, or below a line that is no comment; 81: a JavaScript
    # statement that exports names defined above it is `exports` or `default`; 82: Java's `static
    # {…}` and Kotlin's `init {…}` are named so; 83: Python definitions in an `if` inside a branch;
    # 84: a Kotlin extension property is a definition of the type it extends; 85: a doc comment
    # is cut from its signature only when with the first statement they pass the budget; Java's
    # static initializer is `static-init`; 86: a banner comment (`# =====`, `// CLASS`) opens
    # the definition after it; 87: Kotlin annotations before a primary constructor on its own
    # line are blanked before parsing; 88: a C# member whose body an `#if` chooses is read with
    # it; no title holds a directive; 89: a C# `#if … #endif` that splits an `else` chain is read
    # without its directive lines; 90: a long Python module docstring is the block `__doc__`;
    # 91: a Kotlin modifier word used as a name is parsed as a name
    # 92: Scala's munit and ScalaTest tests are tests; 93: busted's tests are tests, and Lua's
    # functions in a `do`, an `if` or a loop are definitions; 94: Pest's tests, shoulda's `should`
    # and RSpec's `example` are tests, a Ruby operator method is named by its operator; 95: no
    # block or part is named or titled by what a block comment holds; 96: a parse that runs away
    # (over 10 s, twenty nodes a byte) is given up and the file cut at blank lines; 97: an Elixir
    # `@doc` joins its def across blank lines and Phoenix's `attr` and `slot`; 98: Ruby's and
    # PHP's definitions in an `if` are definitions; 99: a Scala `new T { def … }` holds its defs;
    # 100: a shell function redirected where it is defined is a definition; 101: a `static` macro
    # line alone is blanked in C and C++; 102: Ruby's `sig` and Thor's `desc` join their method;
    # 103: a Ruby `X = Struct.new do … end` is a class holding its methods; 104: zsh's nested and
    # flagged expansions are blanked before parsing; 105: a Lua `local x = …` titled from its
    # `local`, an Elixir `@doc ~S"""` part by its first line; 106: a Ruby
    # block of `attr_reader`s or `alias_method`s is named by the first name it declares; 107: JavaScript
    # tests in a loop or an `if` are tests; 108: a C `typedef struct X X;`
    # before `struct X {…}` is no definition of its own; 109: a Lua
    # `return function () … end` module holds its functions; 110: only a block
    # comment that begins a line hides what it holds from a title (not `"**/*.md"`); 111: Ruby's
    # tests in an `each` loop are tests; 112: a Lua or Elixir
    # comment alone between definitions is kept (110 and 111 dropped an indented one); 113: a C
    # return type macro before a calling convention (`CURL_THREAD_RETURN_T CURL_STDCALL f(…)`) stays;
    # 114: bats' `@test` and git's `test_expect_success` are tests, a shell loop that defines is open;
    # 115: QUnit's tests; a Rust macro that wraps items (`cfg_rt! { pub fn … }`) holds definitions;
    # 116: no part ends on a block's head (`else:`, `case x:`), closing brackets or a signature alone;
    # 117: Kotlin `get` calls, `$$"…"`, `when` guards and `context(…)` read; C++ nested types and
    # access-label macros; 118: a Kotlin extension of a nullable type is the type's; a Rust `use` run
    # is named by what it brings into scope; 119: titles leave out annotations too long for the name;
    # 120: CommonJS exports of a class and its static properties are no second definition of it;
    # 121: C++ conversion operators are methods; `operator<=>` keeps its operator; 122: doctest's
    # `TEST_CASE("x" * decorator)` is a test; 123: a Kotlin property whose value is an object of
    # functions holds them; 124: a JavaScript module wrapper that assigns its functions holds them;
    # 125: Catch2's and doctest's templated tests are tests; 126: a signature joins the part after it
    # only when the first part holds nothing of its body; 127: a short comment alone between two
    # definitions heads the one below it; 128: parts cut at line breaks keep a comment or decorator
    # with the line below, a last line moves the cut up between statements; TypeScript's `export
    # declare const X` and `export default {…}` are named `X` and `default`; 129: TypeScript call
    # signatures without semicolons; 130: a run of statements is cut before the comments above a
    # statement, its `)` alone joins the part before; 131: a statement over the budget is cut at its
    # outermost children, a line-break cut leaves no line alone, a Go type's node holds its first
    # field, a Python `match` is named by its cases; 132: Rust `mod x;` runs, `extern "C"` and item
    # macros named by what they declare; titles past multi-line attributes; 133: Scala companion objects
    # and instances after `=`, Lua/PHP `return` as `exports`, Rails settings, untitled RSpec groups;
    # 134: Kotlin multi-line annotations, `actual constructor`, context function types; 135: C# 14
    # extension blocks; 136: Swift's `#Preview {` is code in titles; 137: inside a statement, its
    # children under an eighth of the budget are not looked into; 138: Kotlin type parameters over
    # lines with a trailing comma; 139: Elixir's `else` opens the next branch's definition; 140: a
    # tail's cut never moves to a line that only closes; 141: a Go type group's `)` ends its last
    # type, Go `var f = func(…)` is a function, comments a blank line above those that begin the
    # next run of statements stay in the run before; 142: no cut at a line a `)` or `]` begins; a
    # statement over the budget in a run of statements is cut at its syntax (a table at its entries);
    # 143: a Python string that begins a line with its words titles nothing; a part that begins with
    # a docstring is titled by its first line; 144: no cut at a line a `}` begins; a Go type group's
    # comments a blank line above a type are its; `var f = func(…)`'s title to its body's `{`;
    # 145: a statement too long for the file's node takes its comment of up to 10 lines from it;
    # 146: Go's Ginkgo specs are tests (`var _ = Describe(…)` › `It(…)`); 147: no cut inside an
    # expression, parameter list or string within the budget, nor before a string's closing quotes;
    # `# if …` in words is a comment; 148: a line break between a comment's paragraphs before others;
    # 149: a statement whose comment begins with the name it declares begins a run of statements
    149
)


# bumped when what a chunk is embedded as changes (ra_build.pipeline.embed_stage.embed_texts);
# 2: windows over the whole body, a code chunk's signature after its breadcrumb; 3: a later
# window's row scaled by LATER_WINDOW
EMBED_TEXT_VERSION = 3


def tree_settings(tree: TreeConfig, config: Config) -> dict[str, Any]:
    """Everything the discovery and chunk stages of `tree` read from the configuration."""
    return {
        "path": str(tree.path),
        "include": list(tree.include),
        "exclude": list(tree.exclude),
        "outside_links": tree.outside_links,
        "header_language": tree.header_language,
        "language": tree.language,
        # what discovery skips; a change to an ignore file itself is seen by the stale count
        # (discovery records each one read in the stat table, ra_build.pipeline.discover)
        "default_excludes": tree.default_excludes,
        "gitignore": tree.gitignore,
        "max_file_size": config.settings.max_file_size,
        "max_chunk_size": config.settings.max_chunk_size,
        "code_chunk_size": config.settings.code_chunk_size,
        "chunker": CHUNKER_VERSION,
        "grammars": grammar_versions(),  # a grammar upgrade re-chunks the code
        "upstream": tree.upstream,  # the source kind of its chunks
    }


def index_settings(config: Config) -> dict[str, Any]:
    """Everything the index stage reads from the configuration.

    The shard count only when it is set: it changes how the index is laid out, never what a
    search finds, and an index built before the key existed stays current.
    """
    shards = config.settings.index_shards
    return {
        "stemmer": config.search.stemmer,
        "schema": SCHEMA_VERSION,
        "trees": sorted(config.trees),
        **({"shards": shards} if shards else {}),
    }


def embed_settings(config: Config) -> dict[str, Any]:
    """Everything the embed stage reads: which trees are semantic, the model (by sha256) and text
    recipe of their vectors, and whether the extra that makes them is installed (installed
    later, the stage runs again); nothing when no tree is semantic (the model is not looked at)."""
    semantic = sorted(config.semantic_trees())
    if not semantic:
        return {}
    from ra_query.semantic.embed import available

    return {"semantic": semantic, "extra": available(), **model_key()}


def model_key() -> dict[str, Any]:
    """What vectors depend on besides the chunks: the model (by sha256) and the text recipe."""
    from ra_query.semantic.embed import model_info

    info = model_info()
    return {
        "model": info["name"],
        "model_sha256": info["sha256"]["onnx"],
        "dimensions": int(info["dimensions"]),
        "text": EMBED_TEXT_VERSION,
    }


def config_hash(config: Config) -> str:
    """The index-content hash (DECISIONS 15): changes whenever what is indexed would change.

    The vectors count only where a tree is semantic, so an index built before they existed
    stays current.
    """
    vectors = embed_settings(config)
    content = {
        "index": index_settings(config),
        "trees": {name: tree_settings(t, config) for name, t in sorted(config.trees.items())},
        **({"vectors": vectors} if vectors else {}),
    }
    # the bytes orjson.dumps(OPT_SORT_KEYS) gave (no floats here), without its ~15 ms import
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def search_defaults(config: Config) -> dict[str, Any]:
    """The configured search settings, as `ra_query.search.pipeline.SearchParams` keyword arguments.

    `ra search` uses them directly; the manifest records them so `ra-query`, which has no
    configuration, searches the published artifacts the same way.
    """
    s = config.search
    return {
        "limit": config.settings.default_limit,
        "candidate_limit": s.candidate_limit,
        "cutoff_ratio": s.cutoff_ratio,
        "aggregation_threshold": s.aggregation_threshold,
        "boosts": {
            "text": s.boost_text,
            "title": s.boost_title,
            "tags": s.boost_tags,
            "path": s.boost_path,
        },
        "phrase_boost": s.phrase_boost,
        "stopwords": s.stopwords,
        "local_boost": config.settings.local_boost,
        "global_trees": sorted(name for name, tree in config.trees.items() if tree.is_global),
        "fuzzy_distance": s.fuzzy_distance,
        "semantic_weight": s.semantic_weight,
        "code_semantic_weight": s.code_semantic_weight,
        "code_words": s.code_words,
        "code_boost": s.code_boost,
        "test_weight": s.test_weight,
        "type_weight": s.type_weight,
        "agent_max_tokens": config.settings.agent_max_tokens,  # not a SearchParams field: MCP's budget
    }
