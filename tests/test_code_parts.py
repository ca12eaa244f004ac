"""Code chunks sized to be read (issue 30): a definition over the budget is cut at its syntax's
children into parts, each carrying its definition's signature; test modules inside source files
weigh as tests."""

from __future__ import annotations

import itertools
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ra_build.document.chunk import Chunk, chunk_file
from ra_build.document.code import DEFAULT_CODE_CHUNK as CHUNK_BUDGET
from ra_query.search.pipeline import is_test_path, is_test_symbol
from ra_query.text.names import chunk_keys
from tests.conftest import build, run_cmd


def chunks_of(path: str, text: str, **kwargs: int) -> list[Chunk]:
    doc, _ = chunk_file("src", path, text.encode(), **kwargs)
    assert doc is not None
    return list(doc.chunks)


def _field(k: int) -> str:
    return (
        f"    /// The option number {k}: what it does, said at some length so that a field\n"
        f"    /// with its doc comment and its attribute is a few hundred bytes long.\n"
        f'    #[arg(long = "option-{k}", value_name = "VALUE{k}", help = "sets option {k}")]\n'
        f"    pub option_{k}: Option<usize>,\n"
    )


OPTS = "/// Every option.\npub struct Opts {\n" + "\n".join(_field(k) for k in range(40)) + "}\n"


def test_a_definition_over_the_budget_is_cut_into_parts_within_it() -> None:
    chunks = chunks_of("cli.rs", OPTS)
    code = [c for c in chunks if c.depth > 0]
    assert len(code) > 1
    assert all(len(c.body.encode()) <= CHUNK_BUDGET or "\n" not in c.body for c in code)


def test_parts_are_children_of_their_definition_and_carry_its_signature() -> None:
    chunks = {c.slug: c for c in chunks_of("cli.rs", OPTS)}
    first, second = chunks["Opts"], chunks["Opts.2"]
    assert second.parent_id == first.id
    assert second.title.startswith("pub struct Opts (part 2: pub option_")
    assert second.breadcrumb[-2:] == ("Opts", "part 2")
    assert second.symbol == "Opts"


def test_a_field_is_never_cut_from_its_doc_comment_or_attribute() -> None:
    for chunk in chunks_of("cli.rs", OPTS)[1:]:
        lines = chunk.body.splitlines()
        if chunk.slug != "Opts":
            assert lines[0].lstrip().startswith("/// The option number"), chunk.slug
        assert lines[-1].strip() in ("}", "") or lines[-1].strip().startswith("pub option_"), chunk.slug


def test_the_parts_cover_the_definition_in_order() -> None:
    chunks = [c for c in chunks_of("cli.rs", OPTS) if c.depth > 0]
    text = OPTS.encode()
    assert chunks[0].byte_start == 0 and chunks[-1].byte_end == len(text.rstrip())
    for before, after in itertools.pairwise(chunks):
        assert text[before.byte_end : after.byte_start].strip() == b""


def test_closing_brackets_end_the_last_part_not_a_part_of_their_own() -> None:
    assert chunks_of("cli.rs", OPTS)[-1].body.rstrip().endswith("pub option_39: Option<usize>,\n}")


def test_a_last_part_of_a_line_or_two_moves_its_cut_up_to_even_the_parts() -> None:
    body = "".join(f"    h = h * 16 + s[{i}] - 48;\n" for i in range(5))
    source = f"static unsigned parse(const char *s)\n{{\n    unsigned h = 0;\n{body}    return h;\n}}\n"
    parts = [c for c in chunks_of("hex.c", source, code_chunk_size=200) if c.symbol == "parse"]
    sizes = [c.byte_end - c.byte_start for c in parts]
    assert len(parts) == 2 and max(sizes) <= 200 and min(sizes) > 200 // 8  # not `return h;\n}` alone
    assert parts[-1].body.endswith("    return h;\n}")


def test_a_long_function_is_cut_between_its_statements_and_a_switch_between_its_cases() -> None:
    cases = "\n".join(
        f'\tcase "opt{k}":\n\t\topts.Value{k} = next(args)\n\t\tcount += {k}' for k in range(120)
    )
    source = f"package a\n\nfunc parseOptions(args []string) {{\n\tswitch arg {{\n{cases}\n\t}}\n}}\n"
    chunks = [c for c in chunks_of("options.go", source) if c.depth > 0]
    assert len(chunks) > 2
    for chunk in chunks[1:]:
        assert chunk.body.lstrip().startswith("case "), chunk.body[:40]


def _go_switch(doc_lines: int) -> str:
    cases = "".join(
        f"\tcase {k}:\n\t\t// value {k} is kept for the callers written before release {k}, and\n"
        f"\t\t// none of them is maintained any more, but they still run today.\n"
        f'\t\treturn "{"value " * 8}{k}"\n'
        for k in range(3)
    )
    doc = "".join(
        f"// kind names a value, said at length to make the doc comment long: line {k}.\n"
        for k in range(doc_lines)
    )
    return f"package p\n\n{doc}func kind(v int) string {{\n\tswitch v {{\n{cases}\tdefault:\n\t\tpanic(v)\n\t}}\n}}\n"


def test_a_switch_within_the_budget_in_a_function_over_it_is_cut_at_a_case_with_its_comment() -> None:
    text = _go_switch(doc_lines=3)
    parts = [c for c in chunks_of("kind.go", text) if c.symbol == "kind"]
    assert len(parts) == 2
    assert parts[1].body.lstrip().startswith("case ")  # not `return …` below its comment, nor mid-case


