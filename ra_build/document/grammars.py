"""What tree-sitter's grammars call the definitions of each language ra chunks as code.

A `Grammar` names, for one language, the node types that are definitions (a chunk each), which
of them hold definitions (classes, impls, namespaces: their members become child chunks), the
wrappers around a definition (decorators, `export`, templates), and the siblings that belong to
the definition after them (comments, attributes, decorators). `ra_build.document.code` walks a
parse tree with it. The grammars are the official per-language packages (compiled into their
wheels; nothing is downloaded), imported only when a file of the language is chunked.
"""

from __future__ import annotations

import importlib
import os
import re
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tree_sitter


@dataclass(frozen=True)
class Grammar:
    """The node types of one language's definitions."""

    module: str  # the grammar package's module
    function: str  # its function returning the language pointer
    definitions: dict[str, str]  # node type -> what it defines (function, class, method, …)
    containers: frozenset[str] = frozenset()  # definitions whose body holds definitions
    bodies: frozenset[str] = frozenset()  # the node types of a container's body
    wrappers: frozenset[str] = frozenset()  # nodes that wrap one definition (decorators, export)
    attached: frozenset[str] = frozenset({"comment"})  # siblings joining the next definition
    members: dict[str, str] = field(default_factory=dict)  # a definition's kind inside a container
    # preprocessor conditionals (`#ifndef` guards, `#if … #else`): what they hold stands where they do
    conditionals: frozenset[str] = frozenset()
    flattened: frozenset[str] = frozenset()  # nodes whose children stand where they do (Java's enum body)
    labels: frozenset[str] = frozenset()  # words alone that join the next definition (Ruby's `private`)
    # ALL_CAPS macros that stand alone on a line (`FMT_BEGIN_NAMESPACE`) or before a declaration
    # (`FMT_API void f()`) are blanked before parsing, one alone on its line made a `//` comment
    # (of the same length: every offset holds): the grammar cannot expand them (code._MACROS)
    macros: bool = False
    # `#else`, `#endif` and `#endregion` lines are directives (C, C++, C#), not comments (Python,
    # shell, Ruby): alone, with brackets, they are no chunk of their own (code._only_closing)
    directives: bool = False


_C_COMMENTS = frozenset({"comment"})
_PREPROCESSOR = frozenset({"preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef"})
_JS_DEFS = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "class_declaration": "class",
    "abstract_class_declaration": "class",
    "method_definition": "method",
    "interface_declaration": "interface",
    "type_alias_declaration": "type",
    "enum_declaration": "enum",
    "internal_module": "namespace",
    "module": "namespace",
    "abstract_method_signature": "method",
    # a declared signature (a `.d.ts`'s methods and functions); one before its implementation
    # is part of it (code._Walker.overloads)
    "method_signature": "method",
    "function_signature": "function",
    # `const f = (…) => …`: a function when its value is one (code._Walker.name_of)
    "lexical_declaration": "function",
    "variable_declaration": "function",
    # CommonJS: `app.use = function use(fn) {…}`, `exports.f = …` (code._assigned_name)
    "assignment_expression": "function",
    # `describe("x", () => {…})`, `it("does y", …)`: a test block, named by its title
    "call_expression": "test",
    # an object's function-valued key (`escape: function (s) {…}`), or an object of them
    "pair": "method",
    # a class field whose value is a function (`mutate = (vars) => {…}`, `static create = …`): a
    # method; any other field is a member of its class (code._Walker.name_of)
    "public_field_definition": "method",
    "field_definition": "method",
    # `export default function () {…}`, `export default class {…}`, `export default {…}` of
    # functions: named `default`, the name the module system gives it (code._Walker.name_of)
    "function_expression": "function",
    "generator_function": "function",
    "arrow_function": "function",
    "class": "class",
    "object": "object",
}
_JS = {
    "definitions": _JS_DEFS,
    # an object of functions is a container too (`const helpers = { quote(s) {…} }`,
    # `module.exports = {…}`): code._Walker.object_of
    "containers": frozenset(
        {"class_declaration", "abstract_class_declaration", "internal_module", "module", "call_expression"}
        | {"lexical_declaration", "variable_declaration", "assignment_expression", "pair", "class", "object"}
    ),
    "bodies": frozenset({"class_body", "statement_block"}),
    # and what a default export's value is written in (`export default {…} satisfies Handler`)
    "wrappers": frozenset({"export_statement", "ambient_declaration", "expression_statement"})
    | {"as_expression", "satisfies_expression", "parenthesized_expression"},
    "attached": frozenset({"comment", "decorator"}),
    # a loop or an `if` that defines tests or functions (`for (const n of cases) { it(…) }`):
    # what it holds stands in its place (code._Walker.branch_defines)
    "conditionals": frozenset({"for_statement", "for_in_statement", "if_statement", "else_clause"}),
    "flattened": frozenset({"statement_block"}),
}

