"""Realistic vault-like graph.json dicts of any size, for the html/export tests and the bench.

The engine writes graph.json; until a real vault of 10,000 notes exists, this makes one in the same
schema (see DESIGN.md §3): notes in folders with namespaced tags, sections, wikilinks that cluster
by topic, unresolved links, LLM entities with inferred relations, stale/superseded/pending notes,
anchors, communities with names and cohesion, ranks in [0, 1] and god nodes. Seeded: the same
arguments always give the same dict.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import networkx as nx

TOPICS = [
    "billing",
    "search",
    "auth",
    "ingest",
    "deploy",
    "retry",
    "cache",
    "metrics",
    "onboarding",
    "pricing",
    "exports",
    "webhooks",
    "scheduler",
    "storage",
    "alerts",
    "reports",
    "sync",
    "quota",
]
WORDS = [
    "plan",
    "notes",
    "design",
    "incident",
    "runbook",
    "decision",
    "review",
    "spec",
    "migration",
    "checklist",
    "postmortem",
    "overview",
    "playbook",
    "faq",
    "retro",
    "roadmap",
    "budget",
    "audit",
]
FOLDERS = ["projects", "clients", "tools", "areas", "meetings", "journal"]
CLIENTS = ["acme", "globex", "initech", "umbrella", "hooli", "stark", "wayne", "wonka"]
TOOLS = ["semrush", "postgres", "redis", "kafka", "grafana", "sentry", "terraform", "airflow"]
SCOPES = ["api", "web", "etl", "infra"]
HEADINGS = ["Context", "Decision", "Steps", "Open questions", "Links", "Risks", "Timeline"]
RELATIONS_LLM = ["uses", "depends_on", "owns"]
EXAMPLE_VAULT = Path(__file__).resolve().parents[1] / "examples" / "vault"


def make_graph(notes: int = 200, seed: int = 7) -> dict[str, Any]:
    """A node-link graph.json dict with about ``notes`` notes and everything a vault graph holds."""
    rng = random.Random(seed)
    g = nx.MultiDiGraph()
    topic_of: dict[str, int] = {}
    note_ids: list[str] = []
    by_topic: dict[int, list[str]] = defaultdict(list)

    topics = [t if i < len(TOPICS) else f"{t}{i // len(TOPICS)}" for i, t in ((i, TOPICS[i % len(TOPICS)]) for i in range(max(6, notes // 60)))]
    for i in range(notes):
        topic = rng.randrange(len(topics)) if i >= len(topics) else i
        folder = rng.choice(FOLDERS)
        title = f"{topics[topic].title()} {rng.choice(WORDS)} {i}"
        rel = f"{folder}/{title.lower().replace(' ', '-')}.md"
        nid = f"note:{rel}"
        tags = sorted({f"client/{rng.choice(CLIENTS)}", f"tool/{rng.choice(TOOLS)}", f"topic/{topics[topic]}"} | ({f"scope/{rng.choice(SCOPES)}"} if rng.random() < 0.5 else set()))
        status = "live"
        roll = rng.random()
        if roll < 0.02:
            status = "stale"
        elif roll < 0.03:
            status = "pending"
        elif roll < 0.035:
            status = "superseded"
        attrs: dict[str, Any] = {
            "kind": "note",
            "label": title,
            "source": rel,
            "line": 1,
            "end_line": 20 + rng.randrange(200),
            "summary": f"How we handle {topics[topic]} for {tags[0].split('/')[1]}: {rng.choice(WORDS)} and {rng.choice(WORDS)} <b>&</b> </script> notes.",
            "tags": tags,
            "aliases": [title.lower()] if rng.random() < 0.3 else [],
            "status": status,
        }
        if rng.random() < 0.1:
            attrs["anchor"] = {"locator": f"src/{topics[topic]}.py › class {topics[topic].title()}Client › method run", "hash": f"{rng.getrandbits(64):016x}"}
        g.add_node(nid, **attrs)
        topic_of[nid] = topic
        note_ids.append(nid)
        by_topic[topic].append(nid)
        for tag in tags:
            _add_tag(g, tag, rel, nid, topic_of, topic)
        for h in rng.sample(HEADINGS, rng.randrange(0, 3)):
            sid = f"section:{rel}#{h}"
            g.add_node(sid, kind="section", label=h, source=rel, line=2 + rng.randrange(20), summary="", tags=[], aliases=[], status=status)
            topic_of[sid] = topic
            g.add_edge(nid, sid, key="has_section", **_edge("has_section", rel, "EXTRACTED", 1))

    for nid in note_ids:
        rel = g.nodes[nid]["source"]
        own = by_topic[topic_of[nid]]
        for _ in range(rng.randrange(1, 5)):
            pool = own if rng.random() < 0.85 else note_ids
            target = pool[min(int(rng.paretovariate(1.2)) - 1, len(pool) - 1)]
            if target != nid:
                g.add_edge(nid, target, key="links_to", **_edge("links_to", rel, "EXTRACTED", rng.randrange(3, 40)))
        if rng.random() < 0.03:
            target = f"Missing {rng.choice(WORDS)} {rng.randrange(notes // 10 + 1)}"
            uid = f"unresolved:{target}"
            g.add_node(uid, kind="unresolved", label=target, source=rel, summary="", tags=[], aliases=[], status="live")
            topic_of[uid] = topic_of[nid]
            g.add_edge(nid, uid, key="links_to", **_edge("links_to", rel, "EXTRACTED", 5))

    entities = [f"{w} service" for w in TOOLS] + [f"{t} pipeline" for t in TOPICS]
    for i, name in enumerate(entities[: max(4, notes // 20)]):
        eid = f"entity:{name}"
        g.add_node(eid, kind="entity", label=name.title(), source=g.nodes[note_ids[i % notes]]["source"], summary=f"{name.title()} as the notes describe it.", tags=[], aliases=[], status="live")
        topic_of[eid] = i % len(topics)
    entity_ids = [n for n in g.nodes if n.startswith("entity:")]
    for nid in note_ids:
        if rng.random() < 0.3:
            eid = rng.choice(entity_ids)
            conf = rng.choice(["EXTRACTED", "INFERRED", "AMBIGUOUS"])
            g.add_edge(nid, eid, key="mentions", **_edge("mentions", g.nodes[nid]["source"], conf, rng.randrange(2, 30)))
    for a in entity_ids:
        if rng.random() < 0.5:
            b = rng.choice(entity_ids)
            rel = rng.choice(RELATIONS_LLM)
            if a != b:
                g.add_edge(a, b, key=rel, **_edge(rel, g.nodes[a]["source"], rng.choice(["INFERRED", "AMBIGUOUS"]), 4))
    superseded = [n for n in note_ids if g.nodes[n]["status"] == "superseded"]
    for old in superseded:
        new = rng.choice(note_ids)
        if new != old:
            g.add_edge(new, old, key="supersedes", **_edge("supersedes", g.nodes[new]["source"], "EXTRACTED", 1))

    _rank_and_communities(g, topic_of)
    data = nx.node_link_data(g, edges="edges")
    data["nodes"].sort(key=lambda n: n["id"])
    data["edges"].sort(key=lambda e: (e["source"], e["target"], e["key"], e["line"] or 0))
    return data


def _add_tag(g: nx.MultiDiGraph, tag: str, rel: str, nid: str, topic_of: dict[str, int], topic: int) -> None:
    parts = tag.split("/")
    for depth in range(1, len(parts) + 1):
        name = "/".join(parts[:depth])
        tid = f"tag:{name}"
        if tid not in g:
            g.add_node(tid, kind="tag", label=f"#{name}", source=rel, sources=[rel], summary="", tags=[], aliases=[], status="live")
            topic_of[tid] = topic
        elif rel not in g.nodes[tid]["sources"]:
            g.nodes[tid]["sources"].append(rel)
        if depth > 1:
            parent = "tag:" + "/".join(parts[: depth - 1])
            if not g.has_edge(tid, parent, key="tag_parent"):
                g.add_edge(tid, parent, key="tag_parent", **_edge("tag_parent", rel, "EXTRACTED", None))
    g.add_edge(nid, f"tag:{tag}", key="tagged", **_edge("tagged", rel, "EXTRACTED", 1))


def _edge(relation: str, owner: str, confidence: str, line: int | None) -> dict[str, Any]:
    score = {"EXTRACTED": 1.0, "INFERRED": 0.6, "AMBIGUOUS": 0.3}[confidence]
    return {"relation": relation, "confidence": confidence, "score": score, "owner": owner, "line": line}


def _rank_and_communities(g: nx.MultiDiGraph, topic_of: dict[str, int]) -> None:
    """Ranks from PageRank scaled to [0, 1]; communities = the planted topics, ids by size."""
    simple = nx.DiGraph(g)
    pr = nx.pagerank(simple, alpha=0.85)
    top = max(pr.values())
    for n, value in pr.items():
        g.nodes[n]["rank"] = round(value / top, 6)
    sizes = Counter(topic_of[n] for n in g.nodes)
    order = sorted(sizes, key=lambda t: (-sizes[t], t))
    cid = {t: i for i, t in enumerate(order)}
    members: dict[int, list[str]] = defaultdict(list)
    for n in sorted(g.nodes):
        g.nodes[n]["community"] = cid[topic_of[n]]
        members[cid[topic_of[n]]].append(n)
    inside: Counter[int] = Counter()
    touching: Counter[int] = Counter()
    for u, v in g.edges():
        cu, cv = g.nodes[u]["community"], g.nodes[v]["community"]
        touching.update({cu, cv})
        if cu == cv:
            inside[cu] += 1
    communities = []
    for c in range(len(order)):
        ms = sorted(members[c], key=lambda n: (-g.nodes[n]["rank"], n))
        tops = [n for n in ms if g.nodes[n]["kind"] != "tag"][:3]
        communities.append(
            {
                "id": c,
                "name": " / ".join(g.nodes[n]["label"] for n in tops),
                "size": len(ms),
                "cohesion": round(inside[c] / touching[c], 4) if touching[c] else 0.0,
                "members_top": ms[:5],
            }
        )
    gods = sorted((n for n in g.nodes if g.nodes[n]["kind"] not in ("tag", "section")), key=lambda n: (-g.nodes[n]["rank"], n))[:20]
    kinds = Counter(g.nodes[n]["kind"] for n in g.nodes)
    g.graph.update(
        {
            "scope": "vault",
            "kind": "vault",
            "root": "/tmp/vault",
            "schema_version": 1,
            "built_with": "vault-kg 0.1.0",
            "god_nodes": gods,
            "communities": communities,
            "counts": {"nodes": g.number_of_nodes(), "edges": g.number_of_edges(), **dict(kinds)},
        }
    )


def build_example_graph(workdir: Path) -> dict[str, Any]:
    """Build the bundled example vault (a private copy under ``workdir``) with the real `kg build`
    in a fresh process, deterministic pass only, and return its graph.json."""
    vault = workdir / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    env = dict(os.environ, KG_CONFIG=str(workdir / "config.toml"), KG_OLLAMA="off")
    env.pop("KG_VAULT", None)
    done = subprocess.run(
        [sys.executable, "-c", "from vault_kg.cli.entry import main; main()", "build", "--vault", str(vault)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    graph = vault / "kg-out" / "graph.json"
    assert done.returncode == 0 and graph.is_file(), f"kg build failed: {done.stderr[-2000:]}"
    return json.loads(graph.read_text(encoding="utf-8"))