def test_a_go_table_is_cut_between_its_entries() -> None:
    entries = "".join(
        f'\t\t{{\n\t\t\tname:  "case number {k} of the table, spelled out in words",\n'
        f'\t\t\tinput: "{k}",\n\t\t\twant:  {k},\n\t\t}},\n'
        for k in range(12)
    )
    text = (
        "package p\n\nfunc TestParse(t *testing.T) {\n\ttests := []struct {\n\t\tname  string\n"
        f"\t\tinput string\n\t\twant  int\n\t}}{{\n{entries}\t}}\n\tfor _, tt := range tests {{\n"
        '\t\tif got := Parse(tt.input); got != tt.want {\n\t\t\tt.Errorf("%q", tt.input)\n\t\t}\n\t}\n}\n'
    )
    parts = [c for c in chunks_of("parse_test.go", text) if c.symbol == "TestParse"][1:]
    assert parts
    for part in parts:
        first = part.body.lstrip().split("\n", 1)[0]
        assert first in ("{", "for _, tt := range tests {"), first  # never mid-entry
    assert "(part 2: name:" in parts[0].title


def test_a_doc_comment_that_leaves_no_room_for_the_signature_and_its_first_statement_is_parts_before_it() -> (
    None
):
    line = ("Copies the array and puts the element first; a null array gives a one-element array. " * 3)[:210]
    text = (
        "class Arrays {\n    /**\n" + f"     * {line}\n" * 6 + "     */\n"
        "    public static <T> T[] addFirst(final T[] array, final T element) {\n"
        "        return array == null ? add(array, element) : insert(0, array, element);\n    }\n}\n"
    )
    node = next(c for c in chunks_of("Arrays.java", text) if c.slug == "Arrays.addFirst")
    assert node.body.lstrip().startswith("public static <T> T[] addFirst(")
    assert "return array == null" in node.body  # the signature with its body, not alone


def test_a_run_of_documented_fields_is_cut_before_a_doc_comment_never_inside_one() -> None:
    fields = "".join(
        f"    /**\n     * The constant number {k}, documented at some length so that each field is long.\n"
        f"     */\n    static final int LIMIT_{k} = {k};\n\n"
        for k in range(12)
    )
    text = f"class Limits {{\n    static int check(int n) {{ return n; }}\n\n{fields}}}\n"
    parts = [c for c in chunks_of("Limits.java", text) if "LIMIT" in c.slug]
    assert len(parts) > 1
    for part in parts:
        lines = part.body.strip().split("\n")
        assert lines[-1].strip() != "/**" and lines[0].strip() in ("/**", "static final int LIMIT_0 = 0;")


PARTS = Path(__file__).parent / "fixtures" / "parts"


@pytest.mark.parametrize(
    ("name", "symbol"),
    [
        ("super_len.py", "super_len"),
        ("collect.go", "goCollector.Collect"),
        ("Synchronized.kt", "SynchronizedObject.tryLock"),
        ("parse_items.py", "P._parse_items"),
        ("visit_string.py", "L.visit_STRING"),
        ("identity_options.py", "identity_options"),
        ("reordering.py", "R.test_reordering_example_wo_copy"),
    ],
)
def test_no_part_ends_on_a_head_a_comment_or_a_decorator_or_is_closing_brackets_or_a_line_alone(
    name: str, symbol: str
) -> None:
    parts = [c for c in chunks_of(name, (PARTS / name).read_text()) if c.slug.startswith(symbol)]
    assert len(parts) > 1
    for part in parts:
        last = part.body.rstrip().rsplit("\n", 1)[-1].strip()
        assert not last.endswith((":", "{")), part.body  # `else:`, `case *counter:`, `if content_type:`
        assert not last.startswith(("#", "//", "@")), part.body  # what explains or decorates the next line
        assert part.body.strip().strip("}); \n"), part.body
        assert "\n" in part.body.strip() or len(part.body) >= CHUNK_BUDGET // 8, part.body  # `return as_dict`


def test_a_comment_stays_with_the_statement_below_it_when_a_run_of_statements_is_cut() -> None:
    entries = "".join(f'\t"k{k}": {k},\n' for k in range(30))
    source = f"package p\n\nfunc f() {{}}\n\nvar a = map[string]int{{\n{entries}}}\n\n// b is a large data set\nvar b = map[string]int{{\n{entries}}}\n"
    blocks = {c.slug: c for c in chunks_of("tables.go", source) if c.defines == "block"}
    assert blocks["b"].body.startswith("// b is a large data set\nvar b")  # had ended block `a`
    single = (
        "def f():\n    pass\n\n\n# the palette\nPALETTE = {\n"
        + "".join(f"    {k}: 'x',\n" for k in range(60))
        + "}\n"
    )
    assert "comment" not in {c.slug for c in chunks_of("palette.py", single)}  # it had been a block alone


def test_no_part_begins_with_the_bracket_that_ends_a_head_over_lines() -> None:
    steps = "".join(
        f'        self.record("step {k}", request_id=self.request_id, user=self.user)\n' for k in range(9)
    )
    source = (
        "def authenticated(method):\n    def wrapper(\n        self, *args, **kwargs\n    ):\n"
        f"{steps}        return method(self, *args, **kwargs)\n\n    return wrapper\n"
    )
    parts = [c for c in chunks_of("web.py", source) if c.slug.startswith("authenticated")]
    assert len(parts) == 2
    assert not any(c.body.lstrip().startswith((")", "]")) for c in parts)  # tornado's had begun `):`
    assert parts[0].body.startswith("def authenticated(method):\n    def wrapper(\n")


def test_no_part_begins_with_the_brace_that_ends_a_go_structs_fields_before_its_values() -> None:
    fields = "".join(
        f'\t\tField{k}  string            `validate:"required_with=Field{k + 1}" json:"field_{k}"`\n'
        for k in range(8)
    )
    source = (
        f"package validator\n\nfunc TestRequiredWith(t *testing.T) {{\n\ttest := struct {{\n{fields}"
        "\t}{\n\t\tField7: &Inner{Field: &fieldVal},\n\t}\n\terrs := validate.Struct(test)\n"
        '\tAssertError(t, errs, "Field9", "Field9", "Field9", "Field9", "required_with")\n}\n'
    )
    parts = [c for c in chunks_of("validator_test.go", source) if c.slug.startswith("TestRequiredWith")]
    assert len(parts) == 2
    assert not parts[1].body.lstrip().startswith("}")  # validator's and cli's had begun `}{`
    assert "}{\n\t\tField7" in parts[0].body


