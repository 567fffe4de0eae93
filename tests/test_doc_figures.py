"""Every figure in the README and the measured docs comes from a page a bench wrote.

A figure is a number with a unit of measure (ms, s, MB, %, ×, tok/s, ...). Each one must sit in a
sentence's paragraph, list item or table row that links a page under docs/benchmarks/, and that
page must hold the number as the bench printed it. Targets (after ≤, ≥, <, >) are not figures;
settings and commands are written in `backticks` and are not read. Every page under
docs/benchmarks/ says when it ran, on what load and with which command (bench/figures.py writes
them so; hand-made pages fail here).
"""

from __future__ import annotations

import re

from conftest import REPO

DOCS = ("README.md", "docs/measured.md", "docs/performance.md", "docs/llm.md")
PAGES = REPO / "docs" / "benchmarks"
NUMBER = r"\d+(?:,\d{3})*(?:\.\d+)?"
UNIT = r"(?:ms|s|min|h|MB|GB|KB|kB|tok/s|tokens/s|×|x|%)"
FIGURE = re.compile(rf"(?<![\w.,/·-])({NUMBER})\s?{UNIT}(?![\w/])")
TARGET = re.compile(r"(?:[≤≥<>]|\bto)\s*$")
PAGE_LINK = re.compile(r"\]\((?:\.\./)*(?:docs/)?(benchmarks/[^)#\s]+\.md)(?:#[^)]*)?\)")
CODE = re.compile(r"`[^`]*`")
HOW = (
    "Every figure in these docs comes from a page a bench wrote. For each line below: run the bench "
    "that measures it (it writes docs/benchmarks/<bench>.md through bench/figures.py), then link that "
    "page in the same paragraph, list item or table row, e.g. ([page](benchmarks/<bench>.md)) "
    "(from README.md: docs/benchmarks/<bench>.md), and quote the number as the page prints it. A figure "
    "its page no longer holds is out of date: quote what the page says. A target goes after ≤ or ≥; a "
    "setting or an input size rather than a measurement goes in `backticks`."
)


def text_units(text: str) -> list[tuple[int, str]]:
    """(first line, text) of each paragraph, list item and table row outside fenced code."""
    units: list[tuple[int, str]] = []
    current: list[str] = []
    start, fenced = 0, False

    def close() -> None:
        if current:
            units.append((start, " ".join(current)))
            current.clear()

    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            close()
            fenced = not fenced
            continue
        if fenced:
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or stripped.startswith("|"):
            close()
            if stripped.startswith("|"):
                units.append((number, stripped))
            continue
        if re.match(r"([-*]|\d+\.) ", stripped) or line.startswith("    ") and not current:
            close()
        if not current:
            start = number
        current.append(stripped)
    close()
    return units


def figures(unit: str) -> list[str]:
    """The measured figures of one unit of text (targets and `code` left out)."""
    plain = CODE.sub(" ", unit)
    plain = re.sub(r"\]\([^)]*\)", "]", plain)  # link targets hold no figures
    return [m.group(0) for m in FIGURE.finditer(plain) if not TARGET.search(plain[: m.start()])]


def on_page(figure: str, pages: list[str]) -> bool:
    number = FIGURE.match(figure)
    assert number is not None
    digits = number.group(1)
    forms = {digits, digits.replace(",", "")}
    return any(re.search(rf"(?<![\d.]){re.escape(form)}(?![\d])", page) for form in forms for page in pages)


def missing(doc: str) -> list[str]:
    problems = []
    for line, unit in text_units((REPO / doc).read_text(encoding="utf-8")):
        found = figures(unit)
        if not found:
            continue
        links = PAGE_LINK.findall(unit)
        pages = [(PAGES.parent / link).read_text(encoding="utf-8") for link in links if (PAGES.parent / link).is_file()]
        for figure in found:
            if not on_page(figure, pages):
                where = ", ".join(links) if links else "no docs/benchmarks page linked"
                problems.append(f"{doc}:{line}: {figure!r} is not on its page ({where})")
    return problems


def test_every_figure_in_the_measured_docs_is_on_a_linked_bench_page() -> None:
    problems = [p for doc in DOCS for p in missing(doc)]
    assert not problems, f"{len(problems)} figures without a page.\n{HOW}\n" + "\n".join(problems)


def test_every_bench_page_says_when_on_what_load_and_how() -> None:
    bad = []
    for page in sorted(PAGES.rglob("*.md")):
        if page.name == "README.md":
            continue
        head = page.read_text(encoding="utf-8")[:3000]
        lacks = [field for field in ("- date: ", "load average", "- command: `python bench/") if field not in head]
        if lacks:
            bad.append(f"{page.relative_to(REPO)}: no {', '.join(repr(f) for f in lacks)}")
    assert not bad, "bench pages are written by bench/figures.py (`with record(name):`); rerun the bench instead of editing a page:\n" + "\n".join(bad)


def test_the_checker_reads_figures_the_way_the_docs_write_them() -> None:
    """The rule itself: what counts as a figure, a target, a setting, a page's number."""
    assert figures("cold build 5.98 s, 2.0× the hook, 340 MB, 83 ms") == ["5.98 s", "2.0×", "340 MB", "83 ms"]
    assert figures("target ≤ 10 s; at most < 100 ms; timeout `60 s`; see [page](benchmarks/x.md)") == []
    assert figures("10,000 notes in 1,203 chunks") == [], "counts of inputs are not measurements"
    assert figures("| hook | 1,044 ms |") == ["1,044 ms"]
    assert on_page("1,044 ms", ["link edit 1044 ms"]) and on_page("0.45 s", ["took 0.45s"])
    assert not on_page("0.4 s", ["0.45 s"]) and not on_page("45.9 ms", ["145.9 ms"])
    units = text_units("intro 1 s\nsame paragraph\n\n- item 2 s\n  continued\n| row | 3 s |\n```\n4 s\n```\n")
    assert [u for _, u in units] == ["intro 1 s same paragraph", "- item 2 s continued", "| row | 3 s |"]
