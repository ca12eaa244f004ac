"""Every language ra claims, chunked right (issue 31): C++ headers, preprocessor blocks,
CommonJS, test blocks, enum bodies, names from what is defined, doc comments, exact ranges."""

from __future__ import annotations

import json
import re
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from ra_build.config.load import load_config
from ra_build.document.chunk import Chunk, chunk_file
from ra_query.errors import ConfigError
from ra_query.sources.languages import header_language, header_language_of
from tests.conftest import Run, run_cmd


def doc_of(path: str, text: str, **kwargs: str) -> tuple[dict[str, Chunk], tuple[str, ...], str]:
    data = textwrap.dedent(text).encode()
    doc, _ = chunk_file("src", path, data, **kwargs)  # type: ignore[arg-type]
    assert doc is not None
    for chunk in doc.chunks[1:]:  # every range slices the file to the chunk's text
        assert data[chunk.byte_start : chunk.byte_end].decode() == chunk.body
        lines = data.decode().split("\n")[chunk.line_start - 1 : chunk.line_end]
        assert not chunk.body or "\n".join(lines).strip() == chunk.body.strip()
    return {c.slug: c for c in doc.chunks}, doc.warnings, doc.language


def chunks_of(path: str, text: str, **kwargs: str) -> dict[str, Chunk]:
    return doc_of(path, text, **kwargs)[0]


def defined(chunks: dict[str, Chunk]) -> dict[str, str]:
    """What each chunk but the file's defines, by slug."""
    return {slug: c.defines for slug, c in chunks.items() if slug}


CPP_HEADER = """\
    // A buffer.
    #ifndef FMT_FORMAT_H_
    #define FMT_FORMAT_H_

    #include <string>

    FMT_BEGIN_NAMESPACE

    template <typename T> class basic_memory_buffer;

    /** A buffer that grows. */
    template <typename T>
    class basic_memory_buffer {
     public:
      void grow(size_t size) {}
    };

    FMT_API void vformat_to(buffer& buf, string_view fmt);

    FMT_END_NAMESPACE
    #endif  // FMT_FORMAT_H_
    """

C_HEADER = """\
    #ifndef __SDS_H
    #define __SDS_H

    typedef char *sds;

    struct sdshdr8 {
        uint8_t len;
    };

    static inline size_t sdslen(const sds s) {
        return 0;
    }

    #if defined(SDS_TEST_MAIN)
    int sdsTest(void) {
        return 1;
    }
    #else
    int sdsNoTest(void) {
        return 0;
    }
    #endif

    #endif
    """


# ── the grammar of a header ────────────────────────────────────────────────────────────────────


def test_a_header_that_holds_a_class_or_template_is_parsed_as_cpp_without_a_warning() -> None:
    chunks, warnings, language = doc_of("format.h", CPP_HEADER)
    assert language == "cpp"
    assert warnings == ()
    assert chunks["basic_memory_buffer"].title == "class basic_memory_buffer"
    assert chunks["basic_memory_buffer.grow"].language == "cpp"


def test_a_header_without_cpp_in_it_is_parsed_as_c() -> None:
    assert doc_of("sds.h", C_HEADER)[2] == "c"


def test_a_trees_header_language_overrides_what_the_header_says() -> None:
    assert doc_of("sds.h", C_HEADER, header_language="cpp")[2] == "cpp"
    assert doc_of("format.h", CPP_HEADER, header_language="c")[2] == "c"


def test_a_tree_with_as_many_cpp_sources_as_c_files_makes_its_headers_cpp() -> None:
    assert header_language_of(["src/a.cc", "include/a.h", "tools/gen.c"]) == "cpp"
    assert header_language_of(["src/a.c", "src/b.c", "test/t.cpp", "a.h"]) == "auto"
    assert header_language_of(["a.h", "b.h"]) == "auto"


def test_a_header_is_cpp_by_its_namespace_template_class_or_access_label() -> None:
    for line in ["namespace fmt {", "template <typename T>", "class Buffer", "  public:", 'extern "C++" {']:
        assert header_language(f"#include <x.h>\n{line}\n") == "cpp", line
    assert header_language("/* the class of buffers */\nstruct s { int a; };\n") == "c"


def test_a_forward_declaration_is_no_definition_and_the_definition_takes_the_name() -> None:
    chunks = chunks_of("format.h", CPP_HEADER)
    assert chunks["basic_memory_buffer"].body.startswith("/** A buffer that grows. */\ntemplate <typename T>")
    assert "basic_memory_buffer-1" not in chunks


# ── preprocessor blocks ────────────────────────────────────────────────────────────────────────


def test_definitions_inside_an_include_guard_are_chunks() -> None:
    chunks = chunks_of("sds.h", C_HEADER)
    assert {"sds", "sdshdr8", "sdslen"} <= set(chunks)
    assert chunks["sdslen"].body.startswith("static inline size_t sdslen(const sds s) {")


def test_definitions_in_both_branches_of_an_if_are_chunks_and_take_their_directives() -> None:
    chunks = chunks_of("sds.h", C_HEADER)
    assert chunks["sdsTest"].body.startswith("#if defined(SDS_TEST_MAIN)\nint sdsTest(void) {")
    assert chunks["sdsTest"].body.endswith("}\n#else")
    assert chunks["sdsNoTest"].body.endswith("}\n#endif")
    assert not chunks["sdsNoTest"].body.endswith("#endif\n\n#endif")  # the guard's is not its


def test_a_directive_never_names_a_chunk() -> None:
    for text in (C_HEADER, CPP_HEADER):
        slugs = set(chunks_of("x.h", text))
        assert not slugs & {"ifndef", "ifdef", "if", "endif", "define", "include", "else", "defined"}, slugs
        assert not any(s.startswith(("__SDS_H", "FMT_FORMAT_H_", "SDS_TEST_MAIN")) for s in slugs), slugs


def test_a_macro_the_grammar_cannot_expand_stays_in_its_definitions_text() -> None:
    chunks = chunks_of("format.h", CPP_HEADER)
    block = next(c for c in chunks.values() if "vformat_to" in c.body)
    assert "FMT_API void vformat_to(buffer& buf, string_view fmt);" in block.body


def test_a_struct_chunk_holds_its_closing_semicolon() -> None:
    chunks = chunks_of("sds.h", C_HEADER)
    assert chunks["sdshdr8"].body.endswith("};")


def test_an_anonymous_namespace_holds_definitions_named_as_if_it_were_not_there() -> None:
    chunks = chunks_of("os.cc", "namespace {\nint helper(int x) {\n  return x;\n}\n}  // namespace\n")
    assert chunks["helper"].depth == 1


# ── JavaScript: CommonJS and test blocks ───────────────────────────────────────────────────────

EXPRESS = """\
    'use strict'

    var app = exports = module.exports = {};

    /**
     * Proxy `Router#use()` to add middleware to the app router.
     */

    app.use = function use(fn) {
      return this;
    };

    View.prototype.render = function render(options, callback) {
      this.engine(this.path, options, callback);
    };

    exports.compileTrust = function(val) {
      return val;
    };

    module.exports.parse = (text) => text.trim();
    """


def test_a_function_assigned_to_a_property_is_a_definition_named_by_its_target() -> None:
    chunks = chunks_of("lib/application.js", EXPRESS)
    assert chunks["app.use"].symbol == "app.use"
    assert chunks["app.use"].title == "app.use = function use(fn)"
    assert chunks["app.use"].body.startswith("/**\n * Proxy `Router#use()`")  # its JSDoc, a blank line apart


def test_a_prototype_method_is_named_as_a_class_method_and_exports_without_the_module() -> None:
    chunks = chunks_of("lib/view.js", EXPRESS)
    assert chunks["View.render"].title.startswith("View.prototype.render = function render(")
    assert chunks["compileTrust"].symbol == "compileTrust"
    assert chunks["parse"].kind == "code"


def test_a_module_exports_function_is_named_by_the_function() -> None:
    chunks = chunks_of("index.js", "module.exports = function createApplication() {\n  return 1;\n};\n")
    assert "createApplication" in chunks


SPEC = """\
    describe('app.router', function () {
      it('dispatches a GET', function (done) {
        function handler(req, res) {}
        done();
      });

      describe('params', () => {
        it('merges params', async () => {
          await run();
        });
      });
    });
    """


def test_describe_and_it_blocks_are_chunks_named_by_their_titles() -> None:
    chunks = chunks_of("test/app.router.js", SPEC)
    assert chunks["app.router.dispatches-a-get"].kind == "code"
    assert chunks["app.router.params.merges-params"].depth == 3
    assert chunks["app.router.params.merges-params"].title == "it('merges params', async () =>"


def test_a_test_case_is_one_chunk_whatever_it_defines_inside() -> None:
    chunks = chunks_of("test/app.router.js", SPEC)
    assert "function handler(req, res) {}" in chunks["app.router.dispatches-a-get"].body
    assert not any(slug.endswith("handler") for slug in chunks)


def test_a_tests_id_stays_when_another_test_is_inserted_above_it() -> None:
    before = chunks_of("t.js", SPEC)["app.router.params.merges-params"].id
    inserted = SPEC.replace("    describe('params'", "    it('is new', () => {});\n\n    describe('params'")
    assert chunks_of("t.js", inserted)["app.router.params.merges-params"].id == before


def test_a_typescript_field_run_keeps_its_last_semicolon() -> None:
    chunks = chunks_of("ky.ts", "class Ky {\n  request: Request;\n  abort = false;\n\n  m(): void {}\n}\n")
    assert chunks["Ky"].body.endswith("abort = false;")


# ── Ruby ───────────────────────────────────────────────────────────────────────────────────────

RUBY = """\
    module Rack
      module Protection
        ##
        # Base class for the protections.

        class Base
          def call(env)
            env
          end

          private

          def default_reaction(env)
            deny(env)
          end
        end
      end
    end

    describe "routing" do
      it "dispatches a GET" do
        get '/'
      end
    end

    class RoutingTest < Minitest::Test
      it "renders inline" do
        1
      end
    end
    """


def test_a_ruby_doc_comment_goes_to_the_class_it_documents_and_no_title_holds_a_comment() -> None:
    chunks = chunks_of("base.rb", RUBY)
    assert chunks["Rack.Protection.Base"].body.startswith("    ##\n    # Base class for the protections.")
    assert chunks["Rack.Protection"].title == "module Protection"
    assert all("#" not in c.title for c in chunks.values() if c.depth)


def test_rubys_private_joins_the_method_after_it() -> None:
    chunks = chunks_of("base.rb", RUBY)
    assert chunks["Rack.Protection.Base.default_reaction"].body.startswith(
        "      private\n\n      def default_"
    )
    assert not any(slug.endswith("private") for slug in chunks)


def test_rspec_and_minitest_blocks_are_chunks_named_by_their_titles() -> None:
    chunks = chunks_of("routing_test.rb", RUBY)
    assert chunks["routing.dispatches-a-get"].title == 'it "dispatches a GET" do'
    assert chunks["RoutingTest.renders-inline"].depth == 2


def test_shoulda_should_and_rspec_example_blocks_are_tests_and_one_liners_are_not() -> None:
    source = (
        "class TestSite < Minitest::Test\n"
        '  context "creating sites" do\n    should "have an empty tag hash" do\n      assert_equal({}, tags)\n'
        "    end\n  end\nend\n\n"
        'describe "cart" do\n  it { should be_empty }\n\n  example "adds an item" do\n    add(1)\n  end\nend\n'
    )
    chunks = chunks_of("test_site.rb", source)
    assert defined(chunks) == {
        "TestSite": "class",
        "TestSite.creating-sites": "test",
        "TestSite.creating-sites.have-an-empty-tag-hash": "test",  # had been part of its context
        "cart": "test",
        "cart.adds-an-item": "test",  # had been a block named `example`
    }


def test_ruby_and_php_definitions_in_an_if_are_definitions_whose_branch_head_opens_them() -> None:
    ruby = (
        "module Utils\n  if defined?(OpenSSL.fixed_length_secure_compare)\n    def secure_compare(a, b)\n"
        "      OpenSSL.fixed_length_secure_compare(a, b)\n    end\n    # :nocov:\n  else\n"
        "    def secure_compare(a, b)\n      a == b\n    end\n    # :nocov:\n  end\n\n  if verbose\n    puts 1\n  end\nend\n"
    )
    chunks = chunks_of("utils.rb", ruby)
    assert defined(chunks) == {
        "Utils": "module",
        "Utils.secure_compare": "method",
        "Utils.secure_compare-1": "method",
        "Utils.verbose": "block",  # an `if` that defines nothing stays a statement
    }  # had been one block named `defined`
    first, second = chunks["Utils.secure_compare"], chunks["Utils.secure_compare-1"]
    assert (first.line_start, first.line_end, second.line_start, second.line_end) == (
        2,
        5,
        6,
        12,
    )  # its `end` too
    php = (
        "<?php\n\nif (! function_exists('tap')) {\n    function tap($value, callable $callback)\n    {\n"
        "        $callback($value);\n        return $value;\n    }\n}\n\nif (false) {\n    final class Shim {}\n}\n"
    )
    assert defined(chunks_of("helpers.php", php)) == {
        "tap": "function",
        "Shim": "class",
    }  # had been in the file's header


def test_sorbet_sigs_and_thor_descs_join_the_ruby_method_below_them() -> None:
    source = (
        "class Cli < Thor\n  extend T::Sig\n\n  sig { params(name: String).returns(Integer) }\n  def greet(name)\n"
        '    name.size\n  end\n\n  desc "build PATH", "Builds the site"\n  method_option :port, type: :numeric\n'
        "  def build(path)\n    Site.new(path).build\n  end\nend\n"
    )
    chunks = chunks_of("cli.rb", source)
    assert defined(chunks) == {
        "Cli": "class",
        "Cli.greet": "method",
        "Cli.build": "method",
    }  # no `Cli.desc` block
    assert (chunks["Cli.greet"].line_start, chunks["Cli.build"].line_start) == (4, 9)
    assert chunks["Cli.build"].title == "def build(path)"


def test_a_ruby_class_made_by_struct_new_or_class_new_holds_its_methods() -> None:
    source = (
        "module Geometry\n  UNIT = 1.0\n\n  Point = Struct.new(:x, :y) do\n    def distance_to(other)\n"
        "      Math.hypot(x - other.x, y - other.y)\n    end\n  end\n\n  PrintHelp = Class.new(Base) do\n"
        "    def call; end\n  end\n\n  Pair = Struct.new(:a, :b)\nend\n"
    )
    chunks = chunks_of("geometry.rb", source)
    assert defined(chunks) == {
        "Geometry": "module",  # with `UNIT = 1.0`, before its first member
        "Geometry.Point": "class",
        "Geometry.Point.distance_to": "method",
        "Geometry.PrintHelp": "class",
        "Geometry.PrintHelp.call": "method",
        "Geometry.Pair": "block",  # no methods: a statement
    }  # had been statements of the module
    assert chunks["Geometry.Point"].title == "Point = Struct.new(:x, :y) do"


def test_a_ruby_block_of_attr_readers_or_aliases_is_named_by_the_first_name_it_declares() -> None:
    source = (
        "class Response\n  def initialize(status)\n    @status = status\n  end\n\n"
        "  attr_reader :status, :headers\n  alias_method :code, :status\n\n  def ok?\n    status == 200\n  end\n\n"
        "  alias_method :success?, :ok?\nend\n"
    )
    assert list(chunks_of("response.rb", source)) == [
        "",
        "Response",
        "Response.initialize",
        "Response.status",  # had been `attr_reader`
        "Response.ok?",
        "Response.success?",  # had been `alias_method`
    ]


def test_rspec_tests_generated_in_a_loop_are_tests_the_loop_head_opening_the_first() -> None:
    source = (
        'describe "cookies" do\n  it "sets a cookie" do\n    expect(1).to eq(1)\n  end\n\n'
        '  [nil, false].each do |value|\n    it "omits same_site for #{value.inspect}" do\n'
        "      expect(value).to be_falsey\n    end\n  end\n\n"
        '  %w[-v --version].each do |option|\n    describe option do\n      it "prints the version" do\n'
        "        expect(run(option)).to include(VERSION)\n      end\n    end\n  end\n\n"
        "  [1, 2].each { |n| puts n }\nend\n"
    )
    chunks = chunks_of("cookies_spec.rb", source)
    assert defined(chunks) == {
        "cookies": "test",
        "cookies.sets-a-cookie": "test",
        "cookies.omits-same_site-for-#-value.inspect": "test",  # had been a block named `nil`
        "cookies.option": "test",
        "cookies.option.prints-the-version": "test",
        "cookies.each": "block",  # a loop that defines no test stays a statement
    }
    assert chunks["cookies.omits-same_site-for-#-value.inspect"].line_start == 6  # the loop's head


def test_a_ruby_operator_method_is_named_by_its_operator() -> None:
    source = "class Plugin\n  def <=>(other)\n    priority <=> other.priority\n  end\n\n  def <<(x)\n    add(x)\n  end\nend\n"
    assert list(chunks_of("plugin.rb", source)) == [
        "",
        "Plugin",
        "Plugin.<=>",
        "Plugin.<<",
    ]  # `<=>` had been ``


