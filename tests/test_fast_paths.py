"""The agent-speed paths (issue 18): the no-op `kg update` probe and clustering off the hook's path.

Speed itself is measured in bench/agent_bench.py and bench/vault_bench.py; these tests pin what
the fast paths must keep: the probe answers exactly when the full route would find nothing to do
(and prints what it prints), a hook's deferred communities never name a node that is gone and say
which graph they describe, and once the background job ran the artifacts are the bytes of a
from-scratch build.
"""

from __future__ import annotations

import io
import json
import marshal
import os
import random
import re
import sqlite3
import subprocess
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path

import orjson
import pytest

from extract.vault_scan import list_source_stats, list_sources
from vault_kg.jobs import clustering as cluster_job
from vault_kg.cli import noop_update as quick_update
from vault_kg.update import centrality as rank
from vault_kg.storage import stat_snapshot
from vault_kg.update.engine import run
from vault_kg.update.run_state import COMMUNITIES, RunSettings
from vault_kg.core.scopes import vault_scope

from scratch_build import artifacts, isolated_env, scratch

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolated_env(monkeypatch, tmp_path, config_file=False)


def _vault(root: Path, notes: int = 60, seed: int = 5) -> Path:
    """Two loose clusters of notes (so Leiden has something to find) plus tags and dangling links."""
    rng = random.Random(seed)
    root.mkdir(parents=True)
    for i in range(notes):
        side = i % 2
        links = " ".join(f"[[Note {rng.randrange(side, notes, 2)}]]" for _ in range(3))
        (root / f"Note {i}.md").write_text(f"---\nsummary: note {i}\ntags: [topic/t{side}]\n---\n{links} [[Missing {i % 7}]]\n\ntext {i}\n")
    return root


def _graph(vault: Path) -> dict:
    return orjson.loads((vault / "kg-out" / "graph.json").read_bytes())


def _quick(argv: list[str]) -> tuple[int | None, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = quick_update.main(argv)
    return code, out.getvalue()


def _full(argv: list[str]) -> str:
    from vault_kg.cli.app import main

    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["update", *argv]) == 0
    return out.getvalue()


def _no_seconds(text: str) -> str:
    return re.sub(r'(· |"seconds": )[0-9.]+s?', r"\1X", text)


def _db(vault: Path) -> sqlite3.Connection:
    return sqlite3.connect(vault / "kg-out" / "cache" / "index.sqlite")


def _packed(vault: Path) -> tuple[bytes, bytes, bytes] | None:
    con = _db(vault)
    try:
        return stat_snapshot.read(con)
    finally:
        con.close()


def _same_size_edit(note: Path) -> None:
    text = note.read_text()
    note.write_text(text[:-2] + ("x\n" if text[-2] != "x" else "y\n"))


# the no-op probe --------------------------------------------------------------------------------


def test_parse_takes_only_a_plain_update() -> None:
    assert quick_update.parse(["--vault", "/v", "--json", "-s", "vault", "--scope=proj"]) == {"vault": Path("/v"), "out": None, "scope": ["vault", "proj"], "json": True}
    assert quick_update.parse(["--out=/o"])["out"] == Path("/o")
    for argv in (["notes/a.md"], ["--force"], ["--help"], ["--vault"], ["--vault", "--json"], ["--vault", "a", "--vault", "b"], ["-s=vault"]):
        assert quick_update.parse(argv) is None, argv


def test_the_probe_prints_what_the_full_route_prints(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "v")
    run(vault_scope(vault))
    for argv in (["--vault", str(vault)], ["--vault", str(vault), "--json"]):
        code, quick = _quick(argv)
        assert code == 0
        assert _no_seconds(quick) == _no_seconds(_full(argv))
    assert json.loads(_quick(["--vault", str(vault), "--json"])[1])[0]["nodes"] == len(_graph(vault)["nodes"])