# a shell loop: its statements stand in its place when it defines a function or a test
# (code._Walker.opened)
SHELL_LOOPS = frozenset({"for_statement", "c_style_for_statement", "while_statement"})

GRAMMARS: dict[str, Grammar] = {
    "python": Grammar(
        "tree_sitter_python",
        "language",
        {"function_definition": "function", "class_definition": "class"},
        containers=frozenset({"class_definition"}),
        bodies=frozenset({"block"}),
        wrappers=frozenset({"decorated_definition"}),
        members={"function_definition": "method"},
    ),
    "javascript": Grammar("tree_sitter_javascript", "language", **_JS),
    "typescript": Grammar("tree_sitter_typescript", "language_typescript", **_JS),
    "tsx": Grammar("tree_sitter_typescript", "language_tsx", **_JS),
    "go": Grammar(
        "tree_sitter_go",
        "language",
        {
            "function_declaration": "function",
            "method_declaration": "method",
            "type_declaration": "type",
            "var_declaration": "function",  # only `var f = func(…) {…}` (code._go_function_value)
            # Ginkgo's `var _ = Describe("x", func() {…})` and the `It("y", …)` inside (code._GINKGO)
            "call_expression": "test",
        },
        containers=frozenset({"call_expression"}),
        wrappers=frozenset({"expression_statement"}),
        flattened=frozenset({"statement_list"}),
    ),
    "rust": Grammar(
        "tree_sitter_rust",
        "language",
        {
            "function_item": "function",
            "function_signature_item": "function",
            "struct_item": "struct",
            "enum_item": "enum",
            "union_item": "union",
            "trait_item": "trait",
            "impl_item": "impl",
            "mod_item": "module",
            "type_item": "type",
            "macro_definition": "macro",
        },
        containers=frozenset({"trait_item", "impl_item", "mod_item"}),
        bodies=frozenset({"declaration_list"}),
        attached=frozenset({"line_comment", "block_comment", "attribute_item"}),
        members={"function_item": "method", "function_signature_item": "method"},
    ),
    "java": Grammar(
        "tree_sitter_java",
        "language",
        {
            "class_declaration": "class",
            "interface_declaration": "interface",
            "enum_declaration": "enum",
            "record_declaration": "record",
            "annotation_type_declaration": "annotation",
            "method_declaration": "method",
            "constructor_declaration": "constructor",
            "enum_constant": "constant",  # one with a class body of its own (code._Walker.name_of)
        },
        containers=frozenset(
            {
                "class_declaration",
                "interface_declaration",
                "enum_declaration",
                "record_declaration",
                "enum_constant",
            }
        ),
        bodies=frozenset({"class_body", "interface_body", "enum_body"}),
        attached=frozenset({"line_comment", "block_comment"}),
        flattened=frozenset({"enum_body_declarations"}),
    ),
    "c": Grammar(
        "tree_sitter_c",
        "language",
        {
            "function_definition": "function",
            "type_definition": "type",
            "struct_specifier": "struct",
            "enum_specifier": "enum",
            "union_specifier": "union",
            "preproc_function_def": "macro",
        },
        attached=_C_COMMENTS,
        conditionals=_PREPROCESSOR,
        macros=True,
        directives=True,
    ),
    "cpp": Grammar(
        "tree_sitter_cpp",
        "language",
        {
            "function_definition": "function",
            "class_specifier": "class",
            "struct_specifier": "struct",
            "enum_specifier": "enum",
            "union_specifier": "union",
            "namespace_definition": "namespace",
            "type_definition": "type",
            "alias_declaration": "type",
            "preproc_function_def": "macro",
            # a pure virtual method, `virtual bool Valid() const = 0;`: an interface's API, defined
            # nowhere else (any other field or prototype is a member; code._Walker.name_of)
            "field_declaration": "method",
        },
        containers=frozenset({"class_specifier", "struct_specifier", "namespace_definition"}),
        bodies=frozenset({"field_declaration_list", "declaration_list"}),
        # a `friend bool operator==(…) {…}` defined inside its class is a definition too
        wrappers=frozenset(
            {"template_declaration", "declaration", "linkage_specification", "friend_declaration"}
        ),
        members={"function_definition": "method"},
        attached=frozenset({"comment", "access_specifier"}),  # `public:` joins the member after it
        conditionals=_PREPROCESSOR,
        macros=True,
        directives=True,
    ),
    "csharp": Grammar(
        "tree_sitter_c_sharp",
        "language",
        {
            "namespace_declaration": "namespace",
            "class_declaration": "class",
            "struct_declaration": "struct",
            "interface_declaration": "interface",
            "enum_declaration": "enum",
            "record_declaration": "record",
            "method_declaration": "method",
            "constructor_declaration": "constructor",
            "property_declaration": "property",
            "delegate_declaration": "delegate",
            "local_function_statement": "function",
            # `operator +(Money a, Money b)`, `implicit operator decimal(Money m)`, `this[int i]`,
            # `~Money()` (code._Walker.name_of)
            "operator_declaration": "method",
            "conversion_operator_declaration": "method",
            "indexer_declaration": "property",
            "destructor_declaration": "method",
        },
        containers=frozenset(
            {
                "namespace_declaration",
                "class_declaration",
                "struct_declaration",
                "interface_declaration",
                "record_declaration",
            }
        ),
        bodies=frozenset({"declaration_list"}),
        conditionals=_PREPROCESSOR,  # `#if FEATURE_X … #else … #endif` around members, or a whole file
        directives=True,
    ),
    "ruby": Grammar(
        "tree_sitter_ruby",
        "language",
        {
            "class": "class",
            "module": "module",
            "method": "method",
            "singleton_method": "method",
            "singleton_class": "class",
            "call": "test",  # `describe "x" do`, `it "does y" do`, `test "z" do`: a test block
            # `Point = Struct.new(:x, :y) do … end`, `Class.new(Base) do`: a class
            # (code._Walker.ruby_class_body)
            "assignment": "class",
        },
        containers=frozenset({"class", "module", "singleton_class", "call", "assignment"}),
        bodies=frozenset({"body_statement", "block_body"}),
        labels=frozenset({"private", "protected", "public", "module_function"}),
        # an `if` or `unless` that defines methods (`if defined?(OpenSSL) def secure_compare …
        # else def secure_compare …`): what it holds stands in its place (code._Walker.branch_defines)
        conditionals=frozenset({"if", "unless", "elsif", "else"}),
        flattened=frozenset({"then"}),
    ),
    "php": Grammar(
        "tree_sitter_php",
        "language_php",
        {
            "namespace_definition": "namespace",
            "class_declaration": "class",
            "interface_declaration": "interface",
            "trait_declaration": "trait",
            "enum_declaration": "enum",
            "function_definition": "function",
            "method_declaration": "method",
            # Pest's `test('adds', function () {…})`, `describe('x', …)`, `it('y', fn () => …)`:
            # named by their titles (code._Walker.php_test_function)
            "function_call_expression": "test",
        },
        containers=frozenset(
            {
                "namespace_definition",
                "class_declaration",
                "interface_declaration",
                "trait_declaration",
                "enum_declaration",
                "function_call_expression",  # Pest's `describe`
            }
        ),
        bodies=frozenset({"declaration_list", "compound_statement", "enum_declaration_list"}),
        wrappers=frozenset({"expression_statement"}),  # `test(…);`
        # an `if` that defines functions or classes (`if (! function_exists('tap')) { function
        # tap(…) {…} }`): what it holds stands in its place (code._Walker.branch_defines)
        conditionals=frozenset({"if_statement", "else_clause", "else_if_clause"}),
        flattened=frozenset({"compound_statement"}),
    ),
    "kotlin": Grammar(
        "tree_sitter_kotlin",
        "language",
        {
            "class_declaration": "class",  # `interface`, `enum class`, `data class` too
            "object_declaration": "object",
            "companion_object": "object",  # named `Companion` when it has no name (code._Walker.name_of)
            "function_declaration": "function",
            "secondary_constructor": "constructor",
            "type_alias": "type",
            # an extension property (`val Scope.isActive`), or one whose value is an object of functions
            "property_declaration": "property",
        },
        # …and a property whose value is an object of functions (code._Walker.kotlin_instance)
        containers=frozenset(
            {"class_declaration", "object_declaration", "companion_object", "property_declaration"}
        ),
        bodies=frozenset({"class_body", "enum_class_body"}),
        attached=frozenset({"line_comment", "block_comment"}),
        members={"function_declaration": "method"},
    ),
    "swift": Grammar(
        "tree_sitter_swift",
        "language",
        {
            # `class`, `struct`, `enum`, `actor` and `extension` (code._Walker.definition: its kind)
            "class_declaration": "class",
            "protocol_declaration": "interface",
            "function_declaration": "function",
            "init_declaration": "constructor",
            "deinit_declaration": "method",
            "subscript_declaration": "method",
            "property_declaration": "property",  # a computed one (`var body: some View {…}`)
            "typealias_declaration": "type",
        },
        containers=frozenset({"class_declaration", "protocol_declaration"}),
        bodies=frozenset({"class_body", "enum_class_body", "protocol_body"}),
        attached=frozenset({"comment", "multiline_comment"}),
        members={"function_declaration": "method"},
        directives=True,  # `#endif` alone is no chunk (code._Walker.role_of: Swift's `directive`)
    ),
    "scala": Grammar(
        "tree_sitter_scala",
        "language",
        {
            "class_definition": "class",  # `case class` too
            "object_definition": "object",
            "trait_definition": "trait",
            "enum_definition": "enum",
            "function_definition": "function",
            "function_declaration": "method",  # a trait's abstract `def area: Double`
            "type_definition": "type",
            "package_object": "object",
            "given_definition": "object",  # `given intShow: Show[Int] with …` (code._Walker.name_of)
            "extension_definition": "extension",  # Scala 3: `extension (s: String)` and its defs
            # munit's and ScalaTest's tests: `test("x") {…}`, `describe("x") {…}`, `"x" should
            # "y" in {…}`, `"x" when {…}`: named by their titles (code._Walker.scala_test_name)
            "call_expression": "test",
            "infix_expression": "test",
            # `implicit val optionMonad: Monad[Option] = new Monad[Option] { def pure … }`: an
            # instance whose defs are its methods (code._Walker.scala_instance)
            "val_definition": "object",
        },
        containers=frozenset(
            {"class_definition", "object_definition", "trait_definition", "enum_definition"}
            | {"package_object", "given_definition", "extension_definition"}
            | {"call_expression", "infix_expression"}  # a group of tests: `describe`, `"x" when {…}`
            | {"val_definition", "function_definition"}  # `= new T { def … }`
        ),
        bodies=frozenset({"template_body", "enum_body", "with_template_body"}),
        attached=frozenset({"comment", "block_comment"}),
        members={"function_definition": "method"},
    ),
    "lua": Grammar(
        "tree_sitter_lua",
        "language",
        {
            "function_declaration": "function",  # `function M.add(a, b)`, `function M:send(x)`
            "assignment_statement": "function",  # `M.sub = function (a, b) … end` (code._Walker.name_of)
            "field": "method",  # in a table of functions: `M.git = { run = function (self) … end }`
            # busted's `describe("x", function() … end)`, `it("y", …)`: named by their titles
            "function_call": "test",
        },
        # a table of functions (code._Walker.lua_table), a group of tests
        containers=frozenset({"assignment_statement", "function_call"}),
        wrappers=frozenset({"variable_declaration"}),  # `local f = function (x) … end`
        # an `if`, `do` or loop that defines functions or tests: what it holds stands in its
        # place (code._Walker.branch_defines), its head opening it and its `end` closing it
        conditionals=frozenset(
            {"if_statement", "elseif_statement", "else_statement", "do_statement", "for_statement"}
            | {"while_statement"}
        ),
        flattened=frozenset({"block"}),
    ),
    "zig": Grammar(
        "tree_sitter_zig",
        "language",
        {
            "function_declaration": "function",  # returning `struct {…}`: a type (code._Walker.zig_type)
            "variable_declaration": "struct",  # `const Point = struct {…}`, `enum`, `union`, `error{…}`
            "test_declaration": "test",  # `test "adds points" {…}`: named by its title
        },
        containers=frozenset({"variable_declaration", "function_declaration"}),
        members={"function_declaration": "method"},
    ),
    "elixir": Grammar(
        "tree_sitter_elixir",
        "language",
        # every definition is a call: its first word says what it defines (`defmodule`, `def`,
        # `defp`, `defmacro`, `defprotocol`, `defimpl`, ExUnit's `describe` and `test`: code
        # ._Walker.elixir_name), or that it is a statement (`use`, `alias`, `plug`)
        {"call": "function"},
        containers=frozenset({"call"}),  # a module's, protocol's, impl's or describe's `do` block
        bodies=frozenset({"do_block"}),
        attached=frozenset({"comment", "unary_operator"}),  # `@doc`, `@spec`, `@impl true` before a def
    ),
    "bash": Grammar(
        "tree_sitter_bash",
        "language",
        {"function_definition": "function"},
        # a script wrapped in `{ … }` (so that it runs only once downloaded whole: nvm.sh) or a
        # function defined per shell in `if … else … fi`: what they hold stands where they do
        # (and a loop that defines them: git's tests in `for mode in legacy subcommands; do … done`)
        conditionals=frozenset({"if_statement", "elif_clause", "else_clause", *SHELL_LOOPS}),
        flattened=frozenset({"compound_statement", "do_group"}),
        # a function whose output is redirected where it is defined (`f () { … } 7>&2 2>&4`: git's
        # test-lib `test_must_fail`)
        wrappers=frozenset({"redirected_statement"}),
    ),
}
# data formats: one chunk per top-level key or table (code._data_entries; YAML is read by its
# lines, code.yaml_entries: tree-sitter-yaml 0.7 crashes the process on deeply nested input)
DATA_GRAMMARS: dict[str, tuple[str, str]] = {
    "toml": ("tree_sitter_toml", "language"),
    "json": ("tree_sitter_json", "language"),
}


