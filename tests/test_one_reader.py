"""One reader for every file kg did not write (issue 29): read from the source (AST), every place
the packages open or read a file is either `vault_kg.core.safe_read` (regular files only, inside
their folder, bounded, never blocking) or a file kg itself writes, listed below with the reason.

A new `open(...)`, `os.open(...)`, `.open(...)`, `.read_text()` or `.read_bytes()` anywhere in
vault_kg, extract, episodic, graph_out or hooks fails here until it goes through `safe_read` (a
note, a project file, a transcript, `.obsidian/`, the config, a git file, a plan) or is added to
`KG_OWN_FILES` with the file kg wrote that it reads.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from test_architecture import ROOT, _module_name, _sources

READER = "vault_kg.core.safe_read"
READ_ATTRS = ("read_text", "read_bytes")
NOT_FILES = ("self", "webbrowser")  # `self.open()` opens a cache connection; `webbrowser.open` a page

# (module, function) -> the file kg wrote that it opens there.
KG_OWN_FILES: dict[tuple[str, str], str] = {
    ("vault_kg.anchors.spans", "SymbolCache.__init__"): "kg-out/anchors cache (SymbolCache.save writes it)",
    ("vault_kg.core.safe_write", "_take"): "kg-out/locks/NN.lock (created here)",
    ("vault_kg.core.safe_write", "_append"): "the note it has just read through safe_read, opened for O_APPEND and checked to be that file",
    ("vault_kg.core.safe_write", "_carry_over"): "the file kg has just renamed into place, opened for O_APPEND and checked to be that file",
    ("vault_kg.core.store", "write_if_changed"): "an artifact kg writes (compared before rewriting)",
    ("vault_kg.core.store", "scope_lock"): "kg-out/.lock",
    ("vault_kg.core.store", "load_json"): "kg-out JSON artifacts",
    ("vault_kg.jobs.launcher", "spawn"): "a job's log under kg-out/ (appended)",
    ("vault_kg.jobs.launcher", "jobs_in"): "a job's log under kg-out/",
    ("vault_kg.jobs.launcher", "lock_held"): "a job's lock file under kg-out/ (probed with flock)",
    ("vault_kg.update.graph_splice", "node_bytes_at"): "kg-out/graph.json",
    ("vault_kg.update.graph_splice", "write_spliced"): "kg-out/graph.json (mapped, spliced)",
    ("vault_kg.update.html_page", "read_graph"): "kg-out/graph.json",
    ("vault_kg.jobs.model_worker", "read_state"): "kg-out/llm/state.json",
    ("vault_kg.jobs.model_worker", "_state_lock"): "kg-out/llm/state.lock",
    ("vault_kg.jobs.model_worker", "running"): "kg-out/llm/worker.lock",
    ("vault_kg.jobs.model_worker", "_acquire"): "kg-out/llm/worker.lock",
    ("vault_kg.mcp.server", "resources.report.work"): "kg-out/GRAPH_REPORT.md",
    ("vault_kg.memory.push_recall", "load_state"): "kg-out/push-recall/<session>.json",
    ("vault_kg.memory.recall_log", "record"): "kg-out/recall-log.jsonl (appended)",
    ("vault_kg.memory.recall_log", "entries"): "kg-out/recall-log.jsonl",
    ("vault_kg.notes.promote", "load_graph"): "kg-out/graph.json",
    ("vault_kg.notes.sync", "_update_graph"): "kg-out/sync-state.json",
    ("vault_kg.update.noop_checks", "artifacts_current"): "kg-out/graph.json",
    ("vault_kg.update.noop_probe", "_writer_active"): "kg-out/.lock",
    ("vault_kg.storage.layout", "claim_out"): "kg-out/scope.owner",
    ("vault_kg.storage.vectors", "write_store"): "kg-out/vectors/<embedder>.safetensors (compared before rewriting)",
    ("vault_kg.storage.vectors", "load_manifest"): "kg-out/vectors/passages.json",
    ("vault_kg.storage.vectors", "write_manifest"): "kg-out/vectors/passages.json (compared before rewriting)",
    ("extract.llm_cache", "LlmCache.get"): "kg-out/llm/cache answers",
    ("extract.llm_cache", "LlmCache._models"): "kg-out/llm/cache models file",
    ("episodic.recall", "JournalIndex._check_not_held_elsewhere"): "kg-out journal index lock",
    ("episodic.recall", "JournalIndex._load_manifest"): "kg-out journal index manifest",
    ("graph_out.formats", "read_brief"): "kg-out/brief.json",
    ("graph_out.html", "_asset"): "graph_out's own packaged assets",
    ("hooks.common", "log_failure"): "kg-out/hooks.log (appended)",
}


def opens_in(path: Path) -> list[tuple[str, str, int]]:
    """(function, what is called, line) for every place the module opens or reads a file."""
    found: list[tuple[str, str, int]] = []

    def visit(node: ast.AST, scope: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, [*scope, child.name])
                continue
            if isinstance(child, ast.Call):
                func = child.func
                what = None
                if isinstance(func, ast.Name) and func.id == "open":
                    what = "open"
                elif isinstance(func, ast.Attribute) and func.attr in READ_ATTRS:
                    what = func.attr
                elif isinstance(func, ast.Attribute) and func.attr == "open" and not (isinstance(func.value, ast.Name) and func.value.id in NOT_FILES):
                    what = ast.unparse(func)
                if what is not None:
                    found.append((".".join(scope) or "<module>", what, child.lineno))
            visit(child, scope)

    visit(ast.parse(path.read_text(encoding="utf-8")), [])
    return found


def reads_outside_the_reader() -> dict[tuple[str, str], list[str]]:
    """Every (module, function) that opens a file itself, with what it calls and where."""
    found: dict[tuple[str, str], list[str]] = {}
    for path in _sources():
        module = _module_name(path)
        if module == READER:
            continue
        for function, what, line in opens_in(path):
            found.setdefault((module, function), []).append(f"{path.relative_to(ROOT)}:{line} {what}")
    return found


def test_every_file_kg_did_not_write_is_read_through_safe_read() -> None:
    found = reads_outside_the_reader()
    strays = {key: where for key, where in found.items() if key not in KG_OWN_FILES}
    assert strays == {}, "read these through vault_kg.core.safe_read (or list a file kg wrote in KG_OWN_FILES)"
    assert sorted(set(KG_OWN_FILES) - set(found)) == [], "an entry no longer opens anything: take it off the list"


@pytest.mark.parametrize(
    "source",
    [
        "def f(p):\n    return p.read_text()\n",
        "def f(p):\n    with open(p) as h:\n        return h.read()\n",
        "import os\ndef f(p):\n    return os.open(p, os.O_RDONLY)\n",
        "class C:\n    def f(self, p):\n        return p.read_bytes()\n",
    ],
)
def test_the_scan_sees_a_planted_read(tmp_path: Path, source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A library module that reads a vault file its own way is found (the test above then fails)."""
    path = tmp_path / "vault_kg" / "notes" / "probe.py"
    path.parent.mkdir(parents=True)
    path.write_text(source, encoding="utf-8")
    monkeypatch.setattr("test_architecture.ROOT", tmp_path)
    assert opens_in(path) and ("vault_kg.notes.probe", opens_in(path)[0][0]) not in KG_OWN_FILES
