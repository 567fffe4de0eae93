"""graph.html in a real headless Chromium (Debian `chromium`, driven by Playwright), from file://.

Needs `apt-get install -y chromium`. Without it these tests fail with that instruction: a skipped
browser test would hide a page nobody has opened. Screenshots land in each test's tmp dir.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graph_factory import build_example_graph, make_graph
from graph_out.html import LOD_THRESHOLD, render_html
from vault_kg.update.html_page import state_script

CHROMIUM = os.environ.get("KG_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
STALE_RGB = (0xFF, 0x9F, 0x43)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"{CHROMIUM} not found: install Debian chromium (`apt-get update && apt-get install -y chromium`) to run the graph.html browser tests")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


class Page:
    """One graph.html opened from file://, with every network request refused and recorded."""

    def __init__(self, browser: Any, html_path: Path) -> None:
        self.page = browser.new_page(viewport={"width": 1400, "height": 850})
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.route("**/*", self._route)
        self.page.goto(html_path.as_uri())
        self.page.wait_for_function("window.kgView && window.kgView.ready", timeout=15000)

    def _route(self, route: Any) -> None:
        url = route.request.url
        if url.startswith("file://"):
            route.continue_()
        else:
            self.requests.append(url)
            route.abort()

    def view(self, name: str) -> Any:
        return self.page.evaluate(f"window.kgView.{name}")

    def search_and_enter(self, text: str, downs: int = 0) -> None:
        self.page.fill("#search", "")
        self.page.type("#search", text)
        for _ in range(downs):
            self.page.keyboard.press("ArrowDown")
        self.page.keyboard.press("Enter")
        self.page.wait_for_function("!window.kgView.flying")  # the camera flies for 350 ms

    def click_node(self, node_id: str) -> None:
        """Click a node once the camera has stopped moving (a search animates it)."""
        pos = None
        for _ in range(100):
            first = self.page.evaluate("(id) => window.kgView.screenPos(id)", node_id)
            self.page.wait_for_timeout(60)
            pos = self.page.evaluate("(id) => window.kgView.screenPos(id)", node_id)
            if pos is not None and first == pos:
                break
        assert pos is not None, f"{node_id} is not drawn"
        self.page.mouse.click(pos["x"], pos["y"])

    def ring_pixels(self, node_id: str, rgb: tuple[int, int, int]) -> int:
        """How many canvas pixels near the node's outline have (about) this colour."""
        return self.page.evaluate(
            """([id, rgb]) => {
                const p = window.kgView.screenPos(id), c = document.getElementById('view');
                const b = c.getBoundingClientRect(), k = window.kgView.camera.k, d = window.devicePixelRatio;
                const cx = (p.x - b.left) * d, cy = (p.y - b.top) * d, r = Math.ceil((14 * k + 12) * d);
                const img = c.getContext('2d').getImageData(cx - r, cy - r, 2 * r, 2 * r).data;
                let n = 0;
                for (let j = 0; j < img.length; j += 4)
                  if (Math.abs(img[j] - rgb[0]) < 30 && Math.abs(img[j+1] - rgb[1]) < 30 && Math.abs(img[j+2] - rgb[2]) < 30) n++;
                return n;
            }""",
            [node_id, list(rgb)],
        )

    def close(self, shot: Path) -> None:
        self.page.screenshot(path=str(shot))
        self.page.close()


def open_graph(browser: Any, data: dict[str, Any], folder: Path, now: int = 7) -> Page:
    """graph.html drawn from graph.json 7 beside graph-state.js naming graph.json `now` (as kg writes them)."""
    path = folder / "graph.html"
    path.write_text(render_html(data, 7), encoding="utf-8")
    (folder / "graph-state.js").write_bytes(state_script(now, {"nodes": 1234, "edges": 5678}))
    return Page(browser, path)


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return build_example_graph(tmp_path_factory.mktemp("example"))


@pytest.fixture(scope="module")
def vaultlike() -> dict[str, Any]:
    return make_graph(150, seed=11)


