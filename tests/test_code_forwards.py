"""Wrappers folded into what they call: a definition whose whole body is one call of a
same-named function or method (`func WatchConfig() { v.WatchConfig() }`, an overload calling the
fuller one) names the callee in the chunk table's `forwards` column, and a search that finds both
shows the definition that does the work once, the wrapper in its `also`."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from ra_build.document.chunk import chunk_file
from tests.conftest import build, run_cmd


def forwards_of(path: str, text: str) -> dict[str, str]:
    """Each definition's symbol → its `forwards` (the last of a symbol defined twice)."""
    doc, _ = chunk_file("src", path, textwrap.dedent(text).encode())
    assert doc is not None
    return {chunk.symbol: chunk.forwards for chunk in doc.chunks[1:]}


@pytest.mark.parametrize(
    ("path", "text", "symbol", "callee"),
    [
        ("a.go", "package a\n\n// Watch watches.\nfunc Watch() { v.Watch() }\n", "Watch", "v.Watch"),
        ("a.go", "package a\n\nfunc Get(key string) any {\n\treturn v.Get(key)\n}\n", "Get", "v.Get"),
        ("a.py", 'def get(url):\n    """Send a GET."""\n    return _client.get(url)\n', "get", "_client.get"),
        ("a.py", "async def fetch(url):\n    return await self.fetch(url)\n", "fetch", "self.fetch"),
        (
            "G.java",
            "class G {\n  String toJson(Object src) {\n    return toJson(src, src.getClass());\n  }\n}\n",
            "G.toJson",
            "toJson",
        ),
        ("a.ts", "export function f(a: number) { return this.inner.f(a); }\n", "f", "this.inner.f"),
        ("a.ts", "export const g = (x: number) => h.g(x);\n", "g", "h.g"),
        (
            "a.rs",
            "impl A {\n    pub fn len(&self) -> usize {\n        self.inner.len()\n    }\n}\n",
            "A.len",
            "self.inner.len",
        ),
        ("A.cs", "class A {\n  public int Len() { return inner.Len(); }\n}\n", "A.Len", "inner.Len"),
        ("a.rb", "class A\n  def get(key)\n    @inner.get(key)\n  end\nend\n", "A.get", "get"),
    ],
)
def test_a_body_that_only_calls_a_definition_of_its_own_name_forwards_to_it(
    path: str, text: str, symbol: str, callee: str
) -> None:
    assert forwards_of(path, text)[symbol] == callee


@pytest.mark.parametrize(
    ("path", "text", "symbol"),
    [
        ("a.go", "package a\n\nfunc Get(key string) any { return v.Lookup(key) }\n", "Get"),
        ("a.go", "package a\n\nfunc Get(key string) any {\n\tlog(key)\n\treturn v.Get(key)\n}\n", "Get"),
        ("a.py", "def get(url):\n    return 1 + _client.get(url)\n", "get"),
        ("a.py", "def get(url):\n    if url:\n        return _client.get(url)\n", "get"),
        ("a.py", "def get(url):\n    return _client.get\n", "get"),
        ("a.ts", "export function f(a: number) { return new f(a); }\n", "f"),
    ],
)
def test_a_body_that_does_more_or_calls_another_name_forwards_to_nothing(
    path: str, text: str, symbol: str
) -> None:
    assert forwards_of(path, text)[symbol] == ""


VIPER_LIKE = """\
package conf

// SetEnvPrefix sets the prefix that environment variable names start with.
func SetEnvPrefix(in string) { v.SetEnvPrefix(in) }

// SetEnvPrefix sets the prefix that environment variable names start with.
func (v *Conf) SetEnvPrefix(in string) {
	if in != "" {
		v.envPrefix = in
	}
}

// Lookup reads an environment variable with the prefix.
func (v *Conf) Lookup(key string) string {
	return os.Getenv(v.envPrefix + key)
}
"""


def _project(tmp_path: Path, home: Path, name: str, text: str) -> Path:
    """A built project of one file `name` holding `text`."""
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / name).write_text(text, encoding="utf-8")
    suffix = name.rsplit(".", 1)[1]
    (kb / ".ra.toml").write_text(
        f'root = true\n\n[tree.kb]\npath = "."\ninclude = ["**/*.{suffix}"]\n', encoding="utf-8"
    )
    build(kb, home)
    return kb


def test_the_chunk_table_names_what_a_wrapper_forwards_to(tmp_path: Path, home: Path) -> None:
    kb = _project(tmp_path, home, "conf.go", VIPER_LIKE)
    table = pq.read_table(kb / ".ra" / "chunks" / "kb", columns=["symbol", "forwards"]).to_pylist()
    assert {row["symbol"]: row["forwards"] for row in table if row["symbol"]} == {
        "SetEnvPrefix": "v.SetEnvPrefix",
        "Conf.SetEnvPrefix": "",
        "Conf.Lookup": "",
    }