def test_pest_tests_in_php_are_tests_named_by_their_titles() -> None:
    source = (
        "<?php\n\nfunction cart(): Cart\n{\n    return new Cart();\n}\n\n"
        "test('adds an item', function () {\n    expect(cart()->count())->toBe(1);\n});\n\n"
        "describe('checkout', function () {\n    it('charges the card', fn () => expect(pay())->toBeTrue());\n});\n"
    )
    chunks = chunks_of("CartTest.php", source)
    assert defined(chunks) == {
        "cart": "function",
        "adds-an-item": "test",
        "checkout": "test",
        "checkout.charges-the-card": "test",
    }  # had been blocks named `test` and `toBeTrue`
    assert chunks["adds-an-item"].title == "test('adds an item', function ()"


# ── Java ───────────────────────────────────────────────────────────────────────────────────────

JAVA = """\
    package com.google.gson;

    public enum FieldNamingPolicy implements FieldNamingStrategy {
      IDENTITY() {
        @Override public String translateName(Field f) {
          return f.getName();
        }
      },
      UPPER_CAMEL_CASE() {
        @Override public String translateName(Field f) {
          return upper(f.getName());
        }
      };

      static String upper(String s) {
        return s;
      }
    }

    final class TypeAdapters {
      private TypeAdapters() {}

      @SuppressWarnings("rawtypes")
      public static final TypeAdapter<Class> CLASS = new TypeAdapter<Class>() {};

      public static final TypeAdapter<BitSet> BIT_SET = null;
    }
    """


def test_a_java_enums_constants_with_bodies_and_its_methods_are_its_members() -> None:
    chunks = chunks_of("FieldNamingPolicy.java", JAVA)
    assert chunks["FieldNamingPolicy.UPPER_CAMEL_CASE.translateName"].depth == 3
    assert chunks["FieldNamingPolicy.upper"].title == "static String upper(String s)"


def test_a_field_run_is_named_by_its_first_declared_name() -> None:
    chunks = chunks_of("TypeAdapters.java", JAVA)
    assert chunks["TypeAdapters.CLASS"].body.startswith('  @SuppressWarnings("rawtypes")')
    assert not any(s.endswith(("SuppressWarnings", "TypeAdapter")) for s in chunks)


def test_a_statement_run_is_named_by_what_it_declares_in_every_language() -> None:
    cases = {
        "a.py": ("def f():\n    pass\n\nCACHE_SIZE = 64\n", "CACHE_SIZE"),
        "a.go": ("package a\n\nfunc F() {}\n\nvar defaultSize = 10\n", "defaultSize"),
        "a.rs": ("fn f() {}\n\nconst MAX: usize = 3;\n", "MAX"),
        "a.c": ("int f(void) { return 0; }\n\nstatic const int table[] = {1, 2};\n", "table"),
    }
    for path, (text, name) in cases.items():
        assert name in chunks_of(path, text), path


NVM_LIKE = """\
{ # this ensures the entire script is downloaded #

nvm_echo() {
  command printf %s\\\\n "$*"
}

if [ -n "${ZSH_VERSION-}" ]; then
  nvm_setup() {
    setopt shwordsplit
  }
else
  nvm_setup() {
    shopt -s extglob
  }
fi

if [ -z "${NVM_DIR-}" ]; then
  NVM_DIR="$HOME/.nvm"
fi

} # this ensures the entire script is downloaded #
"""


def test_shell_functions_in_a_brace_group_or_an_if_are_definitions_and_no_line_is_lost() -> None:
    chunks = chunks_of("nvm.sh", NVM_LIKE)
    spans = {slug: (c.line_start, c.line_end) for slug, c in chunks.items() if slug}
    assert spans["nvm_echo"] == (3, 5)
    assert spans["nvm_setup"] == (7, 10) and spans["nvm_setup-1"] == (11, 15)  # `if …; then`, `else`, `fi`
    assert chunks["nvm_setup"].body.startswith('if [ -n "${ZSH_VERSION-}" ]; then\n  nvm_setup() {')
    assert chunks["nvm_setup-1"].body.endswith("  }\nfi")
    block = next(c for c in chunks.values() if 'NVM_DIR="$HOME/.nvm"' in c.body)
    assert block.body.startswith('if [ -z "${NVM_DIR-}" ]; then\n  NVM_DIR="$HOME/.nvm"\nfi')  # one statement
    held = "".join(NVM_LIKE.encode()[c.byte_start : c.byte_end].decode() for c in chunks.values())
    assert all(line.strip() in held for line in NVM_LIKE.splitlines())


def test_a_macro_before_a_block_in_a_body_does_not_cut_the_function_short() -> None:
    source = (
        "namespace ns {\n\nvoid logger::sink_it_(const msg_t &msg) {\n    for (auto &sink : sinks_) {\n"
        "        SPDLOG_TRY { sink->log(msg); }\n        SPDLOG_LOGGER_CATCH(msg.source)\n    }\n\n"
        "    if (should_flush_(msg)) {\n        flush_();\n    }\n}\n\nvoid logger::flush_() {\n"
        "    flush_all();\n}\n\n}  // namespace ns\n"
    )
    found = {slug: (c.line_start, c.line_end) for slug, c in chunks_of("logger.cpp", source).items() if slug}
    assert found["ns.logger.sink_it_"] == (3, 12)  # its end was a block named after a call
    assert found["ns.logger.flush_"] == (14, 16)  # the namespace kept for what follows


OBJECTS_JS = """\
const helpers = {
  quote (str) {
    return '"' + str + '"'
  },
  escape: function (str) {
    return str.replace(/"/g, '')
  },
  nested: {
    deep: () => 1,
  },
  name: 'x'
}

const config = { port: 80, host: 'localhost' }

module.exports = {
  parse (s) { return s },
}
"""


def test_an_object_of_functions_holds_them_as_its_methods() -> None:
    chunks = chunks_of("helpers.js", OBJECTS_JS)
    found = {slug: (c.line_start, c.line_end, c.defines) for slug, c in chunks.items() if c.symbol}
    assert found == {
        "helpers": (1, 1, "object"),
        "helpers.quote": (2, 4, "method"),
        "helpers.escape": (5, 7, "method"),
        "helpers.nested": (8, 8, "object"),
        "helpers.nested.deep": (9, 9, "method"),
        "module.exports": (16, 16, "object"),
        "module.exports.parse": (17, 17, "method"),
    }  # `config` holds no function: a statement
    assert chunks["helpers.quote"].body.endswith("  },")  # the `,` after it is its own


@pytest.mark.parametrize(
    ("value", "defines"),
    [
        ("function (req, res) {\n  res.end()\n}", "function"),
        ("(req, res) => {\n  res.end()\n}", "function"),
        ("class {\n  handle () {}\n}", "class"),
        ("{\n  handle () {},\n}", "object"),  # a Vue component's options, a plugin's hooks
        ("function* () {\n  yield 1\n}", "function"),
    ],
)
def test_what_a_module_exports_by_default_is_a_definition_named_default(value: str, defines: str) -> None:
    chunks = chunks_of("handler.js", f"import x from 'y'\n\nexport default {value}\n")
    assert chunks["default"].defines == defines
    assert chunks["default"].body.startswith("export default ")
    assert chunks["default"].title.startswith("export default")  # its signature, not `{` or `class`
    if "handle" in value:
        assert "default.handle" in chunks


def test_an_export_default_of_data_or_a_named_value_is_no_new_definition() -> None:
    source = "export default { port: 80 }\n\nexport default function serve () {}\n\nexport default app\n"
    defined = {slug: c.defines for slug, c in chunks_of("config.js", source).items() if c.symbol}
    assert defined == {"serve": "function"}  # `app` is a statement after it


def test_an_object_of_functions_written_as_const_or_satisfies_holds_them() -> None:
    source = (
        "export const handlers = {\n  open (path: string) {\n    return path\n  },\n} as const\n\n"
        "const routes = {\n  home: () => 1,\n} satisfies Record<string, () => number>\n\n"
        "export default {\n  fetch (req: Request) {\n    return req\n  },\n} satisfies Handler\n"
    )
    chunks = chunks_of("handlers.ts", source)
    assert defined(chunks) == {
        "handlers": "object", "handlers.open": "method", "routes": "object", "routes.home": "method",
        "default": "object", "default.fetch": "method",
    }  # fmt: skip
    assert chunks["routes.home"].body.endswith("} satisfies Record<string, () => number>")  # no line lost


@pytest.mark.parametrize(
    ("head", "tail"),
    [
        ("(function () {\n", "})()\n"),  # an immediately called function
        ("!function () {\n", "}()\n"),
        # UMD: the factory given to the wrapper
        ("(function (root, factory) {\n  root.Lib = factory()\n})(this, function () {\n", "})\n"),
    ],
)
def test_the_functions_a_module_wrapper_holds_are_definitions(head: str, tail: str) -> None:
    source = f"{head}  function debounce (fn) {{\n    return fn\n  }}\n\n  class Queue {{\n    add () {{}}\n  }}\n{tail}"
    chunks = chunks_of("lib.js", source)
    assert {"debounce", "Queue", "Queue.add"} <= set(chunks)
    assert chunks["debounce"].body == "  function debounce (fn) {\n    return fn\n  }"
    assert head.strip() in "".join(c.body for c in chunks.values())  # the wrapper's head is kept


def test_csharp_regions_and_pragmas_join_the_code_they_mark() -> None:
    source = (
        "class A\n{\n    #region helpers\n    public void F() { }\n    #endregion\n\n"
        "#pragma warning disable IDE0047\n    public void G() { }\n#pragma warning restore IDE0047\n"
        "\n    #region types\n    class B\n    {\n        void H() { }\n    }\n    #endregion\n}\n"
    )
    chunks = chunks_of("a.cs", source)
    assert [(slug, c.line_start, c.line_end) for slug, c in chunks.items() if slug] == [
        ("A", 1, 2),
        ("A.F", 3, 5),  # `#region` opens it, `#endregion` closes it
        ("A.G", 7, 9),
        ("A.B", 11, 13),
        ("A.B.H", 14, 14),
    ]  # the last `#endregion` alone is no chunk (it had been a block named `comment`)


def test_an_endif_alone_is_no_chunk() -> None:
    source = "#ifdef _WIN32\nint f(void) { return 1; }\n#else  // when posix\nint f(void) { return 2; }\n\n#endif\n"
    assert [slug for slug in chunks_of("d.c", source) if slug] == ["f", "f-1"]


TYPINGS = """\
export interface Options {
  /** Whether to follow redirects. */
  followRedirect?: boolean;
  /** Called before each retry. */
  beforeRetry(error: Error): void;
}

export declare class Command {
  /**
   * Define option.
   */
  option(flags: string, description?: string): this;
  option<T>(flags: string, description: string, parse: (v: string) => T): this;

  /** Parse argv. */
  parse(argv?: string[]): this;
}

export declare function program(): Command;

declare function debug(ns: string): Debugger;
declare namespace debug {
  function enable(ns: string): void;
}

export interface Emitter {
  on(e: "a", f: () => void): this;
  on(e: "b", f: () => void): this;
}
"""


def test_a_typings_files_declared_methods_and_functions_are_definitions() -> None:
    chunks = chunks_of("index.d.ts", TYPINGS)
    assert [(slug, c.line_start, c.line_end) for slug, c in chunks.items() if slug] == [
        ("Options", 1, 6),
        ("Command", 8, 8),
        ("Command.option", 9, 13),  # its overloads one chunk (it was cut into parts named Command.2, …)
        ("Command.parse", 15, 16),
        ("program", 19, 19),
        ("debug", 21, 21),  # a function and a namespace of one name: two definitions
        ("debug-1", 22, 22),
        ("debug.enable", 23, 23),
        ("Emitter", 26, 29),
    ]
    assert chunks["Options"].members == ("Options.followRedirect", "Options.beforeRetry")
    assert chunks["Emitter"].members == ("Emitter.on",)  # its overloads declare one name


CPP_TESTS = """\
#include "gtest/gtest.h"

TEST(Registry, RegisterDrop) {
    EXPECT_EQ(drop("x"), 1);
}

TEST_F(LoggerTest, FlushesOnError) {
    logger->flush();
}

TEST_CASE("drop non existing", "[registry]") {
    REQUIRE(spdlog::get("x") == nullptr);
}

TEST_CASE("level names", "[level]")
{
    REQUIRE(true);
}

TEST_P(Params, Holds)
{
    EXPECT_TRUE(GetParam());
}

TEST_CASE("tight"){
    REQUIRE(1);
}
"""


def test_cpp_test_macros_are_tests_named_by_their_suite_and_case_or_their_title() -> None:
    chunks = chunks_of("registry_test.cpp", CPP_TESTS)
    found = {slug: (c.line_start, c.line_end, c.defines) for slug, c in chunks.items() if slug}
    assert found == {
        "Registry.RegisterDrop": (3, 5, "test"),
        "LoggerTest.FlushesOnError": (7, 9, "test"),
        "drop-non-existing": (11, 13, "test"),
        "level-names": (15, 18, "test"),  # its `{` on the next line: the macro line is not blanked
        "Params.Holds": (20, 23, "test"),
        "tight": (25, 27, "test"),
    }


def test_templated_catch2_and_doctest_tests_are_tests_and_the_tests_after_them_too() -> None:
    text = (
        "#include <catch2/catch_template_test_macros.hpp>\n\n"
        'TEMPLATE_TEST_CASE("distribution never returns infs",\n          "[rng]", float, double) {\n'
        "    REQUIRE_FALSE(std::isinf(dist<TestType>()));\n}\n\n"
        "using MyTypes = std::tuple<int, char, float>;\n"
        'TEMPLATE_LIST_TEST_CASE("types in a tuple", "[template][list]", MyTypes)\n{\n    REQUIRE(1);\n}\n\n'
        'TEST_CASE_TEMPLATE("doctest types", T, char, int) {\n    CHECK(1);\n}\n\n'
        'TEST_CASE( "fillBitsFrom - shortening", "[rng]" ) {\n    REQUIRE( fillBitsFrom(1) == 1 );\n}\n'
    )
    chunks = chunks_of("rng.tests.cpp", text)
    assert {slug for slug, c in chunks.items() if c.defines == "test"} == {
        "distribution-never-returns-infs",
        "types-in-a-tuple",
        "doctest-types",
        "fillbitsfrom-shortening",  # had been swallowed by the first one's recovery
    }
    assert chunks["types-in-a-tuple"].body.startswith("TEMPLATE_LIST_TEST_CASE(")  # the file's own text


def test_a_doctest_test_with_decorators_is_named_by_its_title() -> None:
    text = (
        '#include <doctest/doctest.h>\n\nTEST_CASE("basic usage" * doctest::test_suite("udt"))\n{\n'
        '    CHECK(1 == 1);\n}\n\nTEST_CASE("adl serializer" * doctest::skip())\n{\n    CHECK(2 == 2);\n}\n'
    )
    chunks = chunks_of("unit-udt.cpp", text)
    assert {slug: c.defines for slug, c in chunks.items() if slug} == {
        "basic-usage": "test",
        "adl-serializer": "test",
    }


def test_a_shell_function_whose_output_is_redirected_where_it_is_defined_is_a_definition() -> None:
    source = (
        "test_tick () {\n\ttest_tick=$((test_tick + 60))\n}\n\n# Runs a command that must fail.\n"
        'test_must_fail () {\n\t"$@" 2>&7 && return 1\n\treturn 0\n} 7>&2 2>&4\n'
    )
    chunks = chunks_of("test-lib-functions.sh", source)
    assert defined(chunks) == {"test_tick": "function", "test_must_fail": "function"}  # had been a block
    assert (chunks["test_must_fail"].line_start, chunks["test_must_fail"].body.endswith("} 7>&2 2>&4")) == (
        5,
        True,
    )


def test_zsh_expansions_bash_has_not_do_not_lose_the_functions_after_them() -> None:
    source = (
        'function gccd() {\n  local repo="${${@[(r)(ssh://*|git://*)]}:-$_}"\n  cd "${${repo:t}%.git/#}"\n}\n\n'
        'function gdv() {\n  git diff -w "$@" | view -\n}\n\n'
        'function ggu() {\n  print -l ${(j:,:)remotes} "${commands[(I)git]}"\n  git pull --rebase origin "$1"\n}\n\n'
        'function gdw() { git diff --word-diff "$@" }\nfunction gdnolock() {\n  git diff "$@"\n}\n'
    )
    chunks = chunks_of("git.plugin.zsh", source)
    assert defined(chunks) == {
        "gccd": "function",
        "gdv": "function",
        "ggu": "function",
        "gdw": "function",
        "gdnolock": "function",  # after a one-line function with no `;` before its `}`
    }  # had been one block
    assert "${${@[(r)(ssh://*|git://*)]}:-$_}" in chunks["gccd"].body  # the text is the file's own


