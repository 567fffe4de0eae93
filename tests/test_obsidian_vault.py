"""A vault kept the way Obsidian users keep one, end to end (issue #28).

`tests/fixtures/obsidian_vault` has what real vaults have and kg's own examples lacked: images, an
SVG, a PDF and a canvas in subfolders, embedded every way Obsidian embeds them (a bare name, a
path, a size, a page, a markdown embed) and one embed of a file that does not exist; `.obsidian/`
with Daily Notes, Periodic Notes (weekly), Templates and an excluded folder; hand-written daily
notes (a title and bullets with a time, headings under frontmatter, a Logseq-style name); a
templates folder with placeholder links; and the two frontmatter mistakes people make (a plain
value holding `: `, an unclosed `[` list). The graph is built in-process once per module.
"""

from __future__ import annotations

import json
import shutil
import socket
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator

import pytest

from conftest import kg_process
from robust_corpus import canonical, fresh_build
from vault_kg import api
from vault_kg.core import model as m
from vault_kg.core.memory_kinds import is_episodic
from vault_kg.core.scopes import vault_scope
from vault_kg.update.engine import run

FIXTURE = Path(__file__).parent / "fixtures" / "obsidian_vault"
STUDY = "research/Probe Study.md"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Any, dict[str, Any]]]:
    """The fixture vault built once; the tests read it (a test that writes makes its own copy)."""
    home = tmp_path_factory.mktemp("obsidian-home")
    vault = tmp_path_factory.mktemp("obsidian") / "vault"
    shutil.copytree(FIXTURE, vault)
    with pytest.MonkeyPatch.context() as env:  # what `isolated_config` does per test, for the whole module
        env.setenv("KG_CONFIG", str(home / "config.toml"))
        env.setenv("XDG_CONFIG_HOME", str(home / ".config"))
        env.setenv("KG_OLLAMA", "off")
        for var in ("KG_VAULT", "OLLAMA_HOST", "KG_MODEL"):
            env.delenv(var, raising=False)
        result = run(vault_scope(vault))
        yield vault, result, json.loads((vault / "kg-out" / "graph.json").read_text())


def edges_from(graph: dict[str, Any], source: str) -> set[tuple[str, str]]:
    return {(e["relation"], e["target"]) for e in graph["edges"] if e["source"] == source}


def test_embeds_of_files_that_exist_resolve_and_only_a_missing_one_dangles(built: tuple[Path, Any, dict[str, Any]]) -> None:
    vault, result, graph = built
    study = edges_from(graph, m.note_id(STUDY))
    for target in ("attachments/probe-map.png", "attachments/diagrams/flow.svg", "research/Pasted image 20240513101500.png"):
        assert (m.EMBEDS, m.attachment_id(target)) in study, target
    assert (m.LINKS_TO, m.attachment_id("research/papers/Probe Spec v2.pdf")) in study  # `[[Probe Spec v2.pdf#page=4]]` too
    assert (m.LINKS_TO, m.attachment_id("Boards/Research.canvas")) in study
    dangling = {n["id"]: n for n in graph["nodes"] if n["kind"] == m.UNRESOLVED}
    assert list(dangling) == ["unresolved:season-2-figure.png"] and dangling["unresolved:season-2-figure.png"]["referrers"] == [STUDY]
    kinds = {n["id"]: n["kind"] for n in graph["nodes"]}
    assert kinds[m.attachment_id("attachments/probe-map.png")] == m.ATTACHMENT and m.note_id("Archive/Old.md") not in kinds  # excluded in Obsidian's settings
    report = (vault / "kg-out" / "GRAPH_REPORT.md").read_text()
    assert "## Dangling links (1)" in report and "probe-map" not in report.split("## Dangling links")[1].split("##")[0]
    assert result.attachments == 5 and api.format_run(result, "built").startswith("built vault: 11 notes · 5 attachments")