def test_no_part_begins_with_the_brace_that_closes_an_if_before_its_else() -> None:
    source = (
        "package viper\n\n"
        "func (v *Viper) registerAlias(alias, key string) {\n"
        "\talias = strings.ToLower(alias)\n"
        "\tif alias != key && alias != v.realKey(key) {\n"
        "\t\t_, exists := v.aliases[alias]\n"
        "\n"
        "\t\tif !exists {\n"
        "\t\t\t// if we alias something that exists in one of the maps to another\n"
        "\t\t\t// name, we'll never be able to get that value using the original\n"
        "\t\t\t// name, so move the config value to the new realkey.\n"
        "\t\t\tif val, ok := v.config[alias]; ok {\n"
        "\t\t\t\tdelete(v.config, alias)\n"
        "\t\t\t\tv.config[key] = val\n"
        "\t\t\t}\n"
        "\t\t\tif val, ok := v.kvstore[alias]; ok {\n"
        "\t\t\t\tdelete(v.kvstore, alias)\n"
        "\t\t\t\tv.kvstore[key] = val\n"
        "\t\t\t}\n"
        "\t\t\tif val, ok := v.defaults[alias]; ok {\n"
        "\t\t\t\tdelete(v.defaults, alias)\n"
        "\t\t\t\tv.defaults[key] = val\n"
        "\t\t\t}\n"
        "\t\t\tif val, ok := v.override[alias]; ok {\n"
        "\t\t\t\tdelete(v.override, alias)\n"
        "\t\t\t\tv.override[key] = val\n"
        "\t\t\t}\n"
        "\t\t\tv.aliases[alias] = key\n"
        "\t\t}\n"
        "\t} else {\n"
        '\t\tv.logger.Warn("creating circular reference alias", "alias", alias, "key", key, "real_key", v.realKey(key))\n'
        "\t}\n"
        "}\n"
    )  # viper's Viper.registerAlias: its part 2 had begun `} else {`
    parts = [c for c in chunks_of("viper.go", source) if c.slug.startswith("Viper.registerAlias")]
    assert len(parts) == 2
    assert not any(c.body.lstrip().startswith("}") for c in parts)
    assert "\t} else {\n" in parts[1].body


def test_a_call_that_fits_the_budget_is_not_cut_between_its_arguments() -> None:
    source = (
        "def parse_filter(self, node):\n"
        '    while self.stream.current.type == "pipe":\n'
        "        next(self.stream)\n"
        "        # the filter name follows the pipe, maybe dotted (foo.bar) or plain name\n"
        '        token = self.stream.expect("name")\n'
        "        name = token.value\n"
        '        while self.stream.current.type == "dot":\n'
        "            next(self.stream)\n"
        '            name += "." + self.stream.expect("name").value\n'
        '        if self.stream.current.type == "lparen":\n'
        "            args, kwargs, dyn_args, dyn_kwargs = self.parse_call_args()\n"
        "        else:\n"
        "            args = []\n            kwargs = []\n            dyn_args = dyn_kwargs = None\n"
        "        # build the filter node around what came before it in the stream\n"
        "        node = nodes.Filter(\n"
        "            node, name, args, kwargs, dyn_args, dyn_kwargs, lineno=token.lineno\n"
        "        )\n"
        "    return node\n"
    )
    parts = [c for c in chunks_of("parser.py", source) if c.slug.startswith("parse_filter")]
    assert len(parts) == 2
    assert not parts[0].body.rstrip().endswith("nodes.Filter(")  # jinja's had, its arguments the next part
    assert "node = nodes.Filter(\n            node, name" in parts[1].body


def test_no_part_begins_with_the_closing_quotes_of_a_python_string() -> None:
    keys = "".join(
        f'key_{k} = "value {k} of the generated configuration file, kept as written."\n' for k in range(20)
    )  # a string over the budget, looked into: its closing quotes are a line a child begins
    source = (
        f'def test_new(tester, path):\n    tester.execute("new")\n    expected = """\\\n{keys}"""\n'
        "    assert expected in path.read_text()\n    assert tester.status_code == 0\n"
    )
    parts = [c for c in chunks_of("test_new.py", source) if c.slug.startswith("test_new")]
    assert len(parts) > 2
    assert not any(c.body.lstrip().startswith('"""') for c in parts)  # poetry's had been `"""` alone


def test_a_python_comment_in_words_that_begins_with_if_is_no_directive() -> None:
    source = 'def first():\n    return 1\n\n\n# if the platform has no fork, fall back to spawn\nSTART_METHOD = "spawn"\n'
    blocks = {c.slug: c for c in chunks_of("spawn.py", source)}
    assert blocks["START_METHOD"].title == 'START_METHOD = "spawn"'  # had been the comment


def test_a_long_doc_comment_is_cut_between_its_paragraphs() -> None:
    first = "".join(
        f"\t// Sentence {k} of the explanation of how heartbeats and timeouts work here.\n" for k in range(5)
    )
    second = "".join(
        f"\t// Sentence {k} about the messages channel, which is closed at the end.\n" for k in range(5, 11)
    )
    source = (
        "package jetstream\n\ntype Consumer interface {\n\t// Info returns the consumer info.\n"
        "\tInfo() (*ConsumerInfo, error)\n\n\t// FetchBytes retrieves up to maxBytes bytes in one request.\n"
        f"{first}\t//\n{second}\tFetchBytes(maxBytes int) (MessageBatch, error)\n}}\n"
    )
    parts = [c for c in chunks_of("consumer.go", source) if c.slug.startswith("Consumer")]
    assert len(parts) == 2
    assert parts[0].body.endswith("work here.\n\t//")  # nats.go's had been cut mid-sentence
    assert parts[1].body.startswith("\t// Sentence 5") and parts[1].title.endswith("(MessageBatch, error))")