def test_bats_tests_are_tests_named_by_their_titles_beside_the_files_functions() -> None:
    source = (
        "#!/usr/bin/env bats\n\nsetup() {\n  load helper\n}\n\n"
        '@test "no arguments prints usage" {\n  run bats\n  [ $status -eq 1 ]\n}\n\n'
        "@test bats_version_lt {\n  run bats_version_lt 1.0 2.0\n}\n"
    )
    chunks = chunks_of("bats.bats", source)
    assert defined(chunks) == {
        "setup": "function",
        "no-arguments-prints-usage": "test",
        "bats_version_lt": "test",
    }  # a .bats file had been read as markdown
    assert chunks["no-arguments-prints-usage"].title == '@test "no arguments prints usage"'
    assert (chunks["bats_version_lt"].line_start, chunks["bats_version_lt"].line_end) == (12, 14)


def test_git_test_scripts_tests_are_tests_also_with_a_prerequisite_a_here_document_or_in_a_loop() -> None:
    source = (
        "test_description='branch'\n\n. ./test-lib.sh\n\n"
        "test_expect_success 'prepare a repository' '\n\tgit init repo\n'\n\n"
        "test_expect_success SYMLINKS 'follows a link' '\n\tln -s a b\n'\n\n"
        "test_expect_success 'reads a script' - <<\\EOF\n\techo hi\nEOF\n\n"
        'for mode in legacy subcommands\ndo\ntest_expect_failure "$mode: known breakage" "\n\tfalse\n"\ndone\n\n'
        "test_done\n"
    )
    chunks = chunks_of("t/t3200-branch.sh", source)
    tests = {slug: (c.line_start, c.line_end) for slug, c in chunks.items() if c.defines == "test"}
    assert tests == {
        "prepare-a-repository": (5, 7),
        "follows-a-link": (9, 11),
        "reads-a-script": (13, 15),
        "mode-known-breakage": (17, 21),  # the loop's head is the test's
    }
    assert chunks["follows-a-link"].title == "test_expect_success SYMLINKS 'follows a link' '"


def test_a_shell_loop_that_defines_nothing_stays_one_statement() -> None:
    source = 'run() {\n  true\n}\n\nfor f in *.txt\ndo\n  echo "$f"\ndone\n'
    chunks = chunks_of("s.sh", source)
    assert [(slug, c.line_start, c.line_end) for slug, c in chunks.items() if slug] == [
        ("run", 1, 3),
        ("f", 5, 8),
    ]


def test_a_modules_return_is_named_exports_and_a_rails_setting_by_the_name_it_declares() -> None:
    lua = chunks_of(
        "show.lua", "local show = {}\n\nfunction show.command(args)\n  return args.name\nend\n\nreturn show\n"
    )
    assert "exports" in lua and "show" not in lua  # `return show` had been a one-line `show`
    php = chunks_of(
        "ko.php",
        "<?php\n\nfunction ordinal($n) {\n    return $n;\n}\n\nreturn [\n    'year' => ':count year',\n];\n",
    )
    assert "exports" in php and "block" not in php
    ruby = "module Devise\n  def self.setup\n    yield self\n  end\n\n  mattr_accessor :email_regexp\n  @@email_regexp = /x/\nend\n"
    assert "Devise.email_regexp" in chunks_of("devise.rb", ruby)  # had been `Devise.mattr_accessor`


def test_an_rspec_group_whose_title_has_no_word_or_none_holds_its_tests() -> None:
    source = (
        "describe MediaType do\n  describe '.==' do\n    it 'compares type and subtype' do\n      expect(a).to eq b\n"
        "    end\n  end\n\n  context do\n    it 'rescues errors' do\n      expect(1).to eq 1\n    end\n  end\nend\n"
    )
    chunks = chunks_of("media_type_spec.rb", source)
    assert {"mediatype.describe.compares-type-and-subtype", "mediatype.context.rescues-errors"} <= set(chunks)


def test_a_python_match_statement_is_named_by_what_its_cases_define() -> None:
    source = "def f():\n    pass\n\n\nmatch command.split():\n    case [action]:\n        handler = ACTIONS[action]\n    case _:\n        handler = None\n"
    assert "handler" in chunks_of("commands.py", source)  # had been `match`, a keyword


def test_a_shell_function_defined_in_an_elif_branch_takes_its_condition() -> None:
    source = 'if [ -n "$A" ]; then\n  f() {\n    a\n  }\nelif [ -n "$B" ]; then\n  f() {\n    b\n  }\nfi\n'
    chunks = chunks_of("s.sh", source)
    assert [(slug, c.line_start, c.line_end) for slug, c in chunks.items() if slug] == [
        ("f", 1, 4),
        ("f-1", 5, 9),
    ]
    assert chunks["f-1"].body.startswith('elif [ -n "$B" ]; then')


def test_a_java_enum_constants_head_is_no_text_and_a_comment_on_its_line_stays_with_it() -> None:
    source = (
        "enum TokeniserState {\n    Data {\n        void read(Tokeniser t) {\n            t.advance();\n"
        "        }\n    },\n    Rcdata { // the RCDATA state\n        void read(Tokeniser t) {\n"
        "            t.emit();\n        }\n    };\n}\n"
    )
    chunks = chunks_of("TokeniserState.java", source)
    found = {slug: (c.line_start, c.line_end, c.body) for slug, c in chunks.items() if slug}
    assert found["TokeniserState.Data"] == (2, 2, "")  # `Data {` alone: no text, as `impl X {`
    assert found["TokeniserState.Rcdata"] == (7, 7, "    Rcdata { // the RCDATA state")
    assert found["TokeniserState.Rcdata.read"][:2] == (8, 10)  # it had started at the comment: 7-10


def test_a_rust_module_declared_without_a_body_is_no_definition() -> None:
    chunks = chunks_of("lib.rs", "mod context;\npub mod error;\n\npub fn context() -> u8 {\n    1\n}\n")
    assert [slug for slug in chunks if slug] == ["context"]  # the function; `mod context;` is a header line
    assert chunks["context"].line_start == 4


# ── doc comments, long ones, trailing ones ─────────────────────────────────────────────────────


def test_a_doc_comment_a_blank_line_above_a_php_function_stays_with_it() -> None:
    chunks = chunks_of("a.php", "<?php\n/**\n * Say hello.\n */\n\nfunction hello() {\n  return 1;\n}\n")
    assert chunks["hello"].body.startswith("/**\n * Say hello.")
    assert "block" not in chunks


def test_a_definition_whose_doc_comment_is_over_the_budget_is_found_at_its_declaration() -> None:
    doc = "\n".join(f" * Line {i} of a long description of what the class is for." for i in range(60))
    chunks = chunks_of("Big.php", f"<?php\n/**\n{doc}\n */\nclass Big\n{{\n    public $style;\n}}\n")
    assert "\nclass Big\n{" in chunks["Big"].body
    assert chunks["Big.1"].body.startswith("/**")
    assert chunks["Big.1"].line_start < chunks["Big"].line_start


def test_a_comment_on_the_line_a_statement_ends_stays_with_that_statement() -> None:
    chunks = chunks_of("a.py", "def f():\n    pass\n\nLIMIT = 3  # the most\ndef g():\n    pass\n")
    assert chunks["LIMIT"].body == "LIMIT = 3  # the most"
    assert chunks["g"].body.startswith("def g():")


# ── through the real pipeline ──────────────────────────────────────────────────────────────────


@pytest.fixture
def cpp_repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "include").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "include" / "sds.h").write_text(textwrap.dedent(C_HEADER))  # no C++ in it
    (root / "src" / "format.cc").write_text("int vformat(int x) {\n  return grow(x);\n}\n")
    (root / ".ra.toml").write_text('[tree.repo]\npath = "."\ninclude = ["**/*.h", "**/*.cc"]\n')
    return root


def ra(root: Path, home: Path, *args: str) -> Run:
    return run_cmd("ra", *args, cwd=root, home=home)


def test_a_tree_of_cpp_sources_indexes_its_headers_as_cpp_for_lang_filters(
    cpp_repo: Path, home: Path
) -> None:
    run = ra(cpp_repo, home, "search", "--json", "sdslen lang:cpp")
    assert run.code == 0, run.err
    ids = [r["id"] for q in json.loads(run.out)["queries"] for r in q["results"]]
    assert ids[0] == "repo:include/sds.h#sdslen"


def test_a_trees_header_language_c_keeps_its_headers_c(cpp_repo: Path, home: Path) -> None:
    (cpp_repo / ".ra.toml").write_text(
        '[tree.repo]\npath = "."\ninclude = ["**/*.h", "**/*.cc"]\nheader_language = "c"\n'
    )
    run = ra(cpp_repo, home, "search", "--json", "sdslen lang:c")
    assert run.code == 0, run.err
    results = [r for q in json.loads(run.out)["queries"] for r in q["results"]]
    assert results[0]["id"] == "repo:include/sds.h#sdslen"
    assert results[0]["language"] == "c"


def test_an_unknown_header_language_is_a_config_error_with_its_line(tmp_path: Path, home: Path) -> None:
    (tmp_path / ".ra.toml").write_text('root = true\n[tree.x]\npath = "."\nheader_language = "c++"\n')
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path, home)
    assert info.value.exit_code == 2
    assert ".ra.toml:4" in info.value.message
    assert 'header_language "c++" is not one of "auto", "c", "cpp"' in info.value.message


# ── the languages the docs name are the code's ─────────────────────────────────────────────────

DISPLAY = {
    "python": "Python", "javascript": "JavaScript", "typescript": "TypeScript", "go": "Go", "rust": "Rust",
    "java": "Java", "kotlin": "Kotlin", "swift": "Swift", "lua": "Lua", "scala": "Scala", "zig": "Zig", "elixir": "Elixir", "c": "C", "cpp": "C++", "csharp": "C#", "ruby": "Ruby", "php": "PHP", "bash": "shell",
    "toml": "TOML", "yaml": "YAML", "json": "JSON",
}  # fmt: skip
ROOT = Path(__file__).resolve().parent.parent


def test_every_code_language_has_a_grammar_or_a_reader_and_a_name_in_the_docs() -> None:
    from ra_build.document.grammars import DATA_GRAMMARS, GRAMMARS
    from ra_query.sources.languages import CODE_LANGUAGES

    assert set(CODE_LANGUAGES) == set(DISPLAY)
    assert set(CODE_LANGUAGES) <= {*GRAMMARS, *DATA_GRAMMARS, "yaml"}


def test_docs_code_md_lists_exactly_the_languages_ra_parses() -> None:
    text = (ROOT / "docs" / "code.md").read_text(encoding="utf-8")
    table = text.split("| language | extensions | chunks |", 1)[1].split("\n\n", 1)[0]
    rows = [line.split("|")[1].strip() for line in table.strip().splitlines()[1:]]
    assert sorted(rows) == sorted(DISPLAY.values())
    lang_filter = re.split(r"\sin\sany case", text.split("`lang:` takes", 1)[1], maxsplit=1)[0]
    named = set(re.findall(r"`([a-z+#]+)`", lang_filter))
    assert named == {*DISPLAY, "markdown", "rst", "text"}


def test_the_readme_names_exactly_the_languages_ra_parses() -> None:
    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    listed = text.split("parsed by tree-sitter for ", 1)[1].split(";", 1)[0]
    names = {n.strip() for n in re.split(r",| and ", listed) if n.strip()}
    assert names == set(DISPLAY.values())


# ── references ─────────────────────────────────────────────────────────────────────────────────


def test_a_code_chunk_holds_the_names_it_calls_or_constructs_each_once_in_order() -> None:
    chunks = chunks_of("lib/application.js", EXPRESS)
    assert chunks["View.render"].references == ("engine",)
    py = chunks_of("a.py", "def f(x):\n    store = Store(x)\n    return g(store.open(x), g(x))\n")
    assert py["f"].references == ("Store", "g", "open")


@pytest.mark.parametrize(
    ("path", "text", "name"),
    [
        ("a.c", "int f(void) {\n  return helper(1);\n}\n", "helper"),
        ("a.cc", "void f() {\n  auto b = new Buffer();\n  ns::grow(b);\n}\n", "Buffer"),
        ("a.ts", "function f(): void {\n  const k = new Ky();\n  k.create();\n}\n", "create"),
        ("a.go", "package a\n\nfunc F() {\n\tfmt.Println(1)\n}\n", "Println"),
        ("A.java", "class A {\n  void f() {\n    run();\n  }\n}\n", "run"),
        ("a.py", "def f():\n    return compute(1)\n", "compute"),
        ("a.js", "function f() {\n  return compute(1);\n}\n", "compute"),
        ("a.rb", "def f\n  compute(1)\nend\n", "compute"),
        ("a.php", "<?php\nfunction f() {\n  return compute(1);\n}\n", "compute"),
        ("A.cs", "class A {\n  void F() {\n    var b = new Buffer();\n  }\n}\n", "Buffer"),
        ("a.rs", "fn f() {\n    compute(1);\n}\n", "compute"),
    ],
)
def test_references_are_found_in_every_language_with_reference_patterns(
    path: str, text: str, name: str
) -> None:
    chunks = chunks_of(path, text)
    assert any(name in c.references for c in chunks.values()), {s: c.references for s, c in chunks.items()}


def test_the_chunk_table_has_a_references_column(cpp_repo: Path, home: Path) -> None:
    import pyarrow.parquet as pq

    run = ra(cpp_repo, home, "update")
    assert run.code == 0, run.err
    table = pq.read_table(cpp_repo / ".ra" / "chunks" / "repo", columns=["id", "references"]).to_pylist()
    assert {"id": "repo:src/format.cc#vformat", "references": ["grow"]} in table


def test_a_long_ruby_heredoc_stays_with_its_statement() -> None:
    body = "\n".join(f"<p>line {i}</p>" for i in range(80))
    chunks = chunks_of(
        "show.rb",
        f"class S\n  def a\n    1\n  end\n\n  TEMPLATE = ERB.new <<-HTML # :nodoc:\n{body}\n  HTML\nend\n",
    )
    assert chunks["S.TEMPLATE"].body.startswith("  TEMPLATE = ERB.new <<-HTML # :nodoc:\n<p>line 0</p>")
    assert not any(slug.startswith("S.p") for slug in chunks)


# ── found in review ────────────────────────────────────────────────────────────────────────────


def test_a_static_macro_line_that_defines_a_function_does_not_swallow_the_functions_after_it() -> None:
    source = (
        'static GIT_PATH_FUNC(git_path_bisect_names, "BISECT_NAMES")\n'
        'static GIT_PATH_FUNC(git_path_bisect_terms, "BISECT_TERMS")\n\n'
        'static void read_bisect_paths(struct strvec *array)\n{\n\tFILE *fp = xfopen(git_path_bisect_names(), "r");\n'
        "\tfclose(fp);\n}\n\nstatic int other(void)\n{\n\treturn 0;\n}\n\n#if defined(_MSC_VER)\n"
        '#pragma optimize("", off)\n#endif\n'
    )
    chunks = chunks_of("bisect.c", source)
    assert list(chunks) == [
        "",
        "read_bisect_paths",
        "other",
        "_MSC_VER",
    ]  # had been `GIT_PATH_FUNC`, `defined`
    assert chunks["read_bisect_paths"].title == "static void read_bisect_paths(struct strvec *array)"


def test_a_c_struct_keeps_its_name_when_a_typedef_of_the_same_name_comes_first() -> None:
    source = "typedef struct connection connection;\n\nstruct connection {\n  int fd;\n};\n\ntypedef struct foo foo_t;\n"
    chunks = chunks_of("connection.h", source)
    assert chunks["connection"].defines == "struct"  # had been `connection-1`, the typedef `connection`
    assert chunks["foo_t"].defines == "type"  # an alias of another name is a type of its own
    opaque = chunks_of("ssl.h", "typedef struct redisSSLContext redisSSLContext;\n\nint f(void);\n")
    assert (
        opaque["redisSSLContext"].defines == "type"
    )  # defined in another file: the typedef is what there is


def test_a_macro_in_a_define_or_a_return_type_is_not_blanked() -> None:
    chunks = chunks_of("a.c", "#define BUF_SIZE sizeof(struct s)\nSIZE_T get_size(void) {\n  return 1;\n}\n")
    assert chunks["get_size"].title == "SIZE_T get_size(void)"
    assert "sizeof" not in chunks


def test_a_type_macro_before_a_calling_convention_macro_stays_the_functions_type() -> None:
    text = "static CURL_THREAD_RETURN_T CURL_STDCALL thrdslot_run(void *arg)\n{\n  return 0;\n}\n"
    chunks = chunks_of("thrdpool.c", text)
    assert chunks["thrdslot_run"].title == "static CURL_THREAD_RETURN_T CURL_STDCALL thrdslot_run(void *arg)"


def test_the_head_of_an_anonymous_namespace_is_in_the_chunk_after_it() -> None:
    chunks = chunks_of("os.cc", "int g() { return 0; }\n\nnamespace {\nint f() { return 1; }\n}\n")
    assert chunks["f"].body.startswith("namespace {\nint f()")