@cache
def grammar_versions() -> dict[str, str]:
    """Which build of tree-sitter and of each grammar package is installed, as the size and
    mtime of their compiled modules ("" when missing): an upgrade can change the chunks of the
    same file, so the chunk stage's settings hold these (ra_build.config.fingerprint
    .tree_settings) and a change re-chunks every file. Nothing is imported: a few stat calls."""
    import importlib.util

    modules = ["tree_sitter", *(g.module for g in GRAMMARS.values()), *(m for m, _ in DATA_GRAMMARS.values())]
    found: dict[str, str] = {}
    for module in dict.fromkeys(modules):
        spec = importlib.util.find_spec(module)
        folder = os.path.dirname(spec.origin) if spec is not None and spec.origin else None
        names = sorted(n for n in os.listdir(folder) if n.endswith((".so", ".pyd"))) if folder else []
        stats = [os.stat(os.path.join(folder, n)) for n in names] if folder else []
        found[module] = ",".join(
            f"{n}:{s.st_size}:{s.st_mtime_ns}" for n, s in zip(names, stats, strict=True)
        )
    return found


# ra's own reference patterns, where a grammar's tags.scm has none (C, C++: its tags name
# definitions only) or misses the common shapes (TypeScript's holds only what JavaScript's lacks)
_C_CALLS = """
(call_expression function: [(identifier) @name (field_expression field: (field_identifier) @name)])
  @reference.call
"""
_OWN_REFERENCES: dict[str, str] = {
    "c": _C_CALLS,
    "cpp": _C_CALLS
    + """
(call_expression function: (qualified_identifier name: (identifier) @name)) @reference.call
(call_expression function: (template_function name: (identifier) @name)) @reference.call
(new_expression type: [(type_identifier) @name (qualified_identifier name: (type_identifier) @name)])
  @reference.class
""",
    "typescript": """
(call_expression function: [(identifier) @name (member_expression property: (property_identifier) @name)])
  @reference.call
(new_expression constructor: [(identifier) @name (member_expression property: (property_identifier) @name)])
  @reference.class
""",
}
_OWN_REFERENCES["tsx"] = _OWN_REFERENCES["typescript"]
# Swift's tags.scm names definitions only
_OWN_REFERENCES["swift"] = """
(call_expression . (simple_identifier) @name) @reference.call
(call_expression . (navigation_expression suffix: (navigation_suffix suffix: (simple_identifier) @name)))
  @reference.call
"""
# Kotlin's grammar ships no tags.scm: a call of a name, or of a member (`a.b.c(2)`: `c`); a
# constructor call is a call (`Foo(1)`)
_OWN_REFERENCES["kotlin"] = """
(call_expression . (identifier) @name) @reference.call
(call_expression . (navigation_expression (identifier) @name .)) @reference.call
"""
# Zig's grammar ships no tags.scm: a call of a name or of a member (`list.append(x)`: `append`)
_OWN_REFERENCES["zig"] = """
(call_expression function: [(identifier) @name (field_expression member: (identifier) @name)]) @reference.call
"""
# Elixir's: a call of a name (the language's own, `def`, `use`, `case`, are calls too: code
# ._elixir_own_call drops them), of a module's function (`GenServer.call(…)`: `call`), a pipe
_OWN_REFERENCES["elixir"] = """
(call target: (identifier) @name) @reference.call
(call target: (dot right: (identifier) @name)) @reference.call
(binary_operator operator: "|>" right: (identifier) @name) @reference.call
"""
# Ruby's holds every identifier that is not a local (a `#is-not? local` py-tree-sitter does not
# apply); C#'s calls are `@reference.send`, and miss a plain call
_OWN_REFERENCES["ruby"] = "(call method: [(identifier) (constant)] @name) @reference.call\n"
_OWN_REFERENCES["csharp"] = """
(invocation_expression function: [(identifier) @name (member_access_expression name: (identifier) @name)
  (generic_name (identifier) @name)]) @reference.call
(object_creation_expression type: [(identifier) @name (generic_name (identifier) @name)
  (qualified_name name: (identifier) @name)]) @reference.class
"""
# and patterns added to a grammar's own: PHP's misses a call of a plain name (`compute(1)`) and
# `new Foo()`; Rust's a call by path (`Vec::new()`)
_MORE_REFERENCES: dict[str, str] = {
    "php": "(function_call_expression function: (name) @name) @reference.call\n"
    "(object_creation_expression (name) @name) @reference.class\n",
    "rust": "(call_expression function: (scoped_identifier name: (identifier) @name)) @reference.call\n",
}
_REFERENCE_KINDS = ("@reference.call", "@reference.class")  # what a chunk calls or constructs
_CAPTURE = re.compile(rb"@([\w.-]+)")  # a capture's name in a query's text


