"""Single-file extraction: node attributes, bad input, determinism."""

from __future__ import annotations

import gc

from code_helpers import FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st

from extract.code import CodeAdapter, extract_file
from vault_kg.core.model import Extraction

S = " › "


def test_symbol_attributes() -> None:
    data = (FIXTURES / "python_repo/pkg/core.py").read_bytes()
    extraction = extract_file("pkg/core.py", data)
    engine = extraction.nodes[f"pkg/core.py{S}class Engine"]
    assert engine["kind"] == "class" and engine["subkind"] == "class"
    assert engine["label"] == "Engine" and engine["source"] == "pkg/core.py"
    assert (engine["line"], engine["end_line"]) == (14, 27)
    assert engine["signature"] == "class Engine(Base)"
    assert engine["doc"] == "Runs things."
    assert engine["language"] == "python"
    make = extraction.nodes[f"pkg/core.py{S}class Engine{S}method make"]
    assert make["line"] == 18 and make["kind"] == "method" and make["qualname"] == "Engine.make"
    contains = {(e["source"], e["target"]) for e in extraction.edges if e["relation"] == "contains"}
    assert ("file:pkg/core.py", f"pkg/core.py{S}class Engine") in contains
    assert (f"pkg/core.py{S}class Engine", f"pkg/core.py{S}class Engine{S}method make") in contains
    assert all(e["owner"] == "pkg/core.py" for e in extraction.edges)


def test_syntax_error_keeps_the_rest_and_warns() -> None:
    data = (FIXTURES / "python_repo/broken.py").read_bytes()
    extraction = extract_file("broken.py", data)
    assert extraction.quarantine is None
    assert extraction.warnings == ["broken.py:5: syntax error; extracted what parsed (fix the syntax to get the rest)"]
    assert f"broken.py{S}function good_before" in extraction.nodes
    assert f"broken.py{S}function good_after" in extraction.nodes


def test_binary_and_undecodable_files_are_quarantined_with_a_reason() -> None:
    binary = extract_file("blob.py", b"\x00\x01\x02def f(): pass")
    assert binary.quarantine is not None and "blob.py" in binary.quarantine and "binary" in binary.quarantine
    assert list(binary.nodes) == ["file:blob.py"]
    latin = extract_file("latin.py", "x = 'caf\xe9'\n".encode("latin-1"))
    assert latin.quarantine is not None and "UTF-8" in latin.quarantine


def test_duplicate_names_get_distinct_locators() -> None:
    data = b"class A:\n    @property\n    def x(self):\n        return 1\n\n    @x.setter\n    def x(self, v):\n        pass\n"
    nodes = extract_file("m.py", data).nodes
    assert nodes[f"m.py{S}class A{S}method x"]["line"] == 3
    assert nodes[f"m.py{S}class A{S}method x (2)"]["line"] == 7


def test_export_and_decorators_are_unwrapped_in_locators() -> None:
    ts = extract_file("a.ts", b"export default class App {}\nexport function f() {}\nexport const g = () => 1;\n").nodes
    assert {f"a.ts{S}class App", f"a.ts{S}function f", f"a.ts{S}function g"} <= set(ts)
    py = extract_file("a.py", b"@dec\nclass K:\n    @staticmethod\n    def s():\n        pass\n").nodes
    assert {f"a.py{S}class K", f"a.py{S}class K{S}method s"} <= set(py)


def test_extraction_is_deterministic() -> None:
    data = (FIXTURES / "ts_repo/src/engine.ts").read_bytes()
    first, second = extract_file("src/engine.ts", data), extract_file("src/engine.ts", data)
    assert first.nodes == second.nodes and first.edges == second.edges and first.refs == second.refs


def test_search_text_carries_names_signature_and_docstring() -> None:
    adapter = CodeAdapter()
    data = (FIXTURES / "python_repo/pkg/util.py").read_bytes()
    extraction = adapter.extract("pkg/util.py", data)
    node_id = f"pkg/util.py{S}function helper"
    text = adapter.search_text(node_id, extraction.nodes[node_id], extraction)
    assert "helper" in text and "def helper(x)" in text and "Help with x." in text
    file_text = adapter.search_text("file:pkg/util.py", extraction.nodes["file:pkg/util.py"], extraction)
    assert "Helpers." in file_text and "pkg.util" in file_text


@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=300), suffix=st.sampled_from([".py", ".ts", ".tsx", ".js", ".go", ".rs", ".java"]))
def test_extract_never_raises(data: bytes, suffix: str) -> None:
    result = extract_file("f" + suffix, data)
    assert isinstance(result, Extraction)
    assert f"file:f{suffix}" in result.nodes


def test_extraction_leaves_no_reference_cycles() -> None:
    """The engine builds with cyclic GC off, so a cycle here would keep each file's parse tree alive."""
    files = sorted(p for p in FIXTURES.rglob("*") if p.is_file())
    assert len(files) > 10
    gc.collect()
    gc.disable()
    try:
        for path in files:
            extract_file(path.relative_to(FIXTURES).as_posix(), path.read_bytes())
        unreachable = gc.collect()
    finally:
        gc.enable()
    assert unreachable == 0