def test_consolidate_plans_nothing_for_an_existing_attachment_a_day_note_or_a_template(built: tuple[Path, Any, dict[str, Any]]) -> None:
    from vault_kg.notes.consolidate import plan

    vault, _, graph = built
    data = plan(vault)
    dangling = [r["why"] for r in data["review"] if r["kind"] == "dangling"]
    assert dangling == ["[[season-2-figure.png]] has no likely target; create the note or fix the link"], "an embed of a file that exists is not dangling"
    touched = {a.get("note") for a in data["actions"]} | {r.get("note") for r in data["review"]}
    days = {n["source"] for n in graph["nodes"] if n["kind"] == m.NOTE and is_episodic(n)}
    assert not touched & (days | {"Templates/Daily.md", "Templates/Weekly.md"}), "a hand-written day or a template is never proposed for a change"


def test_a_canvas_embeds_its_cards_and_links_its_text(built: tuple[Path, Any, dict[str, Any]]) -> None:
    _, _, graph = built
    canvas = edges_from(graph, m.attachment_id("Boards/Research.canvas"))
    assert canvas == {(m.EMBEDS, m.note_id(STUDY)), (m.EMBEDS, m.attachment_id("attachments/probe-map.png")), (m.LINKS_TO, m.note_id("clients/Globex.md"))}


def test_notes_whose_properties_do_not_parse_keep_their_text_and_links(built: tuple[Path, Any, dict[str, Any]]) -> None:
    vault, result, graph = built
    nodes = {n["id"]: n for n in graph["nodes"]}
    acme, globex = nodes[m.note_id("clients/Acme.md")], nodes[m.note_id("clients/Globex.md")]
    assert acme["status"] == globex["status"] == m.LIVE and result.quarantined == []
    assert (m.LINKS_TO, m.note_id(STUDY)) in edges_from(graph, acme["id"]) and (m.LINKS_TO, m.note_id("clients/Acme.md")) in edges_from(graph, globex["id"])
    assert acme["frontmatter_error"].startswith("line 3:") and "props" not in acme and acme["summary"] == ""
    warnings = [w for w in result.warnings if "properties ignored" in w]
    assert sorted(w.split(" ", 1)[0] for w in warnings) == ["clients/Acme.md:3:", "clients/Globex.md:3:"]
    assert 'quote the value: `summary: "Client profile for Acme: contacts, scope"`' in next(w for w in warnings if w.startswith("clients/Acme"))
    found = api.query("contacts field lead", vault=vault)
    assert any(h["id"] == m.note_id("clients/Acme.md") for h in found["hits"]), "the body is searchable"


def test_day_notes_are_episodic_and_templates_link_nothing_yet(built: tuple[Path, Any, dict[str, Any]]) -> None:
    _, _, graph = built
    nodes = {n["id"]: n for n in graph["nodes"]}
    days = {n["source"] for n in graph["nodes"] if n["kind"] == m.NOTE and is_episodic(n)}
    assert days == {"Daily/2024-05-13.md", "Daily/2024-05-14.md", "Weekly/2024-W20.md", "journal/2024_05_16.md"}
    assert not days & {nodes[g]["source"] for g in graph["graph"]["god_nodes"] if nodes[g]["kind"] == m.NOTE}, "no day note is a god node"
    assert not [e for e in graph["edges"] if e["source"] == m.note_id("Templates/Daily.md") and e["relation"] == m.LINKS_TO], "`[[{{title}}]]` is filled in later"


def test_recall_answers_a_date_question_from_a_hand_written_day(built: tuple[Path, Any, dict[str, Any]]) -> None:
    vault, _, _ = built
    answer = api.recall("what was I doing on 13 May 2024", vault=vault)
    assert answer["mode"] == "list" and {e["file"] for e in answer["entries"]} == {"Daily/2024-05-13.md"}
    texts = [e["text"] for e in answer["entries"]]
    assert any("Met Dana at [[Acme]]" in t and "ordered 12 batteries" in t for t in texts), texts  # a bullet with its child
    assert any(t.startswith("Rained all afternoon") for t in texts) and not any(t.startswith("# Monday") for t in texts)
    assert [e["time"] for e in answer["entries"] if "call with Eli" in e["text"]] == ["14:30"]
    week = api.recall("what did I do between 2024-05-13 and 2024-05-19", vault=vault)
    assert {e["file"] for e in week["entries"]} == {"Daily/2024-05-13.md", "Daily/2024-05-14.md", "Weekly/2024-W20.md", "journal/2024_05_16.md"}
    headed = api.recall("what did I do on 2024-05-14", vault=vault)["entries"]
    assert sorted(e["text"].split("\n")[0] for e in headed) == ["## Afternoon", "## Morning"] and all(e["line"] > 3 for e in headed)