def test_a_search_shows_the_definition_a_wrapper_calls_once_with_the_wrapper_in_also(
    tmp_path: Path, home: Path
) -> None:
    kb = _project(tmp_path, home, "conf.go", VIPER_LIKE)
    run = run_cmd("ra-query", "search", "--json", "prefix of environment variable names", cwd=kb, home=home)
    assert run.code == 0, run.err
    results = json.loads(run.out)["queries"][0]["results"]
    ids = [r["id"] for r in results]
    assert ids[0] == "kb:conf.go#Conf.SetEnvPrefix"
    assert "kb:conf.go#SetEnvPrefix" not in ids
    assert results[0]["also"] == ["kb:conf.go#SetEnvPrefix"]


def test_a_wrapper_the_query_names_is_shown_itself(tmp_path: Path, home: Path) -> None:
    kb = _project(tmp_path, home, "conf.go", VIPER_LIKE)
    run = run_cmd("ra-query", "search", "--json", "SetEnvPrefix", cwd=kb, home=home)
    assert run.code == 0, run.err
    ids = [r["id"] for r in json.loads(run.out)["queries"][0]["results"]]
    assert "kb:conf.go#SetEnvPrefix" in ids and "kb:conf.go#Conf.SetEnvPrefix" in ids


OVERLOADED = '''\
class Context:
    @t.overload
    def invoke(self, callback: int) -> int: ...

    @t.overload
    def invoke(self, callback: str) -> str: ...

    def invoke(self, callback):
        """Run it with the context's arguments."""
        value = 1
        return value


class Group:
    def invoke(self, ctx):
        """Invoke the callback of each subcommand: a callback invoked, then the next callback."""
        return ctx
'''
# the signatures apart from their implementation (another method between): each its own chunk
OVERLOADED_APART = OVERLOADED.replace(
    "    def invoke(self, callback):\n",
    "    def forward(self, other):\n        return other\n\n    def invoke(self, callback):\n",
)


def test_python_overload_signatures_are_part_of_the_implementation_after_them() -> None:
    doc, _ = chunk_file("src", "core.py", OVERLOADED.encode())
    assert doc is not None
    found = [
        (c.slug, c.line_start, c.line_end, c.forwards) for c in doc.chunks if c.symbol.endswith("invoke")
    ]
    assert found == [("Context.invoke", 2, 11, ""), ("Group.invoke", 15, 17, "")]


def test_an_overload_decorator_with_a_comment_after_it_is_still_an_overload() -> None:
    source = (
        "from typing import overload\n\n\n@overload  # `default` set\ndef attr(default: int) -> int: ...\n"
        "@overload  # type: ignore[misc]\ndef attr(*, factory: str) -> str: ...\n"
        "def attr(default=None, *, factory=None):\n    return default or factory\n"
    )
    doc, _ = chunk_file("src", "fields.py", source.encode())
    assert doc is not None
    assert [(c.slug, c.line_start, c.line_end) for c in doc.chunks if c.slug] == [("attr", 4, 9)]


def test_typescript_overload_signatures_are_part_of_the_implementation_after_them() -> None:
    source = (
        "export class Queue {\n    /** Adds a task. */\n    add(fn: Task): Promise<void>;\n"
        "    add(fn: Task, options: Options): Promise<void>;\n    async add(fn: Task, options = {}) {\n"
        "        return this.run(fn, options);\n    }\n}\n\nexport function parse(x: string): number;\n"
        "export function parse(x: any): number {\n    return Number(x);\n}\n"
    )
    doc, _ = chunk_file("src", "queue.ts", source.encode())
    assert doc is not None
    assert [(c.slug, c.line_start, c.line_end) for c in doc.chunks if c.slug] == [
        ("Queue", 1, 1),
        ("Queue.add", 2, 7),
        ("parse", 10, 13),
    ]


def test_a_python_overload_signature_apart_from_its_implementation_forwards_to_it() -> None:
    doc, _ = chunk_file("src", "core.py", OVERLOADED_APART.encode())
    assert doc is not None
    found = [(chunk.symbol, chunk.forwards) for chunk in doc.chunks if chunk.symbol.endswith("invoke")]
    assert found == [
        ("Context.invoke", "invoke"),
        ("Context.invoke", ""),
        ("Group.invoke", ""),
    ]


def test_overload_signatures_fold_into_the_implementation_of_their_own_qualified_name(
    tmp_path: Path, home: Path
) -> None:
    kb = _project(tmp_path, home, "core.py", OVERLOADED_APART)
    run = run_cmd("ra-query", "search", "--json", "--cutoff-ratio", "0", "invoke callback", cwd=kb, home=home)
    assert run.code == 0, run.err
    results = json.loads(run.out)["queries"][0]["results"]
    implementation = next(r for r in results if r["id"] == "kb:core.py#Context.invoke-1")
    assert implementation["also"] == ["kb:core.py#Context.invoke"]
    assert [r["id"] for r in results].count("kb:core.py#Context.invoke") == 0


def test_ra_get_of_an_overloaded_name_prints_its_implementation(tmp_path: Path, home: Path) -> None:
    kb = _project(tmp_path, home, "core.py", OVERLOADED)
    run = run_cmd("ra-query", "get", "kb:core.py#Context.invoke", cwd=kb, home=home)
    assert run.code == 0, run.err
    assert "def invoke(self, callback: str) -> str: ..." in run.out and "return value" in run.out
