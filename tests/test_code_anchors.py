"""Anchors: the hash ignores reformatting and comment edits and sees every other edit."""

from __future__ import annotations

import pytest

from extract.anchors import normalize, normalized_hash
from extract.code import extract_file, symbols_of

S = " › "

# language: (path, original, reformatted + comments changed, body edited, locator of the symbol)
CASES = {
    "python": (
        "m.py",
        "@dec(1)\ndef f(a, b):\n    # why\n    if a:\n        g(a,b)\n        h()\n    return 1\n",
        "@dec( 1 )\ndef f(a,\n      b):\n    if a:  # a different comment\n        g( a, b )\n\n        h()\n    return 1\n",
        "@dec(1)\ndef f(a, b):\n    # why\n    if a:\n        g(a,b)\n    h()\n    return 1\n",
        f"m.py{S}function f",
    ),
    "typescript": (
        "m.ts",
        "export class A {\n  // c\n  run(x: number): number { return x + 1; }\n}\n",
        "export class A {\n  /* other */ run(x:number):number{\n    return x+1;\n  }\n}\n",
        "export class A {\n  // c\n  run(x: number): number { return x + 2; }\n}\n",
        f"m.ts{S}class A{S}method run",
    ),
    "javascript": (
        "m.js",
        "function f(a) {\n  // c\n  return a * 2;\n}\n",
        "function f( a ){ /* doc */ return a*2; }\n",
        "function f(a) {\n  // c\n  return a * 3;\n}\n",
        f"m.js{S}function f",
    ),
    "go": (
        "m.go",
        "package m\n\n// F does.\nfunc F(a int) int {\n\t// c\n\treturn a + 1\n}\n",
        "package m\n\n// F does it differently.\nfunc F(a int) int { return a+1 /* c */ }\n",
        "package m\n\n// F does.\nfunc F(a int) int {\n\t// c\n\treturn a - 1\n}\n",
        f"m.go{S}function F",
    ),
    "rust": (
        "m.rs",
        "pub struct S;\nimpl S {\n    /// doc\n    pub fn f(&self) -> u8 { 1 }\n}\n",
        "pub struct S;\nimpl S {\n    /// other doc\n    pub fn f( &self )->u8{\n        1 // one\n    }\n}\n",
        "pub struct S;\nimpl S {\n    /// doc\n    pub fn f(&self) -> u8 { 2 }\n}\n",
        f"m.rs{S}impl S{S}method f",
    ),
    "java": (
        "M.java",
        "class M {\n  // c\n  int f(int a) { return a + 1; }\n}\n",
        "class M {\n  /** javadoc */\n  int f( int a ){\n    return a+1; // x\n  }\n}\n",
        "class M {\n  // c\n  int f(int a) { return a + 1 + 0; }\n}\n",
        f"M.java{S}class M{S}method f",
    ),
}


def _hash(path: str, source: str, locator: str) -> str:
    symbols = symbols_of(path, source.encode())
    assert locator in symbols, sorted(symbols)
    return symbols[locator]["hash"]


@pytest.mark.parametrize("language", sorted(CASES))
def test_reformatting_and_comments_keep_the_hash_and_body_edits_change_it(language: str) -> None:
    path, original, reformatted, edited, locator = CASES[language]
    base = _hash(path, original, locator)
    assert _hash(path, reformatted, locator) == base
    assert _hash(path, edited, locator) != base


def test_python_docstrings_are_not_comments() -> None:
    one = _hash("m.py", 'def f():\n    """Old."""\n    return 1\n', f"m.py{S}function f")
    two = _hash("m.py", 'def f():\n    """New."""\n    return 1\n', f"m.py{S}function f")
    assert one != two


def test_python_dedent_changes_the_hash() -> None:
    inside = _hash("m.py", "def f(x):\n    if x:\n        a()\n        b()\n", f"m.py{S}function f")
    outside = _hash("m.py", "def f(x):\n    if x:\n        a()\n    b()\n", f"m.py{S}function f")
    assert inside != outside


def test_decorator_edits_change_the_hash_and_keep_the_def_line() -> None:
    plain = symbols_of("m.py", b"@a\ndef f():\n    return 1\n")[f"m.py{S}function f"]
    other = symbols_of("m.py", b"@b\ndef f():\n    return 1\n")[f"m.py{S}function f"]
    assert plain["hash"] != other["hash"]
    assert plain["line"] == 2 and plain["end_line"] == 3 and plain["name"] == "f"


def test_anchor_attribute_matches_symbols_of() -> None:
    data = b"class A:\n    def m(self):\n        return 1\n"
    extraction = extract_file("m.py", data)
    symbols = symbols_of("m.py", data)
    for locator, info in symbols.items():
        anchor = extraction.nodes[locator]["anchor"]
        assert anchor == {"locator": locator, "hash": info["hash"]}
    assert set(symbols) == {f"m.py{S}class A", f"m.py{S}class A{S}method m"}


def test_normalize_keeps_word_boundaries() -> None:
    assert normalize("return  x") == "return x"
    assert normalize("f( a,\n  b )") == "f(a,b)"
    assert normalized_hash("return x") != normalized_hash("returnx")
    assert len(normalized_hash("x")) == 64


def test_moving_a_symbol_down_keeps_its_hash() -> None:
    first = _hash("m.py", "def f():\n    return 1\n", f"m.py{S}function f")
    moved = _hash("m.py", "import os\n\n\n\ndef f():\n    return 1\n", f"m.py{S}function f")
    assert first == moved