def test_the_probe_steps_aside_whenever_the_full_route_has_work(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "v", notes=20)
    scope = vault_scope(vault)
    run(scope)
    assert quick_update.probe(scope) is not None
    note = vault / "Note 3.md"
    before = note.stat()

    def edit_then_put_the_mtime_back() -> None:
        _same_size_edit(note)
        run(scope, paths=[note])  # the hook's path: the cache (and its packed stats) hold this edit's mtime
        _same_size_edit(note)
        os.utime(note, ns=(before.st_atime_ns, before.st_mtime_ns))  # a size and mtime the cache held before

    cases = {
        "edited note": lambda: note.write_text(note.read_text() + "\nmore\n"),
        "an edit of the same size": lambda: _same_size_edit(note),
        "an edit whose mtime was put back": edit_then_put_the_mtime_back,
        "new note": lambda: (vault / "New.md").write_text("# New\n"),
        "deleted note": lambda: (vault / "Note 4.md").unlink(),
        "renamed note": lambda: (vault / "Note 5.md").rename(vault / "Note 5b.md"),
        "note moved into a folder": lambda: (vault / "moved").mkdir() or (vault / "Note 6.md").rename(vault / "moved" / "Note 6.md"),
        "graph.json touched": lambda: os.utime(vault / "kg-out" / "graph.json", ns=(1, 1)),
        "report missing": lambda: (vault / "kg-out" / "GRAPH_REPORT.md").unlink(),
        "a killed writer's temp file": lambda: (vault / "kg-out" / ".graph.json.x1.tmp").write_text(""),
        "an unreadable name": lambda: (vault / "sub").mkdir() or (vault / "sub" / "fifo.md").unlink(missing_ok=True) or os.mkfifo(vault / "sub" / "fifo.md"),
    }
    for name, change in cases.items():
        assert _packed(vault) is not None, f"before: {name}"  # the probe compares the packed stats
        change()
        assert quick_update.probe(scope) is None, name
        run(scope)
        assert quick_update.probe(scope) is not None, f"after the update that followed: {name}"


def _packed_is_the_table(vault: Path) -> bool:
    con = _db(vault)
    try:
        rows = con.execute("SELECT rel, size, mtime FROM sources ORDER BY rel").fetchall()
        assert con.execute("SELECT count(*) FROM stat_dirty").fetchone()[0] == 0
    finally:
        con.close()
    return _packed(vault) == stat_snapshot.pack([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])


def test_the_packed_stats_are_the_cache_rows_after_every_kind_of_run(tmp_path: Path) -> None:
    """The probe trusts the packed stats (`vault_kg.storage.stat_snapshot`) instead of the rows: a hook's
    edit patches them, a bigger change packs the table again, both must equal the rows."""
    vault = _vault(tmp_path / "v", notes=40)
    scope = vault_scope(vault)
    run(scope)
    assert _packed_is_the_table(vault)
    note = vault / "Note 1.md"

    def append(text: str) -> None:
        note.write_text(note.read_text() + text)

    changes = {
        "a prose edit through the hook's path": lambda: append("\nmore prose\n"),
        "a link edit through the hook's path": lambda: append("\n[[Note 7]]\n"),
        "a new note": lambda: (vault / "New.md").write_text("# New\n"),
        "a deleted note": lambda: (vault / "Note 2.md").unlink(),
        "a renamed note": lambda: (vault / "Note 4.md").rename(vault / "Renamed.md"),
        "a touched note, same bytes": lambda: os.utime(vault / "Note 5.md", ns=(10**18, 10**18)),
        "many notes at once (packed again)": lambda: [_same_size_edit(p) for p in sorted(vault.glob("*.md"))[:30]],
        "a forced rebuild": lambda: None,
    }
    for name, change in changes.items():
        change()
        run(scope, paths=[note] if "hook" in name else None, force="forced" in name)
        assert _packed_is_the_table(vault), name
        assert quick_update.probe(scope) is not None, name


def test_a_write_the_packed_stats_were_not_told_of_sends_the_probe_to_the_rows(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "v", notes=10)
    scope = vault_scope(vault)
    run(scope)
    con = _db(vault)
    con.execute("UPDATE sources SET mtime = mtime + 1 WHERE rel = 'Note 1.md'")  # as an older kg might
    con.commit()
    con.close()
    assert _packed(vault) is None  # the triggers marked it
    assert quick_update.probe(scope) is None  # the rows say Note 1 changed
    run(scope)
    assert _packed_is_the_table(vault)
    assert quick_update.probe(scope) is not None


