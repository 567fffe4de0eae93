"""`kg llm-check` and `kg llm-extract`: is the local model ready, and what does it read in one note."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import typer

from vault_kg.config import load_config
from vault_kg.errors import KgError


def register(app: typer.Typer) -> None:
    @app.command("llm-check")
    def llm_check(
        host: str = typer.Option(None, help="Ollama URL (default: config / OLLAMA_HOST)."),
        model: str = typer.Option(None, help="Model name (default: config / KG_MODEL)."),
        as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    ) -> None:
        """Check that Ollama answers and has the model (never pulls it).

        \b
        Example: kg llm-check --model qwen2.5:7b-instruct
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
        }
        if as_json:
            typer.echo(json.dumps(info))
        else:
            typer.echo(f"ready: {extractor.model} at {extractor.host} (digest {str(extractor.digest)[:12]}, context {extractor.context_length})")

    @app.command("llm-extract")
    def llm_extract(
        note: Path = typer.Argument(..., help="A markdown note."),
        host: str = typer.Option(None, help="Ollama URL (default: config / OLLAMA_HOST)."),
        model: str = typer.Option(None, help="Model name (default: config / KG_MODEL)."),
        timeout: float = typer.Option(600.0, help="Seconds to wait for one model call."),
        as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    ) -> None:
        """Run the model on one note, uncached, and show verified entities and relations.

        \b
        Example: kg llm-extract "clients/Acme Corp.md" --model qwen2.5:7b-instruct
        """
        try:
            data = note.read_bytes()
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise KgError(f"{note}: cannot read as UTF-8 text ({exc.__class__.__name__}); check the path") from exc
        from extract.llm import OllamaExtractor

        cfg = load_config()
        extractor = OllamaExtractor(host or cfg.ollama_host, model or cfg.ollama_model, timeout=timeout)
        result = extractor.extract_note(note.as_posix(), text, hashlib.sha256(data).hexdigest(), [])
        if result.status != "ok":
            raise KgError(result.message)
        if as_json:
            typer.echo(json.dumps(result.to_dict()))
            return
        for entity in result.entities:
            typer.echo(f"entity  {entity['name']} ({entity['type']}) line {entity['line']} {entity['confidence']}")
        for rel in result.relations:
            typer.echo(
                f"{rel['confidence']:<9} {rel['score']:.1f}  {rel['source']} -{rel['relation']}-> {rel['target']}"
                f"  line {rel['line']}  ({rel['check']})"
            )
        typer.echo(f"{result.calls} model calls, {result.eval_tokens_per_s or 0:.1f} tok/s")
