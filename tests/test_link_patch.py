"""The one-note link-edit patch (vault_kg/update/link_patch.py): an edit that changes only a note's links
is patched into the last graph without loading every extraction, and leaves exactly the bytes a
from-scratch build writes; edits it cannot patch take the whole route. Its speed is measured in
bench/agent_bench.py and bench/update_phases.py."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from vault_kg.update import link_patch
from vault_kg.update.engine import run
from vault_kg.core.scopes import vault_scope

from scratch_build import artifacts, isolated_env, numbered_notes, scratch, whole_route_loads


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolated_env(monkeypatch, tmp_path)


def _vault(root: Path, notes: int = 30) -> Path:
    numbered_notes(root, notes)
    (root / "Headed.md").write_text("---\nsummary: has sections\n---\n# Headed\n\n## Alpha\nalpha text ^blk\n\n## Beta\nbeta text\n")
    (root / "Linker.md").write_text("---\nsummary: links by heading, block and alias\n---\n[[Headed#Beta]] [[Headed#^blk]] [[n3]] ![[Headed]]\n")
    return root


def _tables(vault: Path) -> dict[str, list[tuple[object, ...]]]:
    """The query tables the cache keeps (nodes with rank and community, edges), sorted."""
    con = sqlite3.connect(vault / "kg-out" / "cache" / "index.sqlite")
    try:
        return {
            "nodes": sorted(con.execute("SELECT id, kind, label_lc, source, status, rank, community, data FROM nodes")),
            "edges": sorted(con.execute("SELECT owner, source, target, relation, data FROM edges")),
        }
    finally:
        con.close()


def _built(tmp_path: Path) -> Path:
    vault = _vault(tmp_path / "v")
    run(vault_scope(vault))
    return vault


@pytest.mark.parametrize(
    "edit",
    [
        lambda t: t + "\nsee also [[Note 9]]\n",  # a new link to a note
        lambda t: t + "\nand [[n12]], by alias\n",  # a new link by alias
        lambda t: t.replace("[[Note 13]]", "[[Note 14]]", 1),  # a link that now points at another note
        lambda t: t.replace("[[Note 13]] ", "", 1) + "\n[[Note 13]]\n",  # a link moved to another line
        lambda t: t.replace("---\n[[", "---\n[[Linker]] [[", 1),  # a second link on the first line
        lambda t: t + "\nsee [[Nowhere yet]]\n",  # a dangling target no note named: a new node
        lambda t: t + "\nsee [[Missing 1]]\n",  # a dangling target other notes name: one more referrer
        lambda t: t.replace("[[Missing 2]]", "[[Note 2]]", 1),  # a link to a dangling target retargeted: one referrer fewer
        lambda t: t + "\nsee [[Headed#Alpha]]\n",  # a section no link reached before: a new node under its note
        lambda t: t + "\nand [[Headed#Beta]]\n",  # a section another note already names
        lambda t: t + "\nnow #topic/t1 too\n",  # a tag other notes use
        lambda t: t + "\nnow #brand/new/tag\n",  # a tag no note used, under parents no note used
        lambda t: t + "\nnow #topic/t0/deeper\n",  # a tag under a tag other notes use
        lambda t: t.replace("tags: [topic/t0]", "tags: [convention/style]", 1),  # the only frontmatter tag replaced: brief.json lists it
        lambda t: t.replace(" #inline/t0", "", 1),  # a tag the note stops using
    ],
)
def test_a_link_edit_is_patched_without_loading_other_notes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit) -> None:  # type: ignore[no-untyped-def]
    vault = _built(tmp_path)
    note = vault / "Note 6.md"
    note.write_text(edit(note.read_text()))
    with whole_route_loads() as loads:
        result = run(vault_scope(vault), paths=[note])
    assert loads == [] and result.extracted == ["Note 6.md"] and result.extra["rederived_owners"] in (1, 2)  # 2: Headed.md gains a section
    assert artifacts(vault) == scratch(vault, tmp_path)
    assert _tables(vault) == _tables(tmp_path / "scratch")


def test_a_link_edit_of_a_pending_note_is_patched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the model pass on and no server running (a new user's default) every note is pending;
    a link edit is patched all the same (the quiet vault_bench found every such edit going down
    the whole route)."""
    monkeypatch.setenv("KG_OLLAMA", "on")
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")
    monkeypatch.setenv("KG_LLM_CACHE", str(tmp_path / "answers"))
    vault = _built(tmp_path)
    note = vault / "Note 6.md"
    note.write_text(note.read_text() + "\nsee also [[Note 9]] and [[Nowhere yet]]\n")
    with whole_route_loads() as loads:
        run(vault_scope(vault), paths=[note])
    graph = (vault / "kg-out" / "graph.json").read_bytes()
    assert loads == [] and b'"id":"note:Note 6.md"' in graph and b'"status":"pending"' in graph
    assert artifacts(vault) == scratch(vault, tmp_path)
    assert _tables(vault) == _tables(tmp_path / "scratch")


