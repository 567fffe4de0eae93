"""`kg llm-check` / `kg llm-extract`: thin shells that print one line on error."""

from __future__ import annotations

import json

import typer
from llm_notes import MODEL
from ollama_fake import FakeOllama, closed_port_url
from typer.testing import CliRunner

from vault_kg.cli.commands.llm import register
from vault_kg.core.errors import KgError


def _app() -> typer.Typer:
    app = typer.Typer()
    register(app)
    return app


def test_check_and_extract(tmp_path) -> None:
    note = tmp_path / "Acme.md"
    note.write_text("FIXTURE-basic\nMaria Chen works on Acme Corp.\n")
    with FakeOllama() as fake:
        ready = CliRunner().invoke(_app(), ["llm-check", "--host", fake.url, "--model", MODEL, "--json"])
        out = CliRunner().invoke(_app(), ["llm-extract", str(note), "--host", fake.url, "--model", MODEL, "--json"])
    assert ready.exit_code == 0 and json.loads(ready.output)["context_length"] == 32768
    assert out.exit_code == 0 and json.loads(out.output)["status"] == "ok"


def test_check_when_down_raises_one_line() -> None:
    result = CliRunner().invoke(_app(), ["llm-check", "--host", closed_port_url(), "--model", MODEL])
    assert isinstance(result.exception, KgError) and "run `ollama serve`" in str(result.exception)
