"""The plugin's skills: frontmatter Claude Code can load, and only commands and MCP tools that exist."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import REPO, kg_process
from vault_kg.mcp.server import build_server

SKILLS = sorted((REPO / "skills").glob("*/SKILL.md"))
_FRONTMATTER_RE = re.compile(r"\A---\n(.*?)\n---\n", re.DOTALL)
_KG_RE = re.compile(r"`kg ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?")
_MCP_RE = re.compile(r"MCP (?:tool )?`([a-z_]+)`")


def frontmatter(path: Path) -> dict[str, object]:
    match = _FRONTMATTER_RE.match(path.read_text(encoding="utf-8"))
    assert match, f"{path}: no frontmatter"
    data = yaml.safe_load(match.group(1))
    assert isinstance(data, dict), path
    return data


def help_commands(*group: str) -> set[str]:
    """The command names `kg [GROUP] --help` lists."""
    done = kg_process(*group, "--help", env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert done.returncode == 0, done.stderr
    section = done.stdout.split("Commands", 1)[1]
    return set(re.findall(r"^(?:[│|]\s+|\s{2})([a-z][a-z-]*)(?:\s|$)", section, re.MULTILINE))


def test_the_three_skills_ship() -> None:
    assert {p.parent.name for p in SKILLS} == {"using-the-vault", "frontmatter-contract", "consolidation"}


@pytest.mark.parametrize("skill", SKILLS, ids=lambda p: p.parent.name)
def test_frontmatter_has_the_name_and_description_claude_code_reads(skill: Path) -> None:
    data = frontmatter(skill)
    assert set(data) == {"name", "description"}
    name, description = data["name"], data["description"]
    assert name == skill.parent.name and re.fullmatch(r"[a-z0-9-]{1,64}", str(name))
    assert isinstance(description, str) and 40 <= len(description) <= 1024 and "\n" not in description
    assert skill.read_text(encoding="utf-8").count("\n") > 15, "a skill is guidance, not a stub"


def test_skills_name_only_commands_that_kg_help_lists() -> None:
    top = help_commands()
    assert {"query", "promote", "consolidate", "recall", "journal"} <= top
    groups: dict[str, set[str]] = {}
    named = set()
    for skill in SKILLS:
        for command, sub in _KG_RE.findall(skill.read_text(encoding="utf-8")):
            assert command in top, f"{skill.parent.name}: `kg {command}` is not a kg command"
            named.add(command)
            if sub and command in ("journal", "project"):
                groups.setdefault(command, help_commands(command))
                assert sub in groups[command], f"{skill.parent.name}: `kg {command} {sub}` does not exist"
    assert {"query", "anchor", "recall", "promote", "consolidate", "lint", "check"} <= named


def test_skills_name_only_mcp_tools_the_server_has() -> None:
    import asyncio

    tools = {tool.name for tool in asyncio.run(build_server().list_tools())}
    named = {tool for skill in SKILLS for tool in _MCP_RE.findall(skill.read_text(encoding="utf-8"))}
    assert {"query", "remember", "recall"} <= named
    assert named <= tools, named - tools


def test_claude_code_validates_the_plugin_its_skills_and_hooks(claude: str) -> None:
    done = subprocess.run([claude, "plugin", "validate", "--strict", ".claude-plugin/plugin.json"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Validation passed" in done.stdout