def test_references_hold_calls_not_every_identifier() -> None:
    assert chunks_of("a.rb", "def f(a)\n  local = a\n  helper(local)\nend\n")["f"].references == ("helper",)
    cs = chunks_of(
        "A.cs", "class A {\n  void F() {\n    Helper();\n    b.Run();\n    var x = new Buffer();\n  }\n}\n"
    )
    assert cs["A.F"].references == ("Helper", "Run", "Buffer")
    rs = chunks_of("a.rs", "fn f() {\n    let v = Vec::new();\n    Foo::bar();\n}\n")
    assert rs["f"].references == ("new", "bar")
    php = chunks_of("a.php", "<?php\nfunction f() {\n  $x = new Foo();\n  return compute(1);\n}\n")
    assert php["f"].references == ("Foo", "compute")


def test_rspec_describe_and_titles_in_any_script_are_test_blocks() -> None:
    chunks = chunks_of(
        "user_spec.rb", 'RSpec.describe User do\n  it "crée un élément" do\n    1\n  end\nend\n'
    )
    assert "user.crée-un-élément" in chunks
    js = chunks_of(
        "t.js", "describe('Пользователь', () => {\n  it('returns {} for empty input', () => {});\n});\n"
    )
    assert js["пользователь.returns-for-empty-input"].title == "it('returns {} for empty input', () =>"


def test_qunit_tests_are_tests_and_its_modules_with_a_callback_group_them() -> None:
    source = (
        "QUnit.module('Events');\n\nQUnit.test('on and trigger', function(assert) {\n  assert.expect(2);\n});\n\n"
        "QUnit.module('Model', function(hooks) {\n  QUnit.test('initialize', function(assert) {\n"
        "    assert.ok(1);\n  });\n});\n"
    )
    chunks = chunks_of("events.js", source)
    assert {slug: c.defines for slug, c in chunks.items() if slug} == {
        "on-and-trigger": "test",
        "model": "test",
        "model.initialize": "test",
    }  # had been blocks


def test_a_module_wrapper_that_defines_functions_by_assignment_holds_them() -> None:
    iife = "(function() {\n  var map = function(obj) {\n    return obj;\n  };\n\n  _.each = function(obj) {\n    return obj;\n  };\n})();\n"
    assert {"map", "_.each"} <= set(chunks_of("underscore.js", iife))  # had been the file's node alone
    umd = (
        "(function(factory) {\n  var root = this;\n  root.Backbone = factory(root, {});\n})(function(root, Backbone) {\n"
        "  var Events = Backbone.Events = {};\n\n  Events.on = function(name, callback) {\n    return this;\n  };\n\n"
        "  return Backbone;\n});\n"
    )
    assert chunks_of("backbone.js", umd)["Events.on"].defines == "function"


def test_a_chained_commonjs_assignment_is_a_definition() -> None:
    chunks = chunks_of("app.js", "exports = module.exports = function createApp() {\n  return 1;\n};\n")
    assert "createApp" in chunks
    assert "a.b" in chunks_of("x.js", "a.b = c.d = function () {\n  return 2;\n};\n")


def test_a_license_comment_does_not_join_the_first_definition() -> None:
    text = "/**\n * @license MIT\n * Copyright 2024\n */\n\nexport function first() {\n  return 1;\n}\n"
    assert chunks_of("a.ts", text)["first"].body.startswith("export function first()")


def test_deeply_nested_preprocessor_blocks_do_not_exhaust_the_stack() -> None:
    text = "".join(f"#ifdef A{i}\n" for i in range(1200)) + "int f(void) { return 0; }\n" + "#endif\n" * 1200
    assert chunks_of("deep.c", text)


def test_inspect_doc_parses_a_header_as_its_trees_build_does(cpp_repo: Path, home: Path) -> None:
    assert ra(cpp_repo, home, "update").code == 0
    run = ra(cpp_repo, home, "inspect", "doc", "include/sds.h")
    assert run.code == 0, run.err
    assert "code (cpp)" in run.out


def test_an_attribute_macro_before_a_constructor_or_destructor_is_blanked() -> None:
    text = (
        "class basic_memory_buffer {\n public:\n  FMT_CONSTEXPR20 basic_memory_buffer(int n) {}\n"
        "  FMT_CONSTEXPR20 ~basic_memory_buffer() { deallocate(); }\n  void resize(int count) {}\n};\n"
    )
    chunks = chunks_of("format.h", text, header_language="cpp")
    assert "basic_memory_buffer.resize" in chunks
    assert chunks["basic_memory_buffer.basic_memory_buffer"].body.startswith(
        " public:\n  FMT_CONSTEXPR20 basic_m"
    )


def test_an_annotation_macro_after_a_method_is_no_name_and_the_method_after_it_keeps_its_own() -> None:
    text = (
        "class DBImpl {\n private:\n  Status Recover(VersionEdit* edit)\n      EXCLUSIVE_LOCKS_REQUIRED(mutex_);\n"
        "  void MaybeSchedule() EXCLUSIVE_LOCKS_REQUIRED(mutex_);\n"
        "  void Compact() const ABSL_LOCKS_EXCLUDED(mu_) {\n    mem_ = nullptr;\n  }\n"
        "  int count_ GUARDED_BY(mutex_);\n};\n"
    )
    chunks = chunks_of("db_impl.h", text, header_language="cpp")
    assert "DBImpl.Compact" in chunks
    assert chunks["DBImpl.Compact"].title == "void Compact() const ABSL_LOCKS_EXCLUDED(mu_)"
    assert not [slug for slug in chunks if "LOCKS" in slug]
    assert chunks["DBImpl.count_"].members == ("DBImpl.count_",)  # a field annotated `GUARDED_BY(mutex_)`


def test_a_macro_between_class_and_its_name_leaves_the_class_its_members() -> None:
    text = "class ABSL_SCOPED_LOCKABLE MutexLock {\n public:\n  void Release() { mu_ = nullptr; }\n};\n"
    assert "MutexLock.Release" in chunks_of("mutex.h", text, header_language="cpp")


def test_a_macro_that_stands_for_an_access_label_leaves_the_class_its_members() -> None:
    text = (
        "class iter_impl\n{\n  public:\n    iter_impl() = default;\n\n  JSON_PRIVATE_UNLESS_TESTED:\n"
        "    /*\n    set the iterator to the first value\n    */\n    void set_begin() noexcept\n    {\n"
        "        m_it = 0;\n    }\n\n  public:\n    bool valid() const\n    {\n        return true;\n    }\n};\n"
    )
    chunks = chunks_of("iter_impl.hpp", text)
    assert {"iter_impl.set_begin", "iter_impl.valid"} <= set(chunks)  # the class had ended at the label


def test_a_cpp_class_nested_in_a_class_is_a_definition_holding_its_methods() -> None:
    text = (
        "class Registry\n{\n  public:\n    void add(int id) { ids.push_back(id); }\n\n    class Iterator\n"
        "    {\n      public:\n        bool next() { return ++pos < end; }\n    };\n\n"
        "    int size() const { return n; }\n};\n"
    )
    chunks = chunks_of("registry.hpp", text)
    assert chunks["Registry.Iterator"].defines == "class"  # had been a block
    assert {"Registry.Iterator.next", "Registry.size"} <= set(chunks)


def test_a_cpp_conversion_operator_is_a_method_named_by_its_type_and_a_spaceship_keeps_its_operator() -> None:
    text = (
        "class AssertionResult\n{\n  public:\n    bool failed() const { return !success_; }\n\n"
        "    operator bool() const { return success_; }\n\n"
        "    explicit operator Matcher<T>() const\n    {\n        return m_;\n    }\n\n"
        "    auto operator<=>(const AssertionResult& rhs) const = default;\n};\n"
    )
    chunks = chunks_of("assertion_result.hpp", text)
    assert chunks["AssertionResult.operator-bool"].defines == "method"  # had been a block `operator-1`
    assert chunks["AssertionResult.operator-Matcher"].title == "explicit operator Matcher<T>() const"
    assert "AssertionResult.operator<=>" in chunks  # had been `operator`


def test_a_macro_that_closes_a_namespace_alone_after_a_blank_line_is_in_no_chunk() -> None:
    text = (
        "namespace absl {\nABSL_NAMESPACE_BEGIN\n\nint f() { return 1; }\n\n"
        "ABSL_NAMESPACE_END\n}  // namespace absl\n\n#endif  // A_H_\n"
    )
    assert sorted(chunks_of("a.h", text, header_language="cpp")) == ["", "absl", "absl.f"]
    # the same after a syntax error, where what the partial parse left outside becomes blocks
    broken = "#ifndef A_H_\n" + text.replace(
        "int f() { return 1; }", "int f() {\n#if X\n  return 1;\n}\n#else\n  return 2;\n}\n#endif\n"
    )
    assert "block" not in chunks_of("b.h", broken, header_language="cpp")


def test_a_statement_that_calls_or_returns_a_macro_is_left_as_it_is() -> None:
    from ra_build.document.code import _masked

    text = b"int f(int x) {\n  if (x) RETURN_IF_ERROR(Check(x));\n  ABSL_ASSERT_LOCK_HELD(mu);\n  return FOO_RESULT;\n}\n"
    assert _masked(text) == text


def test_a_javascript_test_with_a_timeout_a_joined_title_or_a_wrapped_function_is_a_test() -> None:
    text = (
        'test("drops unused", async () => {\n  expect(1).toBe(1);\n}, 30000);\n\n'
        'test("drops symbols", async () => {\n  expect(2).toBe(2);\n}, { timeout: 5 });\n\n'
        "describe(\n  '.toBeGreaterThan(), ' +\n    '.toBeLessThan()',\n  () => {\n"
        "    it('compares', () => {\n      expect(2).toBe(2);\n    });\n  },\n);\n\n"
        "it('removes keys', withEffectRoot(() => {\n  expect(3).toBe(3);\n}));\n"
    )
    chunks = chunks_of("a.test.ts", text)
    assert {"drops-unused", "drops-symbols", "removes-keys"} <= set(chunks)
    assert chunks["tobegreaterthan-.tobelessthan.compares"].defines == "test"


def test_a_block_is_not_named_by_typeof_void_or_as() -> None:
    text = "function f() {\n  return 1\n}\n\nif (typeof window !== 'undefined') f()\n"
    assert "window" in chunks_of("a.js", text)
    assert "main" in chunks_of("b.js", "function f() {\n  return 1\n}\n\nvoid main()\n")


def test_the_satisfies_after_an_object_of_functions_ends_its_last_block() -> None:
    text = 'export const handlers = {\n  onClick() {\n    return 1;\n  },\n  label: "save",\n} satisfies Handlers;\n'
    chunks = chunks_of("h.ts", text)
    assert sorted(chunks) == ["", "handlers", "handlers.label", "handlers.onClick"]
    assert chunks["handlers.label"].body.endswith("} satisfies Handlers;")


def test_a_class_assigned_or_exported_as_a_value_holds_its_methods() -> None:
    text = "module.exports = class Router {\n  handle(req) {\n    return req\n  }\n\n  route(p) {\n    return p\n  }\n}\n"
    chunks = chunks_of("router.js", text)
    assert chunks["Router"].defines == "class"
    assert {"Router.handle", "Router.route"} <= set(chunks)
    store = chunks_of(
        "store.ts", "export const Store = class extends Base {\n  get(key: string) {\n    return 1;\n  }\n}\n"
    )
    assert "Store.get" in store


def test_a_function_in_two_wrapping_calls_or_a_wrapped_default_export_is_a_definition() -> None:
    text = (
        "export const Row = memo(forwardRef((props, ref) => {\n  return <li ref={ref} />\n}))\n\n"
        "export const Cell = React.memo(React.forwardRef(function Cell(props, ref) {\n  return <td />\n}))\n\n"
        "const FIELDS = Object.freeze(ALL.filter((f) => f.on))\n"
    )
    chunks = chunks_of("row.tsx", text)
    assert chunks["Row"].defines == chunks["Cell"].defines == "function"
    assert chunks["FIELDS"].defines == "block"  # a value computed with a callback
    card = chunks_of(
        "card.tsx",
        'import { memo } from "react"\n\nexport default memo(function Card(props) {\n  return 1\n})\n',
    )
    assert card["Card"].defines == "function"
    route = chunks_of(
        "route.ts", "export default defineEventHandler(async (event) => {\n  return { ok: true }\n})\n"
    )
    assert route["default"].defines == "function"


def test_a_python_if_or_try_block_is_named_by_what_it_defines_not_by_its_condition() -> None:
    text = (
        "def a():\n    return 1\n\n\nif not MYPY:\n    CoreSchema = Union[A, B]\nelse:\n    CoreSchema = dict\n\n\n"
        "def b():\n    return 2\n\n\nif sys.version_info >= (3, 13):\n    from warnings import deprecated\n"
        "else:\n    deprecated = _deprecated\n\n\ndef c():\n    return 3\n\n\n"
        "if TYPE_CHECKING:\n    from x import Y\n\n\ndef d():\n    return 4\n\n\n"
        'if __name__ == "__main__":\n    main()\n'
    )
    chunks = chunks_of("schema.py", text)
    assert {"CoreSchema", "deprecated", "TYPE_CHECKING", "__name__"} <= set(chunks)
    assert not {"not", "sys"} & set(chunks)


def test_a_decorator_longer_than_the_budget_is_a_part_before_the_function_it_decorates() -> None:
    cases = "".join(f'        ("http://172.16.1.{i}:5000/", True),\n' for i in range(30))
    text = (
        f'@pytest.mark.parametrize(\n    "url, expected",\n    (\n{cases}    ),\n)\n'
        "def test_should_bypass_proxies(url, expected):\n    assert should_bypass(url) == expected\n"
    )
    chunks = chunks_of("test_utils.py", text)
    assert "def test_should_bypass_proxies(url, expected):" in chunks["test_should_bypass_proxies"].body
    assert chunks["test_should_bypass_proxies.1"].body.startswith("@pytest.mark.parametrize(")


def test_a_go_embedded_field_from_another_package_and_a_grouped_types_fields_are_members() -> None:
    text = (
        "package p\n\ntype Server struct {\n\t*http.Server\n\tsync.Mutex\n\tStore\n}\n\n"
        "type (\n\t// Conn connects.\n\tConn struct {\n\t\tAddr string\n\t}\n\n"
        "\tOption interface {\n\t\tapply(*Conn)\n\t}\n)\n"
    )
    chunks = chunks_of("server.go", text)
    assert chunks["Server"].members == ("Server.Server", "Server.Mutex", "Server.Store")
    assert chunks["Conn"].members == ("Conn.Addr",)
    assert chunks["Option"].members == ("Option.apply",)


def test_a_rust_macro_invocation_is_named_by_the_item_it_declares_not_an_attribute_inside_it() -> None:
    text = (
        "fn helper() {}\n\npin_project! {\n    /// A counted connection.\n    #[derive(Debug)]\n"
        "    pub struct ConnIo<T> {\n        #[pin]\n        io: T,\n    }\n}\n\n\n\n"
        + "\n".join(f"const C{k}: u8 = {k};" for k in range(60))
        + "\n\n\nfn other() {}\n\nlazy_static! {\n    static ref USAGE: String = build_usage();\n}\n\n"
        + "\n".join(f"const D{k}: u8 = {k};" for k in range(60))
        + '\n\n\nfn third() {}\n\ntest!(param_2, "/a", "/b");\n'
    )
    chunks = chunks_of("io.rs", text)
    assert {"ConnIo", "USAGE", "param_2"} <= set(chunks)
    assert "derive" not in chunks


def test_rust_items_a_macro_wraps_are_definitions_in_a_file_and_in_an_impl() -> None:
    text = (
        "cfg_rt! {\n    pub fn spawn(f: u32) -> u32 {\n        spawn_inner(f)\n    }\n\n"
        "    fn spawn_inner(f: u32) -> u32 {\n        f\n    }\n}\n\n"
        "pub struct TcpListener {\n    io: u32,\n}\n\nimpl TcpListener {\n    cfg_net! {\n"
        "        /// Binds.\n        pub async fn bind(addr: &str) -> TcpListener {\n"
        "            TcpListener { io: 0 }\n        }\n    }\n\n"
        "    pub fn accept(&self) -> u32 {\n        self.io\n    }\n}\n\n"
        "cfg_io_util! {\n    pub trait AsyncReadExt {\n        fn read(&mut self) -> usize {\n"
        "            0\n        }\n    }\n}\n"
    )
    chunks = chunks_of("spawn.rs", text)
    assert {"spawn", "spawn_inner", "TcpListener.bind", "TcpListener.accept", "AsyncReadExt.read"} <= set(
        chunks
    )
    assert chunks["TcpListener.bind"].body.startswith(
        "    cfg_net! {\n        /// Binds."
    )  # the file's own text
    assert chunks["spawn"].title == "pub fn spawn(f: u32) -> u32"


def test_a_rust_macro_that_wraps_a_macro_definition_is_that_macro_and_one_that_is_no_rust_stays_a_block() -> (
    None
):
    text = (
        "fn helper() {}\n\n#[cfg(doc)]\ndoc! {macro_rules! select {\n    ($($t:tt)*) => { unimplemented!() }\n}}\n\n"
        "fn other() {}\n\nbitflags! {\n    pub struct Flags: u32 {\n        const A = 1;\n    }\n}\n"
    )
    chunks = chunks_of("select.rs", text)
    assert "select" in chunks and "macro_rules" not in chunks  # had been a block named by the keyword
    assert (chunks["Flags"].defines, chunks["Flags"].line_start, chunks["Flags"].line_end) == (
        "block",
        10,
        14,
    )


