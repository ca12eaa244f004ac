"""merge_sorted replaces a path's rows by zero-copy slices exactly as filter+concat+sort would."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from ra_build.artifacts.tables import CHUNK_SCHEMA
from ra_build.pipeline.chunk_stage import merge_sorted

PATHS = ["a.md", "b/c.md", "b/d.md", "e.md", "é.md", "z.md"]


def _table(groups: dict[str, int], tag: str) -> pa.Table:
    rows = [
        {"id": f"{tag}:{p}#{i}", "path": p, "position": i, "breadcrumb": [], "tags": []}
        for p in sorted(groups)
        for i in range(groups[p])
    ]
    return pa.Table.from_pylist(rows, schema=CHUNK_SCHEMA)


def _naive(old: pa.Table, replaced: set[str], new: pa.Table) -> list[str]:
    kept = [r for r in old.to_pylist() if r["path"] not in replaced]
    rows = sorted([*kept, *new.to_pylist()], key=lambda r: r["path"])  # stable: order within a path kept
    return [r["id"] for r in rows]


groups = st.dictionaries(st.sampled_from(PATHS), st.integers(1, 3), max_size=len(PATHS))


@settings(max_examples=300, deadline=None)
@given(old=groups, new=groups, extra=st.sets(st.sampled_from(PATHS)))
def test_merge_equals_filter_concat_sort(old: dict[str, int], new: dict[str, int], extra: set[str]) -> None:
    replaced = set(new) | extra  # every new path replaces its old rows; extra ones are deletions
    old_t, new_t = _table(old, "old"), _table(new, "new")
    merged = merge_sorted(old_t, replaced, new_t)
    assert merged.column("id").to_pylist() == _naive(old_t, replaced, new_t)


def test_merge_into_an_empty_table_returns_the_new_rows() -> None:
    new = _table({"a.md": 2}, "new")
    assert merge_sorted(CHUNK_SCHEMA.empty_table(), set(), new) is new
