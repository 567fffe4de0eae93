"""The detached graph.html render: queued renders coalesce, and the one that runs draws the newest graph."""

from __future__ import annotations

import os
import subprocess
import zlib
import sys
import time
from pathlib import Path

import pytest
from filelock import FileLock

from graph_out.html import render_html
from vault_kg.update.html_page import read_graph

from conftest import hook_modules
from vault_kg.update.engine import run
from vault_kg.jobs.html_render import lock_held
from vault_kg.core.scopes import vault_scope


def _job(out: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "vault_kg.jobs.html_render", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_a_burst_of_renders_runs_one_and_draws_the_newest_graph(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KG_HTML", "off")
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "A.md").write_text("---\nsummary: a\n---\nsee [[B]]\n")
    (vault / "B.md").write_text("---\nsummary: b\n---\nback to [[A]]\n")
    run(vault_scope(vault))
    out = vault / "kg-out"
    running = FileLock(str(out / ".html.lock"))
    running.acquire()  # stands for a render already in progress
    try:
        waiting = _job(out)
        deadline = time.monotonic() + 30
        while not lock_held(out / ".html.waiting"):
            assert time.monotonic() < deadline, "the first render never queued"
            time.sleep(0.05)
        extra = _job(out)
        assert extra.wait(timeout=30) == 0, extra.stderr.read().decode()
        assert waiting.poll() is None, "the first render still waits for the running one"
        (vault / "C.md").write_text("---\nsummary: c\n---\nnew note, links [[A]]\n")
        run(vault_scope(vault))
    finally:
        running.release()
    assert waiting.wait(timeout=60) == 0, waiting.stderr.read().decode()
    newest = render_html(*read_graph(out / "graph.json"))
    assert "note:C.md" in newest
    assert (out / "graph.html").read_text() == newest, "the waiting render drew the graph written after it was queued"


def _settled(out: Path) -> None:
    """Until the background job the hook started has run (none runs or waits, nothing is owed)."""
    from vault_kg.jobs import clustering as cluster_job

    deadline = time.monotonic() + 120
    while cluster_job.running(out) or cluster_job.owed(out):
        assert time.monotonic() < deadline, "the background job never settled"
        time.sleep(0.05)


def _page_digest(out: Path) -> int | None:
    """Which graph.json (its CRC-32) graph.html was drawn from, and the one graph-state.js names now."""
    import json
    import re

    page = (out / "graph.html").read_text()
    return json.loads(re.search(r'id="kg-data">(.*?)</script>', page, re.S).group(1))["meta"]["digest"]  # type: ignore[union-attr]


def _state_digest(out: Path) -> int:
    import json

    return json.loads((out / "graph-state.js").read_text().split("=", 1)[1].rstrip().rstrip(";"))["digest"]


RENDERER = ("numpy", "scipy", "networkx", "graph_out.html", "graph_out.layout")


def test_hooks_and_their_jobs_leave_graph_html_to_whoever_looks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build draws a small graph's page in-process; the PostToolUse hook and the background job
    it starts never draw it (a render per edit, for a page nobody has open, was most of an agent's
    background work): graph-state.js follows graph.json, so the page drawn before says it is
    behind, and `kg html` draws the fresh build's page. Kills: a hook or a job that renders, a
    settle that forgets graph-state.js."""
    from scratch_build import artifacts, numbered_notes, scratch

    monkeypatch.delenv("KG_HTML", raising=False)
    vault = numbered_notes(tmp_path / "v", 30)
    config = tmp_path / "config.toml"
    config.write_text(f'vault = "{vault}"\n[projects]\n')
    monkeypatch.setenv("KG_CONFIG", str(config))
    out = vault / "kg-out"
    built = run(vault_scope(vault))
    assert str(out / "graph.html") in built.written and "html" not in built.extra  # inline in a build
    drawn = (out / "graph.html").read_bytes()
    assert _page_digest(out) == _state_digest(out) == zlib.crc32((out / "graph.json").read_bytes())
    note = vault / "Note 3.md"
    for edit in ("prose only", "see [[Note 12]]"):
        note.write_text(note.read_text() + f"\n{edit}\n")
        modules = hook_modules(note, tmp_path)
        assert not set(RENDERER) & modules and "vault_kg.update.prose_patch" in modules, sorted(set(RENDERER) & modules)
        _settled(out)
        assert (out / "graph.html").read_bytes() == drawn and not (out / "html.log").exists()
        assert _state_digest(out) == zlib.crc32((out / "graph.json").read_bytes()) != _page_digest(out)
    assert artifacts(vault) == scratch(vault, tmp_path)
    done = subprocess.run([sys.executable, "-c", "from vault_kg.cli.entry import main; main()", "html", "--vault", str(vault)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (out / "graph.html").read_text() == render_html(*read_graph(out / "graph.json"))
    assert _page_digest(out) == _state_digest(out)


def test_a_hook_on_a_code_graph_leaves_graph_html_to_whoever_looks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hook_world import make_world

    monkeypatch.delenv("KG_HTML", raising=False)
    world = make_world(tmp_path)
    out = world.project / "kg-out"
    drawn = (out / "graph.html").read_bytes()
    source = world.project / "pkg" / "util.py"
    source.write_text(source.read_text() + "\n\ndef retry_budget(attempts):\n    return min(attempts, 5)\n")
    modules = hook_modules(source, world.project, world.env)
    assert not {"graph_out.html", "graph_out.layout", "scipy"} & modules  # a code update ranks with numpy and networkx
    _settled(out)
    assert (out / "graph.html").read_bytes() == drawn
    assert "retry_budget" in (out / "graph.json").read_text() and _state_digest(out) != _page_digest(out)


def test_kg_html_waits_for_a_render_in_progress(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`kg html` writes graph.html under the lock a detached render holds: one writer (it wrote around it)."""
    monkeypatch.setenv("KG_HTML", "off")
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "A.md").write_text("---\nsummary: a\n---\nsee [[B]]\n")
    run(vault_scope(vault))
    out = vault / "kg-out"
    env = {**os.environ, "KG_HTML": "off"}
    running = FileLock(str(out / ".html.lock"))
    running.acquire()  # stands for a render in progress
    try:
        page = subprocess.Popen([sys.executable, "-c", "from vault_kg.cli.entry import main; main()", "html", "--vault", str(vault)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        time.sleep(3)
        assert page.poll() is None, "kg html wrote graph.html while a render held the page's lock"
        assert not (out / "graph.html").exists()
    finally:
        running.release()
    assert page.wait(timeout=60) == 0, page.stderr.read().decode()
    assert (out / "graph.html").read_text() == render_html(*read_graph(out / "graph.json"))
