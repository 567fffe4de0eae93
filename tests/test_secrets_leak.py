"""Secrets: realistic credential shapes placed in notes, code and a session transcript never come out.

Each secret sits in the places a person or an agent puts them: frontmatter (summary, a custom
key, aliases, title), headings, prose, wikilink labels, `.env` lines, code comments, docstrings,
default arguments, and a transcript the SessionEnd hook journals. None of the secret bodies may
appear in the journal, graph.json, GRAPH_REPORT.md, brief.json, graph.html, the full-text index,
`kg query` / `explain` / `god-nodes` answers, hook output, or MCP answers. The values are
assembled at run time so that this file itself holds no credential-shaped literal.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from datetime import date
from pathlib import Path

import pytest

from conftest import kg_process
from vault_kg.query import verbs as q
from vault_kg.update.engine import run
from vault_kg.query.graph_view import load_view
from vault_kg.core.projects import add_project
from vault_kg.core.scopes import project_scope, vault_scope
from vault_kg.core.secrets import find_secrets, redact

_K = "EXAMPLE"
# name -> (text as written, the secret body that must never appear)
SECRETS: dict[str, tuple[str, str]] = {
    "aws-access-key": ("AKIA" + "Q7ZW3" + _K + "KEY9", "AKIA" + "Q7ZW3" + _K + "KEY9"),
    "aws-secret-key": ("aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCY"),
    "gcp-service-account": (
        '{"type": "service_account", "private_key_id": "a1b2", "private_key": "-----BEGIN '
        + "PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC"
        + "BKcwggSjAgEAAoIBAQC7\\n-----END "
        + 'PRIVATE KEY-----\\n", "client_email": "svc@proj.iam.gserviceaccount.com"}',
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
    ),
    "gcp-api-key": ("AIza" + "SyD3x9" + "Q" * 29, "SyD3x9" + "Q" * 29),
    "github-token": ("ghp" + "_" + "R4nd0mT0k3nV4lu3" + "x" * 20, "R4nd0mT0k3nV4lu3"),
    "github-pat": ("github" + "_pat_" + "11ABCDEFG0" + "y" * 30, "11ABCDEFG0" + "y" * 30),
    "slack-token": ("xox" + "b-" + "123456789012-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx", "AbCdEfGhIjKlMnOpQrStUvWx"),
    "slack-webhook": ("https://hooks.slack.com/services/" + "T0000/B0000/" + "XXXXsecretXXXX", "XXXXsecretXXXX"),
    "stripe-key": ("sk" + "_live_" + "51H8xQ2eZvKYlo2C" + "z" * 12, "51H8xQ2eZvKYlo2C"),
    "jwt": ("eyJ" + "hbGciOiJIUzI1NiJ9" + ".eyJ" + "zdWIiOiIxMjM0NTY3ODkwIn0" + ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    "private-key": ("-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn\n-----END RSA " + "PRIVATE KEY-----", "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn"),
    "url-password": ("postgres://admin:" + "Tr0ub4dor-and-3" + "@db.internal:5432/app", "Tr0ub4dor-and-3"),
    "env-line": ("DATABASE_PASSWORD=" + "hunter2-correct-horse", "hunter2-correct-horse"),
    "openai-key": ("sk-" + "proj-" + "Abc123Def456Ghi789Jkl0", "Abc123Def456Ghi789Jkl0"),
    "anthropic-key": ("sk-" + "ant-api03-" + "ZyXwVuTsRqPoNm987654321", "ZyXwVuTsRqPoNm987654321"),
}


def needles() -> list[tuple[str, str]]:
    return [(name, body) for name, (_, body) in SECRETS.items()]


def assert_clean(where: str, text: str) -> int:
    leaked = [name for name, body in needles() if body in text]
    assert not leaked, f"{where} leaks {leaked}"
    return len(text)


def note_with(name: str, secret: str) -> str:
    inline = secret.replace("\n", " ")
    return (
        "---\n"
        f"summary: 'Deploy notes, key {inline.replace(chr(39), chr(39) * 2)}'\n"
        f"credentials: '{inline.replace(chr(39), chr(39) * 2)}'\n"
        f"aliases: ['{name} {inline.replace(chr(39), chr(39) * 2)}']\n"
        "tags: [topic/deploy, convention/deploy, scope/global]\n"
        "---\n"
        f"# Deploy with {inline}\n\n"
        f"## Setup {inline}\n\n"
        f"The deploy token is {secret} and see [[Other|{inline}]].\n\n"
        f"{SECRETS['env-line'][0]}\n"
        "```bash\n"
        f"export API_KEY={inline}\n"
        "```\n"
    )


def code_with(secret: str) -> str:
    inline = secret.replace("\n", " ").replace('"', "'")
    return (
        f'"""Client for the deploy API; token {inline}."""\n\n'
        f"# creds: {inline}\n"
        f'def connect(url="{inline}", retries=3):\n'
        f'    """Connect with {inline}."""\n'
        "    return url\n\n\n"
        "class Deployer:\n"
        f'    """Uses {inline} for auth."""\n\n'
        f'    def run(self, token="{inline}"):\n'
        "        return connect(token)\n"
    )


TRANSCRIPT_LINES = [
    {
        "type": "user",
        "message": {"role": "user", "content": "Deploy with " + SECRETS["aws-access-key"][0] + " and " + SECRETS["stripe-key"][0]},
        "timestamp": "2025-03-11T09:02:00.000Z",
        "cwd": "/tmp",
    },
    {
        "type": "assistant",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Using " + SECRETS["github-token"][0] + " and " + SECRETS["url-password"][0]},
                {"type": "tool_use", "id": "t1", "name": "Write", "input": {"file_path": "/tmp/.env", "content": SECRETS["env-line"][0] + "\n" + SECRETS["private-key"][0]}},
            ],
        },
        "timestamp": "2025-03-11T09:03:00.000Z",
    },
    {
        "type": "user",
        "message": {"role": "user", "content": "Also " + SECRETS["jwt"][0] + " " + SECRETS["slack-token"][0] + " " + SECRETS["gcp-service-account"][0]},
        "timestamp": "2025-03-11T09:04:00.000Z",
    },
]


@pytest.fixture
def leaky(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    vault, repo = tmp_path / "vault", tmp_path / "repo"
    (vault / "ops").mkdir(parents=True)
    (repo / ".git").mkdir(parents=True)
    (repo / "deploy").mkdir()
    for i, (name, (secret, _)) in enumerate(SECRETS.items()):
        (vault / "ops" / f"Deploy {i}.md").write_text(note_with(name, secret), encoding="utf-8")
        (repo / "deploy" / f"client_{i}.py").write_text(code_with(secret), encoding="utf-8")
    (vault / "Other.md").write_text("---\nsummary: hub\ntags: [scope/global]\n---\n" + "".join(f"[[Deploy {i}]]\n" for i in range(len(SECRETS))), encoding="utf-8")
    config = tmp_path / "config.toml"
    monkeypatch.setenv("KG_CONFIG", str(config))
    config.write_text(f'vault = "{vault}"\n', encoding="utf-8")
    add_project(repo, "deployer")
    transcript = tmp_path / ".claude" / "projects" / "-repo" / "session.jsonl"  # where Claude Code writes it
    transcript.parent.mkdir(parents=True)
    transcript.write_text("\n".join(json.dumps(line) for line in TRANSCRIPT_LINES) + "\n", encoding="utf-8")
    return {"vault": vault, "repo": repo, "config": config, "transcript": transcript, "base": tmp_path}


def test_the_secret_list_is_recognised() -> None:
    for name, (secret, body) in SECRETS.items():
        assert find_secrets(secret), f"{name} is not recognised as a secret"
        assert body not in redact(secret), name


def test_no_secret_reaches_any_artifact_or_answer(leaky: dict[str, Path]) -> None:
    from episodic.transcript import journal_session

    vault = leaky["vault"]
    entry = journal_session(vault, leaky["transcript"], project="deployer")
    journal = (vault / entry.file).read_text(encoding="utf-8")
    assert "Deploy with" in journal
    assert_clean("journal note", journal)
    scopes = [vault_scope(vault), project_scope("deployer")]
    for scope in scopes:
        run(scope)
        for name in ("graph.json", "GRAPH_REPORT.md", "brief.json", "graph.html"):
            path = scope.out / name
            if path.exists():
                assert_clean(f"{scope.name}/{name}", path.read_text(encoding="utf-8"))
        con = sqlite3.connect(str(scope.out / "cache" / "index.sqlite"))
        try:
            rows = con.execute("SELECT label, aliases, summary, body FROM docs").fetchall() + con.execute("SELECT data, '', '', '' FROM nodes").fetchall()
        finally:
            con.close()
        assert_clean(f"{scope.name} search index", "\n".join(" ".join(r) for r in rows))
    answers = []
    for question in ("deploy token key", "setup deploy credentials", "connect deployer run token", "DATABASE_PASSWORD export API_KEY"):
        answer = q.query(scopes, question, budget=50_000, depth=3)
        assert answer["hits"], question
        answers.append(json.dumps(answer) + q.format_query(answer))
    view = load_view(scopes[0])
    answers.append(json.dumps(q.explain(view, "ops/Deploy 0.md"), default=str) + json.dumps(q.god_nodes(view, 50)))
    code_view = load_view(scopes[1])
    answers.append(json.dumps(q.explain(code_view, "deploy/client_3.py › function connect"), default=str))
    assert_clean("query/explain/god-nodes answers", "\n".join(answers))
    assert "REDACTED" in "\n".join(answers), "the answers did reach the redacted spans"


def test_no_secret_in_hook_output(leaky: dict[str, Path]) -> None:
    vault, repo = leaky["vault"], leaky["repo"]
    env = {"KG_CONFIG": str(leaky["config"]), "KG_OLLAMA": "off", "KG_VAULT": "", "CLAUDE_CONFIG_DIR": str(leaky["base"] / ".claude")}
    for args in (["build", "--vault", str(vault)], ["build", "--scope", "deployer"]):
        done = kg_process(*args, env=env, cwd=leaky["base"])
        assert done.returncode == 0, done.stderr
        assert_clean(f"kg {' '.join(args)}", done.stdout + done.stderr)
    note = vault / "ops" / "Deploy 1.md"
    note.write_text(note.read_text() + "\nMore: " + SECRETS["github-token"][0] + "\n", encoding="utf-8")
    broken = vault / "ops" / "Broken.md"
    broken.write_text("---\nsummary: [" + SECRETS["stripe-key"][0] + "\n---\nbody\n", encoding="utf-8")
    base = {"session_id": "s1", "transcript_path": str(leaky["transcript"]), "cwd": str(repo)}
    outputs = []
    for event, payload in (
        ("session-start", {**base, "hook_event_name": "SessionStart", "source": "startup"}),
        ("post-tool-use", {**base, "hook_event_name": "PostToolUse", "tool_name": "Write", "tool_input": {"file_path": str(note), "content": "x"}}),
        ("post-tool-use", {**base, "hook_event_name": "PostToolUse", "tool_name": "Write", "tool_input": {"file_path": str(broken), "content": "x"}}),
        ("post-tool-use", {**base, "hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_input": {"file_path": str(repo / "deploy" / "client_2.py")}}),
        ("session-end", {**base, "hook_event_name": "SessionEnd", "reason": "exit"}),
    ):
        done = kg_process("hook", event, input=json.dumps(payload), env=env, cwd=repo)
        assert done.returncode == 0
        outputs.append(done.stdout + done.stderr)
    assert "Deploy" in outputs[0], "session-start injected the god nodes / conventions"
    assert "quarantined" in outputs[2]
    assert_clean("hook output", "\n".join(outputs))
    journal = vault / "journal" / f"{date.today().isoformat()}.md"
    assert "Deploy with" in journal.read_text(encoding="utf-8"), "session-end journaled the transcript"
    assert_clean("journal after session-end", journal.read_text(encoding="utf-8"))


def test_no_secret_in_mcp_answers(leaky: dict[str, Path]) -> None:
    from fastmcp import Client

    from vault_kg.mcp.server import build_server

    vault = leaky["vault"]
    run(vault_scope(vault))
    run(project_scope("deployer"))

    async def ask() -> list[str]:
        texts = []
        async with Client(build_server(vault)) as client:
            for tool, args in (
                ("query", {"question": "deploy token key setup", "budget": 50_000, "scopes": ["vault", "deployer"]}),
                ("explain", {"node": "ops/Deploy 2.md", "scope": "vault"}),
                ("neighbors", {"node": "Other", "scope": "vault"}),
                ("god_nodes", {"scope": "vault", "n": 50}),
                ("explain", {"node": "deploy/client_5.py › class Deployer", "scope": "deployer"}),
            ):
                result = await client.call_tool(tool, args)
                texts.append(json.dumps(result.structured_content, default=str) + "".join(getattr(c, "text", "") for c in result.content))
            refused = await client.call_tool("remember", {"path": "notes/Keys.md", "summary": "keys", "tags": ["topic/x", "scope/x"], "body": SECRETS["aws-access-key"][0]}, raise_on_error=False)
            assert refused.is_error
            texts.append("".join(getattr(c, "text", "") for c in refused.content))
        return texts

    texts = asyncio.run(ask())
    assert_clean("MCP answers", "\n".join(texts))
    assert not (vault / "notes" / "Keys.md").exists()


# -- issue 19: new places (ids made from tags and link targets, journals) and new shapes at sync -----

ID_SAFE = {name: (text, body) for name, (text, body) in SECRETS.items() if not any(c in text for c in " \n,[]|#^'\"{}")}


def assert_clean_any_case(where: str, text: str) -> None:
    """Tags are lowercased into ids: the secret must not survive in either case."""
    lowered = text.lower()
    leaked = [name for name, body in needles() if body in text or body.lower() in lowered]
    assert not leaked, f"{where} leaks {leaked}"


def test_secrets_typed_as_tags_or_link_targets_never_become_ids(tmp_path: Path) -> None:
    assert len(ID_SAFE) >= 8, sorted(ID_SAFE)
    vault = tmp_path / "vault"
    vault.mkdir()
    for i, (_name, (secret, _)) in enumerate(ID_SAFE.items()):
        (vault / f"n{i}.md").write_text(
            f"---\nsummary: note {i}\ntags: [project/{secret}, scope/global]\n---\n# N{i}\n\n#ref/{secret} and [[{secret}]] and [x]({secret}.md)\n",
            encoding="utf-8",
        )
    scope = vault_scope(vault)
    run(scope)
    graph = json.loads((scope.out / "graph.json").read_text(encoding="utf-8"))
    ids = [n["id"] for n in graph["nodes"]] + [f"{e['source']} {e['target']}" for e in graph["edges"]]
    assert any(i.startswith("tag:project/") for i in ids) and any(i.startswith("unresolved:") for i in ids)
    for name in ("graph.json", "graph.html", "GRAPH_REPORT.md", "brief.json"):
        if (scope.out / name).exists():
            assert_clean_any_case(name, (scope.out / name).read_text(encoding="utf-8"))
    con = sqlite3.connect(str(scope.out / "cache" / "index.sqlite"))
    try:
        rows = [str(value) for table in ("nodes", "docs") for row in con.execute(f"SELECT * FROM {table}") for value in row]
    finally:
        con.close()
    assert_clean_any_case("cache", "\n".join(rows))


def test_hand_edited_journals_and_project_names_are_redacted_wherever_they_are_read(tmp_path: Path) -> None:
    from episodic.journal import append_entry, read_day
    from episodic.recall import day_text, format_result, recall

    vault = tmp_path / "vault"
    (vault / "journal").mkdir(parents=True)
    today = date.today()
    token, aws, pem = SECRETS["github-token"][0], SECRETS["aws-access-key"][0], SECRETS["private-key"][0]
    day = vault / "journal" / f"{today.isoformat()}.md"
    day.write_text(f"# {today}\n\n## 09:00 · {token}\nDeployed with {aws}\n{pem}\nthen the webhook fix\n", encoding="utf-8")
    entry = append_entry(vault, "retried the deploy", project=SECRETS["slack-token"][0])
    written = day.read_text(encoding="utf-8")
    assert "REDACTED:slack-token" in entry.project and SECRETS["slack-token"][1] not in written, "the project name is redacted on write"
    assert day_text(vault, day).count("\n") == written.count("\n"), "redaction keeps every line where it was"
    listed = recall(vault, "what did I do today")
    searched = recall(vault, "deploy webhook fix today")
    assert listed.hits and searched.hits
    out = "\n".join(format_result(r) + json.dumps(r.to_dict(), default=str) for r in (listed, searched))
    assert "webhook fix" in out
    assert_clean("recall output", out)
    mirror = vault / "kg-out" / "journal-index-src" / day.name
    assert_clean("the text the recall index holds", mirror.read_text(encoding="utf-8"))
    from hooks.common import HookEnv  # noqa: F401  (the hook reads the same day files)
    from vault_kg.memory.session_brief import journal_lines

    class Env:
        def __init__(self) -> None:
            self.vault = vault
            self.cfg = type("Cfg", (), {"timezone": ""})()

    lines = journal_lines(Env())
    assert lines and "REDACTED" in "\n".join(lines)
    assert_clean("brief journal lines", "\n".join(lines) + "".join(e.project for e in read_day(vault, today)))


def _sync_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, subfolder: str = "") -> tuple[Path, Path]:
    from vaultops_helpers import git, isolate_git

    isolate_git(monkeypatch, tmp_path)
    top = tmp_path / "repo"
    vault = top / subfolder if subfolder else top
    vault.mkdir(parents=True)
    (vault / "Home.md").write_text("---\nsummary: home\ntags: [scope/global]\n---\n# Home\n", encoding="utf-8")
    git(top, "init", "-q", "-b", "main")
    return top, vault


@pytest.mark.parametrize(
    "shape",
    ["latin-1", "utf-16", "over-5-mb", "binary-attachment"],
)
def test_sync_gate_scans_every_encoding_and_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shape: str) -> None:
    from vault_kg.notes import sync as sync_mod
    from vault_kg.core.errors import KgError
    from vaultops_helpers import git

    top, vault = _sync_repo(tmp_path, monkeypatch)
    secret = SECRETS["stripe-key"][0]
    text = f"Notes caf\u00e9: key {secret}\n"
    data = {
        "latin-1": ("notes/Latin.md", text.encode("latin-1")),
        "utf-16": ("notes/Wide.md", text.encode("utf-16")),
        "over-5-mb": ("notes/Big.md", b"filler line\n" * 500_000 + text.encode()),
        "binary-attachment": ("assets/dump.bin", b"\x00\x01" * 1000 + text.encode() + b"\xff" * 10),
    }[shape]
    (vault / data[0]).parent.mkdir(parents=True, exist_ok=True)
    (vault / data[0]).write_bytes(data[1])
    with pytest.raises(KgError, match=r"refused to sync: .*stripe-key"):
        sync_mod.sync(vault, update_graph=False)
    assert git(top, "rev-parse", "--verify", "-q", "HEAD", check=False).returncode != 0, "nothing was committed"


def test_sync_gate_scans_an_edited_committed_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A note already committed, edited to hold a key, is refused like a new file (git says `M`)."""
    from vault_kg.notes import sync as sync_mod
    from vault_kg.core.errors import KgError
    from vaultops_helpers import git

    top, vault = _sync_repo(tmp_path, monkeypatch)
    first = sync_mod.sync(vault, update_graph=False).committed
    assert first
    with (vault / "Home.md").open("a", encoding="utf-8") as note:
        note.write(f"\nThe deploy key: {SECRETS['aws-access-key'][0]}\n")
    with pytest.raises(KgError, match=r"Home\.md: refused to sync: .*aws-access-key"):
        sync_mod.sync(vault, update_graph=False)
    assert git(top, "rev-parse", "HEAD").stdout.strip() == first, "nothing was committed"
    assert SECRETS["aws-access-key"][1] not in git(top, "log", "-p", "--all").stdout