def test_lint_reports_counts_first_advises_no_refused_tag_and_fixes_only_the_safe_mistake(built: tuple[Path, Any, dict[str, Any]], tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(FIXTURE, vault)
    report = api.lint(vault)
    assert report["counts"] == {"frontmatter": 1, "frontmatter-yaml": 2} and report["exempt"] == 6  # day notes and templates
    text = api.render("lint", report)
    assert text.startswith("found: frontmatter 1, frontmatter-yaml 2") and "scope/global" not in text and "kg promote" not in text.split("Initech")[0]
    fixed = api.lint(vault, fix=True)
    assert fixed["fixed"] == [{"source": "clients/Acme.md", "lines": [3]}] and fixed["counts"] == {"frontmatter": 1, "frontmatter-yaml": 1}
    acme = (vault / "clients/Acme.md").read_text()
    assert (
        'summary: "Client profile for Acme: contacts, scope"\n' in acme
        and acme.replace('"Client profile for Acme: contacts, scope"', "Client profile for Acme: contacts, scope") == (FIXTURE / "clients/Acme.md").read_text()
    )
    assert (vault / "clients/Globex.md").read_bytes() == (FIXTURE / "clients/Globex.md").read_bytes(), "an unclosed list is left for a person"


def test_a_hook_edit_that_embeds_an_attachment_equals_a_fresh_build(built: tuple[Path, Any, dict[str, Any]], tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(FIXTURE, vault)
    scope = vault_scope(vault)
    run(scope)
    note = vault / "clients/Initech.md"
    note.write_text(note.read_text() + "\nTheir site plan: ![[flow.svg]] and ![[site-plan.png]]\n")
    run(scope, paths=[note])  # one note's link edit: patched into the last graph
    graph = json.loads((vault / "kg-out" / "graph.json").read_text())
    assert (m.EMBEDS, m.attachment_id("attachments/diagrams/flow.svg")) in edges_from(graph, m.note_id("clients/Initech.md"))
    (vault / "site-plan.png").write_bytes((FIXTURE / "attachments/probe-map.png").read_bytes())
    run(scope)
    assert canonical(scope.out) == fresh_build(scope, tmp_path / "scratch"), "an attachment that appears resolves the link that waited for it"
    assert not [n for n in json.loads((vault / "kg-out" / "graph.json").read_text())["nodes"] if n["kind"] == m.UNRESOLVED and "site-plan" in n["id"]]


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_with_no_model_reachable_answers_carry_no_pending_flag_and_the_build_says_why(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(FIXTURE, vault)
    env = {"KG_OLLAMA": "on", "OLLAMA_HOST": f"http://127.0.0.1:{closed_port()}"}
    built = kg_process("build", "--vault", str(vault), env=env)
    assert built.returncode == 0, built.stderr
    model = [line for line in built.stderr.splitlines() if "model pass:" in line]
    assert len(model) == 1 and "is not reachable" in model[0] and "ollama serve" in model[0] and "wait for it" in model[0]
    for args in (("query", "probe batteries"), ("explain", "Probe Study"), ("stats",)):
        done = kg_process(*args, "--vault", str(vault), env=env)
        assert done.returncode == 0 and "[PENDING]" not in done.stdout, (args, done.stdout)
    assert "model pass: Ollama is not reachable" in done.stdout  # `kg stats` says it once


def test_recall_date_resolution_has_the_day(built: tuple[Path, Any, dict[str, Any]]) -> None:
    from episodic.recall import days_in
    from episodic.dates import resolve

    vault, _, _ = built
    rng = resolve("on 16 May 2024", now=datetime(2024, 6, 1)).range
    assert rng is not None and [d.isoformat() for d in days_in(vault, rng)] == ["2024-05-16"]  # a Logseq-style name in `journal/`
