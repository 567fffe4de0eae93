"""The daily journal note: format, append-only line stability, redaction, concurrency, CLI."""

from __future__ import annotations

import json
import multiprocessing
from datetime import date, datetime
from pathlib import Path

import frontmatter
import pytest
import typer
from typer.testing import CliRunner

from episodic.journal import append_entry, day_file, read_day
from vault_kg.cli.commands.journal import register
from vault_kg.core.errors import KgError

DAY = date(2025, 3, 12)


def at(hour: int, minute: int = 0) -> datetime:
    return datetime(2025, 3, 12, hour, minute)


def test_first_entry_creates_the_day_note_with_frontmatter(tmp_path: Path) -> None:
    entry = append_entry(tmp_path, "Fixed the webhook retries.", project="payments", now=at(9, 12))
    path = day_file(tmp_path, DAY)
    post = frontmatter.load(path)
    assert post["summary"] == "Journal for Wednesday 2025-03-12: 1 entry (payments)"
    assert post["tags"] == ["type/journal", "scope/global", "project/payments"]
    assert str(post["date"]) == "2025-03-12"
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[entry.line - 1] == "## 09:12 · payments" and lines[entry.line] == "Fixed the webhook retries."
    assert (entry.file, entry.day, entry.time, entry.project) == ("journal/2025-03-12.md", DAY, "09:12", "payments")


def test_appending_never_moves_earlier_entries(tmp_path: Path) -> None:
    first = append_entry(tmp_path, "Morning work.", project="infra", now=at(8))
    before = day_file(tmp_path, DAY).read_text(encoding="utf-8")
    append_entry(tmp_path, "Afternoon work\non two lines.", project="Mobile App", now=at(14, 5))
    append_entry(tmp_path, "Evening note without a project.", now=at(21, 30))
    after = day_file(tmp_path, DAY).read_text(encoding="utf-8")
    body_before = before.split("---\n", 2)[2]
    assert after.split("---\n", 2)[2].startswith(body_before)
    assert read_day(tmp_path, DAY)[0] == first
    entries = read_day(tmp_path, DAY)
    assert [(e.time, e.project) for e in entries] == [("08:00", "infra"), ("14:05", "Mobile App"), ("21:30", "")]
    assert entries[1].text == "Afternoon work\non two lines."
    post = frontmatter.load(day_file(tmp_path, DAY))
    assert post["tags"] == ["type/journal", "scope/global", "project/infra", "project/mobile-app"]
    assert "3 entries" in post["summary"] and "\n" not in post["summary"]


def test_secrets_are_redacted_and_headings_cannot_split_an_entry(tmp_path: Path) -> None:
    entry = append_entry(
        tmp_path,
        "# Deployed\nexport GITHUB_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a\n## 99:99 · fake",
        project="infra",
        now=at(10),
    )
    text = day_file(tmp_path, DAY).read_text(encoding="utf-8")
    assert "ghp_16C7e42F" not in text and "[REDACTED:github-token]" in text
    assert len(read_day(tmp_path, DAY)) == 1 and "\\## 99:99 · fake" in entry.text


def test_someone_elses_frontmatter_is_kept_as_is(tmp_path: Path) -> None:
    path = day_file(tmp_path, DAY)
    path.parent.mkdir(parents=True)
    path.write_text("---\nsummary: my own words\naliases: [wednesday]\n---\n\nNotes by hand.\n", encoding="utf-8")
    append_entry(tmp_path, "Added by kg.", now=at(11))
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\nsummary: my own words\naliases: [wednesday]\n---\n\nNotes by hand.\n")
    assert text.endswith("## 11:00\nAdded by kg.\n")


def test_empty_text_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    with pytest.raises(KgError, match="empty"):
        append_entry(tmp_path, "   \n ", now=at(9))
    assert not day_file(tmp_path, DAY).exists()


def _append_many(vault: str, worker: int) -> None:
    for i in range(15):
        append_entry(Path(vault), f"worker {worker} entry {i}", project=f"w{worker}", now=at(12, i))


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_append_many, args=(str(tmp_path), w)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    texts = sorted(e.text for e in read_day(tmp_path, DAY))
    assert texts == sorted(f"worker {w} entry {i}" for w in range(3) for i in range(15))
    assert not [p for p in (tmp_path / "journal").iterdir() if p.name.startswith(".")]


@pytest.fixture()
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[CliRunner, typer.Typer]:
    monkeypatch.setenv("KG_VAULT", str(tmp_path))
    monkeypatch.setenv("KG_CONFIG", str(tmp_path / "no-config.toml"))
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """kg (test shell)."""

    register(app)
    return CliRunner(), app


def test_cli_add_then_recall_today(cli: tuple[CliRunner, typer.Typer], tmp_path: Path) -> None:
    runner, app = cli
    added = runner.invoke(app, ["journal", "add", "Wrote the recall docs", "--project", "kg", "--json"])
    assert added.exit_code == 0, added.output
    entry = json.loads(added.stdout)
    assert entry["project"] == "kg" and entry["file"].startswith("journal/")
    assert (tmp_path / entry["file"]).is_file()
    shown = runner.invoke(app, ["recall", "--today", "--json"])
    assert shown.exit_code == 0, shown.output
    result = json.loads(shown.stdout)
    assert result["mode"] == "list"
    assert [(e["text"], e["line"]) for e in result["entries"]] == [("Wrote the recall docs", entry["line"])]
    text = runner.invoke(app, ["recall", "--yesterday"])
    assert text.exit_code == 0 and text.stdout.startswith("no journal entries")


def test_cli_errors_are_user_errors(cli: tuple[CliRunner, typer.Typer]) -> None:
    runner, app = cli
    result = runner.invoke(app, ["recall"])
    assert isinstance(result.exception, KgError) and "give a question" in str(result.exception)
    result = runner.invoke(app, ["recall", "anything", "--vault", "/nonexistent/vault"])
    assert isinstance(result.exception, KgError) and "does not exist" in str(result.exception)