def test_example_vault_page_renders_searches_and_shows_summaries(browser: Any, example: dict[str, Any], tmp_path: Path) -> None:
    page = open_graph(browser, example, tmp_path)
    try:
        nodes = example["nodes"]
        assert page.view("nodes") == len(nodes)
        assert page.view("edges") == len(example["edges"])
        assert page.view("lod") is False
        assert page.view("shownNodes") == len(nodes)
        by_id = {n["id"]: n for n in nodes}

        note = next(n for n in sorted(nodes, key=lambda n: -n.get("rank", 0)) if n["kind"] == "note" and n.get("summary"))
        page.search_and_enter(note["label"])
        assert page.view("searchResults")[0] == note["id"]
        assert page.view("selected") == note["id"]
        assert page.page.inner_text("#panel h2") == note["label"]
        assert note["summary"] in page.page.inner_text("#panel .summary")
        assert f"{note['source']}:{note['line']}" in page.page.inner_text("#panel")

        other = next(n for n in sorted(nodes, key=lambda n: n["id"]) if n["kind"] == "note" and n.get("summary") and n["id"] != note["id"] and len(n["summary"]) > 20)
        page.page.keyboard.press("Escape")
        page.page.evaluate("document.activeElement.blur()")
        page.page.click("#btn-fit")  # the search flew the camera to the first note; the other may lie off screen
        page.page.wait_for_function("!window.kgView.flying")
        page.click_node(other["id"])
        assert page.view("selected") == other["id"]
        assert other["summary"] in page.page.inner_text("#panel .summary")
        neighbours = page.page.inner_text("#panel")
        out_rel = next(e for e in example["edges"] if e["source"] == other["id"])
        assert f"{out_rel['relation']}" in neighbours and by_id[out_rel["target"]]["label"] in neighbours

        unresolved = [n for n in nodes if n["kind"] == "unresolved"]
        if unresolved:
            assert page.page.evaluate("(id) => window.kgView.markOf(id)", unresolved[0]["id"]) == "unresolved-hollow"
        assert page.errors == [] and page.requests == []
    finally:
        page.close(tmp_path / "example-vault.png")


def test_stale_node_is_marked_on_canvas_and_in_the_panel(browser: Any, vaultlike: dict[str, Any], tmp_path: Path) -> None:
    stale = next(n for n in vaultlike["nodes"] if n["status"] == "stale" and n["kind"] == "note")
    live = next(n for n in vaultlike["nodes"] if n["status"] == "live" and n["kind"] == "note")
    page = open_graph(browser, vaultlike, tmp_path)
    try:
        assert page.page.evaluate("(id) => window.kgView.markOf(id)", stale["id"]) == "stale-dashed"
        assert page.page.evaluate("(id) => window.kgView.markOf(id)", live["id"]) == "none"
        page.search_and_enter(stale["label"])
        assert page.view("selected") == stale["id"]
        badges = page.page.inner_text("#panel .badges")
        assert "STALE" in badges
        assert page.ring_pixels(stale["id"], STALE_RGB) >= 8, "no dashed stale outline drawn"
        page.search_and_enter(live["label"])
        assert page.view("selected") == live["id"]
        assert "STALE" not in page.page.inner_text("#panel .badges")
        assert page.ring_pixels(live["id"], STALE_RGB) < 3
        assert page.errors == []
    finally:
        page.close(tmp_path / "stale.png")


def test_keyboard_navigation_and_filters(browser: Any, vaultlike: dict[str, Any], tmp_path: Path) -> None:
    page = open_graph(browser, vaultlike, tmp_path)
    try:
        page.page.focus("#search")
        page.page.type("#search", "billing")
        results = page.view("searchResults")
        assert len(results) >= 3 and all("billing" in r.lower() for r in results[:3])
        page.page.keyboard.press("ArrowDown")
        page.page.keyboard.press("ArrowDown")
        assert page.view("activeResult") == results[2]
        page.page.keyboard.press("ArrowUp")
        page.page.keyboard.press("Enter")
        assert page.view("selected") == results[1]

        total = len(vaultlike["nodes"])
        sections = sum(1 for n in vaultlike["nodes"] if n["kind"] == "section")
        page.page.click("#f-kind >> xpath=..")  # open the <details>
        page.page.uncheck('#f-kind input[data-value="section"]')
        assert page.view("shownNodes") == total - sections
        page.page.check('#f-kind input[data-value="section"]')
        assert page.view("shownNodes") == total

        page.page.click("#f-ns >> xpath=..")
        page.page.click('#f-ns .chip[data-value="client"]')
        clients = sum(1 for n in vaultlike["nodes"] if any(t.startswith("client/") for t in n["tags"]) or n["id"].startswith("tag:client"))
        assert page.view("shownNodes") == clients
        page.page.click('#f-ns .chip[data-value="client"]')

        edges = page.view("drawnEdges")
        inferred = sum(1 for e in vaultlike["edges"] if e["confidence"] == "INFERRED")
        page.page.click("#f-conf >> xpath=..")
        page.page.uncheck('#f-conf input[data-value="INFERRED"]')
        assert page.view("drawnEdges") == edges - inferred
        assert page.errors == []
    finally:
        page.close(tmp_path / "filters.png")


