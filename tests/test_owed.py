"""A hook's link edit leaves ranks and artifacts to the background job (vault_kg/update/deferred_work.py): the
query tables hold the edit at once, graph.json keeps showing the last ranked graph, and once the
job (or any other update) has run, everything equals a from-scratch build. The hook's speed is
measured in bench/agent_bench.py."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from vault_kg.jobs import clustering as cluster_job
from vault_kg.update.engine import run
from vault_kg.update.deferred_work import owed_owners
from vault_kg.cli.noop_update import probe
from vault_kg.update.run_state import COMMUNITIES, WHOLE_GRAPH, RunSettings
from vault_kg.core.scopes import vault_scope

from scratch_build import artifacts, isolated_env, numbered_notes, scratch, whole_route_loads

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolated_env(monkeypatch, tmp_path)


def _built(tmp_path: Path) -> Path:
    vault = numbered_notes(tmp_path / "v", 30)
    (vault / "Headed.md").write_text("---\nsummary: has sections\n---\n# Headed\n\n## Alpha\nalpha text\n")
    run(vault_scope(vault))
    return vault


def _rows(vault: Path, ranked: bool) -> dict[str, list[tuple[object, ...]]]:
    """The query tables; node rows without rank and community unless `ranked`."""
    con = sqlite3.connect(vault / "kg-out" / "cache" / "index.sqlite")
    try:
        columns = "id, kind, label_lc, source, status, data" + (", rank, community" if ranked else "")
        return {
            "nodes": sorted(con.execute(f"SELECT {columns} FROM nodes")),
            "edges": sorted(con.execute("SELECT owner, source, target, relation, data FROM edges")),
            "unranked": list(con.execute("SELECT id FROM nodes WHERE rank IS NULL")),
        }
    finally:
        con.close()


def _cache_of(vault: Path) -> object:
    from vault_kg.storage.cache import ScopeCache

    return ScopeCache(vault / "kg-out" / "cache" / "index.sqlite")


def _owed(vault: Path) -> list[str] | None:
    cache = _cache_of(vault)
    try:
        return owed_owners(cache)
    finally:
        cache.close()  # type: ignore[attr-defined]


def _hook(vault: Path, note: Path) -> object:
    with whole_route_loads() as loads:
        result = run(vault_scope(vault), paths=[note], settings=RunSettings(defer=WHOLE_GRAPH))
    assert loads == [], "the hook loaded every extraction"
    return result


@pytest.mark.parametrize(
    "line",
    [
        "see also [[Note 9]]",  # a new link
        "see [[Nowhere yet]]",  # a dangling target no note named: a new node
        "see [[Headed#Alpha]]",  # a section no link reached: a new node and a derived edge under Headed
        "now #brand/new/tag",  # a tag no note used, with its parent
    ],
)
def test_a_hooks_link_edit_stores_the_edit_and_leaves_ranks_and_artifacts_to_the_job(tmp_path: Path, line: str) -> None:
    vault = _built(tmp_path)
    before = artifacts(vault)
    note = vault / "Note 6.md"
    note.write_text(note.read_text() + f"\n{line}\n")
    result = _hook(vault, note)
    assert result.extra["whole_graph"] == "deferred"  # type: ignore[attr-defined]
    assert artifacts(vault) == before  # graph.json, the report and the brief: the last ranked graph
    assert _owed(vault) is not None
    expected = scratch(vault, tmp_path)
    fresh = _rows(tmp_path / "scratch", ranked=False)
    assert _rows(vault, ranked=False) == fresh  # queries see the edit at once
    assert _rows(vault, ranked=False)["unranked"] == []  # a replaced row keeps its last rank
    graph = (tmp_path / "scratch" / "kg-out" / "graph.json").read_bytes()
    import orjson

    counts = orjson.loads(graph)["graph"]["counts"]
    assert (result.nodes, result.edges) == (counts["nodes"], counts["edges"])  # type: ignore[attr-defined]
    assert cluster_job.settle(vault_scope(vault))
    assert _owed(vault) is None
    assert artifacts(vault) == expected
    assert _rows(vault, ranked=True) == _rows(tmp_path / "scratch", ranked=True)


def test_deferred_edits_pile_up_and_the_next_update_finishes_them_from_the_cache(tmp_path: Path) -> None:
    """Back-to-back hook edits (the job not run yet): every one is deferred, a prose edit too (it
    goes through the link patch, which defers again); then a plain `kg update` does what is owed
    without loading one extraction."""
    vault = _built(tmp_path)
    for name, line in [("Note 6.md", "see [[Note 10]]"), ("Note 8.md", "see [[Nowhere]]"), ("Note 6.md", "prose only"), ("Note 8.md", "drop it")]:
        note = vault / name
        text = note.read_text() + f"\n{line}\n"
        note.write_text(text.replace("see [[Nowhere]]\n", "") if line == "drop it" else text)
        assert _hook(vault, note).extra["whole_graph"] == "deferred"  # type: ignore[attr-defined]
    assert _owed(vault) == ["Note 6.md", "Note 8.md"]
    assert probe(vault_scope(vault)) is None  # the no-op probe sees that work is left
    with whole_route_loads() as loads:
        result = run(vault_scope(vault))
    assert loads == [] and result.extra["ranking"] == "computed"
    assert _owed(vault) is None
    assert artifacts(vault) == scratch(vault, tmp_path)
    assert _rows(vault, ranked=True) == _rows(tmp_path / "scratch", ranked=True)
    assert probe(vault_scope(vault)) is not None


def test_a_whole_route_update_folds_in_what_a_hook_left(tmp_path: Path) -> None:
    """A new note (the whole route) after a deferred link edit: the table gets both."""
    vault = _built(tmp_path)
    note = vault / "Note 3.md"
    note.write_text(note.read_text() + "\nsee [[Note 20]]\n")
    _hook(vault, note)
    (vault / "Brand new.md").write_text("---\nsummary: new\n---\nlinks [[Note 3]]\n")
    run(vault_scope(vault))
    assert _owed(vault) is None
    assert artifacts(vault) == scratch(vault, tmp_path)
    assert _rows(vault, ranked=True) == _rows(tmp_path / "scratch", ranked=True)


def test_the_job_refuses_to_install_communities_while_ranks_are_owed(tmp_path: Path) -> None:
    """The race the job runs off the lock: it snapshots the graph and clusters it, and an edit a
    hook stores meanwhile must keep that partition out (its ranks would describe an older graph)."""
    from vault_kg.update import centrality as rank

    vault = _built(tmp_path)
    scope = vault_scope(vault)
    note = vault / "Note 4.md"
    note.write_text(note.read_text() + "\nsee [[Note 5]]\n")
    _hook(vault, note)
    run(scope, paths=[], settings=RunSettings(defer=COMMUNITIES, clustering_next=True))  # what the job does first
    found = cluster_job.snapshot(scope.out)
    assert found is not None  # the communities are behind the ranked graph
    clustered = rank.communities(found[1], found[2], found[3])
    note.write_text(note.read_text() + "\nsee [[Note 7]]\n")
    _hook(vault, note)  # an edit lands while the job clusters
    assert _owed(vault) == ["Note 4.md"]
    assert not cluster_job.install(scope.out, found[0], found[3], *clustered)
    assert cluster_job.settle(scope)
    assert artifacts(vault) == scratch(vault, tmp_path)


def test_a_hook_process_for_a_link_edit_imports_no_numpy(tmp_path: Path) -> None:
    vault = _built(tmp_path)
    note = vault / "Note 9.md"
    note.write_text(note.read_text() + "\nand a link to [[Note 12]]\n")
    code = (
        "import sys\nfrom pathlib import Path\nfrom vault_kg.update.engine import run\nfrom vault_kg.update.run_state import WHOLE_GRAPH, RunSettings\n"
        "from vault_kg.core.scopes import vault_scope\n"
        "result = run(vault_scope(Path(sys.argv[1])), paths=[Path(sys.argv[2])], settings=RunSettings(defer=WHOLE_GRAPH))\n"
        "print('DEFERRED', result.extra.get('whole_graph'), 'NUMPY', 'numpy' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(vault), str(note)], capture_output=True, text=True, cwd=ROOT, env=dict(os.environ), timeout=120)
    assert "DEFERRED deferred NUMPY False" in done.stdout, done.stdout + done.stderr


def test_a_hook_with_nothing_to_read_leaves_the_owed_work_to_the_job(tmp_path: Path) -> None:
    vault = _built(tmp_path)
    note = vault / "Note 2.md"
    note.write_text(note.read_text() + "\nsee [[Note 21]]\n")
    _hook(vault, note)
    result = run(vault_scope(vault), paths=[vault / "Note 3.md"], settings=RunSettings(defer=WHOLE_GRAPH))  # not changed since the last run
    assert "ranking" not in result.extra and _owed(vault) == ["Note 2.md"]
    assert result.nodes > 0
    assert cluster_job.settle(vault_scope(vault))
    assert artifacts(vault) == scratch(vault, tmp_path)


def test_the_hooks_background_job_finishes_the_work_and_says_what_it_cost(tmp_path: Path) -> None:
    """A real `kg hook post-tool-use` process: graph.json first shows the last graph, then the
    detached job writes the edited one and logs its own wall and CPU time (what benches count)."""
    import json
    import time

    from vault_kg.jobs.launcher import jobs_in

    vault = _built(tmp_path)
    before = artifacts(vault)
    (tmp_path / "config.toml").write_text(f'vault = "{vault}"\n[projects]\n')
    env = {k: v for k, v in os.environ.items() if k != "KG_VAULT"}
    note = vault / "Note 11.md"
    note.write_text(note.read_text() + "\nsee [[Note 13]]\n")
    payload = {"session_id": "t", "cwd": str(tmp_path), "hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_input": {"file_path": str(note)}}
    done = subprocess.run(
        [sys.executable, "-c", "from vault_kg.cli.entry import main; main()", "hook", "post-tool-use"], input=json.dumps(payload), env=env, cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0 and not done.stderr, done.stderr
    log = vault / "kg-out" / "communities.log"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (jobs_in(log) and not cluster_job.running(vault / "kg-out")):
        time.sleep(0.2)
    jobs = jobs_in(log)
    assert [name for name, _, _ in jobs] == ["communities"] and jobs[0][1] > 0 and jobs[0][2] > 0, log.read_text()
    assert _owed(vault) is None
    after = artifacts(vault)
    assert after != before and after == scratch(vault, tmp_path)


def test_a_link_patch_outside_a_hook_folds_in_what_a_hook_left(tmp_path: Path) -> None:
    """`kg update PATH` (or the MCP server) patching another link edit while a hook's is owed."""
    vault = _built(tmp_path)
    first, second = vault / "Note 7.md", vault / "Note 8.md"
    first.write_text(first.read_text() + "\nsee [[Note 1]]\n")
    _hook(vault, first)
    second.write_text(second.read_text() + "\nsee [[Nowhere else]]\n")
    with whole_route_loads() as loads:
        result = run(vault_scope(vault), paths=[second])
    assert loads == [] and result.extra["ranking"] == "computed" and "whole_graph" not in result.extra
    assert _owed(vault) is None
    assert artifacts(vault) == scratch(vault, tmp_path)
    assert _rows(vault, ranked=True) == _rows(tmp_path / "scratch", ranked=True)