def test_a_removed_link_is_patched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = _built(tmp_path)
    note = vault / "Linker.md"
    note.write_text(note.read_text().replace("[[n3]] ", ""))
    with whole_route_loads() as loads:
        run(vault_scope(vault), paths=[note])
    assert loads == []
    fresh = scratch(vault, tmp_path)
    assert artifacts(vault) == fresh and b'"source":"note:Linker.md","target":"note:Note 3.md"' not in fresh["graph.json"]


def test_a_dangling_target_named_by_one_note_goes_with_its_link(tmp_path: Path) -> None:
    vault = _built(tmp_path)
    note = vault / "Linker.md"
    _append_then_update(vault, note, "\nsee [[Only here]]\n")
    assert b"unresolved:only here" in artifacts(vault)["graph.json"]
    note.write_text(note.read_text().replace("[[Only here]]", "[[Note 4]]"))
    with whole_route_loads() as loads:
        run(vault_scope(vault), paths=[note])
    assert loads == []
    fresh = scratch(vault, tmp_path)
    assert artifacts(vault) == fresh and b"unresolved:only here" not in fresh["graph.json"]
    assert _tables(vault) == _tables(tmp_path / "scratch")


def _append_then_update(vault: Path, note: Path, text: str) -> None:
    note.write_text(note.read_text() + text)
    run(vault_scope(vault), paths=[note])


@pytest.mark.parametrize(
    "edit",
    [
        "\n## A new heading\n",  # a heading others may link to
        "\nnow [[Headed#Alpha]]\n## A new heading\n",  # a new link, and a heading
    ],
)
def test_an_edit_that_changes_nodes_takes_the_whole_route(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: str) -> None:
    vault = _built(tmp_path)
    note = vault / "Note 6.md"
    note.write_text(note.read_text() + edit)
    with whole_route_loads() as loads:
        run(vault_scope(vault), paths=[note])
    assert loads == [1]
    assert artifacts(vault) == scratch(vault, tmp_path)


@pytest.mark.parametrize(
    "edit",
    [
        ("aliases: [n7]", "aliases: [n7, Missing 1]"),  # an alias other notes' dangling links name: they now find this note
        ("aliases: [n7]", "aliases: [seven]"),  # an alias dropped (Note 4 links by it) and one no link names
        ("aliases: [n7]", "aliases: [n7, N7]"),  # the same alias twice: links by it are now ambiguous
    ],
)
def test_an_alias_edit_is_patched(tmp_path: Path, edit: tuple[str, str]) -> None:
    vault = _built(tmp_path)
    (vault / "Note 4.md").write_text((vault / "Note 4.md").read_text() + "\nby alias [[n7]] and [[n7#Part 1]]\n")
    run(vault_scope(vault))
    note = vault / "Note 7.md"
    note.write_text(note.read_text().replace(*edit))
    with whole_route_loads() as loads:
        run(vault_scope(vault), paths=[note])
    assert loads == [] or edit[1] == "aliases: [seven]"  # a section link by a dropped alias dangles: the whole route
    assert artifacts(vault) == scratch(vault, tmp_path)
    assert _tables(vault) == _tables(tmp_path / "scratch")


@pytest.mark.parametrize("alias", ["Note 3", "n12"])
def test_an_alias_a_name_or_another_alias_answers_to(tmp_path: Path, alias: str) -> None:
    """A file name answers before an alias (nothing to redo); another note's alias makes links by
    it ambiguous, and who links by it is not recorded (the whole route)."""
    vault = _built(tmp_path)
    note = vault / "Note 7.md"
    note.write_text(note.read_text().replace("aliases: [n7]", f"aliases: [n7, {alias}]"))
    with whole_route_loads() as loads:
        run(vault_scope(vault), paths=[note])
    assert loads == ([] if alias == "Note 3" else [1])
    assert artifacts(vault) == scratch(vault, tmp_path)


