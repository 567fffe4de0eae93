"""Code scopes end to end through the CLI: register, build, detect from cwd, query across scopes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parent / "fixtures" / "code" / "python_repo"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    target = tmp_path / "shop"
    shutil.copytree(FIXTURE, target)
    (target / ".git").mkdir()
    return target


def test_register_build_and_detect_scope_from_cwd(repo: Path, kg, example_vault: Path) -> None:
    added = kg("project", "add", str(repo), "--name", "shop", "--json")
    assert added.returncode == 0, added.stderr
    assert json.loads(added.stdout)["name"] == "shop"
    listed = kg("project", "list")
    assert "shop" in listed.stdout
    built = kg("build", "--scope", "shop")
    assert built.returncode == 0, built.stderr
    assert built.stdout.startswith("built shop: ") and "files" in built.stdout
    data = json.loads((repo / "kg-out" / "graph.json").read_text())
    assert data["graph"]["kind"] == "code" and data["graph"]["scope"] == "shop"
    assert (repo / "kg-out" / ".gitignore").exists()
    sub = next(p for p in repo.rglob("*") if p.is_dir() and "kg-out" not in p.parts and ".git" not in p.parts)
    inside = kg("update", "--json", cwd=sub)
    assert inside.returncode == 0 and json.loads(inside.stdout)[0]["scope"] == "shop"
    report = (repo / "kg-out" / "GRAPH_REPORT.md").read_text()
    for section in ("## God nodes", "## Communities", "## Languages", "## Unresolved calls per file", "## Import cycles"):
        assert section in report


def test_cross_scope_query_labels_each_hit(repo: Path, kg, example_vault: Path) -> None:
    kg("project", "add", str(repo), "--name", "shop")
    kg("build", "--scope", "shop")
    kg("build", "--vault", str(example_vault))
    done = kg("query", "payments retry", "--scope", "vault", "--scope", "shop", "--vault", str(example_vault), "--json", "--budget", "4000")
    assert done.returncode == 0, done.stderr
    hits = json.loads(done.stdout)["hits"]
    assert {h["scope"] for h in hits} <= {"vault", "shop"} and "vault" in {h["scope"] for h in hits}
    text = kg("query", "payments retry", "--scope", "vault", "--scope", "shop", "--vault", str(example_vault)).stdout
    assert "[vault]" in text


def test_affected_lists_callers(repo: Path, kg) -> None:
    kg("project", "add", str(repo), "--name", "shop")
    kg("build", "--scope", "shop")
    data = json.loads((repo / "kg-out" / "graph.json").read_text())
    called = {}
    for e in data["edges"]:
        if e["relation"] == "calls" and not e["target"].startswith("external:"):
            called.setdefault(e["target"], set()).add(e["source"])
    target, callers = max(called.items(), key=lambda kv: (len(kv[1]), kv[0]))
    done = kg("affected", target, "--scope", "shop", "--depth", "1", "--json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert callers <= {h["id"] for h in answer["affected"] if h["relation"] == "calls"}
    assert all(h["hop"] == 1 for h in answer["affected"])


def test_unknown_scope_is_one_clear_line(kg) -> None:
    done = kg("build", "--scope", "nope")
    assert done.returncode == 1 and "unknown scope 'nope'" in done.stderr and "kg project add" in done.stderr
