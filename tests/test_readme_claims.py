"""Documented claims that no other test checked: god nodes (docs/queries.md: an index note is not
crowned, tests get a tenth of the teleport weight, community ids stable and ordered) and
`KG_LOCK_TIMEOUT` (docs/configuration.md, docs/troubleshooting.md). The README's own shape and
links: tests/test_docs_links.py."""

from __future__ import annotations

import json
import time
from pathlib import Path

from conftest import kg_process
from vault_kg.core import model as m
from vault_kg.update.engine import run
from vault_kg.query.graph_view import load_view
from vault_kg.query.verbs import god_nodes
from vault_kg.core.scopes import Scope, vault_scope
from vault_kg.storage.layout import Layout
from vault_kg.core.store import scope_lock


def graph(out: Path) -> dict:
    return json.loads((out / "graph.json").read_text())


def test_an_index_note_linking_everything_is_not_a_god_node(example_vault: Path) -> None:
    """docs/queries.md: `Home.md` links to 35 notes and is not in the top 20 (PageRank passes its rank on)."""
    scope = vault_scope(example_vault)
    run(scope)
    data = graph(scope.out)
    home_links = {e["target"] for e in data["edges"] if e["source"] == "note:Home.md" and e["relation"] == m.LINKS_TO and e["target"].startswith("note:")}
    assert len(home_links) >= 30
    top = [row["id"] for row in god_nodes(load_view(scope), 20)]
    assert len(top) == 20 and "note:Home.md" not in top
    degree = {}
    for e in data["edges"]:
        if e["relation"] in (m.LINKS_TO, m.EMBEDS):
            for end in (e["source"], e["target"]):
                degree[end] = degree.get(end, 0) + 1
    assert max(degree, key=lambda n: degree[n]) == "note:Home.md", "Home is the highest-degree note: ranking by degree would crown it"


def test_tests_get_a_tenth_of_the_teleport_weight(tmp_path: Path) -> None:
    """Two identical little modules, one under tests/: the same shape, a lower rank for the test's."""
    body = "def base():\n    return 1\n\n\ndef one():\n    return base()\n\n\ndef two():\n    return base()\n"
    for rel in ("src/shapes.py", "tests/test_shapes.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(body)
    (tmp_path / ".git").mkdir()
    scope = Scope("shapes", "code", tmp_path.resolve(), (tmp_path / "kg-out").resolve())
    run(scope)
    rank = {n["id"]: n.get("rank", 0) for n in graph(scope.out)["nodes"]}
    product, test = rank["src/shapes.py › function base"], rank["tests/test_shapes.py › function base"]
    assert product > 0 and 0 < test < product
    assert rank["src/shapes.py › function one"] > rank["tests/test_shapes.py › function one"]


def test_community_ids_are_stable_and_ordered_by_size(example_vault: Path) -> None:
    """Same files, same ids, build after build; id 0 is the largest community."""
    scope = vault_scope(example_vault)
    run(scope)
    first = graph(scope.out)
    run(scope, force=True)
    again = graph(scope.out)
    assert {n["id"]: n.get("community") for n in first["nodes"]} == {n["id"]: n.get("community") for n in again["nodes"]}
    sizes: dict[int, int] = {}
    for n in first["nodes"]:
        if n.get("community") is not None:
            sizes[n["community"]] = sizes.get(n["community"], 0) + 1
    assert len(sizes) >= 2
    ordered = [sizes[c] for c in sorted(sizes)]
    assert ordered == sorted(ordered, reverse=True), ordered


def test_kg_lock_timeout_bounds_the_wait_for_a_held_scope(example_vault: Path) -> None:
    """docs/configuration.md: KG_LOCK_TIMEOUT is how long a writer waits for the scope lock; then one clear line."""
    scope = vault_scope(example_vault)
    run(scope)
    with scope_lock(Layout(scope.out)):
        started = time.perf_counter()
        done = kg_process("update", "--vault", str(example_vault), env={"KG_LOCK_TIMEOUT": "1"}, timeout=120)
        waited = time.perf_counter() - started
    assert done.returncode == 75, done.stderr
    assert waited >= 1.0, "it gave up before the timeout"
    line = done.stderr.strip()
    assert "\n" not in line and ".lock" in line and "held this scope for 1s" in line and "KG_LOCK_TIMEOUT" in line, line
    after = kg_process("update", "--vault", str(example_vault), env={"KG_LOCK_TIMEOUT": "1"})
    assert after.returncode == 0, after.stderr
