"""How far `kg query` answers stray from `--budget`: the printed answer's token estimate over budget.

Builds the example vault and a dense vault (tests/dense_vault.py: every note links to 12 others),
then for budgets 100..2000 asks a few questions through the library and measures the printed text
(`format_query` plus its newline) with the same estimate the code uses (4 characters a token).

Run: .venv/bin/python bench/query_budget.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from dense_vault import write_dense_vault  # noqa: E402

from vault_kg.query import verbs as q
from vault_kg.core.scopes import resolve_scopes  # noqa: E402

QUESTIONS = ["webhook retries", "payments api", "stripe webhook retry backoff"]
BUDGETS = range(100, 2001, 100)


def _build(vault: Path) -> None:
    env = dict(os.environ, KG_OLLAMA="off", KG_VAULT="")
    done = subprocess.run([sys.executable, "-c", "from vault_kg.cli.entry import main; main()", "build", "--vault", str(vault)], env=env, capture_output=True, text=True)
    if done.returncode:
        sys.exit(done.stderr)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["KG_CONFIG"] = str(Path(tmp) / "none.toml")
        vaults = {"example": Path(tmp) / "example", "dense": write_dense_vault(Path(tmp) / "dense")}
        shutil.copytree(ROOT / "examples" / "vault", vaults["example"])
        for name, vault in vaults.items():
            _build(vault)
            worst, over, answers = 0.0, 0, 0
            for budget in BUDGETS:
                for question in QUESTIONS:
                    text = q.format_query(q.query(resolve_scopes(None, vault), question, budget)) + "\n"
                    tokens = -(-len(text) // 4)
                    worst = max(worst, tokens / budget)
                    over += tokens > budget
                    answers += 1
            print(f"{name}: {answers} answers, {over} over budget, worst {worst:.2f}x budget")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from figures import record

    with record("query_budget"):
        main()
