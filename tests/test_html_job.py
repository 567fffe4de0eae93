"""The detached graph.html render: queued renders coalesce, and the one that runs draws the newest graph."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from filelock import FileLock

from graph_out.html import render_html
from vault_kg.core.store import load_json

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
    newest = render_html(load_json(out / "graph.json"))
    assert "note:C.md" in newest
    assert (out / "graph.html").read_text() == newest, "the waiting render drew the graph written after it was queued"


def _settled_page(out: Path, logged: bool) -> str:
    """graph.html once the detached work is done and the page draws the graph.json on disk."""
    from vault_kg.jobs import clustering as cluster_job
    from vault_kg.jobs.html_render import rendering

    deadline = time.monotonic() + 120
    while True:
        quiet = not rendering(out) and not cluster_job.running(out)
        page = (out / "graph.html").read_text() if (out / "graph.html").exists() else ""
        log = (out / "html.log").read_text() if (out / "html.log").exists() else ""
        if quiet and page == render_html(load_json(out / "graph.json")) and (not logged or "kg job graph.html:" in log):
            return page
        assert time.monotonic() < deadline, f"graph.html never caught up with graph.json; html.log:\n{log}"
        time.sleep(0.1)


RENDERER = ("numpy", "scipy", "networkx", "graph_out.html", "graph_out.layout")


def test_a_hook_on_a_small_graph_leaves_graph_html_to_a_detached_render(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build renders a small graph's page in-process; the PostToolUse hook does not (its imports
    and layout were most of a hook on a vault of a few hundred notes): the edit is patched, the
    hook imports none of the renderer, and the page drawn afterwards is a fresh build's."""
    from scratch_build import artifacts, numbered_notes, scratch

    monkeypatch.delenv("KG_HTML", raising=False)
    vault = numbered_notes(tmp_path / "v", 30)
    config = tmp_path / "config.toml"
    config.write_text(f'vault = "{vault}"\n[projects]\n')
    monkeypatch.setenv("KG_CONFIG", str(config))
    out = vault / "kg-out"
    built = run(vault_scope(vault))
    assert str(out / "graph.html") in built.written and "html" not in built.extra  # inline in a build
    note = vault / "Note 3.md"
    for edit, logged in (("prose only", True), ("see [[Note 12]]", False)):  # the link edit's page: the job's run, in-process
        note.write_text(note.read_text() + f"\n{edit}\n")
        modules = hook_modules(note, tmp_path)
        assert not set(RENDERER) & modules and "vault_kg.update.prose_patch" in modules, sorted(set(RENDERER) & modules)
        page = _settled_page(out, logged)
        fresh = scratch(vault, tmp_path)
        assert artifacts(vault) == fresh
        assert page == (tmp_path / "scratch" / "kg-out" / "graph.html").read_text().replace(str(tmp_path / "scratch"), str(vault))


def test_a_hook_on_a_small_code_graph_leaves_graph_html_to_a_detached_render(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hook_world import make_world

    monkeypatch.delenv("KG_HTML", raising=False)
    world = make_world(tmp_path)
    out = world.project / "kg-out"
    assert (out / "graph.html").exists()
    source = world.project / "pkg" / "util.py"
    source.write_text(source.read_text() + "\n\ndef retry_budget(attempts):\n    return min(attempts, 5)\n")
    modules = hook_modules(source, world.project, world.env)
    assert not {"graph_out.html", "graph_out.layout", "scipy"} & modules  # a code update ranks with numpy and networkx
    page = _settled_page(out, logged=True)
    assert "retry_budget" in page


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
    assert (out / "graph.html").read_text() == render_html(load_json(out / "graph.json"))