@cache
def reference_query(language: str) -> tree_sitter.Query | None:
    """The query whose `name` captures are the names `language`'s code calls or constructs: the
    `@reference.call` and `@reference.class` patterns of its grammar's own `queries/tags.scm`
    (the tree-sitter tags convention behind GitHub's code navigation), or ra's own where those
    fall short (`_OWN_REFERENCES`); None when there is neither, or it does not compile."""
    import importlib.util

    import tree_sitter

    grammar = GRAMMARS.get(language)
    if grammar is None:
        return None
    text = _OWN_REFERENCES.get(language)
    if text is None:
        spec = importlib.util.find_spec(grammar.module)
        folder = os.path.dirname(spec.origin) if spec is not None and spec.origin else ""
        # a wheel may ship its queries beside its module (`tree_sitter_c-sharp/queries`)
        base, name = os.path.split(folder)
        beside = os.path.join(base, "tree_sitter_" + name.removeprefix("tree_sitter_").replace("_", "-"))
        found = [os.path.join(f, "queries", "tags.scm") for f in (folder, beside)]
        tags = next((path for path in found if folder and os.path.isfile(path)), None)
        if tags is None:
            return None
        with open(tags, encoding="utf-8") as handle:
            text = handle.read() + "\n" + _MORE_REFERENCES.get(language, "")
    language_of = parser_for(language).language
    assert language_of is not None
    try:
        query = tree_sitter.Query(language_of, text)
    except tree_sitter.QueryError:  # a grammar release whose tags.scm this tree-sitter cannot read
        return None
    encoded = text.encode()
    count: object = query.pattern_count  # an int (the stubs say a method)
    read: set[bytes] = set()  # the captures a reference pattern names twice: a predicate reads them
    for pattern in range(count() if callable(count) else int(count)):  # only those of references
        source = encoded[query.start_byte_for_pattern(pattern) : query.end_byte_for_pattern(pattern)]
        if not any(kind.encode() in source for kind in _REFERENCE_KINDS):
            query.disable_pattern(pattern)
            continue
        named = _CAPTURE.findall(source)
        read.update(capture for capture in named if named.count(capture) > 1)
    # `name` is all that is read of a match: any other capture (`@reference.call`, one per name)
    # would be a Python object made for each and dropped, a tenth of the query's time
    captures: object = query.capture_count
    for index in range(captures() if callable(captures) else int(captures)):
        capture = query.capture_name(index)
        if capture != "name" and capture.encode() not in read:
            query.disable_capture(capture)
    return query


