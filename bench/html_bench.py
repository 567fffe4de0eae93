"""graph.html at vault scale: render time, page size, and time to interactive in headless Chromium.

The graph is the one `kg build` makes of a generated vault (bench/gen_vault.py), read from its
graph.json: what a user's page draws, not a synthetic dictionary.

Run: /tmp/kgenv/bin/python bench/html_bench.py [--notes 10000] [--runs 3]
Needs Debian chromium (`apt-get install -y chromium`). Targets (issue 8): ≤ 3 s to interactive,
page ≤ 15 MB, for a 10,000-note vault.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from background import kg_env  # noqa: E402
from gen_vault import generate  # noqa: E402

from graph_out.html import render_html  # noqa: E402
from graph_out.layout import compute_layout  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
EXPAND_TIMEOUT_MS = 60_000
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="kg-html-bench-"))
    generate(work / "vault", args.notes, seed=7)
    t = time.perf_counter()
    built = subprocess.run(
        [sys.executable, "-c", "from vault_kg.cli.entry import main; main()", "build", "--vault", str(work / "vault")],
        env=kg_env(KG_HTML="off", KG_OLLAMA="off", KG_CONFIG=str(work / "config.toml")),
        capture_output=True,
        text=True,
    )
    if built.returncode != 0:
        sys.exit(f"kg build failed: {built.stderr.strip()}")
    data = json.loads((work / "vault" / "kg-out" / "graph.json").read_text())
    print(
        f"graph: kg build of a generated {args.notes}-note vault ({time.perf_counter() - t:.1f} s, graph.html off) → "
        f"{len(data['nodes'])} nodes, {len(data['edges'])} edges, {len(data['graph']['communities'])} communities"
    )

    t = time.perf_counter()
    compute_layout(data)
    layout_s = time.perf_counter() - t
    t = time.perf_counter()
    page = render_html(data)
    render_s = time.perf_counter() - t
    size_mb = len(page.encode("utf-8")) / 1e6
    print(f"render_html: {render_s:.2f} s (layout alone {layout_s:.2f} s); page {size_mb:.2f} MB (target ≤ 15 MB: {'ok' if size_mb <= 15 else 'OVER'})")
    if not Path(CHROMIUM).is_file():
        sys.exit(f"{CHROMIUM} not found: apt-get update && apt-get install -y chromium")

    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "graph.html"
        path.write_text(page, encoding="utf-8")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            loads, in_page, first = [], [], []
            for _ in range(args.runs):
                tab = browser.new_page(viewport={"width": 1400, "height": 850})
                t = time.perf_counter()
                tab.goto(path.as_uri())
                tab.wait_for_function("window.kgView && window.kgView.ready", timeout=60_000)
                loads.append(time.perf_counter() - t)
                in_page.append(tab.evaluate("window.kgView.interactiveMs") / 1000)
                first.append(tab.evaluate("window.kgView.firstRenderMs") / 1000)
                tab.close()
            tab = browser.new_page(viewport={"width": 1400, "height": 850})
            tab.goto(path.as_uri())
            tab.wait_for_function("window.kgView && window.kgView.ready", timeout=60_000)
            collapsed_frame = tab.evaluate("window.kgView.lastFrameMs")
            shown = tab.evaluate("window.kgView.shownNodes")
            t = time.perf_counter()
            wanted = next(n["label"] for n in reversed(data["nodes"]) if n["kind"] == "note")
            tab.fill("#search", wanted)
            tab.wait_for_function("window.kgView.searchResults.length > 0")
            search_ms = (time.perf_counter() - t) * 1000
            t = time.perf_counter()
            tab.keyboard.press("Enter")
            tab.wait_for_function("window.kgView.selected !== null")
            focus_ms = (time.perf_counter() - t) * 1000
            expand_ms: float | str | None = None  # a graph small enough to open expanded has no "Expand all"
            if tab.is_visible("#btn-expand"):
                t = time.perf_counter()
                try:
                    tab.click("#btn-expand", timeout=EXPAND_TIMEOUT_MS)
                    tab.wait_for_function(f"window.kgView.shownNodes === {len(data['nodes'])}", timeout=EXPAND_TIMEOUT_MS)
                    expand_ms = (time.perf_counter() - t) * 1000
                except PlaywrightTimeout:  # a figure too: the page did not answer the click in time
                    expand_ms = f"no answer within {EXPAND_TIMEOUT_MS / 1000:.0f} s"
            frames: list[float] = []
            try:
                tab.click("#btn-fit", timeout=EXPAND_TIMEOUT_MS)
                tab.wait_for_timeout(500)
                for step in range(5):
                    tab.mouse.move(700 + step * 10, 400)
                    tab.mouse.wheel(0, -60 if step % 2 else 60)
                    tab.wait_for_timeout(120)
                    frames.append(tab.evaluate("window.kgView.lastFrameMs"))
            except PlaywrightTimeout:  # the page did not answer "Fit": no frame times to report
                frames = []
            browser.close()

    tti = statistics.median(loads)
    print(
        f"chromium load → interactive (wall, median of {args.runs}): {tti:.2f} s "
        f"(target ≤ 3 s: {'ok' if tti <= 3 else 'OVER'}); in-page first render "
        f"{statistics.median(first):.2f} s, interactive {statistics.median(in_page):.2f} s"
    )
    print(
        f"first view: {shown} nodes drawn, frame {collapsed_frame:.1f} ms; search {search_ms:.0f} ms; "
        f"focus {focus_ms:.0f} ms; expand all {'n/a (opened expanded)' if expand_ms is None else expand_ms if isinstance(expand_ms, str) else f'{expand_ms:.0f} ms'}; "
        f"frame with all {len(data['nodes'])} nodes + {len(data['edges'])} edges: "
        + (f"median {statistics.median(frames):.0f} ms" if frames else f"the page did not answer 'Fit' within {EXPAND_TIMEOUT_MS / 1000:.0f} s")
    )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from figures import record

    with record("html_bench"):
        main()