def test_a_rust_use_is_named_by_what_it_brings_into_scope_not_its_paths_first_word() -> None:
    text = (
        "mod support {\n    pub mod signal;\n}\nuse support::signal::send_signal;\n\nfn main() {}\n\n"
        "pub(super) use imp::*;\nuse self::error::{RecvError, SendError};\n\nfn other() {}\n\n"
        "use std::io::Result as IoResult;\n"
    )
    chunks = chunks_of("signal.rs", text)
    assert [slug for slug, c in chunks.items() if c.defines == "block"] == [
        "send_signal",
        "RecvError",
        "IoResult",
    ]


def test_a_commonjs_export_of_a_class_or_its_static_property_is_no_second_definition_of_it() -> None:
    text = (
        "class Config {\n  get() {\n    return 1;\n  }\n}\n\nConfig.DEFAULT_STAGE = -2000;\n\n"
        "function helper() {}\n\nexports.Config = Config;\n\nfunction other() {}\n\nmodule.exports = { Config };\n"
    )
    blocks = [slug for slug, c in chunks_of("config.js", text).items() if c.defines == "block"]
    assert blocks == ["Config.DEFAULT_STAGE", "exports", "exports-1"]  # had been `Config-1`, `Config-2`, …


def test_typescript_call_signatures_without_semicolons_do_not_end_their_interface() -> None:
    text = (
        "export interface Get<E> {\n  <P>(handler: H<P>): Base<E>\n\n  <\n    P extends string = CurrentPath,\n"
        "    R = any,\n  >(\n    ...handlers: [H<P>, H<R>]\n  ): HonoBase<S, CurrentPath>\n}\n\n"
        "export type Schema = { path: string }\n\ninterface After {\n  x: number\n}\n"
    )
    chunks = chunks_of("types.ts", text)
    assert {slug: (c.line_start, c.line_end) for slug, c in chunks.items() if slug} == {
        "Get": (1, 10),
        "Schema": (12, 12),
        "After": (14, 16),
    }  # the interface had ended at its second signature, the rest blocks named `P`
    assert chunks["Get"].body.endswith("): HonoBase<S, CurrentPath>\n}")  # the file's own text


def test_a_typescript_ambient_export_and_a_default_object_are_named_by_what_they_declare() -> None:
    text = 'export function a() {}\n\nexport declare const VERSION: string;\n\nfunction b() {}\n\nexport default { a, version: "1.0" }\n'
    blocks = [slug for slug, c in chunks_of("index.ts", text).items() if c.defines == "block"]
    assert blocks == ["VERSION", "default"]  # had been `declare` and a second `a-1`


def test_rust_blocks_are_named_by_what_they_declare_one_item_macro_each() -> None:
    text = (
        "fn before() {}\n\nffi_fn! {\n    /// Copies a buffer.\n    fn buf_copy(len: usize) -> *mut Buf {\n"
        "        Box::into_raw(Box::new(Buf::copy(len)))\n    } ?= ptr::null_mut()\n}\n\n"
        "ffi_fn! {\n    fn buf_bytes(buf: *const Buf) -> *const u8 {\n        unsafe { (*buf).0.as_ptr() }\n"
        "    } ?= ptr::null()\n}\n\nfn middle() {}\n\n"
        'extern "C" {\n    /// Absolute value.\n    fn abs(x: i32) -> i32;\n}\n\nfn after() {}\n\n'
        "pub mod config;\nmod printer;\n\npub use config::Config;\n\nfn last() {}\n\n"
        '#[cfg_attr(\n    feature = "serde",\n    derive(Serialize)\n)]\nstatic LIMIT: usize = 10;\n'
    )
    chunks = chunks_of("lib.rs", text)
    blocks = {slug: c.title for slug, c in chunks.items() if c.defines == "block"}
    assert blocks == {
        "buf_copy": "ffi_fn! {",
        "buf_bytes": "ffi_fn! {",  # had been in `buf_copy`'s block
        "abs": 'extern "C" {',  # had been `C`
        "Config": "pub mod config;",  # had been `config`, which `config.rs` defines
        "LIMIT": "static LIMIT: usize = 10;",  # had been titled `feature = "serde",`
    }


def test_a_java_block_after_a_multi_line_annotation_is_titled_by_its_code() -> None:
    text = (
        'class Ann {\n    void first() {}\n\n    @SuppressWarnings({\n        "unchecked",\n        "rawtypes"\n'
        "    })\n    private static final Map CACHE = new HashMap();\n}\n"
    )
    assert chunks_of("Ann.java", text)["Ann.CACHE"].title == "private static final Map CACHE = new HashMap();"


def test_a_javascript_statement_that_exports_names_defined_above_is_named_exports_or_default() -> None:
    text = "function indent(c) {\n  return c;\n}\n\nfunction dedent(c) {\n  return c;\n}\n\nexport { dedent, indent };\n"
    assert sorted(chunks_of("indent.js", text)) == ["", "dedent", "exports", "indent"]
    cjs = chunks_of("throttle.cjs", "function throttle(fn) {\n  return fn\n}\n\nmodule.exports = throttle;\n")
    assert sorted(cjs) == ["", "exports", "throttle"]
    ts = chunks_of("router.ts", "class Router {\n  a() {}\n}\n\nexport default Router;\n")
    assert ts["default"].body == "export default Router;"


def test_an_initializer_block_is_named_static_init_or_init_not_by_a_call_inside_it() -> None:
    java = 'class Names {\n    static String get(String k) { return k; }\n\n    static {\n        MAP.put("a", "b");\n    }\n}\n'
    assert "Names.static-init" in chunks_of("Names.java", java)
    kotlin = "class Store(val root: String) {\n    fun open() = root\n\n    init {\n        require(root.isNotEmpty())\n    }\n}\n"
    assert "Store.init" in chunks_of("Store.kt", kotlin)


def test_a_python_definition_in_an_if_inside_another_branch_is_a_definition() -> None:
    text = (
        "import sys\n\nif sys.version_info >= (3, 13):\n    from warnings import deprecated\nelse:\n"
        "    if TYPE_CHECKING:\n        from typing_extensions import deprecated\n    else:\n"
        "        def deprecated(msg):\n            return msg\n\n\nclass OrderedDict(dict):\n"
        '    if not hasattr(dict, "move_to_end"):\n        if ORDERED:\n            def move_to_end(self, key):\n'
        "                self[key] = self.pop(key)\n"
    )
    chunks = chunks_of("compat.py", text)
    assert chunks["deprecated"].defines == "function"
    assert chunks["OrderedDict.move_to_end"].defines == "method"


def test_a_kotlin_extension_property_is_a_definition_of_the_type_it_extends_and_a_property_a_member() -> None:
    text = (
        "interface Scope {\n    val context: Context\n}\n\n/** Whether the job is active. */\n"
        "public val Scope.isActive: Boolean\n    get() = context.job?.isActive ?: true\n\n"
        "public fun Scope.cancel() {\n    context.job?.cancel()\n}\n\nval plain = 3\n"
    )
    chunks = chunks_of("Scope.kt", text)
    assert chunks["Scope.isActive"].defines == "property"
    assert chunks["Scope.isActive"].parent_id == chunks["Scope"].id
    assert chunks["Scope"].members == ("Scope.context",)
    assert chunks["plain"].defines == "block"


def test_a_kotlin_property_whose_value_is_an_object_of_functions_holds_them_as_methods() -> None:
    text = (
        "public fun identity(): Encoder = Identity\n\n/** Deflate encoder. */\n"
        "public val Deflate: Encoder = object : Encoder {\n"
        "    override fun encode(source: Channel): Channel =\n        source.deflated(gzip = false)\n}\n\n"
        'class Client {\n    private val name = "x"\n    private val listener = object : Listener {\n'
        "        override fun onEvent(e: Event) {\n            handle(e)\n        }\n    }\n}\n"
    )
    chunks = chunks_of("Encoders.kt", text)
    assert chunks["Deflate.encode"].defines == "method"  # had been a block
    assert chunks["Deflate"].body.startswith("/** Deflate encoder. */")
    assert "Client.listener.onEvent" in chunks and "Client.name" not in chunks  # a plain property is a member


def test_a_kotlin_extension_of_a_nullable_type_is_a_definition_of_that_type() -> None:
    text = (
        "fun first() = 1\n\nprivate val String?.size: Int\n    get() = this?.length ?: 0\n\n"
        'fun String?.orEmpty2(): String = this ?: ""\n'
    )
    chunks = chunks_of("Strings.kt", text)
    assert chunks["String.size"].defines == "property"  # had been folded into the file's node
    assert chunks["String.orEmpty2"].title == "fun String?.orEmpty2(): String"  # had been `orEmpty2`


def test_a_title_leaves_out_annotations_too_long_to_leave_room_for_the_name_and_keeps_a_short_one() -> None:
    text = (
        "public class Events {\n"
        '    @JsonPropertyOrder({"id", "name"}) // stable field order\n'
        '    record Named(String name) {\n        public String id() { return "ID:" + name; }\n    }\n\n'
        '    @JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.PROPERTY, property = "source")\n'
        "    @JsonSubTypes({\n"
        '            @JsonSubTypes.Type(value = BackendEvent.class, name = "BACKEND"),\n'
        '            @JsonSubTypes.Type(value = FrontendEvent.class, name = "FRONTEND")\n'
        "    })\n    static abstract class EnvironmentEvent {\n        private String environmentName;\n    }\n\n"
        '    @Override\n    public String toString() { return "Events"; }\n}\n'
    )
    chunks = chunks_of("Events.java", text)
    assert chunks["Events.EnvironmentEvent"].title == "static abstract class EnvironmentEvent"
    assert chunks["Events.Named"].title == '@JsonPropertyOrder({"id", "name"}) record Named(String name)'
    assert chunks["Events.toString"].title == "@Override public String toString()"


def test_a_short_section_comment_alone_between_definitions_heads_the_one_below_it() -> None:
    python = chunks_of(
        "hooks.py", "def a():\n    pass\n\n\n# Hooks\n\n\ndef pytest_addoption(parser):\n    pass\n"
    )
    assert [slug for slug in python if slug] == [
        "a",
        "pytest_addoption",
    ]  # `# Hooks` had been a chunk of its own
    assert python["pytest_addoption"].body.startswith("# Hooks")
    go = chunks_of(
        "assertions.go",
        "package p\n\nfunc A() {}\n\n/*\n\tErrors\n*/\n\n// NoError asserts.\nfunc NoError() {}\n",
    )
    assert go["NoError"].body.startswith("/*\n\tErrors\n*/")
    first = chunks_of("top.py", "# A module comment\n\n\ndef a():\n    pass\n")
    assert first["a"].body.startswith("def a()")  # before the first definition: the file's


def test_a_banner_comment_opens_the_definition_after_it_and_a_coding_line_stays_in_the_header() -> None:
    text = (
        "def read_list():\n    return None\n\n\n# =====================================\n# Alias\n\n\n"
        "def read_list_alias():\n    return None\n\n\n# ~~~~~~~~~~~~~~ FLOAT TYPES ~~~~~~~~~~~~~~\n\n\n"
        "def float_type():\n    return None\n"
    )
    chunks = chunks_of("banner.py", text)
    assert sorted(chunks) == ["", "float_type", "read_list", "read_list_alias"]
    assert chunks["read_list_alias"].body.startswith("# =====")
    ts = chunks_of(
        "client.ts",
        "// CLASS\n\nexport class QueryClient {\n  mount(): void {}\n}\n\n// === Primitives ===\n\nexport function string() {\n  return 1\n}\n",
    )
    assert "comment" not in ts and ts["string"].body.startswith("// === Primitives ===")
    coding = chunks_of(
        "coding.py", "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n\ndef f():\n    return 1\n"
    )
    assert coding["f"].body.startswith("def f()")


def test_a_kotlin_class_whose_annotated_constructor_is_on_the_next_line_keeps_its_members() -> None:
    text = (
        "class Result<out T>\n@PublishedApi internal constructor(val holder: Any?) {\n"
        "    fun isSuccess(): Boolean = holder != null\n}\n\ninterface Channel<E> {\n    fun close(): Boolean\n}\n"
    )
    chunks = chunks_of("Result.kt", text)
    assert {"Result", "Result.isSuccess", "Channel", "Channel.close"} <= set(chunks)
    assert chunks["Result"].body.startswith("class Result<out T>\n@PublishedApi internal constructor(")


def test_a_csharp_member_whose_body_an_if_directive_chooses_stays_in_its_type() -> None:
    text = (
        "public interface ILog\n{\n    ILog ForContext(Type source)\n#if FEATURE_DEFAULT_INTERFACE\n    {\n"
        "        return this;\n    }\n#else\n        ;\n#endif\n\n    void Write(string template)\n"
        "#if FEATURE_DEFAULT_INTERFACE\n    {\n        Emit(template);\n    }\n#else\n        ;\n#endif\n\n"
        "    void Verbose(string template)\n#if FEATURE_DEFAULT_INTERFACE\n        => Write(template)\n#endif\n    ;\n}\n"
    )
    chunks = chunks_of("ILog.cs", text)
    assert sorted(chunks) == ["", "ILog", "ILog.ForContext", "ILog.Verbose", "ILog.Write"]
    assert chunks["ILog.Write"].title == "void Write(string template)"  # no directive in a title


def test_a_csharp_if_directive_inside_an_else_chain_leaves_the_methods_after_it_in_their_class() -> None:
    text = "class Reader\n{\n    void Parse(int t)\n    {\n        switch (t)\n        {\n            default:\n                if (t == 1)\n                {\n                }\n#if NET\n                else if (t == 2)\n                {\n                }\n#endif\n                else\n                {\n                    k = t;\n                }\n                if (k == 1)\n                {\n                    {\n                    }\n                }\n#if NET\n                else\n                {\n                }\n#endif\n                break;\n        }\n    }\n\n    void Other()\n    {\n    }\n}\n"
    assert "Reader.Other" in chunks_of("Reader.cs", text)


def test_a_python_module_docstring_too_long_for_the_files_node_is_named_doc() -> None:
    notes = "".join(f"Usage note {i}: call try_argcomplete(parser) before parse_args().\n" for i in range(70))
    text = f'"""Allow bash-completion for argparse.\n\nNeeds argcomplete.\n{notes}"""\n\nimport os\n\n\ndef f():\n    return 1\n'
    chunks = chunks_of("_argcomplete.py", text)
    assert "__doc__" in chunks and "Needs" not in chunks
    assert (
        chunks["__doc__"].title == "Allow bash-completion for argparse."
    )  # tornado's had been its second line


def test_a_part_that_begins_with_a_docstring_is_titled_by_its_first_line() -> None:
    fields = "".join(f'    state_{k} = "{"x" * 48}"\n' for k in range(12))
    notes = "".join(f"    Note {k} on how the states are read and lower-cased first.\n" for k in range(12))
    text = (
        f'class BoolParamType(ParamType):\n    name = "boolean"\n{fields}'
        f'    """A mapping of string values to boolean states.\n\n{notes}    """\n\n'
        "    def convert(self, value):\n        return value\n"
    )
    chunks = chunks_of("types.py", text)
    part = next(c for c in chunks.values() if c.body.lstrip().startswith('"""A mapping'))
    assert part.title.endswith(": A mapping of string values to boolean states.)")  # click's: "(part 2)"


def test_a_string_statement_above_python_code_does_not_title_its_block() -> None:
    text = (
        "def setup():\n    pass\n\n\n''' The files used by the following test were taken from werkzeug\n"
        "    and are therefore partly copyrighted by the Werkzeug Team. '''\n\nb64d = base64.b64decode\n"
    )
    block = chunks_of("test_multipart.py", text)["b64d"]
    assert block.title == "b64d = base64.b64decode"  # bottle's had been the string's second line


@pytest.mark.parametrize(
    "source",
    [
        # a route after a `val`, read as the property's getter (ktor)
        "class ServerTest {\n    fun testHello() = testApplication {\n        routing {\n"
        '            val model = mapOf("id" to 1)\n            get("/") {\n                call.respond(model)\n'
        "            }\n        }\n    }\n\n    fun testOther() {\n        check(true)\n    }\n}\n",
        # an infix call named `get` (Exposed)
        "class ServerTest {\n    fun testHello() {\n        val id = cities.insert {\n"
        '            it[name] = "Belgrade"\n        } get cities.id\n    }\n\n    fun testOther() {\n        check(true)\n    }\n}\n',
        # Kotlin 2: a `when` guard, a multi-dollar string, context parameters
        "class ServerTest {\n    fun testHello(x: Any): String = when (x) {\n"
        '        is String if x.isEmpty() -> "empty"\n        else -> "other"\n    }\n\n'
        '    fun testOther() {\n        val p = $$"$.user"\n    }\n}\n',
        "class ServerTest {\n    context(scope: CoroutineScope)\n    fun testHello() {\n        scope.launch { }\n    }\n\n"
        "    fun testOther() {}\n}\n",
    ],
)
def test_kotlin_that_tree_sitter_kotlin_cannot_read_does_not_lose_the_files_definitions(source: str) -> None:
    chunks = chunks_of("ServerTest.kt", "package demo\n\n" + source)
    assert {"ServerTest.testHello", "ServerTest.testOther"} <= set(chunks)  # the file had been one block
    assert source.split("\n")[1].strip() in chunks["ServerTest.testHello"].body  # the text is the file's own


