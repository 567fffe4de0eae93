"""`kg html` and `kg export` as a user runs them: real `kg` process, real example vault."""

from __future__ import annotations

import io
import json
from pathlib import Path

import networkx as nx

from conftest import kg_process


def test_html_and_export_commands_on_a_built_vault(example_vault: Path, tmp_path: Path) -> None:
    built = kg_process("build", "--vault", str(example_vault))
    assert built.returncode == 0, built.stderr
    page = example_vault / "kg-out" / "graph.html"
    page.unlink()

    done = kg_process("html", "--vault", str(example_vault), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["path"] == str(page) and summary["changed"] is True
    first = page.read_bytes()
    assert b'id="kg-data"' in first and summary["bytes"] == len(first)
    again = kg_process("html", "--vault", str(example_vault), "--json")
    assert json.loads(again.stdout)["changed"] is False and page.read_bytes() == first

    target = tmp_path / "graph.graphml"
    done = kg_process("export", "--vault", str(example_vault), "--format", "graphml", "-o", str(target))
    assert done.returncode == 0, done.stderr
    graph = json.loads((example_vault / "kg-out" / "graph.json").read_text())
    back = nx.read_graphml(target, force_multigraph=True)
    assert set(back.nodes) == {n["id"] for n in graph["nodes"]}
    assert back.number_of_edges() == len(graph["edges"])

    done = kg_process("export", "--vault", str(example_vault), "--format", "mermaid")
    assert done.returncode == 0 and done.stdout.startswith("flowchart LR\n")

    done = kg_process("export", "--vault", str(example_vault), "--format", "gexf", "--json")
    assert json.loads(done.stdout)["format"] == "gexf"
    assert nx.read_gexf(io.StringIO(json.loads(done.stdout)["content"])).number_of_nodes() == len(graph["nodes"])


def test_commands_fail_with_one_clear_line(tmp_path: Path) -> None:
    empty = tmp_path / "vault"
    empty.mkdir()
    done = kg_process("html", "--vault", str(empty))
    assert done.returncode == 1
    assert done.stderr.strip().count("\n") == 0
    assert "graph.json" in done.stderr and "kg build" in done.stderr

    (empty / "kg-out").mkdir()
    (empty / "kg-out" / "graph.json").write_text("{not json")
    done = kg_process("export", "--vault", str(empty), "--format", "cypher")
    assert done.returncode == 1 and "not valid JSON" in done.stderr and "kg build" in done.stderr
    assert not (empty / "kg-out" / "graph.html").exists()

    done = kg_process("export", "--vault", str(empty), "--format", "dot")
    assert done.returncode == 1 and "unknown format 'dot'" in done.stderr

    (empty / "kg-out" / "graph.json").write_text(json.dumps({"nodes": [], "edges": []}))
    done = kg_process("export", "--vault", str(empty), "--format", "cypher", "-o", str(tmp_path / "no" / "x.cypher"))
    assert done.returncode == 1 and "folder does not exist" in done.stderr