def test_comments_a_blank_line_above_those_that_begin_the_next_run_stay_in_the_run_before() -> None:
    settings = "".join(f"opt_{k} = {k}\n" for k in range(52))
    notes = "# shown after links.\n# show_urls = False\n\n# appendices.\n# appendices = []\n\n"
    source = f"def setup(app):\n    pass\n\n\n{settings}\n{notes}# no index.\n# indices = True\n"
    blocks = [c for c in chunks_of("conf.py", source) if c.defines == "block"]
    covered = {n for c in blocks for n in range(c.line_start, c.line_end + 1)}
    assert set(range(58, 66)) - covered == {63}  # the blank line between: a conf.py's had been in no chunk
    assert blocks[-1].body == "# no index.\n# indices = True"


def test_a_closing_bracket_is_no_part_of_a_run_of_statements_alone() -> None:
    blocks = [c for c in chunks_of("styles.go", (PARTS / "styles.go").read_text()) if c.defines == "block"]
    assert (blocks[0].line_start, blocks[-1].line_end) == (4, 36)
    assert all(c.body.strip() != ")" for c in blocks)  # the `)` of `var (` had been a part alone


def test_a_go_table_in_a_statement_over_the_budget_is_cut_between_its_entries() -> None:
    parts = [
        c for c in chunks_of("formatter_test.go", (PARTS / "formatter_test.go").read_text()) if c.depth > 0
    ]
    assert len(parts) > 2
    assert not any(c.body.lstrip().startswith(("want:", "value:", "doc:", "skipTiny:")) for c in parts)


def test_a_go_table_at_a_files_top_is_cut_between_its_entries_as_one_in_a_function_is() -> None:
    entries = "".join(
        f'\t{{\n\t\tdescription:  "Decode base64: case {k}",\n\t\tscenarioType: "decode",\n'
        f'\t\tinput:        "coolData: YSBzcGVjaWFsIHN0cmluZw== {k}",\n\t\texpected:     "a special string",\n\t}},\n'
        for k in range(12)
    )
    source = (
        "package yqlib\n\nfunc TestBase64(t *testing.T) { testScenarios(t, base64Scenarios) }\n\n"
        f"// the scenarios\nvar base64Scenarios = []expressionScenario{{\n{entries}}}\n\nvar n = 1\n"
    )
    blocks = [c for c in chunks_of("base64_test.go", source) if c.defines == "block"]
    assert len(blocks) > 2
    for block in blocks:  # yq's had begun at a `subdescription:` inside an entry
        assert block.body.lstrip().startswith(("// the scenarios", "{", "var n")), block.body
    assert blocks[0].body.startswith("// the scenarios\nvar base64Scenarios")
    assert blocks[-2].body.endswith("\t},\n}")  # its closing brace with its last entry


def test_a_go_types_node_holds_its_first_field_with_that_fields_comment() -> None:
    chunks = {c.slug: c for c in chunks_of("entry.go", (PARTS / "entry.go").read_text())}
    assert chunks["Entry"].body.rstrip().endswith("err string\n}")  # had ended at the field's comment
    assert chunks["Entry.1"].body.startswith("// that is emitted")  # the doc comment: a part before it


def test_a_long_doc_comment_is_cut_into_even_parts_not_one_line_alone() -> None:
    parts = [c for c in chunks_of("backoff.go", (PARTS / "backoff.go").read_text()) if c.depth > 1]
    assert len(parts) == 2 and all(c.line_end - c.line_start >= 2 for c in parts)


def test_a_part_never_begins_at_a_line_that_only_closes() -> None:
    text = (PARTS / "app_with_scopes_test.exs").read_text()
    parts = [c for c in chunks_of("app_with_scopes_test.exs", text) if c.defines == "part"]
    assert len(parts) > 3
    assert not any(c.body.lstrip().startswith("end)") for c in parts)  # part 6 had begun at `end)`


def test_a_signature_above_a_line_over_the_budget_is_no_part_alone() -> None:
    source = f'def test_render():\n    expected = "{"ab" * 450}"\n    assert render() == expected\n'
    parts = [c for c in chunks_of("test_render.py", source) if c.depth > 0]
    assert parts[0].body.startswith('def test_render():\n    expected = "abab')


def test_a_definition_within_the_budget_stays_whole() -> None:
    source = "def small(a):\n    return a + 1\n"
    assert [c.slug for c in chunks_of("a.py", source)] == ["", "small"]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=400), min_size=1, max_size=60))
def test_no_code_chunk_exceeds_the_budget_unless_it_is_one_line(sizes: list[int]) -> None:
    body = "".join(f"    x{k} = {'1 + ' * (n // 4)}1\n" for k, n in enumerate(sizes))
    source = f"def f():\n{body}    return 0\n"
    for chunk in chunks_of("a.py", source):
        assert len(chunk.body.encode()) <= CHUNK_BUDGET or "\n" not in chunk.body.strip()


def _docstring_and_statements(indent: str, comment: str, statement: str, count: int) -> str:
    said = "".join(
        f"{indent}{comment} what the function does, line {k} of its long doc comment\n" for k in range(4)
    )
    return said + "".join(f"{indent}{statement.format(k=k)}\n" for k in range(count))


# each a definition whose signature spans lines and whose body alone is within the budget
LONG_SIGNATURES = {
    "a.py": "def convert(\n    self, value: int, param: str | None, ctx: object | None\n) -> int:\n"
    + '    """what the function does, line 0 of its long doc comment\n'
    + "".join(f"    what the function does, line {k} of its long doc comment\n" for k in range(1, 4))
    + '    """\n'
    + "".join(f"    value_{k} = self.normalize(value, ctx=ctx, param=param)\n" for k in range(9))
    + "    return value\n",
    "b.py": "@decorated\ndef convert(\n    self, value: int, param: str | None, ctx: object | None\n) -> int:\n"
    + _docstring_and_statements("    ", "#", "value_{k} = self.normalize(value, ctx=ctx, param=param)", 10)
    + "    return value\n",
    "a.ts": "export const convert = (\n\tvalue: number,\n\tparam: string,\n): number => {\n"
    + _docstring_and_statements("\t", "//", "const value{k} = normalize(value, {{param, index: {k}}});", 12)
    + "\treturn value;\n};\n",
    "a.go": "package a\n\nfunc Convert(\n\tvalue int,\n\tparam string,\n) int {\n"
    + _docstring_and_statements("\t", "//", "value{k} := normalize(value, param, {k}) // and a comment", 11)
    + "\treturn value\n}\n",
}


