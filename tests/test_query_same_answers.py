"""`kg query` answers pinned on a generated vault: a faster query must give the same answers.

The vault is `bench/gen_vault.py`'s (seeded, so the same notes every run) with a few notes marked
superseded. Every case's whole answer (hits in order with scores, snippets and routes, edges,
truncation counts) must equal the one stored in `tests/fixtures/query_answers.json`, through the
library and through a warm `kg mcp` server asked each question twice. The fixture was written by
#27 phase 2 (the fused ranking and passage answers, no embedders); rewrite it only for a change meant
to alter answers: `python tests/test_query_same_answers.py --write`.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests"))

from gen_vault import generate  # noqa: E402

FIXTURE = REPO / "tests" / "fixtures" / "query_answers.json"
NOTES = 600
SUPERSEDED_EVERY = 37  # every 37th note names its successor
CASES: list[dict[str, Any]] = [
    {"question": "payments retry webhook"},
    {"question": "ledger reconcile export", "budget": 800},
    {"question": "deploy release docker", "budget": 6000},
    {"question": "seo audit crawl keyword", "depth": 0},
    {"question": "postgres migration schema", "depth": 3, "budget": 3000},
    {"question": "how do we handle the refund dispute", "depth": 1, "budget": 400},
    {"question": "alias-12"},
    {"question": "Alert decision"},
    {"question": "zzzq nothing matches this"},
    {"question": "token auth session", "include_stale": True, "budget": 4000},
    {"question": "token auth session", "budget": 4000},
    {"question": "kubernetes terraform", "tags": ["scope/acme"], "budget": 2000},
    {"question": "invoice billing", "folder": "area03", "budget": 2000},
    {"question": "invoice billing", "kinds": ["note"], "budget": 100},
    {"question": "cache index", "as_of": "2020-01-01", "budget": 2000},
]


def make_vault(root: Path) -> Path:
    vault = root / "vault"
    paths = sorted(generate(vault, NOTES, 7))
    for i, path in enumerate(paths[::SUPERSEDED_EVERY]):
        successor = paths[(i * 11 + 5) % len(paths)].stem
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace("---\n", f'---\nsuperseded_by: "[[{successor}]]"\n', 1), encoding="utf-8")
    return vault


def build(vault: Path) -> None:
    from conftest import kg_process

    done = kg_process("build", "--vault", str(vault), env={"KG_OLLAMA": "off", "KG_VAULT": ""})
    assert done.returncode == 0, done.stderr


def library_answer(vault: Path, case: dict[str, Any], view: Any = None) -> dict[str, Any]:
    from vault_kg.query import verbs as q
    from vault_kg.core.memory_kinds import make_filters
    from vault_kg.core.scopes import resolve_scopes

    filters = make_filters(case.get("tags"), case.get("folder"), case.get("kinds"))
    return q.query(
        resolve_scopes(["vault"], vault),
        case["question"],
        case.get("budget", 1500),
        case.get("include_stale", False),
        case.get("depth", 2),
        as_of=case.get("as_of"),
        views=None if view is None else [view],
        filters=filters,
    )


def mcp_arguments(case: dict[str, Any]) -> dict[str, Any]:
    return {"budget": 1500, **{k: v for k, v in case.items() if k != "as_of"}}


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("same-answers")
    config = root / "config.toml"
    config.write_text("", encoding="utf-8")
    before = os.environ.get("KG_CONFIG")
    os.environ["KG_CONFIG"] = str(config)
    try:
        found = make_vault(root)
        build(found)
        yield found
    finally:
        os.environ.pop("KG_CONFIG") if before is None else os.environ.__setitem__("KG_CONFIG", before)


def stored() -> list[dict[str, Any]]:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def test_the_fixture_covers_every_case_and_what_makes_them_differ() -> None:
    answers = stored()
    assert [a["case"] for a in answers] == CASES
    hits = {json.dumps(a["case"], sort_keys=True): a["answer"]["hits"] for a in answers}
    assert any(h["status"] == "superseded" for h in hits[json.dumps(CASES[9], sort_keys=True)])
    assert not any(h["status"] == "superseded" for a in answers if not a["case"].get("include_stale") and not a["case"].get("as_of") for h in a["answer"]["hits"])
    assert sum(bool(a["answer"]["truncated"]) for a in answers) >= 3 and any(a["answer"]["edges"] for a in answers)
    assert not hits[json.dumps(CASES[8], sort_keys=True)]


@pytest.mark.parametrize("index", range(len(CASES)))
def test_library_answers_equal_the_stored_ones(vault: Path, index: int) -> None:
    expected = stored()[index]
    assert expected["case"] == CASES[index]
    assert library_answer(vault, CASES[index]) == expected["answer"]


@pytest.mark.parametrize("kept", [None, 40])
def test_views_sharing_what_they_read_answer_the_same(vault: Path, monkeypatch: pytest.MonkeyPatch, kept: int | None) -> None:
    """Two views of one cache file sharing what they read (as a server's worker threads do), kept
    between questions whole or starting over every 40 rows and walk steps, answer each case as a
    view opened for it does."""
    from vault_kg.query import graph_view as graphview
    from vault_kg.query import shared_reads as kept_reads
    from vault_kg.core.scopes import resolve_scopes

    if kept is not None:
        monkeypatch.setattr(kept_reads, "ROWS_KEPT", kept)
        monkeypatch.setattr(kept_reads, "WALK_STEPS_KEPT", kept)
    shared = kept_reads.KeptReads()
    views = [graphview.load_view(resolve_scopes(["vault"], vault)[0], shared) for _ in range(2)]
    for turn in range(2):
        for i, expected in enumerate(stored()):
            view = views[(i + turn) % 2]
            view.forget_rows()
            assert library_answer(vault, expected["case"], view) == expected["answer"], expected["case"]
    assert shared.rows and shared.walks


def test_a_warm_server_answers_the_same_twice(vault: Path) -> None:
    """The server keeps its views (and what they read) between calls: the second ask of every
    question must still answer exactly what the library answered from scratch."""
    from mcp_client import start_server

    client = start_server(Path(os.environ["KG_CONFIG"]), vault)
    try:
        expected = stored()
        for _ in range(2):
            for answer in expected:
                if "as_of" in answer["case"]:
                    continue
                result = client.call("query", scopes=["vault"], **mcp_arguments(answer["case"]))
                # `tokens` estimates the text of the face that asked: under MCP the truncation
                # notice names the `budget` parameter, not `--budget` (#32), two characters fewer
                got = dict(result.structured_content)
                want = dict(answer["answer"])
                assert 0 <= want.pop("tokens") - got.pop("tokens") <= 1, answer["case"]
                assert got == want, answer["case"]
    finally:
        client.close()


def write_fixture() -> None:
    """Record every case's answer from the code checked out now (see the module docstring)."""
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["KG_CONFIG"] = str(Path(tmp) / "config.toml")
        os.environ.pop("KG_VAULT", None)
        found = make_vault(Path(tmp))
        build(found)
        answers = [{"case": case, "answer": library_answer(found, case)} for case in CASES]
    FIXTURE.write_text(json.dumps(answers, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {FIXTURE} ({len(answers)} answers)")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/test_query_same_answers.py --write")
    write_fixture()