def test_kotlin_multi_line_annotations_actual_constructors_and_context_function_types_keep_definitions() -> (
    None
):
    text = (
        "package a\n\nfun f() = 1\n\n@Target(\n    AnnotationTarget.CLASS,\n)\nannotation class KoinInternalApi\n\n"
        'class T {\n    @Deprecated("Use koinModules() to declare your Koin modules instead of this old entry point")\n'
        "    fun b() = 2\n}\n\nfun run(block: context(Logger) () -> Unit) = block(Logger())\n\n"
        "actual abstract class Message\nprotected actual constructor(val adapter: String) {\n  actual fun encode() = 1\n}\n"
    )
    chunks = chunks_of("Api.kt", text)
    assert chunks["KoinInternalApi"].defines == "class"  # had been a block named `annotation`
    assert chunks["T.b"].title == "fun b()"  # had been the annotation
    assert {"run", "Message.encode"} <= set(chunks)  # the file had been one block / members lost


def test_a_swift_preview_block_is_titled_by_its_macro() -> None:
    text = 'struct CounterView: View {\n  var body: some View { Text("hi") }\n}\n\n#Preview {\n  NavigationStack {\n    CounterView()\n  }\n}\n'
    assert (
        chunks_of("CounterView.swift", text)["Preview"].title == "#Preview {"
    )  # had been `NavigationStack {`


def test_csharp_extension_blocks_hold_their_members_as_the_classs() -> None:
    text = (
        "public static class StringExtensions {\n    extension(string s) {\n        public int Twice() {\n"
        '            return $"{s}{s}".Length;\n        }\n    }\n\n    extension<T>(List<T> list) {\n'
        "        public bool IsBlank => list.Count == 0;\n    }\n}\n"
    )
    chunks = chunks_of("StringExtensions.cs", text)
    assert {"StringExtensions.Twice", "StringExtensions.IsBlank"} <= set(
        chunks
    )  # had been parts of `extension`
    assert (
        chunks["StringExtensions.IsBlank"].body.lstrip().startswith("extension<T>(List<T> list) {")
    )  # the head opens it


def test_kotlin_type_parameters_over_lines_with_a_function_type_and_a_trailing_comma_keep_the_file() -> None:
    scope = "    fun <\n        T : (A)\n        -> R,\n        R,\n    > invoke(a: A) = 1\n\n"
    text = (
        "class Scope {\n"
        + scope
        + scope.replace("invoke", "coInvoke")
        + "}\n\nclass Sentinel {\n    fun x() = 1\n}\n"
    )
    chunks = chunks_of("API.kt", text)
    assert {"Scope.invoke", "Scope.coInvoke", "Sentinel.x"} <= set(chunks)  # had been one block `Scope`


def test_a_kotlin_modifier_word_used_as_a_name_does_not_lose_its_class() -> None:
    text = (
        "class Cipher {\n  private var final = false\n\n  fun read(): Int {\n    return 1\n  }\n\n"
        "  fun update() {\n    final = true\n  }\n\n  fun close() {\n    val caller = suspend {\n"
        '      println("b")\n    }\n  }\n}\n'
    )
    chunks = chunks_of("Cipher.kt", text)
    assert {"Cipher.read", "Cipher.update", "Cipher.close"} <= set(chunks)
    assert chunks["Cipher"].members == ("Cipher.final",)  # the name as written


def test_the_languages_a_tree_holds_are_counted_by_file_its_headers_as_cpp_where_its_sources_are() -> None:
    from ra_query.sources.languages import file_languages

    assert file_languages(["src/a.cc", "src/a.h", "src/b.H", "README.md"]) == {"cpp": 3, "markdown": 1}
    assert file_languages(["a.c", "a.h", "notes.txt", "Makefile"]) == {"c": 2, "markdown": 1, "text": 1}


def test_include_globs_name_the_languages_of_their_extensions_and_a_bare_star_names_none() -> None:
    from ra_query.sources.languages import glob_languages, programming_languages, spoken_languages

    globs = ["**/*.py", "src/**/*.GO", "**/*", "docs/**", "**/*.yml", "**/*.p*", "**/*.pyi", "**/*.txt"]
    assert glob_languages(globs) == ["python", "go", "yaml", "text"]
    assert programming_languages(["python", "yaml", "markdown", "go", "text"]) == ["python", "go"]
    assert [spoken_languages(x) for x in (["python"], ["python", "go"], ["go", "cpp", "csharp"])] == [
        "Python",
        "Python and Go",
        "Go, C++ and C#",
    ]


KOTLIN = """\
package timber.log

/** A tree. */
class Tree(val tag: String, private var level: Int) {
    val size: Int = 3

    /** Logs it. */
    @JvmStatic
    fun log(message: String) {
        println(format(message))
        Printer(tag).write(message)
    }
}

enum class Level(val code: Int) {
    DEBUG(1),
    INFO(2);

    fun label() = name.lowercase()
}

typealias Formatter = (String) -> String
"""


def test_kotlin_properties_constructor_vals_and_enum_entries_are_their_types_members() -> None:
    chunks = chunks_of("Tree.kt", KOTLIN)
    assert (chunks["Tree"].defines, chunks["Level"].defines) == ("class", "enum")
    assert chunks["Tree"].members == ("Tree.tag", "Tree.level", "Tree.size")
    assert chunks["Level"].members == ("Level.code", "Level.DEBUG", "Level.INFO")
    assert [slug for slug in chunks if slug] == ["Tree", "Tree.log", "Level", "Level.label", "Formatter"]


def test_a_kotlin_method_keeps_its_kdoc_and_annotation_and_names_what_it_calls() -> None:
    log = chunks_of("Tree.kt", KOTLIN)["Tree.log"]
    assert log.body.startswith("    /** Logs it. */\n    @JvmStatic\n    fun log(")
    assert log.title == "fun log(message: String)"  # an annotation alone on its line is no part of it
    assert log.references == ("println", "format", "Printer", "write")


SWIFT = """\
import Foundation

/// A session.
public final class Session {
    public static let `default` = Session()
    var count = 0

    public init(name: String) { self.name = name }

    deinit { }

    /// Does a request.
    @discardableResult
    public func request(_ url: URL) -> DataRequest {
        DataRequest(url).validate()
    }

    var doubled: Int {
        count * 2
    }
}

enum Method: String {
    case get = "GET"
    case post
}

protocol Adapter {
    func adapt(_ r: URLRequest) throws -> URLRequest
    var id: String { get }
}
"""


def test_swift_types_hold_their_initializers_methods_and_computed_properties() -> None:
    chunks = chunks_of("Session.swift", SWIFT)
    assert defined(chunks) == {
        "Session": "class", "Session.init": "constructor", "Session.deinit": "method",
        "Session.request": "method", "Session.doubled": "property", "Method": "enum", "Adapter": "interface",
    }  # fmt: skip
    assert chunks["Session.request"].body.startswith("    /// Does a request.\n    @discardableResult\n")
    assert chunks["Session.request"].references == ("DataRequest", "validate")


def test_swift_stored_properties_enum_cases_and_protocol_requirements_are_members() -> None:
    chunks = chunks_of("Session.swift", SWIFT)
    assert chunks["Session"].members == ("Session.default", "Session.count")  # without its backticks
    assert chunks["Method"].members == ("Method.get", "Method.post")
    assert chunks["Adapter"].members == ("Adapter.adapt", "Adapter.id")  # not its return type


def test_a_swift_extension_s_methods_are_the_type_s_wherever_it_stands() -> None:
    source = "extension Session where Self: Sendable {\n    func extra() {}\n}\n"
    assert [slug for slug in chunks_of("Session+Extra.swift", source) if slug] == [
        "extension-Session",
        "Session.extra",
    ]


@pytest.mark.parametrize(
    ("path", "source"),
    [
        ("R.swift", "class A {\n    // MARK: - Redirects\n\n    func f() {}\n\n    func g() {}\n}\n"),
        (
            "R.kt",
            "class A {\n    // region Redirects\n\n    fun f() = 1\n\n    fun g() = 2\n    // endregion\n}\n",
        ),
        (
            "R.m.java",
            "class A {\n    //region Redirects\n\n    void f() {}\n\n    void g() {}\n    //endregion\n}\n",
        ),
        (
            "R.ts",
            "class A {\n  //#region Redirects\n\n  f() {}\n\n  g() {}\n  //#endregion\n}\n",
        ),  # VS Code's
    ],
)
def test_a_section_mark_comment_joins_the_code_it_marks(path: str, source: str) -> None:
    chunks = chunks_of(path.replace(".m.", "."), source)
    assert "Redirects" in chunks["A.f"].body  # it had been a block of its own named `comment`
    assert not [slug for slug in chunks if "comment" in slug]
    if "endregion" in source:
        assert chunks["A.g"].body.rstrip().endswith("endregion")


def test_a_block_in_a_nested_type_is_named_under_the_types_qualified_name() -> None:
    source = "class Outer {\n  static class Inner {\n    void f() {}\n\n    private int count = 0;\n  }\n}\n"
    assert "Outer.Inner.count" in chunks_of("Outer.java", source)  # it was `Inner.count`


def test_swift_compiler_directives_join_the_code_they_guard() -> None:
    source = "#if os(iOS)\nfunc f() {}\n#else\nfunc g() {}\n#endif\n\nenum E {\n    case a\n    #if DEBUG\n    case b\n    #endif\n}\n"
    chunks = chunks_of("D.swift", source)
    assert [slug for slug in chunks if slug] == ["f", "g", "E"]  # `#endif` had been a block of its own
    assert chunks["f"].body.startswith("#if os(iOS)\n") and chunks["g"].body.endswith("#endif")
    assert chunks["E"].members == ("E.a", "E.b")


def test_no_line_is_lost_to_a_syntax_error_the_grammar_cannot_recover_from() -> None:
    # tree-sitter-kotlin reads `open` (a modifier word) as the start of a declaration: the parse
    # breaks, and what followed the break had been in no chunk (okhttp's Http2Stream.kt: 360 lines)
    source = (
        "fun a() = 1\n\nclass B {\n  fun c() {\n    val open: Boolean\n    withLock {\n      open = isOpen\n"
        "    }\n    while (true) {\n      read()\n    }\n  }\n}\n\nfun e() = 3\n"
    )
    doc, _ = chunk_file("src", "B.kt", source.encode())
    assert doc is not None
    held = Counter(word for c in doc.chunks for word in re.findall(r"\w+", c.body))
    assert Counter(re.findall(r"\w+", source)) <= held  # every word, as often as the file has it


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_kotlin_annotation_line_is_read_as_a_comment_whatever_the_line_breaks(newline: str) -> None:
    source = newline.join(
        ["@Flaky", "@Timeout(30)", '@Tag("Slow")', "open class T {", "  val a = 1", "", "}", ""]
    )
    source += newline.join(["", "class U : T()", ""])
    assert [slug for slug in chunks_of("T.kt", source) if slug] == ["T", "U"]


def test_a_kotlin_class_under_a_stack_of_annotations_is_a_class_that_holds_them() -> None:
    # tree-sitter-kotlin read these lines as an annotated expression, `open class` an infix call
    source = (
        '@Flaky\n@Timeout(30)\n@Tag("Slow")\nopen class ListenerTest {\n  @RegisterExtension\n  val platform = Rule()\n'
        "\n  @RegisterExtension\n  val client = ClientRule()\n\n}\n\nclass LegacyTest : ListenerTest()\n"
    )
    chunks = chunks_of("ListenerTest.kt", source)
    assert [slug for slug in chunks if slug] == ["ListenerTest", "LegacyTest"]  # it had been the file's text
    assert chunks["ListenerTest"].body.startswith(
        '@Flaky\n@Timeout(30)\n@Tag("Slow")\nopen class ListenerTest {'
    )
    assert chunks["ListenerTest"].members == ("ListenerTest.platform", "ListenerTest.client")


def test_a_kotlin_extension_function_is_named_by_the_type_it_extends() -> None:
    source = (
        "class Foo {\n  fun a() = 1\n}\n\nfun Foo.bar() = 2\n\nfun <T> Module.serializer(x: T): Int = 2\n\n"
        "fun Module.serializer(): Int = 3\n\nval String.lastChar: Char get() = this[length - 1]\n"
    )
    chunks = chunks_of("Ext.kt", source)
    assert (chunks["Foo.bar"].depth, chunks["Foo.bar"].parent_id) == (2, "src:Ext.kt#Foo")  # its type's
    assert {"Module.serializer", "Module.serializer-1", "String.lastChar"} <= set(chunks)  # had been `String`
    assert chunks["String.lastChar"].defines == "property"  # an extension property, as a function is
    assert "apply" in chunks_of("Scope.kt", "fun <T> T.apply(block: T.() -> Unit): T {\n  return this\n}\n")


def test_a_swift_extension_that_conforms_or_constrains_keeps_its_head_as_text() -> None:
    source = "extension ImageView: AnimatorDelegate {\n  func animate() {}\n}\n\nextension Foo {\n  func b() {}\n}\n"
    chunks = chunks_of("ImageView.swift", source)
    assert chunks["extension-ImageView"].body == "extension ImageView: AnimatorDelegate {"  # had been empty
    assert chunks["extension-Foo"].body == ""  # `extension Foo {` alone says nothing


def test_a_block_of_swift_stored_properties_is_named_by_the_first_property() -> None:
    source = "struct T {\n  func a() {}\n\n  @Dependency(\\.clock) var clock\n  weak var delegate: D?\n}\n"
    assert "T.clock" in chunks_of("T.swift", source)  # had been `T.weak`, after a modifier


def test_what_a_syntax_error_leaves_is_recovered_but_never_an_endif_or_end_alone() -> None:
    c_source = "#ifdef FOO\nint f(void) { return 1; }\n\n#endif\n\nint g(void) { return 2 +; }\n"
    assert [slug for slug in chunks_of("t.c", c_source) if slug] == ["f", "g"]  # no `block` of `#endif`
    ruby = "module M\n  class Foo\n    def a\n      1\n    end\n  end\nend\n\ndef c(\n  1\nend\n"
    assert "M.end" not in chunks_of("t.rb", ruby)


def test_a_section_mark_at_the_end_of_a_code_line_is_that_lines_comment() -> None:
    source = "class A {\n    int x = 1; // region: upper half\n\n    void m() {}\n}\n"
    chunks = chunks_of("A.java", source)
    assert chunks["A"].body.endswith("int x = 1; // region: upper half")
    assert chunks["A.m"].body == "    void m() {}"


def test_a_kotlin_extension_joins_its_type_not_a_factory_function_of_that_name() -> None:
    source = "interface Store {\n    fun a()\n}\n\nfun Store(): Store = TODO()\n\nfun Store.close() = 1\n"
    chunks = chunks_of("Store.kt", source)
    assert chunks["Store.close"].parent_id == "src:Store.kt#Store"  # the interface, not `Store-1`
    assert chunks["Store-1"].title == "fun Store(): Store"  # an expression body is no part of the title


def test_a_kotlin_interface_is_an_interface() -> None:
    source = "interface Shape {\n  fun area(): Double\n}\n\nfun interface Run {\n  fun run()\n}\n"
    chunks = chunks_of("Shape.kt", source)
    assert (chunks["Shape"].defines, chunks["Run"].defines) == ("interface", "interface")


def test_a_lua_method_is_named_with_a_dot_and_keeps_its_ldoc_comment() -> None:
    source = (
        "--- Sends a message.\n-- @param m string\n\nfunction Client:send(m)\n  return self.t:write(m)\nend\n"
    )
    send = chunks_of("client.lua", source)["Client.send"]
    assert (send.defines, send.line_start, send.references) == ("method", 1, ("write",))
    assert "local" not in chunks_of("a.lua", "local f = function(x) return x end\nlocal a, b = 1, 2\n")


SCALA = """\
/** A store. */
class Store(val root: String) extends Base {
  val size: Int = 3

  /** Opens. */
  def open(path: String): String = root + path
}

object Store {
  def apply(r: String): Store = new Store(r)
}

trait Shape {
  def area: Double
}

enum Color:
  case Red, Green
  case Custom(rgb: Int)
"""


def test_scala_classes_objects_traits_and_enums_hold_their_definitions_and_members() -> None:
    chunks = chunks_of("Store.scala", SCALA)
    assert defined(chunks) == {
        "Store": "class", "Store.open": "method", "object-Store": "object", "Store.apply": "method",
        "Shape": "trait", "Shape.area": "method", "Color": "enum",
    }  # fmt: skip
    assert chunks["Store"].members == ("Store.root", "Store.size")
    assert chunks["Color"].members == ("Color.Red", "Color.Green", "Color.Custom")
    assert chunks["Store.open"].body.startswith("  /** Opens. */\n  def open(")