def test_a_cache_from_before_the_packed_stats_gets_them_from_its_next_writer(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "v", notes=10)
    scope = vault_scope(vault)
    run(scope)
    con = _db(vault)
    con.executescript("DROP TRIGGER stat_dirty_insert; DROP TRIGGER stat_dirty_update; DROP TRIGGER stat_dirty_delete; DROP TABLE stat_snapshot; DROP TABLE stat_dirty;")
    con.close()
    assert quick_update.probe(scope) is not None  # read from the rows
    (vault / "Note 2.md").write_text("changed\n")
    assert quick_update.probe(scope) is None
    run(scope)
    assert _packed_is_the_table(vault)
    assert quick_update.probe(scope) is not None


def test_the_listing_with_stats_is_the_listing(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    (vault / "deep" / "er").mkdir(parents=True)
    (vault / "folder.md").mkdir()  # a folder named like a note
    for rel in ("a.md", "B.MD", "c.Md", "café.md", "deep/er/x.md", "a b.md", "deep/plain.txt", ".hidden.md", "folder.md/in.md"):
        (vault / rel).write_text(rel)
    os.symlink(vault / "a.md", vault / "link.md")
    os.symlink(tmp_path, vault / "outside.md")
    stats, skips = list_source_stats(vault)
    assert stats is not None
    listed, listed_skips = list_sources(vault)
    assert stats[0] == listed == sorted(listed)
    assert {"link.md", "B.MD", "c.Md", "café.md", "folder.md/in.md", "a b.md", "deep/er/x.md", "deep/plain.txt"} <= set(listed)  # an attachment too
    assert ".hidden.md" not in listed
    assert [s.relpath for s in skips] == [s.relpath for s in listed_skips] == ["outside.md"]
    assert stats[1] == [os.stat(vault / rel).st_size for rel in listed]
    assert stats[2] == [os.stat(vault / rel).st_mtime_ns for rel in listed]


def test_the_probe_steps_aside_while_a_writer_holds_the_scope(tmp_path: Path) -> None:
    from vault_kg.storage.layout import Layout
    from vault_kg.core.store import scope_lock

    vault = _vault(tmp_path / "v", notes=10)
    scope = vault_scope(vault)
    run(scope)
    with scope_lock(Layout(scope.out)):
        assert quick_update.probe(scope) is None  # so `kg update` waits its turn like any writer
    assert quick_update.probe(scope) is not None


def test_the_probe_follows_a_model_mode_change(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = _vault(tmp_path / "v", notes=10)
    scope = vault_scope(vault)
    run(scope)
    monkeypatch.setenv("KG_OLLAMA", "on")
    assert quick_update.probe(scope) is None  # the full route rebuilds every note for the model pass


def test_the_probe_asks_every_pass_whether_its_mode_changed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from extract import llm_pass
    from vault_kg.anchors import build_pass as anchor_pass

    asked: list[str] = []
    for module in (llm_pass, anchor_pass):
        monkeypatch.setattr(module, "check_mode", lambda scope, cache, name=module.__name__: asked.append(name) or False)
    scope = vault_scope(_vault(tmp_path / "v", notes=3))
    run(scope)
    asked.clear()
    assert quick_update.probe(scope) is not None
    assert asked == ["extract.llm_pass", "vault_kg.anchors.build_pass"]


def test_a_no_op_update_process_imports_nothing_heavy(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "v", notes=10)
    run(vault_scope(vault))
    code = (
        "import sys; sys.argv = ['kg', 'update', '--vault', sys.argv[1]]\n"
        "from vault_kg.cli.entry import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = sorted(m for m in ('numpy', 'scipy', 'igraph', 'networkx', 'typer', 'click', 'extract.notes', 'vault_kg.update.engine') if m in sys.modules)\n"
        "print('HEAVY', heavy)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(vault)], capture_output=True, text=True, cwd=ROOT, env=dict(os.environ), timeout=120)
    assert "nothing to rewrite" in done.stdout, done.stderr
    assert "HEAVY []" in done.stdout, done.stdout


# what a hook or a no-op process imports -------------------------------------------------------------

MODEL_PASS_MODULES = ("extract.llm_prompt", "extract.stated_relations", "extract.verify", "extract.pair_candidates", "difflib")
_MODULES = "print('MODULES', sorted(m for m in sys.modules if m.startswith(('extract.', 'vault_kg.update.link_patch')) or m == 'difflib'))\n"


def _clustered(vault: Path) -> None:
    """Wait for the clustering a hook left to a background process."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        stamp = _graph(vault)["graph"]["stamp"]
        if stamp["graph"] == stamp["communities"] and not cluster_job.running(vault / "kg-out"):
            break
        time.sleep(0.2)
    assert stamp["graph"] == stamp["communities"], (vault / "kg-out" / "communities.log").read_text()


def _modules(stdout: str) -> list[str]:
    return next(json.loads(line.split(" ", 1)[1].replace("'", '"')) for line in stdout.splitlines() if line.startswith("MODULES "))


def test_a_link_edit_hook_process_imports_none_of_the_model_pass(tmp_path: Path) -> None:
    """With the model pass off, a note whose structure states no relation needs none of the
    planner, the relation rules or the verifier (`extract.stated_gate` answers); the names its
    form marks are read (`extract.stated_entities`) and need nothing to verify."""
    vault = _vault(tmp_path / "v")
    (tmp_path / "config.toml").write_text(f'vault = "{vault}"\n[projects]\n')
    run(vault_scope(vault))
    note = _link_edit(vault, 11, "Note 13")
    payload = {"session_id": "t", "cwd": str(tmp_path), "hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_input": {"file_path": str(note)}}
    code = "import sys\nfrom hooks.dispatch import main\nmain(['post-tool-use'])\n" + _MODULES
    env = {k: v for k, v in os.environ.items() if k != "KG_VAULT"}
    done = subprocess.run([sys.executable, "-c", code], input=json.dumps(payload), capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert not done.stderr, done.stderr
    modules = _modules(done.stdout)
    assert {"extract.notes", "extract.llm_pass", "extract.stated_gate", "extract.stated_entities", "vault_kg.update.link_patch"} <= set(modules), modules  # the note was read and patched
    assert not set(MODEL_PASS_MODULES) & set(modules), modules
    _clustered(vault)
    assert artifacts(vault) == scratch(vault, tmp_path)


def test_with_the_model_pass_on_a_no_op_and_an_edit_import_no_planner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pass's mode (versions, prompt digest, options) comes from `extract.llm_schema`, and a
    note with prose and no model reachable yet is marked pending by `extract.prose` alone."""
    monkeypatch.setenv("KG_OLLAMA", "on")
    vault = _vault(tmp_path / "v", notes=10)
    scope = vault_scope(vault)
    run(scope)
    update = "import sys\nsys.argv = ['kg', 'update', '--vault', sys.argv[1]]\nfrom vault_kg.cli.entry import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
    done = subprocess.run([sys.executable, "-c", update + _MODULES, str(vault)], capture_output=True, text=True, cwd=ROOT, env=dict(os.environ), timeout=120)
    assert "nothing to rewrite" in done.stdout, done.stdout + done.stderr
    modules = _modules(done.stdout)
    assert "extract.llm_schema" in modules and not set(MODEL_PASS_MODULES) & set(modules), modules
    note = _link_edit(vault, 3, "Note 5")
    edit = (
        "import sys\nfrom pathlib import Path\nfrom vault_kg.update.engine import run\nfrom vault_kg.core.scopes import vault_scope\nrun(vault_scope(Path(sys.argv[1])), paths=[Path(sys.argv[2])])\n"
    )
    done = subprocess.run([sys.executable, "-c", edit + _MODULES, str(vault), str(note)], capture_output=True, text=True, cwd=ROOT, env=dict(os.environ), timeout=120)
    modules = _modules(done.stdout)
    assert "extract.prose" in modules and not set(MODEL_PASS_MODULES) & set(modules), modules + [done.stderr]
    assert {n["id"]: n for n in _graph(vault)["nodes"]}["note:Note 3.md"]["status"] == "pending"
    assert artifacts(vault) == scratch(vault, tmp_path)


# communities off the hot path ------------------------------------------------------------------


def _link_edit(vault: Path, i: int, target: str) -> Path:
    note = vault / f"Note {i}.md"
    note.write_text(note.read_text() + f"\nnow also [[{target}]]\n")
    return note


def test_previous_assignment_keeps_ids_and_names_only_live_nodes(tmp_path: Path) -> None:
    nodes = {f"n{i}": {"kind": "note", "label": f"N{i}", "source": f"n{i}.md"} for i in range(6)}
    groups = {f"n{i}.md": [{"source": f"n{i}", "target": f"n{(i + 1) % 3 + 3 * (i // 3)}", "relation": "links_to", "score": 1.0}] for i in range(6)}
    table = rank.edge_table(nodes, groups)
    ranks = rank.pagerank(nodes, table)
    fresh, rows = rank.communities(nodes, table, ranks)
    assert len(rows) == 2
    del nodes["n0"]
    nodes["n9"] = {"kind": "note", "label": "N9", "source": "n9.md"}
    groups = {o: [e for e in g if e["target"] != "n0"] for o, g in groups.items() if o != "n0.md"}
    table = rank.edge_table(nodes, groups)
    kept, kept_rows = rank.communities(nodes, table, rank.pagerank(nodes, table), previous=fresh)
    assert "n0" not in kept and "n9" not in kept
    assert all(kept[n] == fresh[n] for n in kept)
    assert all(m in nodes for row in kept_rows for m in row["members_top"])
    assert sum(row["size"] for row in kept_rows) == len(kept)


def test_a_hook_defers_clustering_and_the_job_brings_back_the_scratch_bytes(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "v")
    scope = vault_scope(vault)
    run(scope)
    before = _graph(vault)["graph"]["stamp"]
    assert before["graph"] == before["communities"]
    (vault / "Note 5.md").unlink()
    run(scope)
    note = _link_edit(vault, 7, "Note 8")
    result = run(scope, paths=[note], settings=RunSettings(defer=COMMUNITIES))
    assert result.extra["ranking"] == "computed" and result.extra["communities"] == "deferred"
    graph = _graph(vault)
    stamp = graph["graph"]["stamp"]
    assert stamp["communities"] != stamp["graph"]  # says they describe an earlier graph
    ids = {n["id"] for n in graph["nodes"]}
    assert all(m in ids for c in graph["graph"]["communities"] for m in c["members_top"])
    assert {n.get("community") for n in graph["nodes"]} - {None} <= {c["id"] for c in graph["graph"]["communities"]}
    assert "Provisional: these communities" in (vault / "kg-out" / "GRAPH_REPORT.md").read_text()
    # a prose edit before the job ran keeps them deferred (and does not recluster inline)
    note.write_text(note.read_text() + "\nprose only\n")
    result = run(scope, paths=[note], settings=RunSettings(defer=COMMUNITIES))
    assert result.extra["ranking"] == "reused" and result.extra["communities"] == "deferred"
    assert cluster_job.settle(scope)
    assert _graph(vault)["graph"]["stamp"] == {"graph": stamp["graph"], "communities": stamp["graph"]}
    assert artifacts(vault) == scratch(vault, tmp_path)
    again = run(scope)
    assert not again.written and "communities" not in again.extra


def test_an_update_outside_a_hook_clusters_what_a_hook_deferred(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "v")
    scope = vault_scope(vault)
    run(scope)
    run(scope, paths=[_link_edit(vault, 3, "Note 4")], settings=RunSettings(defer=COMMUNITIES))
    assert quick_update.probe(scope) is None  # the deferred clustering is work to do
    result = run(scope)
    assert result.written and "communities" not in result.extra
    assert artifacts(vault) == scratch(vault, tmp_path)


def test_the_job_reclusters_when_an_edit_lands_after_its_snapshot(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "v")
    scope = vault_scope(vault)
    run(scope)
    run(scope, paths=[_link_edit(vault, 3, "Note 4")], settings=RunSettings(defer=COMMUNITIES))
    digest, nodes, table, ranks = cluster_job.snapshot(scope.out)
    run(scope, paths=[_link_edit(vault, 9, "Note 2")], settings=RunSettings(defer=COMMUNITIES))
    assignment, communities = rank.communities(nodes, table, ranks)
    assert not cluster_job.install(scope.out, digest, ranks, assignment, communities)  # stale: refused
    assert cluster_job.settle(scope)
    assert artifacts(vault) == scratch(vault, tmp_path)


def test_the_post_tool_use_hook_leaves_clustering_to_a_background_process(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "v")
    (tmp_path / "config.toml").write_text(f'vault = "{vault}"\n[projects]\n')
    env = {k: v for k, v in os.environ.items() if k != "KG_VAULT"}
    subprocess.run([sys.executable, "-c", "from vault_kg.cli.entry import main; main()", "build"], env=env, cwd=ROOT, check=True, capture_output=True, timeout=300)
    note = _link_edit(vault, 11, "Note 13")
    payload = {"session_id": "t", "cwd": str(tmp_path), "hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_input": {"file_path": str(note)}}
    done = subprocess.run(
        [sys.executable, "-c", "from vault_kg.cli.entry import main; main()", "hook", "post-tool-use"], input=json.dumps(payload), env=env, cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0 and not done.stderr, done.stderr
    _clustered(vault)
    assert artifacts(vault) == scratch(vault, tmp_path)


# the edge table kept as bytes ------------------------------------------------------------------


def test_a_stored_table_hashes_and_counts_like_its_decoded_self(tmp_path: Path) -> None:
    from vault_kg.storage.cache import ScopeCache

    vault = _vault(tmp_path / "v")
    scope = vault_scope(vault)
    run(scope)
    cache = ScopeCache(scope.out / "cache" / "index.sqlite")
    try:
        blob = cache.con.execute("SELECT value FROM blobs WHERE key='table'").fetchone()[0]
    finally:
        cache.close()
    lazy, eager = rank.EdgeTable.from_bytes(blob), rank.EdgeTable.from_bytes(blob)
    eager.decoded()
    nodes = {n["id"]: n for n in _graph(vault)["nodes"]}
    full = rank.edge_table(nodes, {})  # a table built by numpy from nothing, for the node part
    assert lazy.digest_parts() == eager.digest_parts()
    assert rank.ranking_digest(nodes, lazy) == rank.ranking_digest(nodes, eager) != rank.ranking_digest(nodes, full)
    assert lazy.relation_counts() == eager.relation_counts() and lazy.row_count() == eager.row_count() > 0
    assert lazy.to_bytes() == blob
    assert marshal.loads(eager.to_bytes()) == marshal.loads(blob)  # the same contents (marshal's refs may differ)


def test_a_prose_edit_keeps_the_table_and_never_imports_numpy(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "v")
    scope = vault_scope(vault)
    run(scope)
    note = vault / "Note 9.md"
    note.write_text(note.read_text() + "\nJust more prose, no links, no tags.\n")
    code = (
        "import sys\nfrom pathlib import Path\nfrom vault_kg.update.engine import run\nfrom vault_kg.core.scopes import vault_scope\n"
        "result = run(vault_scope(Path(sys.argv[1])), paths=[Path(sys.argv[2])])\n"
        "print('RANKING', result.extra['ranking'], 'NUMPY', 'numpy' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(vault), str(note)], capture_output=True, text=True, cwd=ROOT, env=dict(os.environ), timeout=120)
    assert "RANKING reused NUMPY False" in done.stdout, done.stdout + done.stderr
    assert artifacts(vault) == scratch(vault, tmp_path)
    note.write_text(note.read_text() + "\nand a link to [[Note 12]]\n")
    result = run(scope, paths=[note])  # the edges changed: the table is patched with numpy, ranks computed
    assert result.extra["ranking"] == "computed"
    assert artifacts(vault) == scratch(vault, tmp_path)
