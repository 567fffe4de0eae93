"""Do the tests catch the bugs they name? One-line mutations of the behaviours the docs promise.

Each mutation below breaks one promise with a one-line change (the kind of slip a refactor makes)
and names the tests that should fail because of it. For each, the script copies the tree (the
files git tracks, as they are in the work tree) to a scratch folder once, applies the mutation
there, runs those tests with the scratch copy first on the path (the faces' subprocesses inherit
it), and puts the line back. A mutation whose tests still pass survived: the page lists it.

    python bench/mutation_check.py                 # every mutation; writes docs/benchmarks/mutation_check.md
    python bench/mutation_check.py --only budget   # the mutations whose name contains a word
    python bench/mutation_check.py --list          # what is checked, without running anything

A baseline run of every named test on the unchanged copy comes first: a test that fails there
would kill every mutation for nothing, so the run stops. A mutation whose line is no longer in
its file is reported as stale (the code moved: update the entry). Not run in CI: it runs the
targeted tests once per mutation, minutes in all (the page says how long).

Mutations that turn out equivalent are replaced, not kept as survivors: a no-op update's "rewrites
nothing" is held three times over (the scan stage, the enrich stage, `store.write_if_changed`), so
breaking one line of it changes no byte; `sorted()` over graph.json's nodes is redundant with the
fold's order. The list names a line whose loss the promise does feel.

Why not mutmut (measured, not assumed): mutmut 3.8.1 mutates every operator of every line it is
pointed at; over the 17 files these mutations touch its own generator
(`mutmut.mutation.file_mutation.create_mutations`) makes 10,511 mutants, and it first runs the
whole suite once (about ten minutes here) to learn which tests reach which function. At the
several seconds a targeted pytest run costs per mutant on this machine (the page's per-mutation
times), that is most of a day per run, and most of its mutants are equivalent or outside the
promises, so each run's survivors need triage. The mutations here are the named ones a reviewer
planted by hand, kept so the check can be repeated in minutes.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from figures import record  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mutation:
    name: str
    promise: str  # what the docs promise, and where
    path: str  # the file, relative to the repository
    old: str  # one line as it is (must occur exactly once)
    new: str  # the line as the bug would have it
    tests: tuple[str, ...]  # pytest node ids that must fail


MUTATIONS: tuple[Mutation, ...] = (
    Mutation(
        "ghost-nodes: a deleted note keeps its nodes",
        "no ghost nodes, ever, on any route (architecture.md, invariant 1)",
        "vault_kg/update/stages.py",
        "        removed = sorted(set(stats) - set(listed))",
        "        removed = []",
        ("tests/test_vault_graph.py::test_delete_and_folder_move", "tests/test_vault_graph.py::test_rename_leaves_no_ghosts"),
    ),
    Mutation(
        "unresolved: a dangling wikilink is dropped",
        "a wikilink to a missing note is an explicit unresolved node (architecture.md, invariant 4)",
        "extract/notes.py",
        "            edges.append(m.edge(ref.source, uid, ref.relation, owner, ref.line, **extra))",
        "            pass",
        ("tests/test_vault_graph.py::test_dangling_link_resolves_when_target_appears",),
    ),
    Mutation(
        "budget: the edges block left out of the budget",
        "--budget caps the whole printed answer, edges included (queries.md)",
        "vault_kg/query/verbs.py",
        "        if used + _edges_cost(edges) <= limit:",
        "        if used <= limit:",
        ("tests/test_query_budget.py::test_edges_alone_decide_when_every_hit_fits",),
    ),
    Mutation(
        "budget: no room kept for the truncation notice",
        "a cut answer shows a visible truncation notice within the budget (queries.md)",
        "vault_kg/query/verbs.py",
        "    room = limit - (len(_notice(len(ordered), 10**9, budget)) + 1)",
        "    room = limit",
        ("tests/test_query_budget.py::test_library_answers_fit_every_budget",),
    ),
    Mutation(
        "secret gate: kg sync scans only new files",
        "nothing that looks like a credential is committed by kg sync (safety.md)",
        "vault_kg/notes/sync.py",
        '    _refuse_secrets(repo, [rel for code, rel in changes if code != "D"])',
        '    _refuse_secrets(repo, [rel for code, rel in changes if code == "A"])',
        ("tests/test_secrets_leak.py::test_sync_gate_scans_an_edited_committed_note",),
    ),
    Mutation(
        "secret gate: the vault write guard lets secrets through",
        "a secret is never written into the vault (safety.md)",
        "vault_kg/core/vault_guard.py",
        "    if secrets:",
        "    if False:",
        ("tests/test_vault_write.py::test_refuses_secrets",),
    ),
    Mutation(
        "secret gate: the overlap check drops a second secret kind",
        "every secret in a text is found and redacted (safety.md)",
        "vault_kg/core/secrets.py",
        "            taken.append((start, end, rule.kind))",
        "            taken.append((start, end, rule.kind)) if not taken else None",
        ("tests/test_secrets_leak.py::test_no_secret_reaches_any_artifact_or_answer",),
    ),
    Mutation(
        "guardrails: only a MultiEdit's first edit checked",
        "PreToolUse judges the file as the tool would leave it (guardrails.md)",
        "vault_kg/memory/guardrails.py",
        "    for edit in edits:",
        "    for edit in edits[:1]:",
        ("tests/test_hooks_pre_tool_use.py::test_every_edit_of_a_multiedit_is_checked",),
    ),
    Mutation(
        "path escape: an existing file outside the vault is served",
        "no path escapes the vault (mcp.md, safety.md)",
        "vault_kg/notes/anchor_repair.py",
        "            safe_relpath(vault.root, candidate)",
        "            pass",
        ("tests/test_mcp_notes.py::test_paths_out_of_the_vault_are_refused_when_the_file_exists",),
    ),
    Mutation(
        "path escape: `..` accepted by the write guard",
        "no write escapes the vault (safety.md)",
        "vault_kg/core/vault_guard.py",
        '    if any(part in ("..", "") for part in pure.parts) or any(part.startswith(".") for part in pure.parts):',
        '    if any(part == "" for part in pure.parts) or any(part.startswith(".") and part != ".." for part in pure.parts):',
        ("tests/test_vault_write.py::test_refuses_paths_outside_the_vault",),
    ),
    Mutation(
        "stale: queries serve stale nodes as current",
        "queries never serve a stale or superseded node as current (anchors.md)",
        "vault_kg/query/graph_view.py",
        '        return include_stale or node.get("status") not in HIDDEN_STATUSES',
        "        return True",
        ("tests/test_anchors_graph.py::test_code_change_alone_makes_vault_update_mark_stale_and_queries_hide_it",),
    ),
    Mutation(
        "anchors: comments and whitespace change the hash",
        "reformatting and comment edits never dirty an anchor (anchors.md)",
        "extract/anchors.py",
        '    collapsed = _WS.sub(" ", text_without_comments).strip()',
        "    collapsed = text_without_comments",
        ("tests/test_anchors_check.py::test_reformatting_and_comment_edits_dirty_nothing",),
    ),
    Mutation(
        "anchors: a dirty note is not marked stale",
        "a note anchored to changed code goes stale on the next update (anchors.md)",
        "vault_kg/anchors/build_pass.py",
        '        node["status"] = m.STALE',
        "        pass",
        ("tests/test_anchors_graph.py::test_code_change_alone_makes_vault_update_mark_stale_and_queries_hide_it",),
    ),
    Mutation(
        "atomic writes: the old file is gone before the new one is whole",
        "a crash mid-write leaves the previous artifacts valid (robustness.md)",
        "vault_kg/core/store.py",
        "        os.replace(tmp, path)",
        "        os.replace(tmp, path) if path.unlink(missing_ok=True) is None and os.path.getsize(tmp) > 0 else None",
        ("tests/test_vault_bad_input.py::test_atomic_write_keeps_old_file_on_failure",),
    ),
    Mutation(
        "lock: two writers of one scope at once",
        "two kg update runs at once: the second waits (robustness.md)",
        "vault_kg/core/store.py",
        "                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)",
        "                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)",
        ("tests/test_readme_claims.py::test_kg_lock_timeout_bounds_the_wait_for_a_held_scope",),
    ),
    Mutation(
        "no-op: a no-op update starts the model worker",
        "a no-op update never contacts the model (llm.md)",
        "vault_kg/jobs/model_worker.py",
        "    if not (explicit or result.extracted or result.removed):",
        "    if False:",
        ("tests/test_llm_worker.py::test_no_op_update_with_notes_pending_sends_nothing",),
    ),
    Mutation(
        "no-op: an update with nothing changed goes past the scan",
        "the no-op fast path ends at the scan stage (architecture.md, 'The update route')",
        "vault_kg/update/stages.py",
        "    if not run.to_read and not run.removed and run.nothing_changed():",
        "    if False:",
        ("tests/test_vault_graph.py::test_a_no_op_update_ends_at_the_scan_without_loading_the_extractions",),
    ),
    Mutation(
        "deterministic: nodes folded in the order the cache gave them",
        "the same inputs give byte-identical artifacts, however they were reached (architecture.md, invariant 6)",
        "vault_kg/update/assembly.py",
        "    for rel in sorted(extractions):",
        "    for rel in extractions:",
        ("tests/test_vault_graph.py::test_rename_leaves_no_ghosts", "tests/test_vault_graph.py::test_incremental_equals_scratch_per_step"),
    ),
    Mutation(
        "hooks: a failing hook exits non-zero",
        "hooks fail open: any failure is logged and the hook exits 0 (hooks.md)",
        "hooks/dispatch.py",
        "        _record(event, exc, payload)",
        "        raise",
        ("tests/test_hooks_fail_open.py::test_a_malformed_payload_is_logged_and_exits_0",),
    ),
    Mutation(
        "hooks: a hook's deferred clustering is never started",
        "a hook leaves ranks, communities and graph.html to jobs that catch up (hooks.md, performance.md)",
        "vault_kg/jobs/clustering.py",
        '    if result.extra.get("communities") == "deferred" or result.extra.get("whole_graph") == "deferred":',
        "    if False:",
        ("tests/test_concurrency.py::test_eight_hooks_at_once_with_readers",),
    ),
    Mutation(
        "stated relations: a negated list item still states a relation",
        "a negated item ('no longer', 'not') states nothing (llm.md, 'Relations')",
        "extract/stated_relations.py",
        "        if rule is None or item is None or _NEGATED.search(_first_sentence(_with_continuation(item.group(1), number, lines))):",
        "        if rule is None or item is None:",
        ("tests/test_llm_relations.py::test_stated_relations_from_lists_tables_and_properties",),
    ),
    Mutation(
        "stated relations: a table row keyed by code is read as a name",
        "table rows about config keys state no owner (llm.md, 'Relations')",
        "extract/stated_relations.py",
        '    if not cells or _CODE_ONLY.match(cells[0]) or _NEGATED.search(" ".join(cells)):',
        '    if not cells or _NEGATED.search(" ".join(cells)):',
        ("tests/test_llm_relations.py::test_stated_relations_from_lists_tables_and_properties",),
    ),
)


def tracked_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    return [p for p in out.decode().split("\0") if p and (REPO / p).is_file()]


def scratch_copy(target: Path) -> None:
    """The tracked files as they are in the work tree (uncommitted edits included)."""
    for rel in tracked_files():
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, dest, follow_symlinks=False)


def run_tests(tree: Path, tests: tuple[str, ...], timeout: float) -> tuple[int, float, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("KG_VAULT", "KG_CONFIG")}
    env["PYTHONPATH"] = str(tree) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    started = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-m", "pytest", "-x", "-p", "no:cacheprovider", *tests], cwd=tree, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return -1, time.perf_counter() - started, f"timed out after {timeout:.0f}s"
    failed = [line.split(" ", 1)[1].split(" - ", 1)[0].split("::")[-1].replace("|", "/") for line in done.stdout.splitlines() if line.startswith(("FAILED ", "ERROR "))]
    counts = [line.strip("= ") for line in done.stdout.splitlines() if re.search(r"\d+ (passed|failed|error)", line)]
    said = f"failed: {failed[0]}" if failed else (counts[-1] if counts else done.stderr.strip()[-200:])
    return done.returncode, time.perf_counter() - started, said


def check_scratch_is_imported(tree: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(tree))
    probe = "import vault_kg, extract, graph_out, hooks; print(vault_kg.__file__, extract.__file__, graph_out.__file__, hooks.__file__)"
    where = subprocess.run([sys.executable, "-c", probe], cwd=tree, env=env, capture_output=True, text=True, check=True).stdout.split()
    outside = [w for w in where if not Path(w).resolve().is_relative_to(tree.resolve())]
    if outside:
        raise SystemExit(f"the scratch copy is not what Python imports ({outside}); is another kg installed non-editable?")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="", help="only mutations whose name contains this")
    parser.add_argument("--list", action="store_true", help="list the mutations and their tests")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per mutation's tests")
    args = parser.parse_args()
    chosen = [m for m in MUTATIONS if args.only.lower() in m.name.lower()]
    if args.list:
        for m in chosen:
            print(f"{m.name}\n  promise: {m.promise}\n  {m.path}: {m.old.strip()!r} -> {m.new.strip()!r}\n  tests: {' '.join(m.tests)}")
        return 0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kg-mutants-") as tmp:
        tree = Path(tmp) / "tree"
        scratch_copy(tree)
        check_scratch_is_imported(tree)
        every = tuple(dict.fromkeys(t for m in chosen for t in m.tests))
        code, seconds, tail = run_tests(tree, every, args.timeout * 2)
        print(f"baseline: {len(every)} tests on the unchanged copy: {tail} ({seconds:.0f}s)")
        if code != 0:
            print("the named tests fail without any mutation; fix them first")
            return 1
        survivors, stale = [], []
        print("\n| mutation | promise | file | outcome | tests run |\n| --- | --- | --- | --- | --- |")
        for m in chosen:
            path = tree / m.path
            original = path.read_text(encoding="utf-8")
            lines = original.split("\n")
            if lines.count(m.old) != 1:
                stale.append(m.name)
                print(f"| {m.name} | {m.promise} | `{m.path}` | STALE: the line is not in the file once | - |")
                continue
            path.write_text("\n".join(m.new if line == m.old else line for line in lines), encoding="utf-8")
            try:
                code, seconds, tail = run_tests(tree, m.tests, args.timeout)
            finally:
                path.write_text(original, encoding="utf-8")
            outcome = "killed" if code != 0 else "SURVIVED"
            if code == 0:
                survivors.append(m.name)
            names = ", ".join(f"`{t.split('::')[-1]}`" for t in m.tests)
            print(f"| {m.name} | {m.promise} | `{m.path}` | {outcome} ({tail}; {seconds:.0f}s) | {names} |")
    print(f"\n{len(chosen)} mutations: {len(chosen) - len(survivors) - len(stale)} killed, {len(survivors)} survived, {len(stale)} stale; {time.perf_counter() - started:.0f}s")
    for name in survivors:
        print(f"survivor: {name}")
    for name in stale:
        print(f"stale: {name}")
    return 1 if survivors or stale else 0


if __name__ == "__main__":
    if "--only" in " ".join(sys.argv) or "--list" in sys.argv:
        sys.exit(main())  # a partial run does not replace the page
    with record("mutation_check"):
        status = main()
    sys.exit(status)
