"""`kg llm status|run|stop|check|extract`: the local model pass and its background worker."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, Optional

import typer

from vault_kg.core.config import load_config
from vault_kg.core.errors import KgError

from vault_kg.cli.commands.options import JsonOpt, OutOpt, VaultOpt, emit

llm_app = typer.Typer(help="The local-model pass: a background worker asks Ollama about pending notes.\n\nExample: kg llm status", no_args_is_help=True)


def _scope(vault: Optional[Path], out: Optional[Path] = None) -> Any:
    from vault_kg.core.scopes import vault_scope

    return vault_scope(vault, out)


def _minutes(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 90:
        return f"{seconds:.0f}s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def format_status(info: dict[str, Any]) -> str:
    if not info["enabled"]:
        return "model pass: off ([ollama] enabled = false or KG_OLLAMA=off); no note is pending"
    if not info["built"]:
        return "model pass: the vault is not built yet; run `kg build`"
    worker = info["worker"]
    state = f"running (pid {worker['pid']})" if worker["running"] else ("stopped (`kg llm run` starts it)" if worker["stopped"] else "idle")
    rate = f"{info['rate_per_min']:.1f} notes/min" if info["rate_per_min"] else "rate -"
    lines = [
        f"model pass: {info['model']} at {info['host']}",
        f"  notes: {info['done']} done · {info['pending']} pending · {len(info['failed'])} failed, waiting to retry",
        f"  worker: {state} · {rate} · ETA {_minutes(info['eta_s'])} · {info['calls']} calls so far",
    ]
    if info["last_error"]:
        retry = f" (retried after {time.strftime('%H:%M', time.localtime(info['retry_at']))})" if info["retry_at"] else ""
        lines.append(f"  last error: {info['last_error']}{retry}")
    for failure in info["failed"][:5]:
        lines.append(f"  failed: {failure['note']}: {failure['error']} (attempt {failure['attempts']}, next at {time.strftime('%H:%M', time.localtime(failure['next_try']))})")
    return "\n".join(lines)


def wait_for_worker(scope: Any, cfg: Any, outcome: str, show: bool = True) -> dict[str, Any]:
    """Follow the worker until it exits: a progress bar (notes, notes per minute, ETA) on a
    terminal. `outcome` is what `wake` said. Returns the final status; its `pending` is what is left."""
    from vault_kg.jobs import model_worker as llm_worker

    began = time.time()
    state = llm_worker.read_state(scope.out)
    base = state.get("processed", 0)
    start = llm_worker.status(scope, cfg)
    if outcome not in ("started", "running") or not start["pending"]:
        return start
    total = max(1, start["pending"])
    bar = None
    if show and sys.stderr.isatty() and start["pending"]:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        bar = Progress(TextColumn("model pass"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[rate]} · ETA {task.fields[eta]}"), transient=True)
        bar.start()
        task = bar.add_task("", total=total, rate="-", eta="-")
    deadline = time.monotonic() + 10  # the worker it just started may take a moment to hold its lock
    try:
        while True:
            info = llm_worker.status(scope, cfg)
            done = llm_worker.read_state(scope.out).get("processed", 0) - base
            if bar is not None:
                rate = info["rate_per_min"]
                left = max(0, total - done)
                bar.update(task, completed=min(done, total), rate=f"{rate:.1f} notes/min" if rate else "-", eta=_minutes(left / rate * 60) if rate else "-")
            ran = llm_worker.read_state(scope.out).get("started", 0) >= began - 1 or outcome == "running"
            if not info["worker"]["running"] and (ran or time.monotonic() > deadline):
                return info
            time.sleep(0.5)
    finally:
        if bar is not None:
            bar.stop()


def finish_wait(info: dict[str, Any], as_json: bool, out: Path, echo: bool = True) -> None:
    """The last line of a wait: what is done, and the one thing to do when notes remain pending
    (said here, so the next update does not say it again)."""
    if echo:
        emit(info, as_json, lambda d: f"model pass: {d['done']} notes done · {d['pending']} pending · {d['calls']} calls")
    if info["pending"] and info["last_error"]:
        from vault_kg.jobs import model_worker as llm_worker

        llm_worker.update_state(out, lambda s: s.update(warned=info["last_error"]))
        raise KgError(f"model pass stopped with {info['pending']} note(s) pending: {info['last_error']}")


def llm_status(vault: Optional[Path] = VaultOpt, out: Optional[Path] = OutOpt, as_json: bool = JsonOpt) -> None:
    """Notes done, pending and failed (waiting to retry), the worker, its rate and ETA, the last error.

    Example: kg llm status --json
    """
    from vault_kg.jobs import model_worker as llm_worker

    info = llm_worker.status(_scope(vault, out), load_config())
    emit(info, as_json, format_status)


def llm_run(
    vault: Optional[Path] = VaultOpt,
    out: Optional[Path] = OutOpt,
    wait: bool = typer.Option(False, "--wait", help="Stay until the worker is done, with a progress bar."),
    as_json: bool = JsonOpt,
) -> None:
    """Start the background worker now (clears a stop and every back-off); it exits when nothing is pending.

    Example: kg llm run --wait
    """
    from vault_kg.jobs import model_worker as llm_worker

    cfg = load_config()
    if not cfg.ollama_enabled:
        raise KgError("the model pass is off ([ollama] enabled = false or KG_OLLAMA=off); turn it on first")
    scope = _scope(vault, out)
    if llm_worker.counts(scope.out) is None:
        raise KgError(f"{scope.root}: not built yet; run `kg build` first")
    outcome = llm_worker.wake(scope.root, scope.out, force=True)
    if wait:
        finish_wait(wait_for_worker(scope, cfg, outcome), as_json, scope.out)
        return
    info = {"worker": outcome, "pid": llm_worker.running(scope.out)}
    emit(info, as_json, lambda d: f"model worker: {d['worker']}; follow it with `kg llm status`")


def llm_stop(vault: Optional[Path] = VaultOpt, out: Optional[Path] = OutOpt, as_json: bool = JsonOpt) -> None:
    """Stop the worker (it merges what it finished) and keep it stopped until `kg llm run`.

    Example: kg llm stop
    """
    from vault_kg.jobs import model_worker as llm_worker

    info = llm_worker.stop(_scope(vault, out).out)
    emit(info, as_json, lambda d: f"stopped the model worker (pid {d['pid']})" if d["pid"] else "no model worker was running; it stays stopped until `kg llm run`")


def llm_check(
    host: str = typer.Option(None, help="Ollama URL (default: config / OLLAMA_HOST)."),
    model: str = typer.Option(None, help="Model name (default: config / KG_MODEL)."),
    as_json: bool = JsonOpt,
) -> None:
    """Check that Ollama answers and has the model (never pulls it).

    \b
    Example: kg llm check --model qwen2.5:7b-instruct
    """
    from extract.llm import OllamaExtractor

    cfg = load_config()
    extractor = OllamaExtractor(host or cfg.ollama_host, model or cfg.ollama_model, timeout=30.0)
    problem = extractor.preflight()
    if problem:
        raise KgError(problem)
    info = {
        "host": extractor.host,
        "model": extractor.model,
        "digest": extractor.digest,
        "context_length": extractor.context_length,
        "num_ctx": extractor.num_ctx,
    }
    emit(info, as_json, lambda d: f"ready: {d['model']} at {d['host']} (digest {str(d['digest'])[:12]}, context {d['context_length']})")


def llm_extract(
    note: Path = typer.Argument(..., help="A markdown note."),
    host: str = typer.Option(None, help="Ollama URL (default: config / OLLAMA_HOST)."),
    model: str = typer.Option(None, help="Model name (default: config / KG_MODEL)."),
    timeout: float = typer.Option(600.0, help="Seconds to wait for one model call."),
    as_json: bool = JsonOpt,
) -> None:
    """Run the model on one note, uncached, and show verified entities and relations.

    \b
    Example: kg llm extract "clients/Acme Corp.md" --model qwen2.5:7b-instruct
    """
    from vault_kg.core.safe_read import read_regular
    from vault_kg.core.safe_write import MAX_BYTES

    try:
        text = read_regular(note, MAX_BYTES).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise KgError(f"{note}: cannot read as UTF-8 text ({exc.__class__.__name__}); check the path") from exc
    from extract.llm import OllamaExtractor

    cfg = load_config()
    extractor = OllamaExtractor(host or cfg.ollama_host, model or cfg.ollama_model, timeout=timeout, num_ctx=cfg.ollama_num_ctx)
    result = extractor.extract_note(note.as_posix(), text)
    if result.status != "ok":
        raise KgError(result.message)
    emit(result.to_dict(), as_json, lambda _: format_extraction(result))


def format_extraction(result: Any) -> str:
    """One line per verified entity and relation, then the call count and speed."""
    lines = [f"entity  {entity['name']} ({entity['type']}) line {entity['line']} {entity['confidence']}" for entity in result.entities]
    lines += [f"{rel['confidence']:<9} {rel['score']:.1f}  {rel['source']} -{rel['relation']}-> {rel['target']}  line {rel['line']}  ({rel['check']})" for rel in result.relations]
    return "\n".join([*lines, f"{result.calls} model calls, {result.eval_tokens_per_s or 0:.1f} tok/s"])


def register(app: typer.Typer) -> None:
    app.add_typer(llm_app, name="llm")
    for name, command in (("status", llm_status), ("run", llm_run), ("stop", llm_stop), ("check", llm_check), ("extract", llm_extract)):
        llm_app.command(name)(command)
    app.command("llm-check", hidden=True, help="Same as `kg llm check`.\n\nExample: kg llm-check --model qwen2.5:7b-instruct")(llm_check)
    app.command("llm-extract", hidden=True, help='Same as `kg llm extract`.\n\nExample: kg llm-extract "clients/Acme Corp.md" --model qwen2.5:7b-instruct')(llm_extract)
