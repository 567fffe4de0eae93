"""The one-note prose-edit patch (vault_kg/update/prose_patch.py): it takes only the edits it can patch,
reads only the edited note, and leaves exactly the bytes the whole route and a from-scratch build
write. Its speed is measured in bench/agent_bench.py."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vault_kg.anchors import dates as anchor_dates
from vault_kg.anchors import build_pass as anchor_pass
from vault_kg.storage.cache import ScopeCache
from vault_kg.jobs import clustering as cluster_job
from vault_kg.update.engine import run
from vault_kg.core.scopes import vault_scope

from conftest import hook_modules
from scratch_build import artifacts, isolated_env, numbered_notes, scratch, whole_route_loads

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("numpy", "scipy", "igraph", "networkx", "typer", "click", "pydantic", "filelock")


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolated_env(monkeypatch, tmp_path)


def _vault(root: Path, notes: int = 30) -> Path:
    return numbered_notes(root, notes)


def _built(tmp_path: Path) -> Path:
    vault = _vault(tmp_path / "v")
    run(vault_scope(vault))
    return vault


def _whole_route_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the run if it loads every extraction (what the whole route does first)."""

    def refuse(self: ScopeCache) -> None:
        raise AssertionError("the whole route ran: every extraction was loaded")

    monkeypatch.setattr(ScopeCache, "load_all", refuse)


def _append(note: Path, text: str) -> None:
    note.write_text(note.read_text() + text)


def test_a_prose_edit_is_patched_without_loading_other_notes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = _built(tmp_path)
    note = vault / "Note 4.md"
    _append(note, "\nMore prose, two lines of it.\nAnd another.\n")
    with monkeypatch.context() as m:
        _whole_route_refused(m)
        result = run(vault_scope(vault), paths=[note])
    assert result.extracted == ["Note 4.md"] and result.extra["ranking"] == "reused"
    assert result.written == [str(vault / "kg-out" / "graph.json")]
    assert result.sources == 30 and result.nodes > 30
    assert artifacts(vault) == scratch(vault, tmp_path)
    again = run(vault_scope(vault), paths=[note])
    assert not again.extracted and not again.written


def test_the_patched_note_is_found_by_its_new_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vault_kg.storage.cache import GraphReader

    vault = _built(tmp_path)
    note = vault / "Note 5.md"

    def end_line() -> int:
        reader = GraphReader(vault / "kg-out" / "cache" / "index.sqlite")
        try:
            row = reader.node("note:Note 5.md")
            assert row is not None
            return int(row["end_line"])
        finally:
            reader.close()

    before = end_line()
    _append(note, "\nzanzibarian quokkas\n")
    with monkeypatch.context() as m:
        _whole_route_refused(m)
        run(vault_scope(vault), paths=[note])
    reader = GraphReader(vault / "kg-out" / "cache" / "index.sqlite")
    try:
        hits = reader.search('"quokkas"', (1.0, 1.0, 1.0, 1.0), 5)
    finally:
        reader.close()
    assert [nid for nid, _ in hits] == ["note:Note 5.md"]
    assert end_line() == before + 2


@pytest.mark.parametrize(
    "edit",
    [
        "\n## A new heading\n",  # a heading others may link to (links, tags and aliases: tests/test_link_patch.py)
        "\nsee also [[Note 9]]\n## A new heading\n",  # a new link and a heading
    ],
)
def test_an_edit_beyond_prose_takes_the_whole_route(tmp_path: Path, edit: str) -> None:
    vault = _built(tmp_path)
    note = vault / "Note 6.md"
    _append(note, edit)
    with whole_route_loads() as loads:
        run(vault_scope(vault), paths=[note])
    assert loads == [1]
    assert artifacts(vault) == scratch(vault, tmp_path)


def _god_and_other(vault: Path) -> tuple[str, str]:
    graph = json.loads((vault / "kg-out" / "graph.json").read_bytes())
    gods = graph["graph"]["god_nodes"]
    other = next(n["source"] for n in graph["nodes"] if n["kind"] == "note" and n["id"] not in gods)
    return gods[0].removeprefix("note:"), other


def test_a_new_summary_is_patched_when_no_artifact_shows_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = _built(tmp_path)
    _, other = _god_and_other(vault)
    note = vault / other
    note.write_text(note.read_text().replace("summary: note ", "summary: the note numbered "))
    with monkeypatch.context() as m:
        _whole_route_refused(m)
        result = run(vault_scope(vault), paths=[note])
    assert result.extracted == [other]
    assert artifacts(vault) == scratch(vault, tmp_path)


def test_a_god_nodes_new_summary_takes_the_whole_route(tmp_path: Path) -> None:
    """brief.json and the report show god nodes' summaries: those must be written again."""
    vault = _built(tmp_path)
    god, _ = _god_and_other(vault)
    note = vault / god
    note.write_text(note.read_text().replace("summary: note ", "summary: the central note "))
    result = run(vault_scope(vault), paths=[note])
    assert "rederived_owners" in result.extra
    fresh = scratch(vault, tmp_path)
    assert artifacts(vault) == fresh and b"the central note" in fresh["brief.json"]


def test_a_conventions_new_summary_takes_the_whole_route(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "v", notes=60)
    note = vault / "House style.md"
    note.write_text("---\nsummary: tabs, not spaces\ntags: [convention/style]\n---\nIndent with tabs.\n")
    run(vault_scope(vault))
    assert "note:House style.md" not in json.loads((vault / "kg-out" / "graph.json").read_bytes())["graph"]["god_nodes"]
    note.write_text(note.read_text().replace("tabs, not spaces", "spaces, not tabs"))
    result = run(vault_scope(vault), paths=[note])
    assert "rederived_owners" in result.extra
    fresh = scratch(vault, tmp_path)
    assert artifacts(vault) == fresh and b"spaces, not tabs" in fresh["brief.json"]