def test_edits_while_the_hooks_clustering_waits_are_patched(tmp_path: Path) -> None:
    """Back-to-back hook updates (the background clustering not run yet) take the link patch,
    prose edits too (the prose patch keeps the last communities, which are due again); once
    clustered, the graph is a fresh build's."""
    from vault_kg.update.run_state import COMMUNITIES, RunSettings

    vault = _built(tmp_path)
    for i, (name, text) in enumerate([("Note 6.md", "see [[Note 10]]"), ("Note 8.md", "see [[Nowhere]] #topic/t2"), ("Note 6.md", "prose only"), ("Note 6.md", "")]):
        note = vault / name
        if text:
            note.write_text(note.read_text() + f"\n{text}\n")
        else:
            note.touch()  # the same bytes: the whole route decides
        with whole_route_loads() as loads:
            result = run(vault_scope(vault), paths=[note], settings=RunSettings(defer=COMMUNITIES))
        assert loads == ([1] if not text else []), i
        assert result.extra.get("communities") == "deferred", i
    run(vault_scope(vault))  # what the hook's background job settles
    assert artifacts(vault) == scratch(vault, tmp_path)
    assert _tables(vault) == _tables(tmp_path / "scratch")


@pytest.mark.parametrize("hook", [False, True])
def test_random_link_edits_patched_or_not_equal_a_fresh_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hook: bool) -> None:
    """Links added, removed and retargeted at random (to notes, aliases, sections, blocks,
    dangling targets), tags added, nested, renamed and dropped, mixed with prose edits, each
    compared with a fresh build (artifacts and query tables). `hook`: as the PostToolUse hook
    runs them (ranks and artifacts deferred, `vault_kg.update.deferred_work`), with its background job run after
    every third edit, before the comparison."""
    from vault_kg.jobs import clustering as cluster_job
    from vault_kg.update.run_state import WHOLE_GRAPH, RunSettings

    vault = _vault(tmp_path / "v")
    run(vault_scope(vault))
    patched: list[str] = []
    original = link_patch._record_note

    def counting(run_, new, last):  # type: ignore[no-untyped-def]
        patched.append(new.source)
        original(run_, new, last)

    monkeypatch.setattr(link_patch, "_record_note", counting)
    rng = random.Random(18)
    targets = ["Note 3", "n17", "m17", "Missing 3", "other", "Headed#Beta", "Headed#Alpha", "Headed#^blk", "Linker", "Missing 2", "Nowhere", "Note 40", "Note 5", "Note 11", "n2"]
    edits = [
        lambda t: t + f"\nand [[{rng.choice(targets)}]]\n",  # a new link
        lambda t: t.replace("[[Note ", f"[[Note {rng.randrange(30)}]] [[Note ", 1),  # a link added before the first
        lambda t: t.replace("[[", "[[Note 2", 1),  # a link retargeted
        lambda t: t.replace("]] [[", "]] plain [[x", 1),  # a link retargeted to a dangling name
        lambda t: t.replace("[[", "", 1).replace("]]", "", 1),  # the first link removed
        lambda t: t + f"\nprose {rng.random()}\n",  # prose only
        lambda t: t + f"\n#topic/t{rng.randrange(5)}\n",  # a tag
        lambda t: t + f"\n#area/a{rng.randrange(3)}/b{rng.randrange(3)}\n",  # a nested tag
        lambda t: t.replace("#inline/t", "#inline/x/t", 1),  # a tag renamed, one level deeper
        lambda t: t.replace(" #", " ", 1),  # an inline tag becomes text
        lambda t: t.replace("aliases: [", f"aliases: [{rng.choice(['Missing 3', 'Nowhere', 'n2', 'other'])}, ", 1),  # an alias gained
        lambda t: t.replace("aliases: [n", "aliases: [m", 1),  # an alias renamed
    ]
    notes = sorted(vault.glob("*.md"))
    for step in range(30):
        note = rng.choice(notes)
        note.write_text(rng.choice(edits)(note.read_text()))
        if hook:  # two edits in three land before the job runs: deferred work piles up
            run(vault_scope(vault), paths=[note], settings=RunSettings(defer=WHOLE_GRAPH))
            if step % 3 != 2:
                continue
            assert cluster_job.settle(vault_scope(vault))
        else:
            run(vault_scope(vault), paths=[note])
        assert artifacts(vault) == scratch(vault, tmp_path), f"step {step}: {note.name}"
        assert _tables(vault) == _tables(tmp_path / "scratch"), f"step {step}: {note.name}"
        assert _note_index(vault) == _note_index(tmp_path / "scratch"), f"step {step}: {note.name}: the kept note index is not a fresh build's"
    assert len(patched) >= 18, patched  # 25 of the 30 steps with this seed


def _note_index(vault: Path) -> object:
    """The note index the cache keeps for the next link patch (paths relative to the vault)."""
    from vault_kg.storage.cache import ScopeCache
    from vault_kg.update.assembly import LOOKUP_BLOB

    cache = ScopeCache(vault / "kg-out" / "cache" / "index.sqlite")
    try:
        return cache.get_blob(LOOKUP_BLOB)
    finally:
        cache.close()
