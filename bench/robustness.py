"""Robustness figures: how hard the suites tried to break the graph, and what they found.

Usage: python bench/robustness.py [--seconds 120] [--kill-seconds 60] [--hostile 3000]

Prints: incremental-vs-scratch sequences and steps checked with divergences; SIGKILLs survived
without corruption; concurrent hook processes and readers; hostile inputs tried; secrets leaked.
Each part reuses the code of its test suite under tests/ (same generators, same checks).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))


def isolate() -> Path:
    home = Path(tempfile.mkdtemp(prefix="kg-robust-"))
    os.environ["KG_CONFIG"] = str(home / "config.toml")
    os.environ["KG_OLLAMA"] = "off"
    os.environ.pop("KG_VAULT", None)
    return home


def incremental(seconds: float) -> None:
    os.environ["KG_HTML"] = "off"
    from test_prop_incremental import soak

    started = time.perf_counter()
    totals = soak(seconds)
    os.environ.pop("KG_HTML", None)
    print(
        f"incremental ≡ from scratch: {totals['sequences']} sequences, {totals['steps']} steps checked "
        f"(each against a fresh build of both scopes and the independent link oracle), {len(totals['divergences'])} divergences, {time.perf_counter() - started:.0f}s"
    )
    for line in totals["divergences"][:5]:  # type: ignore[index]
        print(f"  {line[:400]}")


def kills(seconds: float, home: Path) -> None:
    from test_crash_kill import kill_rounds

    started = time.perf_counter()
    totals = kill_rounds(home / "crash", seconds, fresh_every_round=True, seed=int(time.time()) % 1000, at_least=3)
    # kill_rounds raises on the first corrupt artifact or cache, so reaching this line is the observation
    print(
        f"crash safety: {totals['kills']} SIGKILLs on a 500-note vault ({totals['killed_while_writing']} while the run was writing (it held the scope lock and had written), "
        f"{totals['finished_before_kill']} finished first); after each: graph.json and brief.json parsed, every artifact "
        f"old or new, SQLite cache sound (checks passed: {totals['kills']}); {totals['fresh_checks']} recoveries equal to a "
        f"fresh build, {totals['leftover_temp_files']} temp files left, {time.perf_counter() - started:.0f}s"
    )


def concurrency(rounds: int, home: Path) -> None:
    from robust_corpus import canonical, fresh_build
    from test_concurrency import hammer
    from vault_kg.core.scopes import vault_scope

    vault = home / "conc" / "vault"
    writers, failures, readers = hammer(vault, rounds)
    scope = vault_scope(vault)
    same = canonical(scope.out) == fresh_build(scope, home / "conc" / "fresh")
    print(
        f"concurrency: {writers} PostToolUse hook processes (hooks/hooks.json's command through bin/kg-launch), 8 at a time "
        "(half on one shared note), each with the background clustering and graph.html jobs it started, waited for; "
        f"{readers.queries} query processes and {readers.parses} graph.json reads alongside; "
        f"{len(failures)} failures; final graph equals from scratch: {same}"
    )


WORDS = ["Payments API", "acme", "Ünïcode", "a|b", "x#y", "^blk", "[[", "]]", "](", "`", "*", "&a", "!!str", "%20", "..", "/"]


def grammar_note(rng: random.Random) -> bytes:
    """Valid UTF-8 shaped like a vault note, so it reaches the YAML, link, table and heading parsers."""
    word = lambda: rng.choice(WORDS) + rng.choice(["", " ", "-x", "/y"])  # noqa: E731
    fm = []
    for key in rng.sample(["summary", "tags", "aliases", "title", "anchors", "date", word()], rng.randint(0, 5)):
        value = rng.choice(
            [
                word(),
                f"'{word()}'",
                f'"{word()}\\"',
                f"[{word()}, {word()}",
                f"[{word()}, {word()}]",
                f"{{a: {word()}}}",
                "|\n  " + word(),
                "&anchor " + word(),
                "*anchor",
                "\n  - " + word() + "\n  - [" + word(),
                "\t" + word(),
                "",
                "\n  - project: p\n    locator: " + word() + "\n    hash: " + rng.choice(["0" * 64, "zz", ""]),
            ]
        )
        fm.append(f"{key}: {value}")
    body = []
    for _ in range(rng.randint(0, 25)):
        body.append(
            rng.choice(
                [
                    "#" * rng.randint(1, 8) + " " + word() + rng.choice(["", " ##", " #"]),
                    f"[[{word()}|{word()}|{word()}]] [[{word()}#{word()}#{word()}]] [[#{word()}]] [[^]] [[]]",
                    f"| [[{word()}\\|{word()}]] | {word()} |\n| --- | --- |\n| `[[{word()}]]` | [x]({word()}.md#{word()}) |",
                    f"[{word()}]({word()}%20{word()}.md) ![[{word()}]] [[ [[{word()}]] ]]",
                    rng.choice(["```", "~~~", "````"]) + rng.choice(["", "python"]),
                    f"#{word()}/{word()}//x #123 #a/b/",
                    f"<!-- {word()}",
                    "- " * rng.randint(1, 30) + word(),
                    "> " * rng.randint(1, 30) + f"[[{word()}]]",
                    f"text ^{rng.choice(['blk-1', 'x y', ''])}",
                    "`" * rng.randint(1, 9) + word() + "`" * rng.randint(1, 9),
                ]
            )
        )
    head = ("---\n" + "\n".join(fm) + "\n---\n") if fm or rng.random() < 0.3 else ""
    return (head + "\n".join(body) + "\n").encode("utf-8")


def hostile(count: int) -> None:
    """Each input through the note extractor (and as code): what happened to each, counted."""
    from test_hostile_input import check_code, check_note, pathological_cases, random_blob

    rng = random.Random(1)
    outcomes: dict[str, int] = {"clean": 0, "quarantined": 0, "contract broken": 0, "crashed": 0, "hung": 0}
    reasons: dict[str, int] = {}
    failures: list[str] = []
    slowest = 0.0
    started = time.perf_counter()

    def one(fn: object, args: tuple, label: str) -> None:
        nonlocal slowest
        t = time.perf_counter()
        try:
            ext = fn(*args)  # type: ignore[operator]
        except TimeoutError as exc:
            outcomes["hung"] += 1
            failures.append(f"{label}: {exc}")
            return
        except AssertionError as exc:
            outcomes["contract broken"] += 1
            failures.append(f"{label}: {exc}")
            return
        except Exception as exc:  # noqa: BLE001 (what is being counted)
            outcomes["crashed"] += 1
            failures.append(f"{label}: {type(exc).__name__}: {exc}")
            return
        finally:
            slowest = max(slowest, time.perf_counter() - t)
        if ext.quarantine:
            outcomes["quarantined"] += 1
            reason = ext.quarantine.split(":", 1)[-1].strip().split(";")[0][:40]
            reasons[reason] = reasons.get(reason, 0) + 1
        else:
            outcomes["clean"] += 1

    kinds = {"grammar-shaped notes": 0, "fragment blobs": 0, "random bytes": 0}
    for i in range(count):
        kind = ("grammar-shaped notes", "fragment blobs", "random bytes")[i % 3]
        data = grammar_note(rng) if i % 3 == 0 else random_blob(rng) if i % 3 == 1 else bytes(rng.randrange(256) for _ in range(rng.randrange(2048)))
        kinds[kind] += 1
        one(check_note, (data,), f"{kind} #{i} as a note")
        one(check_code, (data, f"src/h{i}{rng.choice(['.py', '.ts', '.go', '.rs'])}"), f"{kind} #{i} as code")
    for name, (relpath, data) in pathological_cases().items():
        one(check_note if relpath.endswith(".md") else check_code, (data, relpath), name)
    tried = sum(outcomes.values())
    print(
        f"hostile input: {tried} inputs tried ({', '.join(f'{v} {k}' for k, v in kinds.items())}, each as a note and as code; "
        f"{len(pathological_cases())} named pathological) in {time.perf_counter() - started:.0f}s, slowest {slowest:.2f}s"
    )
    print("  outcomes: " + ", ".join(f"{v} {k}" for k, v in outcomes.items()))
    print("  quarantine reasons: " + ", ".join(f"{v} {k!r}" for k, v in sorted(reasons.items(), key=lambda kv: -kv[1])[:8]))
    for line in failures[:10]:
        print(f"  FAILED {line[:300]}")


def secrets(home: Path) -> None:
    import pytest

    code = pytest.main(["-q", "-p", "no:cacheprovider", "-p", "no:warnings", str(REPO / "tests" / "test_secrets_leak.py")])
    from test_secrets_leak import SECRETS

    places = "notes (frontmatter, headings, prose, links, .env lines, code fences), code (comments, docstrings, defaults), a session transcript"
    print(
        f"secrets: {len(SECRETS)} secret shapes in {places}; checked journal, graph.json, report, brief, html, search index, "
        f"query/explain/god-nodes, hook output, MCP answers: tests/test_secrets_leak.py "
        f"{'passed (no secret found in any of them)' if code == 0 else f'FAILED (pytest exit {int(code)}; see above)'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=120, help="time for the incremental-vs-scratch sequences")
    parser.add_argument("--kill-seconds", type=float, default=60, help="time for the SIGKILL rounds")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of 8 concurrent hook processes")
    parser.add_argument("--hostile", type=int, default=3000, help="generated hostile inputs (each as a note and as code)")
    args = parser.parse_args()
    home = isolate()
    incremental(args.seconds)
    kills(args.kill_seconds, home)
    concurrency(args.rounds, home)
    hostile(args.hostile)
    secrets(home)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from figures import record

    with record("robustness"):
        main()