def test_a_frontmatter_edit_takes_the_whole_route(tmp_path: Path) -> None:
    vault = _built(tmp_path)
    note = vault / "Note 7.md"
    note.write_text(note.read_text().replace("aliases: [n7]", "aliases: [n7, seven]"))
    result = run(vault_scope(vault), paths=[note])
    assert "rederived_owners" in result.extra
    assert artifacts(vault) == scratch(vault, tmp_path)


def test_a_graph_json_changed_by_hand_is_rewritten_by_the_whole_route(tmp_path: Path) -> None:
    vault = _built(tmp_path)
    graph = vault / "kg-out" / "graph.json"
    graph.write_bytes(graph.read_bytes().replace(b'"Note 8"', b'"Note 8 (edited by hand)"'))
    note = vault / "Note 8.md"
    _append(note, "\nprose\n")
    result = run(vault_scope(vault), paths=[note])
    assert "rederived_owners" in result.extra
    assert artifacts(vault) == scratch(vault, tmp_path)


def test_a_new_day_reevaluates_validity_windows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A note valid until tomorrow is current today; the next day a prose edit of another note must
    find it stale the way a fresh build does, so the patch steps aside on a new day."""
    vault = _vault(tmp_path / "v")
    day = dt.date.today()
    (vault / "Expiring.md").write_text(f"---\nsummary: true until tomorrow\nvalid_to: {day + dt.timedelta(days=1)}\n---\nfacts\n")
    run(vault_scope(vault))
    tomorrow = lambda cfg=None: day + dt.timedelta(days=2)  # noqa: E731
    monkeypatch.setattr(anchor_dates, "today", tomorrow)
    monkeypatch.setattr(anchor_pass, "today", tomorrow)
    note = vault / "Note 2.md"
    _append(note, "\nprose\n")
    result = run(vault_scope(vault), paths=[note])
    assert "rederived_owners" in result.extra
    fresh = scratch(vault, tmp_path)
    assert artifacts(vault) == fresh
    node = next(n for n in json.loads(fresh["graph.json"])["nodes"] if n["id"] == "note:Expiring.md")
    assert node["status"] != "live"


def test_the_hook_on_a_prose_edit_imports_nothing_heavy(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "v")
    (tmp_path / "config.toml").write_text(f'vault = "{vault}"\n[projects]\n')
    env = {k: v for k, v in os.environ.items() if k != "KG_VAULT"}
    subprocess.run([sys.executable, "-c", "from vault_kg.cli.entry import main; main()", "build"], env=env, cwd=ROOT, check=True, capture_output=True, timeout=300)
    note = vault / "Note 3.md"
    _append(note, "\nprose only\n")
    modules = hook_modules(note, ROOT, env)
    assert not set(HEAVY) & modules and "vault_kg.update.prose_patch" in modules, sorted(set(HEAVY) & modules)
    assert "vault_kg.update.graph_splice" not in modules  # graph.json is the background job's to write
    _wait_for_the_job(vault / "kg-out")
    assert artifacts(vault) == scratch(vault, tmp_path)


def _wait_for_the_job(out: Path) -> None:
    """Until the background job a hook started has settled its edits (it holds no lock, none waits)."""
    import time

    deadline = time.monotonic() + 120
    while cluster_job.running(out) or cluster_job.owed(out):
        assert time.monotonic() < deadline, "the background job never settled the hook's edit"
        time.sleep(0.05)


def test_random_edits_patched_or_not_equal_a_fresh_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Prose edits of every kind of note (linked by heading, by alias, a god node, a convention),
    mixed with edits the patch must refuse, each compared with a fresh build."""
    import random

    from vault_kg.update import prose_patch as note_patch

    vault = _vault(tmp_path / "v")
    (vault / "Headed.md").write_text("---\nsummary: has sections\n---\n# Headed\n\n## Alpha\nalpha text ^blk\n\n## Beta\nbeta text\n")
    (vault / "Linker.md").write_text("---\nsummary: links by heading, block and alias\n---\n[[Headed#Beta]] [[Headed#^blk]] [[n3]] ![[Headed]]\n")
    (vault / "House style.md").write_text("---\nsummary: tabs\ntags: [convention/style]\n---\nIndent with tabs.\n")
    run(vault_scope(vault))
    patched: list[str] = []
    original = note_patch._record_note

    def counting(run_: object, new: object) -> None:
        patched.append(new.source)
        original(run_, new)  # type: ignore[arg-type]

    monkeypatch.setattr(note_patch, "_record_note", counting)
    rng = random.Random(18)
    edits = [
        lambda t: t + f"\nprose {rng.random()}\n",  # appended prose
        lambda t: t.replace("text", "words", 1),  # a word changed in place
        lambda t: t.replace("summary: ", f"summary: {rng.randrange(99)} ", 1),  # a new summary
        lambda t: t.replace("\n---\n", "\n---\nan inserted first line\n", 1),  # every line below moves
        lambda t: t + f"\nand [[Note {rng.randrange(40)}]]\n",  # a new link
    ]
    notes = sorted(vault.glob("*.md"))
    for step in range(24):
        note = rng.choice(notes)
        note.write_text(rng.choice(edits)(note.read_text()))
        run(vault_scope(vault), paths=[note])
        assert artifacts(vault) == scratch(vault, tmp_path), f"step {step}: {note.name}"
    assert len(patched) >= 10, patched  # 14 of the 24 steps with this seed
