"""The "from Python in three lines" snippet of docs/python.md runs as written, and the front door
answers what the CLI answers."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLE_VAULT, REPO, kg_process


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("py-api") / "home"
    shutil.copytree(EXAMPLE_VAULT, home / "vault")
    done = kg_process("build", "--vault", str(home / "vault"), env={"KG_CONFIG": str(home / "config.toml"), "KG_OLLAMA": "off"})
    assert done.returncode == 0, done.stderr
    return home


def snippet() -> str:
    text = (REPO / "docs" / "python.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "docs/python.md has a python snippet"
    return blocks[0]


def test_the_docs_snippet_is_three_lines_and_runs(home: Path) -> None:
    code = snippet()
    assert len(code.strip().splitlines()) == 3
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")}
    env.update(HOME=str(home), KG_CONFIG=str(home / "config.toml"), KG_OLLAMA="off")
    done = subprocess.run([sys.executable, "-c", code], cwd=home, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    cli = kg_process("query", "how do we retry failed webhooks", "--vault", str(home / "vault"), env={"KG_CONFIG": str(home / "config.toml"), "KG_OLLAMA": "off"}, cwd=home)
    assert done.stdout == cli.stdout and "Webhook" in done.stdout


def test_the_front_door_returns_what_the_cli_prints_as_json(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vault_kg import api

    monkeypatch.setenv("KG_CONFIG", str(home / "config.toml"))
    monkeypatch.setenv("KG_OLLAMA", "off")
    vault = home / "vault"
    env = {"KG_CONFIG": str(home / "config.toml"), "KG_OLLAMA": "off"}
    for verb, args, cli in (
        ("explain", ("Payments API",), ["explain", "Payments API"]),
        ("god_nodes", (), ["god-nodes"]),
        ("neighbors", ("Payments API",), ["neighbors", "Payments API"]),
        ("lint", (), ["lint"]),
    ):
        data = getattr(api, verb)(*args, vault=vault)
        printed = kg_process(*cli, "--json", "--vault", str(vault), env=env, cwd=home)
        assert json.loads(json.dumps(data, default=str)) == json.loads(printed.stdout), verb
        text = kg_process(*cli, "--vault", str(vault), env=env, cwd=home).stdout
        assert api.render(verb, data) + "\n" == text, verb
    with pytest.raises(Exception, match="no node named"):
        api.explain("No such note anywhere", vault=vault)
