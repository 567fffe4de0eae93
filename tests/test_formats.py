"""graph.json's graph attributes and brief.json are the shapes `graph_out.formats` declares, and the
engine is the flat list of stages over one run object, with passes that follow the `Pass` protocol."""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_type_hints

from graph_out import formats
from vault_kg.update import engine
from vault_kg.core.passes import Pass
from vault_kg.core.scopes import vault_scope


def test_a_build_writes_the_declared_shapes(example_vault: Path) -> None:
    engine.run(vault_scope(example_vault))
    out = example_vault / "kg-out"
    attrs = json.loads((out / "graph.json").read_text())["graph"]
    brief = json.loads((out / "brief.json").read_text())
    declared = set(get_type_hints(formats.GraphAttrs))
    assert set(attrs) <= declared and set(attrs) >= declared - {"stale", "anchor_issues", "likely_duplicates"}
    assert set(attrs["counts"]) == set(get_type_hints(formats.Counts))
    assert set(brief) == set(get_type_hints(formats.Brief))
    assert all(set(node) == set(get_type_hints(formats.BriefNode)) for node in brief["god_nodes"]) and brief["god_nodes"]
    assert formats.read_brief(out / "brief.json") == brief


def test_read_brief_refuses_what_is_not_a_brief(tmp_path: Path) -> None:
    path = tmp_path / "brief.json"
    assert formats.read_brief(path) is None
    path.write_text("[1, 2]")
    assert formats.read_brief(path) is None
    path.write_text("{not json")
    assert formats.read_brief(path) is None
    path.write_text(json.dumps({"scope": "vault", "god_nodes": ["x", {"id": "note:a.md"}], "conventions": "oops"}))
    assert formats.read_brief(path) == {"scope": "vault", "god_nodes": [{"id": "note:a.md"}], "conventions": []}


def test_every_pass_defines_every_hook_of_the_protocol() -> None:
    hooks = [name for name in vars(Pass) if not name.startswith("_")]
    assert sorted(hooks) == ["annotate", "assemble", "check_mode", "enrich", "post_assembly"]
    passes = engine.pass_modules("vault")
    assert [p.__name__ for p in passes] == ["extract.llm_pass", "vault_kg.anchors.build_pass"]
    for module in passes:
        assert all(callable(getattr(module, hook, None)) for hook in hooks), module.__name__
    assert engine.pass_modules("code") == ()


def test_the_route_is_a_flat_list_of_stages() -> None:
    assert [stage.__name__ for stage in engine.STAGES] == [
        "scan",
        "finish_owed",
        "patch_prose_edit",
        "extract",
        "enrich",
        "resolve",
        "assemble",
        "post_assembly",
        "rank_nodes",
        "write_artifacts",
        "record",
    ]