class GrammarMissing(Exception):
    """The grammar package of a language is not installed."""


# how long one file's parse may take before tree-sitter gives up on it (`parser_for`): a
# megabyte of code parses in a tenth of a second; a few hundred bytes that a grammar's error
# recovery cannot settle had taken tree-sitter-kotlin 33 s and six million nodes (a `]` alone
# inside a `do {` block)
PARSE_TIMEOUT_S = 10.0


@cache
def parser_for(language: str) -> tree_sitter.Parser:
    """A parser for `language` (cached: one per process and language) that gives up a parse
    after `PARSE_TIMEOUT_S` (its `parse` raises ValueError)."""
    import warnings

    import tree_sitter

    if language in GRAMMARS:
        module, function = GRAMMARS[language].module, GRAMMARS[language].function
    else:
        module, function = DATA_GRAMMARS[language]
    try:
        grammar = importlib.import_module(module)
    except ImportError as exc:
        raise GrammarMissing(f"the tree-sitter grammar {module} is not installed") from exc
    parser = tree_sitter.Parser(tree_sitter.Language(getattr(grammar, function)()))
    with warnings.catch_warnings():  # the 0.25 bindings' timeout (its successor, a progress
        warnings.simplefilter("ignore", DeprecationWarning)  # callback, is no option for bytes)
        parser.timeout_micros = int(PARSE_TIMEOUT_S * 1_000_000)
    return parser