@pytest.mark.parametrize("path", sorted(LONG_SIGNATURES))
def test_a_long_definitions_first_part_holds_its_first_statements_not_its_signature_alone(path: str) -> None:
    source = LONG_SIGNATURES[path]
    assert len(source.encode()) > CHUNK_BUDGET
    chunks = [c for c in chunks_of(path, source) if c.depth > 0]
    assert len(chunks) > 1
    first = chunks[0].body
    assert "what the function does, line 0" in first and "value0" in first.replace("_", ""), first


def test_a_later_part_has_no_name_of_its_own() -> None:
    assert (
        chunk_keys(
            kind="code",
            depth=2,
            symbol="Opts",
            title="pub struct Opts (part 2)",
            path="cli.rs",
            slug="Opts.2",
        )
        == []
    )
    assert "opts" in chunk_keys(
        kind="code", depth=1, symbol="Opts", title="pub struct Opts", path="cli.rs", slug="Opts"
    )


@pytest.mark.parametrize(
    "symbol", ["tests", "tests.search_finds", "fmt_tests.parse", "path_tests", "test_parse", "a.test.b"]
)
def test_a_test_module_or_test_function_in_a_source_file_is_test_code(symbol: str) -> None:
    assert is_test_symbol(symbol)


@pytest.mark.parametrize("symbol", ["Regex.test", "contest", "Tester.run", "attest_all", "latest"])
def test_a_definition_named_like_test_is_not_test_code(symbol: str) -> None:
    assert not is_test_symbol(symbol)


@pytest.mark.parametrize(
    "path",
    [
        "tests/test_core.py", "src/test_x.py", "cache_test.go", "lib/a.spec.ts", "src/x.test.jsx",
        "src/test/java/StoreTest.java", "spec/store_spec.rb", "Tests/ValidationTests.swift",
        "Sources/SessionTests.swift", "timber/TimberTest.kt", "testdata/in.json", "tests/Unit/CacheTest.php",
        # Kotlin Multiplatform's and Android's test source sets
        "lua/path_spec.lua", "os/PathSpec.scala", "core/ParserSuite.scala", "okhttp/src/jvmTest/kotlin/CallTest.kt", "core/commonTest/src/Json.kt", "app/src/androidTest/java/A.kt",
        # bats-core's tests, git's (sharness's) test scripts
        "install.bats", "t/t0001-init.sh",
    ],
)  # fmt: skip
def test_a_test_file_is_known_by_its_folder_or_its_name_in_each_language(path: str) -> None:
    assert is_test_path(path)


@pytest.mark.parametrize(
    "path",
    ["src/contest.py", "Sources/Latest.swift", "attestation/check.go", "Testing.md", "src/jvmMain/Call.kt"],
)
def test_a_file_named_like_a_test_is_not_one(path: str) -> None:
    assert not is_test_path(path)


def _rust_project(
    tmp_path: Path, settings: str = "", files: dict[str, str] | None = None
) -> tuple[Path, Path]:
    """A project of Rust files (default: `cli.rs`, the big `Opts`) with `settings` in its .ra.toml."""
    home = tmp_path / "home"
    home.mkdir()
    kb = tmp_path / "kb"
    for name, text in (files or {"cli.rs": OPTS}).items():
        (kb / name).parent.mkdir(parents=True, exist_ok=True)
        (kb / name).write_text(text, encoding="utf-8")
    (kb / ".ra.toml").write_text(
        f'root = true\n{settings}\n[tree.kb]\npath = "."\ninclude = ["**/*.rs"]\n', encoding="utf-8"
    )
    return kb, home


def test_a_test_module_in_a_source_file_ranks_after_the_code_it_tests(tmp_path: Path) -> None:
    source = textwrap.dedent(
        """\
        /// Parse a size with its unit.
        pub fn parse_size(text: &str) -> Option<u64> {
            text.parse().ok()
        }

        #[cfg(test)]
        mod tests {
            #[test]
            fn parse_size_with_unit() {
                assert_eq!(parse_size("1k size unit"), Some(1));
                assert_eq!(parse_size("2k size unit"), Some(2));
            }
        }
        """
    )
    kb, home = _rust_project(tmp_path, files={"src/size.rs": source})
    build(kb, home)
    run = run_cmd("ra", "search", "--json", "parse size unit", cwd=kb, home=home)
    assert run.code == 0, run.err
    ids = [r["id"] for r in json.loads(run.out)["queries"][0]["results"]]
    assert ids[0] == "kb:src/size.rs#parse_size"


def test_code_chunk_size_sets_the_budget(tmp_path: Path) -> None:
    kb, home = _rust_project(tmp_path, "[settings]\ncode_chunk_size = 400")
    build(kb, home)
    run = run_cmd("ra", "inspect", "doc", "cli.rs", cwd=kb, home=home)
    assert run.code == 0, run.err
    default = [c for c in chunks_of("cli.rs", OPTS) if c.depth > 0]
    assert run.out.count("Opts.") > len(default)  # more, smaller parts than the default's


def test_ra_get_of_a_definition_cut_into_parts_prints_the_whole_definition(tmp_path: Path) -> None:
    kb, home = _rust_project(tmp_path)
    build(kb, home)
    run = run_cmd("ra", "get", "kb:cli.rs#Opts", cwd=kb, home=home)
    assert run.code == 0, run.err
    lines = OPTS.count("\n")
    assert run.out == f"─── kb:cli.rs#Opts ───\n> cli.rs:1-{lines} › Opts\n\n{OPTS}"  # as the file has it
    ids = [
        c["id"]
        for c in json.loads(run_cmd("ra", "get", "--json", "kb:cli.rs#Opts", cwd=kb, home=home).out)["chunks"]
    ]
    assert (
        ids[0] == "kb:cli.rs#Opts" and len(ids) > 2 and all(i.startswith("kb:cli.rs#Opts.") for i in ids[1:])
    )
    part = run_cmd("ra", "get", ids[1], cwd=kb, home=home).out  # a part alone is that part
    assert "pub option_0:" not in part and "option_" in part