def test_a_scala_companion_object_and_an_instance_on_the_line_after_its_val_hold_their_methods() -> None:
    text = (
        "final class Parser(val name: String) {\n  def parse(args: Seq[String]): Option[String] = args.headOption\n}\n\n"
        'object Parser {\n  def builder: Parser = new Parser("default")\n\n'
        "  implicit val codec: HttpCodec[Parser] =\n    new HttpCodec[Parser] {\n"
        "      def render(p: Parser): String =\n        p.name\n    }\n}\n"
    )
    chunks = chunks_of("Parser.scala", text)
    assert chunks["object-Parser"].defines == "object"  # had been `Parser-1`, as if a redefinition
    assert {"Parser.builder", "Parser.codec.render"} <= set(chunks)  # scalafmt's `=` then `new T {`


def test_a_kotlin_class_title_stops_before_the_kdoc_of_its_constructor_parameters() -> None:
    params = "".join(
        f'  /** The {n}. */\n  @get:JvmName("{n}") val {n}: String,\n' for n in ("name", "value", "domain")
    )
    chunks = chunks_of(
        "Cookie.kt",
        f"class Cookie private constructor(\n{params}) {{\n  fun a() = 1\n}}\n",
        code_chunk_size=90,
    )
    assert chunks["Cookie"].title == "class Cookie private constructor"  # the KDoc had run into it
    parts = [c.title for slug, c in chunks.items() if slug.startswith("Cookie.") and c.defines == "part"]
    assert any(title.endswith("val value: String,)") for title in parts), parts  # past its annotation


def test_an_annotation_on_a_kotlin_primary_constructor_keeps_the_class_whole() -> None:
    # okhttp's Hpack.kt: read as a comment, the annotation parted the class from its constructor
    source = (
        "object Hpack {\n  class Reader\n    @JvmOverloads\n    constructor(\n      source: Source,\n    ) {\n"
        "      private val list = mutableListOf<Header>()\n\n      fun read() = 1\n    }\n\n"
        "  class Writer {\n    fun write() = 2\n  }\n}\n"
    )
    slugs = [slug for slug in chunks_of("Hpack.kt", source) if slug]
    assert slugs == ["Hpack", "Hpack.Reader", "Hpack.Reader.read", "Hpack.Writer", "Hpack.Writer.write"]


SCALA3 = """\
/** Shouting. */
extension (s: String)
  def shout: String = s.toUpperCase
  def whisper: String = s.toLowerCase

given intShow: Show[Int] with
  def show(x: Int) = x.toString

object Config {
  given ordering: Ordering[Int] = {
    val base = 1
    Ordering.Int
  }
}

package object ujson {
  def read(s: String) = 1
}
"""


def test_scala_3_extensions_givens_and_package_objects_hold_their_definitions() -> None:
    chunks = chunks_of("Syntax.scala", SCALA3)
    assert defined(chunks) == {
        "extension-String": "extension", "String.shout": "method", "String.whisper": "method",
        "intShow": "object", "intShow.show": "method", "Config": "object", "Config.ordering": "given",
        "ujson": "object", "ujson.read": "method",
    }  # fmt: skip
    assert chunks["Config"].members == ()  # a given's locals (`base`) are no members


def test_scala_tests_of_munit_and_scalatest_are_tests_named_by_their_titles() -> None:
    source = (
        "class StackSuite extends munit.FunSuite {\n  def sample: List[Int] = List(1, 2)\n\n"
        '  test("reverse twice is identity") {\n    assertEquals(sample.reverse.reverse, sample)\n  }\n\n'
        '  describe("A Stack") {\n    it("pops values") {\n      assert(pop() == 2)\n    }\n  }\n\n'
        '  "A Stack" should "pop values in order" in {\n    assert(pop() == 2)\n  }\n\n'
        '  it should "throw when empty" in {\n    intercept[NoSuchElementException](pop())\n  }\n\n'
        '  "A queue" when {\n    "empty" should {\n      "be empty" in {\n        assert(q.isEmpty)\n      }\n    }\n  }\n\n'
        '  Feature("Checkout") {\n    Scenario("pays by card") {\n      pay()\n    }\n  }\n\n'
        "  val doubled = sample map (_ * 2)\n}\n"
    )
    chunks = chunks_of("StackSuite.scala", source)
    assert defined(chunks) == {
        "StackSuite": "class",
        "StackSuite.sample": "method",
        "StackSuite.reverse-twice-is-identity": "test",
        "StackSuite.a-stack": "test",
        "StackSuite.a-stack.pops-values": "test",
        "StackSuite.a-stack-should-pop-values-in-order": "test",
        "StackSuite.it-should-throw-when-empty": "test",
        "StackSuite.a-queue": "test",
        "StackSuite.a-queue.empty": "test",
        "StackSuite.a-queue.empty.be-empty": "test",
        "StackSuite.checkout": "test",
        "StackSuite.checkout.pays-by-card": "test",
        "StackSuite.doubled": "block",  # an infix call with no title is a statement
    }  # had been blocks `StackSuite.test`, `StackSuite.describe`, `StackSuite.it`
    test = chunks["StackSuite.reverse-twice-is-identity"]
    assert (test.line_start, test.line_end, test.title) == (4, 6, 'test("reverse twice is identity")')


@pytest.mark.parametrize(
    ("path", "source"),
    [
        ("Old.swift", "func live() {}\n\n/*\nstruct OldTests {\n    func testA() {}\n}\n*/\n"),
        ("old.scala", "def live() = 1\n\n/*def old(x: Int) = {\n  val y = x\n  y\n}*/\n"),
        ("old.lua", "local function live() end\n\n--[[\nfunction M.old()\nend\n]]\n"),
        ("old.ts", "function live() {}\n\n/*\nexport function old() {}\n*/\n"),
    ],
)
def test_commented_out_code_is_a_comment_not_the_definition_it_holds(path: str, source: str) -> None:
    chunks = chunks_of(path, source)
    assert list(chunks)[-1] == "comment"  # had been `OldTests`, `val`, `M`, `old`


def test_a_glob_in_a_string_is_no_block_comment_for_a_title() -> None:
    source = 'def f():\n    return 1\n\n\nINCLUDE = ["**/*.md", "**/*.py"]\nEXCLUDE = ["build/*/"]\n'
    chunks = chunks_of("settings.py", source)
    assert chunks["INCLUDE"].title == 'INCLUDE = ["**/*.md", "**/*.py"]'  # not cut at its `/*`


def test_a_part_is_titled_by_its_code_not_by_a_block_comment_above_it() -> None:
    source = (
        "export type Shape = {\n"
        + "".join(
            f"\t/*\n\tThe {i}th field, which holds a number of widgets.\n\t*/\n\tfield{i}: number;\n"
            for i in range(40)
        )
        + "};\n"
    )
    chunks = chunks_of("shape.ts", source)
    assert chunks["Shape.2"].title.startswith("type Shape (part 2: field")  # not `The 12th field, …`


def test_a_lua_local_function_value_or_table_is_titled_from_its_local() -> None:
    source = (
        "local noop = function() end\n\nlocal failureMt = {\n  __index = {},\n"
        "  __tostring = function(e) return tostring(e.message) end,\n}\n"
    )
    chunks = chunks_of("core.lua", source)
    assert (chunks["noop"].title, chunks["failureMt"].title) == (
        "local noop = function()",
        "local failureMt = {",
    )


def test_a_lua_module_returned_as_a_factory_function_holds_its_functions() -> None:
    source = (
        'local function is_callable(f) return type(f) == "function" end\n\nreturn function()\n'
        "  local busted = {}\n\n  function busted.subscribe(channel, fn)\n    return busted.mediator:subscribe(channel, fn)\n"
        "  end\n\n  function busted.publish(channel, ...)\n    return busted.mediator:publish(channel, ...)\n  end\n\n"
        "  return busted\nend\n"
    )
    chunks = chunks_of("core.lua", source)
    assert (chunks["busted.subscribe"].defines, chunks["busted.publish"].defines) == ("function", "function")
    assert chunks["busted"].title == "return function()"  # the wrapper's head: a statement


@pytest.mark.parametrize(
    ("path", "source"),
    [
        ("m.lua", "local function a() end\n\n  -- Look ahead at the next token.\n\nlocal function b() end\n"),
        (
            "m.ex",
            "defmodule M do\n  def a, do: 1\n\n  # Look ahead at the next token.\n\n  def b, do: 2\nend\n",
        ),
    ],
)
def test_a_comment_alone_between_definitions_is_kept_in_a_chunk(path: str, source: str) -> None:
    chunks = chunks_of(path, source)
    assert any("Look ahead at the next token." in c.body for c in chunks.values())  # not dropped as an `end`


def test_a_lua_table_of_functions_holds_them_as_its_methods() -> None:
    source = (
        "--- Git tasks.\nM.clone = {\n  skip = function(plugin)\n    return false\n  end,\n"
        '  run = function(self)\n    return self:spawn("git")\n  end,\n  name = "clone",\n}\n\n'
        'M.defaults = { root = "/tmp" }\n'
    )
    chunks = chunks_of("git.lua", source)
    assert defined(chunks) == {
        "M.clone": "object",
        "M.clone.skip": "method",
        "M.clone.run": "method",
        "M.clone.name": "block",
        "M.defaults": "block",
    }  # had been blocks `M-2`, `M`
    assert chunks["M.clone.run"].title == "run = function(self)"
    assert chunks["M.clone.skip"].body.endswith("  end,")  # the `,` after it is its own


def test_a_scala_instance_of_an_anonymous_class_holds_its_defs_as_methods() -> None:
    source = (
        "object OptionInstances {\n  implicit val optionMonad: Monad[Option] = new Monad[Option] {\n"
        "    def pure[A](a: A): Option[A] = Some(a)\n\n    def flatMap[A, B](fa: Option[A])(f: A => Option[B]) =\n"
        "      fa.flatMap(f)\n  }\n\n  implicit def ord: Ordering[Int] = new Ordering[Int] {\n"
        "    def compare(a: Int, b: Int) = a - b\n  }\n\n  val limit = 3\n\n"
        "  def f(a: Int): Int = {\n    def inner(b: Int) = b\n    inner(a)\n  }\n}\n"
    )
    chunks = chunks_of("Instances.scala", source)
    assert defined(chunks) == {
        "OptionInstances": "object",
        "OptionInstances.optionMonad": "object",
        "OptionInstances.optionMonad.pure": "method",
        "OptionInstances.optionMonad.flatMap": "method",
        "OptionInstances.ord": "method",
        "OptionInstances.ord.compare": "method",
        "OptionInstances.limit": "block",
        "OptionInstances.f": "method",  # a local def is no member
    }  # the instances' defs had been blocks `optionMonad`, `optionMonad.2`


def test_busted_tests_are_tests_named_by_their_titles_and_a_loop_of_them_stands_in_its_place() -> None:
    source = (
        "local function new_stack() return {} end\n\n"
        'describe("Stack", function()\n  it("pops in order", function()\n    assert.are.equal(2, new_stack():pop())\n'
        '  end)\n\n  pending("grows")\nend)\n\n'
        'for _, strategy in ipairs({ "postgres", "off" }) do\n  describe("proxy #" .. strategy, function()\n'
        '    it("routes by host", function()\n      assert.res_status(200, get("/"))\n    end)\n  end)\nend -- for\n\n'
        "lazy_teardown(function()\n  helpers.stop_kong()\nend)\n"
    )
    chunks = chunks_of("stack_spec.lua", source)
    assert defined(chunks) == {
        "new_stack": "function",
        "stack": "test",
        "stack.pops-in-order": "test",
        "stack.pending": "block",  # a title with no function is no test
        "proxy-#": "test",
        "proxy-#.routes-by-host": "test",
        "lazy_teardown": "block",  # a hook, not a test
    }  # had been blocks `describe` and `_`
    assert chunks["stack"].title == 'describe("Stack", function()'
    assert chunks["proxy-#"].line_start == 11  # the loop's head opens it


def test_lua_functions_defined_in_a_do_block_or_an_if_are_definitions() -> None:
    source = (
        "local M = {}\n\ndo\n  local store = {}\n\n  function M.get(key)\n    return store[key]\n  end\nend\n\n"
        'if _VERSION == "Lua 5.1" then\n  function M.rawlen(t)\n    return #t\n  end\nelse\n'
        "  M.rawlen = rawlen\nend\n\nif debug then\n  print(1)\nend\n\nreturn M\n"
    )
    chunks = chunks_of("compat.lua", source)
    assert defined(chunks) == {
        "M.get": "function",
        "M.rawlen": "function",
        "exports": "block",
    }  # had been none
    assert (chunks["M.get"].line_start, chunks["M.rawlen"].line_start) == (6, 11)  # the `if … then` opens it
    assert chunks["exports"].body.startswith("else\n  M.rawlen = rawlen\nend")  # a branch that defines none


def test_a_zig_const_struct_holds_its_functions_and_declares_its_fields() -> None:
    source = (
        'const std = @import("std");\n\n/// A point.\npub const Point = struct {\n    x: f32,\n    y: f32,\n\n'
        "    /// Adds two points.\n    pub fn add(self: Point, other: Point) Point {\n"
        "        return .{ .x = self.x + other.x, .y = self.y + other.y };\n    }\n};\n"
    )
    chunks = chunks_of("point.zig", source)
    assert "std" not in chunks  # an import is a statement of the file, not a definition
    point, add = chunks["Point"], chunks["Point.add"]
    assert (point.defines, point.line_start, point.members) == ("struct", 3, ("Point.x", "Point.y"))
    assert (add.defines, add.line_start, add.parent_id) == ("method", 8, "src:point.zig#Point")


def test_a_zig_function_that_returns_a_struct_is_that_generic_type() -> None:
    source = (
        "pub fn Stack(comptime T: type) type {\n    return struct {\n        items: []T,\n\n"
        "        pub fn push(self: *@This(), x: T) void {\n            _ = x;\n            _ = self;\n"
        "        }\n    };\n}\n"
    )
    chunks = chunks_of("stack.zig", source)
    assert (chunks["Stack"].defines, chunks["Stack"].members) == ("struct", ("Stack.items",))
    assert chunks["Stack.push"].defines == "method"


def test_a_zig_test_is_named_by_its_title_and_a_decl_test_by_its_declaration() -> None:
    source = 'test "adds two points" {\n    try expect(true);\n}\n\ntest Point {\n    _ = Point;\n}\n'
    chunks = chunks_of("point.zig", source)
    assert (chunks["adds-two-points"].defines, chunks["test-Point"].defines) == ("test", "test")


def test_a_zig_error_set_merged_with_another_is_a_type_whose_errors_are_members() -> None:
    source = "pub const Error = error{\n    Bad,\n    /// Why.\n    Worse,\n} || std.mem.Allocator.Error;\n"
    error = chunks_of("errors.zig", source)["Error"]
    assert (error.defines, error.members) == ("type", ("Error.Bad", "Error.Worse"))


def test_a_zig_files_own_fields_are_in_a_chunk_with_their_commas() -> None:
    source = "const Logger = @This();\n\nio: Io,\nquery: bool,\n\npub fn log(self: Logger) void {\n    _ = self;\n}\n"
    doc, _ = chunk_file("src", "Logger.zig", source.encode())
    assert doc is not None
    covered = {i for c in doc.chunks for i in range(c.byte_start, c.byte_end)}
    assert {i for i, ch in enumerate(source) if not ch.isspace()} <= covered


def test_a_statement_that_assigns_the_blank_name_is_not_named_by_it() -> None:
    chunks = chunks_of("init.zig", "fn f() void {}\n\ncomptime {\n    _ = Point;\n}\n")
    assert "comptime" in chunks and "_" not in chunks


ELIXIR = """defmodule MyApp.Cache do
  @moduledoc "A cache."
  use GenServer

  @doc "Starts the cache."
  @spec start_link(keyword) :: GenServer.on_start()
  def start_link(opts \\\\ []) do
    GenServer.start_link(__MODULE__, opts, name: __MODULE__)
  end

  defp expired?(%{at: at}, now) when at < now, do: true
  defp expired?(_, _), do: false

  defmodule Entry do
    def new(k), do: Store.wrap(k)
  end
end

defimpl Size, for: Map do
  def size(map), do: map_size(map)
end
"""


def test_an_elixir_module_holds_its_functions_with_their_doc_and_spec() -> None:
    chunks = chunks_of("cache.ex", ELIXIR)
    start = chunks["MyApp.Cache.start_link"]
    assert (start.defines, start.line_start, start.line_end) == ("function", 5, 9)
    assert start.title == "def start_link(opts \\\\ [])"
    assert start.references == ("start_link",)  # GenServer's; not `def`, `@spec` or its own head
    assert chunks["MyApp.Cache.Entry.new"].parent_id == "src:cache.ex#MyApp.Cache.Entry"