def test_large_graph_opens_collapsed_and_expands_on_click(browser: Any, tmp_path: Path) -> None:
    data = make_graph(1400, seed=5)
    assert len(data["nodes"]) > LOD_THRESHOLD
    page = open_graph(browser, data, tmp_path)
    try:
        assert page.view("lod") is True
        assert page.view("nodes") == len(data["nodes"])
        communities = {n["community"] for n in data["nodes"]}
        shown = page.view("shownNodes")
        assert shown == len(set(data["graph"]["god_nodes"]))
        assert page.view("collapsedCommunities") == len(communities)

        biggest = data["graph"]["communities"][0]
        gods_inside = sum(1 for g in data["graph"]["god_nodes"] if next(n for n in data["nodes"] if n["id"] == g)["community"] == biggest["id"])
        pos = page.page.evaluate("(id) => window.kgView.communityScreenPos(id)", biggest["id"])
        # click inside the disc, off its god nodes (a click on a node selects it instead)
        point = next(
            p
            for p in ((pos["x"] + dx * pos["r"], pos["y"] + dy * pos["r"]) for dx, dy in ((0, 0), (0.5, 0), (-0.5, 0), (0, 0.5), (0, -0.5)))
            if page.page.evaluate("([x, y]) => window.kgView.nodeAt(x, y)", list(p)) is None
        )
        page.page.mouse.click(*point)
        assert page.view("expandedCommunities") == 1
        assert page.view("shownNodes") == shown + biggest["size"] - gods_inside
        assert page.view("selectedCommunity") == biggest["id"]

        hidden = next(n for n in data["nodes"] if n["kind"] == "note" and n["community"] not in (biggest["id"],) and n["id"] not in data["graph"]["god_nodes"])
        assert page.page.evaluate("(id) => window.kgView.isShown(id)", hidden["id"]) is False
        page.search_and_enter(hidden["label"])
        assert page.view("selected") == hidden["id"]
        assert page.page.evaluate("(id) => window.kgView.isShown(id)", hidden["id"]) is True
        assert page.errors == [] and page.requests == []
    finally:
        page.close(tmp_path / "large.png")


def test_screenshot_of_the_example_vault_is_written(browser: Any, example: dict[str, Any], tmp_path: Path) -> None:
    page = open_graph(browser, example, tmp_path)
    shot = tmp_path / "overview.png"
    page.close(shot)
    assert shot.stat().st_size > 20_000, "blank screenshot?"
    print(json.dumps({"screenshot": str(shot)}))


def test_a_page_behind_its_graph_says_so(browser: Any, vaultlike: dict[str, Any], tmp_path: Path) -> None:
    """graph-state.js naming another graph.json than the page drew: a banner with the new size and
    the command that redraws it; the same one: none. Kills: a page that never compares, or
    compares what it cannot see (graph-state.js not loaded from beside the page)."""
    (tmp_path / "same").mkdir()
    page = open_graph(browser, vaultlike, tmp_path / "same")
    try:
        assert page.view("behind") == "" and page.page.is_hidden("#behind")
        assert page.errors == [] and page.requests == []
    finally:
        page.close(tmp_path / "same.png")
    (tmp_path / "behind").mkdir()
    page = open_graph(browser, vaultlike, tmp_path / "behind", now=8)
    try:
        banner = page.page.inner_text("#behind")
        assert page.page.is_visible("#behind") and "1,234 nodes, 5,678 edges" in banner and "kg html" in banner, banner
        assert page.errors == [] and page.requests == []
    finally:
        page.close(tmp_path / "behind.png")
