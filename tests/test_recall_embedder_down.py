"""`KG_EMBEDDER=ollama` when Ollama cannot embed: one line saying what to do, the index untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import kg_process
from ollama_fake import FakeOllama, closed_port_url


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    done = kg_process("journal", "add", "Added exponential backoff to webhook retries", "--project", "payments", "--vault", str(root), env={"KG_CONFIG": str(tmp_path / "c.toml")})
    assert done.returncode == 0, done.stderr
    return root


def recall_with_ollama(vault: Path, host: str) -> tuple[int, str, str]:
    env = {"KG_CONFIG": str(vault.parent / "c.toml"), "KG_EMBEDDER": "ollama", "OLLAMA_HOST": host}
    done = kg_process("recall", "webhook retries", "--vault", str(vault), env=env)
    return done.returncode, done.stdout, done.stderr


def test_ollama_down_is_one_line_and_leaves_the_index_alone(vault: Path) -> None:
    host = closed_port_url()
    code, out, err = recall_with_ollama(vault, host)
    assert code == 1 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    assert host in lines[0] and "ollama serve" in lines[0] and "KG_EMBEDDER" in lines[0]
    assert not (vault / "kg-out" / "journal.db").exists() or not any((vault / "kg-out" / "journal.db").iterdir())


def test_an_ollama_without_the_embedding_model_is_one_line(vault: Path) -> None:
    with FakeOllama() as fake:
        code, _, err = recall_with_ollama(vault, fake.url)
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 1 and "Traceback" not in err
    assert "nomic-embed-text" in lines[0] and "ollama pull nomic-embed-text" in lines[0]


def test_the_default_embedder_still_answers_afterwards(vault: Path) -> None:
    recall_with_ollama(vault, closed_port_url())
    done = kg_process("recall", "webhook retries", "--vault", str(vault), env={"KG_CONFIG": str(vault.parent / "c.toml"), "KG_EMBEDDER": ""})
    assert done.returncode == 0, done.stderr
    assert "webhook retries" in done.stdout