def test_an_elixir_else_between_two_defmodule_branches_opens_the_second() -> None:
    source = (
        "if Code.ensure_loaded?(Decimal) do\n  defmodule MyApp.Decimal do\n    alias MyApp.Input\n\n"
        "    def parse(%Input.String{value: value}), do: Decimal.parse(value)\n  end\nelse\n"
        "  defmodule MyApp.Decimal do\n    def parse(_), do: :error\n  end\nend\n"
    )
    chunks = chunks_of("decimal.ex", source)
    assert chunks["MyApp.Decimal-1"].body.startswith(
        "else\n  defmodule MyApp.Decimal do"
    )  # `else` had been in no chunk


def test_an_elixir_doc_stays_with_its_function_across_phoenix_attrs_and_blank_lines() -> None:
    source = (
        'defmodule MyAppWeb.CoreComponents do\n  use Phoenix.Component\n\n  def flash(assigns), do: ~H""\n\n'
        '  @doc """\n  Renders an input.\n  """\n  attr :id, :any, default: nil\n  slot :inner_block\n\n'
        '  def input(assigns) do\n    ~H"<input id={@id} />"\n  end\n\n'
        '  @doc """\n  Applies the given filter.\n  """\n\n  def filter(value, filter), do: {value, filter}\n\n'
        '  @doc "Checks a thing."\n  @callback check(term) :: boolean\n\n  def other(x), do: x\nend\n'
    )
    chunks = chunks_of("core_components.ex", source)
    assert defined(chunks) == {
        "MyAppWeb.CoreComponents": "module",
        "MyAppWeb.CoreComponents.flash": "function",
        "MyAppWeb.CoreComponents.input": "function",
        "MyAppWeb.CoreComponents.filter": "function",
        "MyAppWeb.CoreComponents.check": "block",  # a callback's doc stays with it, not the def below
        "MyAppWeb.CoreComponents.other": "function",
    }  # the docs had been blocks named `Renders`, `Applies`
    assert chunks["MyAppWeb.CoreComponents.input"].line_start == 6  # its `@doc`, then `attr` and `slot`
    assert chunks["MyAppWeb.CoreComponents.filter"].line_start == 16
    assert chunks["MyAppWeb.CoreComponents.other"].line_start == 25


def test_a_long_elixir_doc_in_a_sigil_is_titled_by_its_first_line() -> None:
    lines = "".join(
        f"  Line {i} of what validations returns, and why it is kept in order.\n" for i in range(12)
    )
    source = f'defmodule Cs do\n  @doc ~S"""\n  Returns the validations.\n\n{lines}  """\n  def validations(cs), do: cs\nend\n'
    chunks = chunks_of("changeset.ex", source)
    assert (
        chunks["Cs.validations.1"].title == "def validations(cs) (part 1: Returns the validations.)"
    )  # not `~S"""`


def test_the_clauses_of_one_elixir_function_are_one_chunk() -> None:
    chunks = chunks_of("cache.ex", ELIXIR)
    expired = chunks["MyApp.Cache.expired?"]
    assert (expired.line_start, expired.line_end) == (11, 12)
    assert not any(key.startswith("MyApp.Cache.expired?-") for key in chunks)


def test_an_elixir_implementation_is_named_as_elixir_names_its_module() -> None:
    chunks = chunks_of("cache.ex", ELIXIR)
    assert (chunks["Size.Map"].defines, chunks["Size.Map.size"].defines) == ("impl", "function")


def test_exunit_describe_and_test_blocks_are_named_by_their_titles() -> None:
    source = (
        'defmodule CacheTest do\n  use ExUnit.Case\n\n  describe "get/1" do\n'
        '    test "returns nil when missing" do\n      assert Cache.get(:x) == nil\n    end\n  end\nend\n'
    )
    chunks = chunks_of("cache_test.exs", source)
    case = chunks["CacheTest.get-1.returns-nil-when-missing"]
    assert (case.defines, case.parent_id) == ("test", "src:cache_test.exs#CacheTest.get-1")


def test_an_elixir_module_attribute_names_the_block_it_begins() -> None:
    source = (
        "defmodule Plug.Parsers do\n  defmodule ParseError do\n    defexception [:exception]\n  end\n\n"
        '  @moduledoc """\n  A plug for parsing the request body.\n  """\n\n  @default_length 8_000_000\n'
        "  alias Plug.Conn\n\n  def init(opts), do: opts\nend\n"
    )
    chunks = chunks_of("parsers.ex", source)
    assert chunks["Plug.Parsers.moduledoc"].title == "A plug for parsing the request body."
    assert "Plug.Parsers.A" not in chunks


def test_an_elixir_type_or_callback_names_its_block_and_a_field_read_is_no_reference() -> None:
    source = (
        "defmodule Oban.Worker do\n  def resolve(exec), do: exec.job.worker |> Worker.from_string()\n\n"
        '  @typedoc "A job."\n  @type t :: %__MODULE__{}\n\n  @callback process(job :: term) :: :ok\nend\n'
    )
    chunks = chunks_of("worker.ex", source)
    assert "Oban.Worker.t" in chunks and "Oban.Worker.typedoc" not in chunks
    assert chunks["Oban.Worker.resolve"].references == ("from_string",)  # not `job`, `worker`


def test_an_elixir_implementation_inside_a_module_is_named_as_elixir_names_it() -> None:
    source = (
        'defmodule A.Thing do\n  defimpl Inspect do\n    def inspect(_, _), do: "thing"\n  end\n\n'
        "  defimpl Jason.Encoder, for: Map do\n    def encode(m, o), do: Jason.Encode.map(m, o)\n  end\nend\n"
    )
    chunks = chunks_of("thing.ex", source)
    assert "Inspect.A.Thing.inspect" in chunks
    assert chunks["Jason.Encoder.Map"].title == "defimpl Jason.Encoder, for: Map"


def test_a_module_doc_comment_documents_no_definition_after_it() -> None:
    source = "//! Helpers for points.\npub fn main() void {\n    run();\n}\n"
    assert chunks_of("main.zig", source)["main"].line_start == 2
    assert chunks_of("lib.rs", "//! The crate.\nfn main() {}\n")["main"].line_start == 2


def test_a_zig_type_functions_members_are_its_structs_not_its_parameters() -> None:
    source = (
        "pub fn Ring(comptime T: type, comptime kind: union(enum) { array: usize, slice }) type {\n"
        "    const Inner = struct { t: T };\n    return struct {\n        buffer: []T,\n    };\n}\n"
    )
    assert chunks_of("ring.zig", source)["Ring"].members == ("Ring.buffer",)


def test_elixir_definitions_inside_an_if_or_a_for_are_definitions() -> None:
    source = (
        "if Code.ensure_loaded?(Postgrex) do\n  defmodule Notifier do\n    def start_link(opts), do: opts\n"
        "  end\nelse\n  defmodule Notifier do\n    def start_link(_), do: :ignore\n  end\nend\n\n"
        'defmodule AdapterTest do\n  for adapter <- [A, B] do\n    describe "#{adapter}" do\n'
        '      test "starts" do\n        assert adapter.start()\n      end\n    end\n  end\n\n'
        '  property "holds" do\n    check all(x <- integer()), do: assert(x == x)\n  end\nend\n'
    )
    chunks = chunks_of("notifier.ex", source)
    assert {"Notifier.start_link", "Notifier.start_link-1", "AdapterTest.adapter.starts"} <= set(chunks)
    assert chunks["AdapterTest.holds"].defines == "test"  # StreamData's property
    assert not [c for c in chunks.values() if c.defines == "block" and c.body.strip() in ("else", "end")]


def test_a_signature_over_several_lines_leaves_out_the_comments_between_its_parameters() -> None:
    source = (
        "pub fn Ring(\n    comptime T: type, // the element\n    comptime size: usize, // how many\n) type {\n"
        "    return struct { items: [size]T };\n}\n"
    )
    assert (
        chunks_of("ring.zig", source)["Ring"].title
        == "pub fn Ring( comptime T: type, comptime size: usize, ) type"
    )
    python = 'def fetch(\n    url,  # where\n    base="http://x",\n):\n    pass\n'
    assert chunks_of("fetch.py", python)["fetch"].title == 'def fetch( url, base="http://x", )'


def test_python_definitions_inside_an_if_or_a_try_are_definitions() -> None:
    source = (
        "class BaseModel:\n    def copy(self):\n        return self\n\n    if not TYPE_CHECKING:\n"
        "        def __getattr__(self, item):\n            return item\n\n"
        "try:\n    from fast import dumps\nexcept ImportError:\n    def dumps(obj):\n        return str(obj)\n"
    )
    chunks = chunks_of("main.py", source)
    getattr_ = chunks["BaseModel.__getattr__"]
    assert (getattr_.defines, getattr_.line_start, getattr_.line_end) == ("method", 5, 7)  # with its `if`
    assert (chunks["dumps"].defines, chunks["dumps"].line_start) == ("function", 11)


def test_csharp_members_inside_an_if_directive_are_definitions() -> None:
    source = (
        "public class Formatter\n{\n    public void A() {}\n#if FEATURE_DATE_ONLY\n"
        "    public void FormatDateOnly() {}\n#else\n    public void Other() {}\n#endif\n}\n"
    )
    chunks = chunks_of("Formatter.cs", source)
    assert {"Formatter.FormatDateOnly", "Formatter.Other"} <= set(chunks)
    assert chunks["Formatter.FormatDateOnly"].defines == "method"


def test_javascript_tests_generated_in_a_loop_or_an_if_are_tests() -> None:
    source = (
        "describe('math', () => {\n  for (const n of [1, 2, 3]) {\n    it(`squares ${n}`, () => {\n"
        "      expect(n * n).toBeGreaterThan(0);\n    });\n  }\n\n  if (process.platform !== 'win32') {\n"
        "    test('uses a unix socket', () => {\n      expect(sock()).toBe(true);\n    });\n  }\n\n"
        "  if (debug) {\n    log(1);\n  }\n});\n\n{\n  const local = 1;\n  use(local);\n}\n"
    )
    chunks = chunks_of("math.test.ts", source)
    assert defined(chunks) == {
        "math": "test",
        "math.squares-n": "test",  # had been a block named `n`
        "math.uses-a-unix-socket": "test",
        "math.debug": "block",  # an `if` that defines no test stays a statement
        "local": "block",  # and so does a bare block
    }
    assert (chunks["math.squares-n"].line_start, chunks["math.uses-a-unix-socket"].line_start) == (2, 8)


def test_a_playwright_describe_group_holds_its_tests() -> None:
    source = 'test.describe("Forms", () => {\n  test("posts to a loader", async ({ page }) => {\n    await page.goto("/");\n  });\n});\n'
    assert chunks_of("forms.spec.ts", source)["forms.posts-to-a-loader"].defines == "test"


def test_an_arrow_functions_title_runs_to_its_arrow_past_the_types_of_its_parameters() -> None:
    source = (
        "export const Provider = ({ client, children }: Props): JSX.Element => {\n  return children;\n};\n\n"
        'const stop = (log: (message: string) => void) => {\n  log("x");\n};\n'
    )
    chunks = chunks_of("provider.tsx", source)
    assert chunks["Provider"].title == "const Provider = ({ client, children }: Props): JSX.Element"
    assert chunks["stop"].title == "const stop = (log: (message: string) => void)"


def test_functions_of_a_rust_mod_or_a_cpp_namespace_are_functions_not_methods() -> None:
    rust = "#[cfg(test)]\nmod tests {\n    #[test]\n    fn it_works() {}\n}\n"
    assert chunks_of("lib.rs", rust)["tests.it_works"].defines == "function"
    cpp = "namespace fmt {\nint add(int a) { return a; }\nclass W {\n  void m() {}\n};\n}\n"
    chunks = chunks_of("fmt.cpp", cpp)
    assert (chunks["fmt.add"].defines, chunks["fmt.W.m"].defines) == ("function", "method")


def test_a_function_wrapped_in_a_call_is_a_definition_named_by_its_const() -> None:
    source = (
        "export function first() {\n  return 1;\n}\n\n/** A link. */\n"
        "export const Link = React.forwardRef<HTMLAnchorElement, LinkProps>(\n"
        "  function LinkWithRef({ to, ...rest }, ref) {\n    return <a href={to} ref={ref} {...rest} />;\n  },\n);\n\n"
        "export const Row = React.memo(function Row({ item }: Props) {\n  return <li>{item}</li>;\n});\n\n"
        "export const useStore = create<State>()((set) => ({ count: 0 }));\n\nexport const app = express();\n"
    )
    chunks = chunks_of("link.tsx", source)
    assert (chunks["Link"].defines, chunks["Link"].line_start) == ("function", 5)
    assert chunks["Row"].title == "const Row = React.memo(function Row({ item }: Props)"
    assert chunks["useStore"].defines == "function"
    assert "app" not in chunks or chunks["app"].defines == "block"  # a call of no function


def test_csharp_operators_conversions_indexers_and_destructors_are_definitions() -> None:
    source = (
        "public struct Money\n{\n    public static Money operator +(Money a, Money b) => new Money();\n"
        "    public static implicit operator decimal(Money m) => 0m;\n    public int this[int i] => i;\n"
        "    ~Money() {}\n}\n"
    )
    chunks = chunks_of("Money.cs", source)
    assert {"Money.operator-+", "Money.operator-decimal", "Money.this[]", "Money.~Money"} <= set(chunks)


def test_a_cpp_friend_function_defined_in_its_class_is_a_definition() -> None:
    source = (
        "class Status {\n public:\n  friend bool operator==(const Status& a, const Status& b) {\n"
        "    return a.code_ == b.code_;\n  }\n  int code_;\n};\n"
    )
    assert chunks_of("status.h", source, header_language="cpp")["Status.operator=="].defines == "method"


def test_a_closing_bracket_with_its_label_comment_is_no_chunk() -> None:
    source = "namespace leveldb {\nint f() { return 1; }\n}  // namespace leveldb\n"
    chunks = chunks_of("env.cc", source)
    assert not [c for c in chunks.values() if c.defines == "block"]


def test_a_header_that_defines_qualified_names_is_cpp_and_a_comment_naming_one_is_not() -> None:
    from ra_query.sources.languages import header_language

    assert (
        header_language("SPDLOG_INLINE spdlog::async_logger::async_logger(\n    std::string name)\n{\n}\n")
        == "cpp"
    )
    assert header_language("/* see foo::bar( */\nint f(void) { return 0; }\n") == "c"


def test_a_class_field_whose_value_is_a_function_is_a_method_and_another_a_member() -> None:
    source = (
        "class MutationController {\n  client: QueryClient;\n  mutate = (variables: TVariables) => {\n"
        "    return this.run(variables);\n  };\n  static create = (params?: Params): ZodString => {\n"
        "    return new ZodString(params);\n  };\n}\n"
    )
    chunks = chunks_of("controller.ts", source)
    assert (chunks["MutationController.mutate"].defines, chunks["MutationController.create"].defines) == (
        "method",
        "method",
    )
    assert chunks["MutationController.mutate"].title == "mutate = (variables: TVariables)"
    assert chunks["MutationController"].members == ("MutationController.client",)


def test_a_rust_impl_for_a_reference_or_a_tuple_is_named_by_a_word() -> None:
    source = (
        "impl IntoResponse for &'static str {\n    fn into_response(self) -> Response { todo!() }\n}\n"
        "impl<R> IntoResponse for (http::response::Parts, R) {\n    fn into_response(self) -> Response { todo!() }\n}\n"
    )
    chunks = chunks_of("response.rs", source)
    assert {"impl-IntoResponse-for-str", "str.into_response", "tuple.into_response"} <= set(chunks)


def test_a_python_constant_with_its_docstring_is_a_block_of_its_own_named_by_it() -> None:
    doc = '"""A documented alias.\n\n' + "".join(f"Line {j} of its docs.\n" for j in range(6)) + '"""\n\n'
    aliases = "".join(f"Alias{k} = Annotated[int, Gt({k})]\n{doc}" for k in range(8))
    chunks = chunks_of("types.py", f"def first():\n    pass\n\n\n{aliases}")
    assert all(f"Alias{k}" in chunks for k in range(8))  # a docstring had begun the next block
    assert chunks["Alias6"].body.startswith("Alias6 = Annotated")


def test_a_cpp_pure_virtual_method_is_a_definition_and_a_prototype_is_not() -> None:
    source = (
        "class Env {\n public:\n  virtual ~Env();\n  // Reads a file.\n  virtual bool Valid() const = 0;\n"
        "  void helper();\n  int x;\n};\n"
    )
    chunks = chunks_of("env.h", source, header_language="cpp")
    assert (chunks["Env.Valid"].defines, chunks["Env.Valid"].line_start) == ("method", 4)
    assert "Env.helper" not in chunks or chunks["Env.helper"].defines == "block"  # defined elsewhere


def test_a_block_of_rust_uses_or_elixir_aliases_is_named_by_what_it_brings_in() -> None:
    rust = chunks_of("lib.rs", "fn main() {}\n\npub use crate::b::Other;\n")
    elixir = chunks_of("a.ex", "defmodule A do\n  def f, do: 1\n\n  alias Plug.Conn\nend\n")
    assert "Other" in rust and not {"pub", "use", "crate", "b"} & set(rust)
    assert "A.Plug" in elixir and "A.alias" not in elixir
