"""The README stays a five-minute read, and it and the docs point only at things in the repository:
every relative link resolves to a file (or an anchor that exists), and no page refers to a path of
the machine it was written on."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import REPO

README = REPO / "README.md"
PAGES = sorted((REPO / "docs").glob("*.md"))
# pages other branches of this round add; the README links them ahead of the merge
LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)\)")
MACHINE_PATHS = re.compile(r"(?<![\w.~])(/tmp/|/work/|/root/|/home/(?!me/)[a-z]+/|shared/tools/)")


def links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)  # code spans show link syntax, they are not links
    return [target for target in LINK.findall(text) if not re.match(r"[a-z]+:", target)]


def anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    out = set()
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            out.add(re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", title)))
    return out


def test_the_readme_is_a_five_minute_read() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 400, f"README.md has {len(lines)} lines; move reference to docs/"
    headings = [line for line in lines if line.startswith("## ")]
    for section in ("## Install", "## A five-minute tour", "## Claude Code", "## Other MCP clients", "## Configuration", "## Where to read more"):
        assert section in headings, section


@pytest.mark.parametrize("page", [README, *PAGES], ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_relative_link_resolves_inside_the_repository(page: Path) -> None:
    for target in links(page):
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        rel = resolved.relative_to(REPO.resolve()).as_posix() if resolved.is_relative_to(REPO.resolve()) else None
        assert rel is not None, f"{page.name}: {target} leaves the repository"
        assert resolved.exists(), f"{page.name}: {target} does not exist"
        if anchor and resolved.suffix == ".md":
            assert anchor in anchors(resolved), f"{page.name}: {target}: no such heading"


@pytest.mark.parametrize("page", [README, *PAGES], ids=lambda p: p.relative_to(REPO).as_posix())
def test_no_page_refers_to_the_machine_it_was_written_on(page: Path) -> None:
    found = MACHINE_PATHS.findall(page.read_text(encoding="utf-8"))
    assert not found, f"{page.name}: paths of a particular machine: {sorted(set(found))}"


def test_the_readme_links_every_docs_page() -> None:
    linked = {(README.parent / target.partition("#")[0]).resolve() for target in links(README)}
    missing = [p.name for p in PAGES if p.resolve() not in linked]
    assert not missing, f"docs pages the README's 'Where to read more' does not link: {missing}"
