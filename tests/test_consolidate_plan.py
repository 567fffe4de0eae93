"""`kg consolidate`: a reviewable plan, applied exactly as listed, one commit, reverted with git."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import kg_process
from vault_kg.notes import consolidate as c
from vault_kg.core.errors import KgError
from vaultops_helpers import git, isolate_git, note, snapshot, write

REDIS_BODY = (
    "Redis has two jobs in our stack and both are disposable: losing its data loses nothing that matters. "
    "It is the broker for the reporting jobs and it keeps the rate-limit counters of the public API. "
    "Persistence is switched off on purpose and the memory cap evicts the least recently used keys first."
)


@pytest.fixture(autouse=True)
def _git_env(monkeypatch: pytest.MonkeyPatch, isolated_config: Path) -> None:
    isolate_git(monkeypatch, isolated_config)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write(root, "tools/Redis.md", note("Redis, the disposable broker", ["tool/redis", "scope/global"], f"# Redis\n\n{REDIS_BODY}\n\nSee [[Postgres]].\n"))
    write(root, "tools/Cache Server.md", note("The cache server", ["tool/cache", "scope/global"], f"# Cache Server\n\n{REDIS_BODY} Also used in staging.\n\nLinks to [[Redis]].\n"))
    write(root, "tools/Postgres.md", note("Postgres 15, the system of record", ["tool/postgres", "topic/payments", "scope/global"], "# Postgres\n\nThe ledger lives here; see [[Redis]].\n"))
    write(root, "clients/Acme.md", note("Acme, billing client", ["client/acme", "scope/acme", "topic/payments"], "# Acme\n\nData lives in [[Postgress]] 15 and [[Redis]].\n"))
    write(root, "inbox/Lonely.md", "# Lonely\n\nA stray thought about #topic/payments and queues, never linked.\n")
    sections = "\n".join(f"## Part {i}\n\n" + "\n".join(f"Line {j} of part {i}." for j in range(8)) + "\n" for i in (1, 2, 3))
    write(root, "runbooks/Big.md", note("A runbook that grew too long", ["type/runbook", "scope/global"], f"# Big\n\nIntro that stays. See [[Postgres]].\n\n{sections}"))
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial vault")
    return root


def _plan_file(vault: Path, tmp_path: Path, keep: set[str] | None = None, edit=None) -> Path:
    data = c.plan(vault, max_lines=20)
    if keep is not None:
        data["actions"] = [a for a in data["actions"] if a["id"] in keep]
    if edit is not None:
        edit(data)
    path = tmp_path / "plan.md"
    path.write_text(c.render_markdown(data), encoding="utf-8")
    return path


def test_plan_lists_every_kind_of_proposal_and_changes_nothing(vault: Path) -> None:
    before = snapshot(vault)
    data = c.plan(vault, max_lines=20)
    by_kind = {a["action"]: a for a in data["actions"]}
    assert set(by_kind) == {"merge", "frontmatter", "link", "relink", "split"}
    merge = by_kind["merge"]
    assert {merge["keep"], merge["merge"]} == {"tools/Redis.md", "tools/Cache Server.md"} and merge["keep"] == "tools/Redis.md"
    assert merge["similarity"] >= 0.6
    assert by_kind["frontmatter"]["note"] == "inbox/Lonely.md" and by_kind["frontmatter"]["add_tags"] == ["scope/global"]
    assert (by_kind["link"]["target"], by_kind["link"]["note"]) == ("inbox/Lonely.md", "clients/Acme.md")  # tie on topic tags: first path wins
    assert (by_kind["relink"]["note"], by_kind["relink"]["old"], by_kind["relink"]["new"], by_kind["relink"]["line"]) == ("clients/Acme.md", "Postgress", "Postgres", 7)
    assert [s["to"] for s in by_kind["split"]["sections"]] == [f"runbooks/Big - Part {i}.md" for i in (1, 2, 3)]
    assert snapshot(vault) == before
    assert "merge" not in {a["action"] for a in c.plan(vault, similarity=0.99, max_lines=20)["actions"]}


def test_apply_makes_one_commit_that_git_revert_undoes(vault: Path, tmp_path: Path) -> None:
    before = snapshot(vault)
    assert kg_process("lint", "--strict", "--vault", str(vault)).returncode == 1
    plan = tmp_path / "plan.md"
    ran = kg_process("consolidate", "--plan", "--max-lines", "20", "--output", str(plan), "--vault", str(vault))
    assert ran.returncode == 0, ran.stderr
    head_before = git(vault, "rev-parse", "HEAD").stdout.strip()
    ran = kg_process("consolidate", "--apply", str(plan), "--json", "--vault", str(vault))
    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout)
    assert git(vault, "rev-parse", "HEAD~1").stdout.strip() == head_before
    assert git(vault, "status", "--porcelain").stdout == ""
    assert sorted(git(vault, "show", "--name-only", "--format=", "HEAD").stdout.split("\n")[:-1]) == result["files"]

    merged = (vault / "tools/Redis.md").read_text()
    assert "## Merged from [[tools/Cache Server|Cache Server]]" in merged and "Also used in staging." in merged and "tool/cache" in merged
    stub = (vault / "tools/Cache Server.md").read_text()
    assert "merged_into: tools/Redis.md" in stub and "[[tools/Redis]]" in stub
    assert "[[Postgres]] 15" in (vault / "clients/Acme.md").read_text()
    acme = (vault / "clients/Acme.md").read_text()
    assert "[[Postgres]] 15" in acme and acme.endswith("## See also\n\n- [[Lonely]]\n")
    assert (vault / "inbox/Lonely.md").read_text().startswith("---\nsummary: 'A stray thought about #topic/payments")
    big = (vault / "runbooks/Big.md").read_text()
    assert "Intro that stays" in big and "Line 3 of part 2" not in big and "Moved to [[runbooks/Big - Part 2|Big - Part 2]]" in big
    assert "Line 3 of part 2." in (vault / "runbooks/Big - Part 2.md").read_text()
    assert kg_process("lint", "--strict", "--vault", str(vault)).returncode == 0

    git(vault, "revert", "--no-edit", "HEAD")
    assert snapshot(vault) == before


def test_apply_performs_only_the_actions_left_in_the_plan(vault: Path, tmp_path: Path) -> None:
    data = c.plan(vault, max_lines=20)
    relink = next(a["id"] for a in data["actions"] if a["action"] == "relink")
    before = snapshot(vault)
    result = c.apply(vault, _plan_file(vault, tmp_path, keep={relink}))
    assert result["files"] == ["clients/Acme.md"] and result["applied"] == [relink]
    after = snapshot(vault)
    assert {k for k in after if after[k] != before.get(k)} == {"clients/Acme.md"}


def test_a_note_changed_since_the_plan_refuses_the_whole_apply(vault: Path, tmp_path: Path) -> None:
    plan = _plan_file(vault, tmp_path)
    write(vault, "clients/Acme.md", (vault / "clients/Acme.md").read_text() + "\nEdited after planning.\n")
    before = snapshot(vault)
    with pytest.raises(KgError, match=r"clients/Acme.md: changed since the plan was made"):
        c.apply(vault, plan)
    assert snapshot(vault) == before


def test_apply_refuses_paths_outside_the_vault_and_secrets(vault: Path, tmp_path: Path) -> None:
    before = snapshot(vault)

    def escape(data: dict) -> None:
        split = next(a for a in data["actions"] if a["action"] == "split")
        split["sections"][0]["to"] = "../escaped.md"
        split["hashes"] = {split["note"]: split["hashes"][split["note"]], "../escaped.md": None}

    with pytest.raises(KgError, match="escapes the vault"):
        c.apply(vault, _plan_file(vault, tmp_path, edit=escape))
    assert not (tmp_path / "escaped.md").exists() and snapshot(vault) == before

    def leak(data: dict) -> None:
        next(a for a in data["actions"] if a["action"] == "frontmatter")["summary"] = "key AKIAABCDEFGHIJKLMNOP"

    with pytest.raises(KgError, match="secret"):
        c.apply(vault, _plan_file(vault, tmp_path, edit=leak))
    assert snapshot(vault) == before and git(vault, "rev-list", "--count", "HEAD").stdout.strip() == "1"

    ran = kg_process("consolidate", "--plan", "--output", str(vault / "plan.md"), "--vault", str(vault))
    assert ran.returncode == 1 and "not a note" in ran.stderr and not (vault / "plan.md").exists()


def test_plan_json_block_is_what_apply_reads(vault: Path, tmp_path: Path) -> None:
    text = _plan_file(vault, tmp_path).read_text()
    block = json.loads(re.search(r"```json\n(.*?)\n```", text, re.DOTALL).group(1))
    assert block[c.PLAN_KEY] == c.PLAN_VERSION and block["actions"]
    as_json = tmp_path / "plan.json"
    as_json.write_text(json.dumps(block))
    assert c.read_plan(as_json)["actions"] == block["actions"]
    broken = tmp_path / "broken.md"
    broken.write_text("# not a plan\n")
    with pytest.raises(KgError, match="no consolidation plan found"):
        c.read_plan(broken)


def test_lint_strict_fails_the_vault_ci_on_a_contract_violation(tmp_path: Path) -> None:
    clean = tmp_path / "clean"
    write(clean, "a.md", note("A note", ["scope/global"], "# A\n\n[[b]]\n"))
    write(clean, "b.md", note("B note", ["scope/global"], "# B\n"))
    ok = kg_process("lint", "--strict", "--vault", str(clean))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    write(clean, "c.md", note("C note", ["untagged"], "# C\n"))
    bad = kg_process("lint", "--strict", "--vault", str(clean))
    assert bad.returncode == 1 and "c.md" in bad.stdout


def test_split_moves_only_the_sections_left_in_the_plan(vault: Path, tmp_path: Path) -> None:
    def only_part_two(data: dict) -> None:
        split = next(a for a in data["actions"] if a["action"] == "split")
        split["sections"] = [s for s in split["sections"] if s["heading"] == "Part 2"]
        split["hashes"] = {k: v for k, v in split["hashes"].items() if "Part 1" not in k and "Part 3" not in k}
        data["actions"] = [split]

    c.apply(vault, _plan_file(vault, tmp_path, edit=only_part_two))
    big = (vault / "runbooks/Big.md").read_text()
    assert "Line 7 of part 1." in big and "Line 7 of part 3." in big and "Line 0 of part 2." not in big
    assert not (vault / "runbooks/Big - Part 1.md").exists()
    part = (vault / "runbooks/Big - Part 2.md").read_text()
    assert "Line 7 of part 2." in part and "part 3" not in part and "split_from: runbooks/Big.md" in part