def test_a_code_chunk_size_below_100_is_an_error_naming_the_key(tmp_path: Path) -> None:
    kb, home = _rust_project(tmp_path, "[settings]\ncode_chunk_size = 10")
    run = run_cmd("ra", "update", cwd=kb, home=home)
    assert run.code == 2
    assert "code_chunk_size" in run.err and ".ra.toml" in run.err


GO = """package cache

// ChunkCache holds chunks.
type ChunkCache struct {
\titems map[string]string
}

func helper() {}

// Search finds q.
func (c *ChunkCache) Search(q string) error {
\treturn nil
}

func (o *Other) Run() {}
"""


def test_a_go_method_is_a_child_of_its_receivers_type_defined_in_the_file() -> None:
    chunks = {c.slug: c for c in chunks_of("cache.go", GO)}
    method = chunks["ChunkCache.Search"]
    assert (method.depth, method.parent_id) == (2, "src:cache.go#ChunkCache")
    assert method.breadcrumb == ("cache.go", "ChunkCache", "Search")
    assert (method.line_start, method.line_end) == (10, 13)
    assert chunks["ChunkCache"].body.rstrip().endswith("}") and "Search" not in chunks["ChunkCache"].body


def test_a_go_method_whose_type_is_elsewhere_stays_at_the_top() -> None:
    chunks = {c.slug: c for c in chunks_of("cache.go", GO)}
    assert (chunks["Other.Run"].depth, chunks["Other.Run"].parent_id) == (1, "src:cache.go")


def test_the_outline_lists_a_go_method_under_its_type() -> None:
    outline = chunks_of("cache.go", GO)[0].body
    assert (
        "  type ChunkCache struct  L3-6\n    func (c *ChunkCache) Search(q string) error  L10-13" in outline
    )


RUST_IMPL = """/// A cache.
pub struct Cache { n: usize }

impl Cache {
    /// Make one cache.
    pub fn new() -> Self { Cache { n: 0 } }
}

/// Shown as x.
impl fmt::Display for Cache {
    fn fmt(&self) -> String { String::new() }
}
"""


def test_an_impl_block_of_its_first_line_alone_holds_its_members_and_no_text() -> None:
    chunks = {c.slug: c for c in chunks_of("lib.rs", RUST_IMPL)}
    assert chunks["impl-Cache"].body == ""
    assert chunks["Cache.new"].parent_id == "src:lib.rs#impl-Cache"
    assert chunks["impl-Display-for-Cache"].body.startswith("/// Shown as x.")  # its doc comment is its own


def test_an_impl_block_without_text_is_never_a_result(tmp_path: Path) -> None:
    kb, home = _rust_project(tmp_path, files={"lib.rs": RUST_IMPL})
    build(kb, home)
    run = run_cmd("ra", "search", "--json", "--cutoff-ratio", "0", "-n", "20", "impl", cwd=kb, home=home)
    assert run.code == 0, run.err
    results = json.loads(run.out)["queries"][0]["results"]
    assert results and all(r["content"].strip() for r in results)
    assert "kb:lib.rs#impl-Cache" not in [r["id"] for r in results]


@pytest.mark.parametrize("count", range(18, 28))
def test_closing_brackets_are_never_a_chunk_of_their_own(count: int) -> None:
    statements = "".join(f"    total = total + compute(value_{k}, option_{k});\n" for k in range(count))
    for tail in range(0, 60, 2):  # the sizes at which the last piece ends right before its brackets
        after = f"function f(x) {{\n  if (x) {{\n{statements}  }}\n  return '{'a' * tail}';\n}}\n"
        inside = f"function f(x) {{\n  if (x) {{\n{statements}    return '{'a' * tail}';\n  }}\n}}\n"
        for source in (after, inside):
            for chunk in chunks_of("a.js", source)[1:]:
                assert chunk.body.strip(" \n{}();,") != "", (count, tail, chunk.slug)


def test_a_definition_whose_first_line_is_over_the_budget_is_still_cut_between_statements() -> None:
    params = ", ".join(f"p{k}=10" for k in range(300))
    calls = "".join(f"    compute(\n        alpha={k},\n        beta={k},\n    )\n" for k in range(60))
    chunks = chunks_of("a.py", f"def f({params}):\n{calls}")[1:]
    assert len(chunks) > 2
    for chunk in chunks[1:]:
        assert chunk.body.lstrip().startswith("compute("), chunk.body[:30]


def test_a_definition_of_thousands_of_bracket_lines_is_cut_within_the_budget() -> None:
    source = "def f():\n    x = [\n" + "        [],\n" * 3000 + "    ]\n    return x\n"
    chunks = chunks_of("a.py", source)[1:]
    assert len(chunks) > 10 and all(len(c.body.encode()) <= CHUNK_BUDGET + 20 for c in chunks)


def test_a_search_shows_one_part_of_a_long_definition_and_gives_the_other_places_to_other_code(
    tmp_path: Path,
) -> None:
    """Every part of `Opts` says "option" and "value": one of them is shown, then the functions."""
    helpers = "".join(
        f"/// Reads the value of option {name}.\npub fn read_{name}(value: &str) -> usize {{ value.len() }}\n\n"
        for name in ("depth", "width", "height")
    )
    kb, home = _rust_project(tmp_path, files={"cli.rs": OPTS, "read.rs": helpers})
    build(kb, home)
    run = run_cmd("ra", "search", "--json", "-n", "4", "option value", cwd=kb, home=home)
    assert run.code == 0, run.err
    ids = [r["id"] for r in json.loads(run.out)["queries"][0]["results"]]
    assert sum(i.startswith("kb:cli.rs#Opts") for i in ids) == 1
    assert {"kb:read.rs#read_depth", "kb:read.rs#read_width", "kb:read.rs#read_height"} <= set(ids)


