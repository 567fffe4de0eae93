"""`kg update` when nothing changed, answered without the CLI framework and without the graph code.

A no-op update is what session starts, watchers and habits run most, and its full route (typer and
click, the adapters' parsers, the engine's lock and transaction) costs several times the start of
Python itself. `probe` (`vault_kg.update.noop_probe`, through the front door) makes the same
decision as the route's `scan` stage, read-only. When nothing needs doing, `main` prints exactly
what `kg update` prints. Anything it does not recognize (file arguments, another option, a scope
with work to do) returns None and the full route decides again, under the scope's lock.
"""

from __future__ import annotations

import gc
import json
import sys
from pathlib import Path
from typing import Any

from vault_kg.core.scopes import Scope

_VALUE_OPTIONS = {"--vault": "vault", "--out": "out", "--scope": "scope", "-s": "scope"}


def parse(argv: list[str]) -> dict[str, Any] | None:
    """The options of a plain `kg update` (no paths); None for anything else."""
    found: dict[str, Any] = {"vault": None, "out": None, "scope": [], "json": False}
    items = iter(argv)
    for item in items:
        if item == "--json":
            found["json"] = True
            continue
        name, eq, value = item.partition("=")
        key = _VALUE_OPTIONS.get(name)
        if key is None or (eq and name == "-s"):
            return None
        if not eq:
            value = next(items, None)
            if value is None or value.startswith("-"):
                return None
        if key == "scope":
            found["scope"].append(value)
        elif found[key] is not None:
            return None
        else:
            found[key] = Path(value)
    return found


def probe(scope: Scope) -> Any | None:
    """The `RunResult` of an update of `scope` that finds nothing to do, or None (see `vault_kg.update.noop_probe`)."""
    from vault_kg import api

    return api.probe_noop(scope)


def print_results(results: list[Any], verb: str) -> None:
    """The one-line summary per scope that `kg build` and `kg update` print (`updating.format_run`)."""
    from vault_kg import api

    for r in results:
        sys.stdout.write(api.format_run(r, verb) + "\n")


def main(argv: list[str]) -> int | None:
    """Run `kg update ARGV` when it is a no-op for every scope it names; None to take the full route."""
    collecting = gc.isenabled()
    gc.disable()  # the probe makes a few lists of every source; the cyclic GC would walk them over and over
    try:
        return _answer(argv)
    finally:
        if collecting:
            gc.enable()


def _answer(argv: list[str]) -> int | None:
    options = parse(argv)
    if options is None:
        return None
    try:
        from vault_kg.core import config as cfgmod
        from vault_kg.core.scopes import resolve_scopes

        cfg = cfgmod.load_config()
        scopes = resolve_scopes(options["scope"] or None, options["vault"], options["out"], cfg)
        results = []
        for scope in scopes:
            result = probe(scope)
            if result is None:
                return None
            results.append(result)
        for scope, result in zip(scopes, results):
            if scope.kind == "vault" and cfg.ollama_enabled and result.pending:
                from vault_kg import api

                line = api.model_notice(scope, result.pending, cfg)
                if line:
                    sys.stderr.write(f"kg: {line}\n")
    except Exception:
        return None  # the full route reports errors the way every command does
    if options["json"]:
        sys.stdout.write(json.dumps([r.as_dict() for r in results], indent=2, ensure_ascii=False, default=str) + "\n")
    else:
        print_results(results, "updated")
    return 0
