"""`--budget` caps the whole printed answer (hits, edges block, truncation notice), on the CLI and over MCP.

Measured the way the code counts (4 characters a token, rounded up) on the example vault and on a
dense vault where every note links to 12 others (a long edges block). What was cut is judged
against the same question at the largest budget, not against the answer's own counters.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
from fastmcp.client.transports import StdioTransport

from conftest import EXAMPLE_VAULT, kg_process
from dense_vault import write_dense_vault
from test_mcp_server import SyncClient
from vault_kg.query import verbs as q
from vault_kg.core.scopes import resolve_scopes

ENV = {"KG_OLLAMA": "off", "KG_VAULT": ""}
QUESTIONS = {"example": "stripe webhook retries", "dense": "webhook retry"}
NOTICE = "[truncated:"


@pytest.fixture(scope="module")
def vaults(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("budget")
    found = {"example": base / "example", "dense": write_dense_vault(base / "dense")}
    shutil.copytree(EXAMPLE_VAULT, found["example"])
    for vault in found.values():
        done = kg_process("build", "--vault", str(vault), env=ENV)
        assert done.returncode == 0, done.stderr
    return found


def tokens(text: str) -> int:
    return -(-len(text) // q.CHARS_PER_TOKEN)


def full_answer(vault: Path, question: str) -> dict[str, Any]:
    answer = q.query(resolve_scopes(["vault"], vault), question, q.MAX_BUDGET)
    assert answer["truncated"] == 0 and answer.get("truncated_edges", 0) == 0
    assert len(answer["edges"]) > 0
    return answer


def check_answer(text: str, budget: int, full: dict[str, Any], shown: dict[str, Any] | None = None) -> bool:
    """Within budget, seeds first, and the notice shown exactly when the full answer was cut.

    Returns whether the data form reports the tokens of the text it goes with (checked by the
    caller after every budget, so an overshoot is what fails first).
    """
    assert tokens(text) <= budget, f"{tokens(text)} tokens for a {budget}-token budget:\n{text}"
    heads = [line[0] for line in text.splitlines() if line[:2] in ("* ", "- ")]
    assert heads and heads[0] == "*" and heads == sorted(heads, key="*-".index), "seeds first"
    edge_lines = [line for line in text.splitlines() if line.startswith("  ") and not line.startswith("   ")]
    cut = len(heads) < len(full["hits"]) or len(edge_lines) < len(full["edges"])
    assert (NOTICE in text) == cut, f"notice {'missing' if cut else 'without a cut'} at {budget}:\n{text}"
    if shown is not None:
        assert [h["id"] for h in shown["hits"]] == [h["id"] for h in full["hits"]][: len(shown["hits"])]
        assert len(shown["edges"]) == len(edge_lines)
    return shown is None or shown.get("tokens") == tokens(text)


@pytest.mark.parametrize("name", ["example", "dense"])
def test_library_answers_fit_every_budget(vaults: dict[str, Path], name: str) -> None:
    vault, question = vaults[name], QUESTIONS[name]
    full = full_answer(vault, question)
    cut_somewhere, reported = False, True
    for budget in range(100, 2001, 25):
        answer = q.query(resolve_scopes(["vault"], vault), question, budget)
        text = q.format_query(answer) + "\n"
        reported &= check_answer(text, budget, full, answer)
        cut_somewhere |= NOTICE in text
    assert cut_somewhere, "the budgets tested never cut anything: the test would prove nothing"
    assert NOTICE not in q.format_query(full)
    assert reported, "answer['tokens'] is the printed answer's estimate"


@pytest.mark.parametrize("name", ["example", "dense"])
def test_cli_text_and_json_fit_the_budget(vaults: dict[str, Path], name: str) -> None:
    vault, question = vaults[name], QUESTIONS[name]
    full = full_answer(vault, question)
    reported = True
    for budget in (100, 180, 300, 500, 800, 1300, 2000):
        done = kg_process("query", question, "--budget", str(budget), "--vault", str(vault), env=ENV)
        assert done.returncode == 0, done.stderr
        check_answer(done.stdout, budget, full)
        data = json.loads(kg_process("query", question, "--budget", str(budget), "--json", "--vault", str(vault), env=ENV).stdout)
        reported &= check_answer(done.stdout, budget, full, data)
    assert reported, "`tokens` in --json is the printed answer's estimate"


@pytest.mark.parametrize("name", ["example", "dense"])
def test_edges_alone_decide_when_every_hit_fits(vaults: dict[str, Path], name: str) -> None:
    """Budgets between the hits' cost and the whole answer's: every hit fits, only the edges block
    decides, and it must be cut (the path the small budgets above never reach)."""
    vault, question = vaults[name], QUESTIONS[name]
    full = full_answer(vault, question)
    hits_only = tokens(q.format_query({**full, "edges": []}) + "\n")
    whole = tokens(q.format_query(full) + "\n")
    assert whole - hits_only > 40, "the edges block is too short to test the budgets between"
    for budget in (hits_only + 1, (hits_only + whole) // 2, whole - 1):
        answer = q.query(resolve_scopes(["vault"], vault), question, budget)
        check_answer(q.format_query(answer) + "\n", budget, full, answer)


def test_the_first_seed_is_shortened_rather_than_overshooting(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / "notes").mkdir(parents=True)
    long = "webhook " * 150
    (vault / "notes" / "Huge.md").write_text(f"---\nsummary: {long}\n---\n# Huge\n\n{long}\n", encoding="utf-8")
    (vault / "notes" / "Other.md").write_text("---\nsummary: webhook notes\n---\n# Other\n\nwebhook [[Huge]]\n", encoding="utf-8")
    assert kg_process("build", "--vault", str(vault), env=ENV).returncode == 0
    answer = q.query(resolve_scopes(["vault"], vault), "webhook", 100)
    text = q.format_query(answer) + "\n"
    assert tokens(text) <= 100 and text.startswith("* ") and NOTICE in text
    assert answer["hits"][0]["seed"] and answer["tokens"] <= 100


@pytest.fixture(scope="module")
def dense_mcp(vaults: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[SyncClient]:
    base = tmp_path_factory.mktemp("budget-mcp")
    config = base / "config.toml"
    config.write_text(f'vault = "{vaults["dense"]}"\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("KG_VAULT", "OLLAMA_HOST", "KG_MODEL")}
    env.update({"KG_CONFIG": str(config), "KG_OLLAMA": "off", "FASTMCP_LOG_LEVEL": "WARNING"})
    transport = StdioTransport(sys.executable, ["-c", "from vault_kg.cli.entry import main; main()", "mcp"], env=env, cwd=str(base))
    client = SyncClient(transport)
    yield client
    client.close()


def test_mcp_query_fits_the_budget(vaults: dict[str, Path], dense_mcp: SyncClient) -> None:
    full = full_answer(vaults["dense"], QUESTIONS["dense"])
    reported = True
    for budget in (100, 150, 250, 400, 700, 1100, 2000):
        result = dense_mcp.call("query", question=QUESTIONS["dense"], budget=budget)
        reported &= check_answer(result.content[0].text + "\n", budget, full, result.structured_content)  # as `kg query` prints it
    assert reported, "structured `tokens` is the printed answer's estimate"
