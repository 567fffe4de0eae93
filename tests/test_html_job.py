"""The detached graph.html render: queued renders coalesce, and the one that runs draws the newest graph."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from filelock import FileLock

from graph_out.html import render_html
from vault_kg.core.store import load_json

from vault_kg.engine import run
from vault_kg.html_job import lock_held
from vault_kg.scopes import vault_scope


def _job(out: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "vault_kg.html_job", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)


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