def test_a_definition_the_query_names_is_shown_and_a_part_of_it_that_ranked_higher_is_not() -> None:
    from ra_query.artifacts.models import ChunkRecord
    from ra_query.search.aggregate import Result
    from ra_query.search.pipeline import Shown, _one_part_each

    def shown(chunk_id: str, parent: str, crumbs: tuple[str, ...]) -> Shown:
        symbol = crumbs[1]  # a later part carries its definition's symbol; its slug adds `.3`
        record = ChunkRecord(
            chunk_id,
            "t",
            "a.rs",
            "t:a.rs",
            parent,
            "",
            crumbs,
            2,
            0,
            1,
            1,
            9,
            0,
            9,
            9,
            "x",
            "code",
            "rust",
            symbol,
        )
        return Shown(Result(chunk_id, 1.0, (), False), record, (record,))

    part = shown("t:a.rs#Opts.3", "t:a.rs#Opts", ("a.rs", "Opts", "part 3"))
    whole = shown("t:a.rs#Opts", "t:a.rs", ("a.rs", "Opts"))
    other = shown("t:a.rs#run", "t:a.rs", ("a.rs", "run"))
    ids = lambda kept: [s.id for s in kept]  # noqa: E731
    assert ids(_one_part_each([part, whole, other], frozenset())) == ["t:a.rs#Opts.3", "t:a.rs#run"]
    assert ids(_one_part_each([part, whole, other], frozenset({"t:a.rs#Opts"}))) == [
        "t:a.rs#Opts",
        "t:a.rs#run",
    ]


def test_a_search_that_matches_a_long_doc_comment_shows_the_definition_it_documents(tmp_path: Path) -> None:
    """A doc comment over the budget is parts of its own before the declaration; the words of
    its first lines find the function, shown from its signature (its line range holds it)."""
    doc = "/// Walks the lighthouse ledger and reconciles every beacon with its keeper.\n" + "".join(
        f"/// Remark {k}: the reconciliation is described at length in this paragraph of prose.\n"
        for k in range(24)
    )
    body = "".join(f"    let step_{k} = keeper.len() + {k};\n" for k in range(4))
    source = f"{doc}pub fn reconcile(keeper: &str) -> usize {{\n{body}    keeper.len()\n}}\n"
    kb, home = _rust_project(tmp_path, files={"src/ledger.rs": source})
    build(kb, home)
    listed = run_cmd("ra", "ls", "chunks", "kb:src/ledger.rs", cwd=kb, home=home)
    assert "kb:src/ledger.rs#reconcile.1" in listed.out  # the doc comment's first part is a chunk
    run = run_cmd("ra", "search", "--json", "lighthouse ledger beacon", cwd=kb, home=home)
    assert run.code == 0, run.err
    first = json.loads(run.out)["queries"][0]["results"][0]
    assert first["id"] == "kb:src/ledger.rs#reconcile"
    assert "pub fn reconcile(keeper: &str)" in first["content"]


def _code_shown(chunk_id: str, parent: str, symbol: str, lines: tuple[int, int], score: float) -> Any:
    """A code result as the show step sees it: `chunk_id` in `parent`, over `lines`."""
    from ra_query.artifacts.models import ChunkRecord
    from ra_query.search.aggregate import Result
    from ra_query.search.pipeline import Shown

    record = ChunkRecord(
        chunk_id, "t", "a.rs", "t:a.rs", parent, "", ("a.rs", symbol), 2, 0, 1,
        lines[0], lines[1], 0, 9, 9, "text", "code", "rust", symbol,
    )  # fmt: skip
    return Shown(Result(chunk_id, score, (), False), record, (record,))


@pytest.mark.parametrize("head_first", [True, False])
def test_a_doc_comment_part_is_shown_once_as_its_declaration_in_its_own_place(head_first: bool) -> None:
    from ra_query.search.pipeline import _declared

    doc = _code_shown("t:a.rs#run.1", "t:a.rs#run", "run", (1, 20), 3.0)
    head = _code_shown("t:a.rs#run", "t:a.rs", "run", (21, 30), 1.0)
    body = _code_shown("t:a.rs#run.3", "t:a.rs#run", "run", (31, 40), 2.0)  # after it: a part of code
    other = _code_shown("t:a.rs#stop", "t:a.rs", "stop", (41, 45), 1.5)
    records = {s.id: s.record for s in (doc, head, body, other)}
    order = [head, doc, body, other] if head_first else [doc, body, head, other]
    shown = _declared(order, records.get)
    assert [s.id for s in shown] == ["t:a.rs#run", "t:a.rs#run.3", "t:a.rs#stop"]
    first = shown[0]
    assert first.record.line_start == 21 and first.result.score == (1.0 if head_first else 3.0)


