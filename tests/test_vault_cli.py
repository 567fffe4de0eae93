"""The `kg` command as a user runs it: real processes, exit codes, one-line errors, --json."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import kg_process


def test_build_summary_and_json(example_vault: Path, kg) -> None:
    done = kg("build", "--vault", str(example_vault))
    assert done.returncode == 0, done.stderr
    line = done.stdout.strip().splitlines()[-1]
    assert line.startswith("built vault: 38 notes") and "1 unresolved" in line and "0 quarantined" in line and line.endswith("s")
    assert "Malformed Frontmatter.md:3: properties ignored" in done.stderr and "close the `[` list" in done.stderr
    again = kg("update", "--vault", str(example_vault), "--json")
    payload = json.loads(again.stdout)
    assert payload[0]["extracted"] == [] and payload[0]["written"] == []


def test_commands_work_from_inside_the_vault(example_vault: Path, kg) -> None:
    assert kg("build", "--vault", str(example_vault)).returncode == 0
    inside = example_vault / "services"
    query = kg("query", "idempotency keys on writes", "--json", cwd=inside)
    assert query.returncode == 0, query.stderr
    hits = json.loads(query.stdout)["hits"]
    assert hits and hits[0]["seed"] and hits[0]["source"].endswith(".md") and hits[0]["line"] >= 1
    assert any("Idempotency" in (h["label"] or "") for h in hits[:3])
    for args in (["god-nodes", "--json"], ["stats", "--json"], ["explain", "Payments API", "--json"], ["path", "Payments API", "Acme Corp", "--json"], ["lint", "--json"]):
        done = kg(*args, cwd=inside)
        assert done.returncode == 0, (args, done.stderr)
        json.loads(done.stdout)


def test_query_budget_truncates_visibly(example_vault: Path, kg) -> None:
    kg("build", "--vault", str(example_vault))
    small = kg("query", "stripe webhooks payments", "--budget", "100", "--vault", str(example_vault))
    big = kg("query", "stripe webhooks payments", "--budget", "5000", "--vault", str(example_vault))
    assert "[truncated:" in small.stdout and "raise --budget" in small.stdout
    assert len(small.stdout) < len(big.stdout)
    assert len(small.stdout) < 100 * 4 + 400


def test_path_direction_ambiguity_and_missing(example_vault: Path, kg, tmp_path: Path) -> None:
    kg("build", "--vault", str(example_vault))
    done = kg("path", "Rotate Stripe Keys", "Acme Corp", "--vault", str(example_vault), "--json")
    answer = json.loads(done.stdout)
    assert answer["found"] and answer["hops"] and not answer["via_hubs"]
    assert all(h["relation"] not in ("tagged", "tag_parent") for h in answer["hops"])
    missing = kg("explain", "No Such Note", "--vault", str(example_vault))
    assert missing.returncode == 1 and missing.stderr.count("\n") == 1 and "no node named 'No Such Note'" in missing.stderr
    (example_vault / "x").mkdir()
    (example_vault / "x" / "Stripe.md").write_text("---\nsummary: another\ntags: [scope/global]\n---\n")
    kg("update", "--vault", str(example_vault))
    ambiguous = kg("explain", "Stripe", "--vault", str(example_vault))
    assert ambiguous.returncode == 1 and "ambiguous" in ambiguous.stderr and "note:tools/Stripe.md" in ambiguous.stderr
    (example_vault / "Island.md").write_text("no links, no tags\n")
    (example_vault / "Tagged Only.md").write_text("---\nsummary: shares a tag\ntags: [scope/global]\n---\nno links\n")
    kg("update", "--vault", str(example_vault))
    nopath = kg("path", "Island", "Home", "--vault", str(example_vault))
    assert nopath.returncode == 0 and "no path between" in nopath.stdout
    hub = json.loads(kg("path", "Tagged Only", "Home", "--vault", str(example_vault), "--json").stdout)
    assert hub["found"] and hub["via_hubs"] and hub["hops"][0]["relation"] == "tagged"


def test_explain_groups_neighbours(example_vault: Path, kg) -> None:
    kg("build", "--vault", str(example_vault))
    done = kg("explain", "PAPI", "--vault", str(example_vault), "--json")
    answer = json.loads(done.stdout)
    assert answer["node"]["id"] == "note:services/Payments API.md"
    assert "links_to" in answer["incoming"] and "tagged" in answer["outgoing"]
    text = kg("explain", "payments-api", "--vault", str(example_vault)).stdout
    assert "source: services/Payments API.md:1-" in text and "← links_to" in text


def test_god_nodes_do_not_crown_hubs(example_vault: Path, kg) -> None:
    kg("build", "--vault", str(example_vault))
    rows = json.loads(kg("god-nodes", "-n", "5", "--vault", str(example_vault), "--json").stdout)
    ids = [r["id"] for r in rows]
    assert len(ids) == 5 and all(i.startswith("note:") for i in ids)
    assert "note:Home.md" not in ids, "the MOC note links to everything but should not be crowned"


def test_lint_contract_and_strict(example_vault: Path, kg) -> None:
    done = kg("lint", "--vault", str(example_vault))
    assert done.returncode == 0
    assert "inbox/Ideas Scratchpad.md: tag `draft` is not namespaced" in done.stdout
    assert "inbox/Ideas Scratchpad.md: no `scope/` tag" in done.stdout
    assert "broken/Malformed Frontmatter.md: line 3: properties ignored" in done.stdout
    assert "scope/global" not in done.stdout, "lint never advises a tag the guardrails refuse"
    assert not (example_vault / "kg-out").exists(), "lint never writes"
    strict = kg("lint", "--strict", "--vault", str(example_vault))
    assert strict.returncode == 1
    (example_vault / "inbox" / "Ideas Scratchpad.md").unlink()
    (example_vault / "broken" / "Malformed Frontmatter.md").unlink()
    assert kg("lint", "--strict", "--vault", str(example_vault)).returncode == 0


def test_init_config_and_env(example_vault: Path, kg, isolated_config: Path, tmp_path: Path) -> None:
    done = kg("init", "--vault", str(example_vault))
    assert done.returncode == 0
    text = (isolated_config / "config.toml").read_text()
    assert text.startswith("#") and str(example_vault) in text
    assert kg("init").returncode == 1
    assert kg("build", cwd=tmp_path).returncode == 0, "the config file names the vault"
    assert kg("stats", "--json", cwd=tmp_path).returncode == 0
    env_vault = tmp_path / "other"
    env_vault.mkdir()
    (env_vault / "N.md").write_text("hello")
    done = kg("build", cwd=tmp_path, env={"KG_VAULT": str(env_vault)})
    assert "1 notes" in done.stdout


def test_errors_are_one_line(tmp_path: Path, kg) -> None:
    missing = kg("build", "--vault", str(tmp_path / "nope"))
    assert missing.returncode == 1
    assert missing.stderr.strip().count("\n") == 0 and "vault folder does not exist" in missing.stderr
    nothing = kg("query", "x", cwd=tmp_path)
    assert nothing.returncode == 1 and "no vault configured" in nothing.stderr
    (tmp_path / "v").mkdir()
    unbuilt = kg("query", "x", "--vault", str(tmp_path / "v"))
    assert unbuilt.returncode == 1 and "run `kg build`" in unbuilt.stderr


def test_concurrent_updates_do_not_corrupt(example_vault: Path, kg) -> None:
    kg("build", "--vault", str(example_vault))
    for i in range(4):
        (example_vault / f"New {i}.md").write_text(f"---\nsummary: n{i}\ntags: [scope/global]\n---\n[[Payments API]] [[New {(i + 1) % 4}]]\n")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", "from vault_kg.cli.entry import main; main()", "update", "--vault", str(example_vault), str(example_vault / f"New {i}.md")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(4)
    ]
    codes = [p.wait(timeout=120) for p in procs]
    assert codes == [0, 0, 0, 0], [p.stderr.read() for p in procs]
    data = json.loads((example_vault / "kg-out" / "graph.json").read_text())
    ids = {n["id"] for n in data["nodes"]}
    assert all(f"note:New {i}.md" in ids for i in range(4))
    assert not any(n["kind"] == "unresolved" and n["id"].startswith("unresolved:new") for n in data["nodes"])


_ = kg_process