def test_sync_runs_the_users_pre_commit_hook_and_commits_only_the_vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vault_kg.notes import sync as sync_mod
    from vault_kg.core.errors import KgError
    from vaultops_helpers import git

    top, vault = _sync_repo(tmp_path, monkeypatch, subfolder="notes-vault")
    (top / "app.py").write_text("print('staged elsewhere')\n", encoding="utf-8")
    git(top, "add", "app.py")
    hook = top / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho ran >> \"$(git rev-parse --git-dir)/hook-ran\"\ngit diff --cached | grep -q FORBIDDEN && { echo 'pre-commit: FORBIDDEN found' >&2; exit 1; }\nexit 0\n")
    hook.chmod(0o755)
    report = sync_mod.sync(vault, update_graph=False)
    assert report.committed and (top / ".git" / "hook-ran").exists(), "the user's own pre-commit hook ran"
    committed = git(top, "show", "--name-only", "--format=", "HEAD").stdout.split()
    assert committed and all(p.startswith("notes-vault/") for p in committed), committed
    assert git(top, "diff", "--cached", "--name-only").stdout.split() == ["app.py"], "the user's staged file stays staged, uncommitted"
    (vault / "Blocked.md").write_text("FORBIDDEN\n", encoding="utf-8")
    with pytest.raises(KgError, match="commit failed"):
        sync_mod.sync(vault, update_graph=False)


def test_the_bundled_example_vault_passes_the_sync_gate() -> None:
    from conftest import EXAMPLE_VAULT
    from vault_kg.notes.sync import scan_file

    flagged = {p.relative_to(EXAMPLE_VAULT).as_posix(): kinds for p in EXAMPLE_VAULT.rglob("*") if p.is_file() and (kinds := scan_file(p))}
    assert flagged == {}
    assert find_secrets("STRIPE_API_KEY=" + "rk_live_" + "51H8xQ2eZvKYlo2Czzzzzzzzzzzz") and not find_secrets("STRIPE_API_KEY=rk_live_...")
