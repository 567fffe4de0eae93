"""The docs that describe the source say what the tree holds: docs/layout.md is generated from it,
every module docs/architecture.md and CONTRIBUTING.md name exists, and every package is described."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("vault_kg", "extract", "episodic", "graph_out", "hooks")
DOCS = ("docs/architecture.md", "CONTRIBUTING.md")
PATH_RE = re.compile(r"(?<![\w/.-])((?:vault_kg|extract|episodic|graph_out|hooks|tests|bench)/[\w/]*[\w]+(?:\.py|/))")
DOTTED_RE = re.compile(r"(?<![\w/.-])((?:vault_kg|extract|episodic|graph_out)(?:\.[a-z_][a-z0-9_]*)+)")


def _exists_as_module(dotted: str) -> bool:
    """A dotted name that is a module or package, or an attribute of one (`vault_kg.update.engine.run`)."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:end])
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            return end >= len(parts) - 1  # at most one attribute after the module
    return False


def named_in(doc: str) -> tuple[set[str], set[str]]:
    text = (ROOT / doc).read_text(encoding="utf-8")
    return set(PATH_RE.findall(text)), set(DOTTED_RE.findall(text))


@pytest.mark.parametrize("doc", DOCS)
def test_every_module_a_doc_names_exists(doc: str) -> None:
    paths, dotted = named_in(doc)
    assert sorted(p for p in paths if not (ROOT / p).exists()) == []
    assert sorted(d for d in dotted if not _exists_as_module(d)) == []


def test_every_package_is_described_in_the_architecture() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    packages = sorted({p.parent.relative_to(ROOT).as_posix() for package in PACKAGES for p in (ROOT / package).rglob("__init__.py")})
    assert [p for p in packages if f"{p}/" not in text and p.replace("/", ".") not in text] == []


def test_layout_md_is_what_the_tree_says() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "layout_doc.py"), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, "docs/layout.md is stale: run `python bench/layout_doc.py`" + done.stderr


def test_the_checks_see_a_missing_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader above is only as good as its patterns: a named path or module that is gone is found."""
    (tmp_path / "CONTRIBUTING.md").write_text("see `vault_kg/ranking.py` and `vault_kg.updating.update_scope`\n", encoding="utf-8")
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    paths, dotted = named_in("CONTRIBUTING.md")
    assert paths == {"vault_kg/ranking.py"} and dotted == {"vault_kg.updating.update_scope"}
    assert not _exists_as_module("vault_kg.updating.update_scope")