MEMBER_SOURCES = {
    "a.go": (
        "package x\n\ntype Options struct {\n\tInput  chan string\n\tHeight int\n\tx, y   int\n\tEmbedded\n}\n\n"
        "type Runner interface {\n\tRun(ctx int) error\n}\n",
        {
            "Options": ["Options.Input", "Options.Height", "Options.x", "Options.y", "Options.Embedded"],
            "Runner": ["Runner.Run"],
        },
    ),
    "a.rs": (
        "pub struct Opts {\n    /// Hidden files.\n    pub hidden: bool,\n    max_depth: Option<usize>,\n}\n"
        "pub enum Mode { Fast, Slow(u8) }\nimpl Opts { pub fn depth(&self) -> usize { 1 } }\n",
        {"Opts": ["Opts.hidden", "Opts.max_depth"], "Mode": ["Mode.Fast", "Mode.Slow"], "Opts.depth": []},
    ),
    "A.java": (
        "class Gson {\n  private final int maxDepth;\n  public int get() { return maxDepth; }\n  private Foo foo;\n}\n",
        {"Gson": ["Gson.maxDepth"], "Gson.get": [], "Gson.foo": ["Gson.foo"]},
    ),
    "a.ts": (
        "interface Options { timeout?: number; retry: number; }\nenum Color { Red, Green = 2 }\n",
        {"Options": ["Options.timeout", "Options.retry"], "Color": ["Color.Red", "Color.Green"]},
    ),
    "a.py": (
        'class Config:\n    """Doc."""\n    timeout = 5\n    name: str = "x"\n    register(thing)\n\n'
        "    def run(self):\n        local = 1\n",
        {"Config": ["Config.timeout", "Config.name"], "Config.run": []},
    ),
    "a.c": (
        "struct point { int x; int *y; char name[10]; int (*on_move)(int); };\nenum color { RED, GREEN };\n",
        {
            "point": ["point.x", "point.y", "point.name", "point.on_move"],
            "color": ["color.RED", "color.GREEN"],
        },
    ),
    "attrs.rb": (  # the attributes `attr_accessor` and its kin declare
        "class Response\n  attr_accessor :errors, :status\n  attr_reader :cookies\n\n  def initialize\n"
        "    @errors = []\n  end\nend\n",
        {"Response": ["Response.errors", "Response.status", "Response.cookies"], "Response.initialize": []},
    ),
    "nested.hpp": (  # a type declared inside a class
        "class widget {\n public:\n  enum class kind { small, large };\n  kind k;\n  void draw();\n};\n",
        {"widget": ["widget.kind", "widget.k"]},
    ),
    "a.php": (  # an enum's cases
        "<?php\nenum Level: int\n{\n    case Debug = 100;\n    case Info = 200;\n\n"
        "    public function label(): string\n    {\n        return $this->name;\n    }\n}\n",
        {"Level": ["Level.Debug", "Level.Info"], "Level.label": []},
    ),
    "a.hpp": (  # a method's prototype is no member: its definition is the method
        "class buffer {\n public:\n  size_t size_, capacity_;\n  void grow(size_t n);\n};\n",
        {"buffer": ["buffer.size_", "buffer.capacity_"]},
    ),
}


@pytest.mark.parametrize("path", sorted(MEMBER_SOURCES))
def test_a_types_chunk_lists_the_fields_and_variants_it_declares_and_a_function_none(path: str) -> None:
    source, expected = MEMBER_SOURCES[path]
    members = {c.id.partition("#")[2]: list(c.members) for c in chunks_of(path, source) if "#" in c.id}
    assert {slug: members.get(slug) for slug in expected} == expected


def test_each_part_of_a_long_struct_lists_the_fields_it_declares() -> None:
    chunks = [c for c in chunks_of("cli.rs", OPTS) if c.id.startswith("src:cli.rs#Opts")]
    declared = [m for c in chunks for m in c.members]
    assert declared == [f"Opts.option_{k}" for k in range(40)]  # each once, in order, all of them
    assert all(c.members for c in chunks)
    assert all(f"pub option_{m.rpartition('_')[2]}:" in c.body for c in chunks for m in c.members)


def test_a_member_is_a_name_of_its_chunk_qualified_only() -> None:
    keys = chunk_keys(kind="code", depth=2, symbol="Opts", title="", path="cli.rs", slug="Opts.3",
                      members=["Opts.max_depth"])  # fmt: skip
    assert {"==Opts.max_depth", "=Opts.max_depth", "opts.max_depth", "optsmaxdepth"} <= set(keys)
    assert not {"max_depth", "maxdepth", "=max_depth"} & set(keys)  # a method called so keeps it


def test_a_struct_field_typed_as_written_finds_the_part_that_declares_it(tmp_path: Path) -> None:
    helpers = "/// Reads option 31 of the options.\npub fn option_31(value: &str) -> usize { value.len() }\n"
    kb, home = _rust_project(tmp_path, files={"cli.rs": OPTS, "read.rs": helpers})
    build(kb, home)
    run = run_cmd("ra", "search", "--json", "Opts.option_31", cwd=kb, home=home)
    assert run.code == 0, run.err
    first = json.loads(run.out)["queries"][0]["results"][0]
    assert first["id"].startswith("kb:cli.rs#Opts") and "pub option_31:" in first["content"]


TABLE = (
    "package fold\n\n// letters folds each accented letter to its plain ASCII letter\nvar letters = map[rune]rune{\n"
    + "".join(
        f"\t0x{0x00C0 + k:04X}: 'a', // accented letter {k} folded to plain ascii\n" for k in range(600)
    )
    + "}\n"
)


def test_a_later_part_of_a_long_run_of_statements_is_titled_by_its_first_line() -> None:
    parts = [c for c in chunks_of("fold.go", TABLE) if c.id.startswith("src:fold.go#letters")]
    assert len(parts) > 20
    assert parts[5].title.startswith("var letters = map[rune]rune{ (part 6: 0x")
    assert parts[5].breadcrumb[-2:] == ("var letters = map[rune]rune{", "part 6")


def test_the_parts_of_one_long_table_do_not_crowd_out_the_other_results(tmp_path: Path, home: Path) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "fold.go").write_text(TABLE)
    (kb / "normalize.go").write_text(
        "package fold\n\n// Normalize folds an accented letter to plain ascii.\n"
        "func Normalize(r rune) rune {\n\tif n, ok := letters[r]; ok {\n\t\treturn n\n\t}\n\treturn r\n}\n"
    )
    (kb / ".ra.toml").write_text('root = true\n\n[tree.kb]\npath = "."\ninclude = ["**/*.go"]\n')
    build(kb, home)
    run = run_cmd("ra", "search", "--json", "accented letter folded to plain ascii", cwd=kb, home=home)
    ids = [r["id"] for r in json.loads(run.out)["queries"][0]["results"]]
    assert "kb:normalize.go#Normalize" in ids  # the table's 25 parts had filled the 20 candidates
    assert len([i for i in ids if i.startswith("kb:fold.go#letters")]) == 1  # one place for the table
