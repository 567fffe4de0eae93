"""`kg doctor` (and the library's `api.doctor`): a verdict per line, exit 1 when something is broken,
and every failing line names its fix. Each broken setup below is made for real (an unbuilt vault,
a config that does not parse, Ollama down, a plugin whose launcher finds no kg, a failed install,
a hook that failed today); the model line talks to a loopback server speaking Ollama's protocol."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from conftest import EXAMPLE_VAULT, REPO, kg_process
from hook_world import fake_kg
from ollama_fake import DEFAULT_MODEL, FakeOllama
from test_plugin_launcher import path_without_kg
from vault_kg import __version__, api


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    vault = tmp_path_factory.mktemp("doctor") / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    done = kg_process("build", "--vault", str(vault), env={"KG_CONFIG": str(vault.parent / "none.toml")})
    assert done.returncode == 0, done.stderr
    return vault


@pytest.fixture
def setup(built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of a built example vault named by the config; Claude Code's folder and HOME empty."""
    example_vault = tmp_path / "vault"
    shutil.copytree(built, example_vault, symlinks=True)
    config = tmp_path / "home" / ".config" / "vault-kg" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'vault = "{example_vault}"\n', encoding="utf-8")
    monkeypatch.setenv("KG_CONFIG", str(config))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "home" / ".claude"))
    monkeypatch.setenv("PATH", path_without_kg())
    for var in ("CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA", "KG_BIN"):
        monkeypatch.delenv(var, raising=False)
    return example_vault


def lines(report: dict) -> dict[str, dict[str, str]]:
    return {line["check"]: line for line in report["lines"]}


def test_a_healthy_setup_has_nothing_broken_and_exits_0(setup: Path) -> None:
    done = kg_process("doctor", "--quick", cwd=setup)
    assert done.returncode == 0 and done.stdout.rstrip().endswith("kg doctor: nothing broken"), done.stdout + done.stderr
    report = json.loads(kg_process("doctor", "--quick", "--json", cwd=setup).stdout)
    found = lines(report)
    assert found["vault"]["verdict"] == "ok" and found["model"]["verdict"] == "off" and found["launcher"]["verdict"] == "off"
    assert all(line["verdict"] != "fail" for line in report["lines"])


def test_an_unbuilt_vault_fails_with_the_build_command_and_exit_1(setup: Path) -> None:
    shutil.rmtree(setup / "kg-out")
    done = kg_process("doctor", "--quick", cwd=setup)
    assert done.returncode == 1
    assert "FAIL  scope vault" in done.stdout and f"-> kg build --vault '{setup}'" in done.stdout and "1 problem(s) to fix" in done.stdout


def test_a_config_that_does_not_parse_names_the_file(setup: Path, tmp_path: Path) -> None:
    config = tmp_path / "home" / ".config" / "vault-kg" / "config.toml"
    config.write_text("vault = [unclosed\n")
    found = lines(api.doctor(measure=False))
    assert found["config"]["verdict"] == "fail" and str(config) in found["config"]["detail"] and str(config) in found["config"]["fix"]


def test_the_model_down_fails_with_ollama_serve_and_up_it_times_one_short_call(setup: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KG_OLLAMA", "on")
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")  # nothing listens on the discard port
    down = lines(api.doctor(measure=False))["model"]
    assert down["verdict"] == "fail" and "`ollama serve`" in down["fix"]
    with FakeOllama(models={DEFAULT_MODEL: "sha256:" + "b" * 64}) as fake:
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        monkeypatch.setenv("KG_MODEL", DEFAULT_MODEL)
        found = lines(api.doctor(measure=True))
        assert found["model"]["verdict"] == "ok" and "one short call" in found["model"]["detail"], found["model"]
        assert any(r.get("options", {}).get("num_predict") == 16 for r in fake.requests)
        assert found["model notes"]["verdict"] in ("ok", "warn") and "pending" in found["model notes"]["detail"]
        assert found["embedder"]["verdict"] == "ok"


def install_plugin_record(home: Path, root: Path) -> None:
    """What `claude plugin install` records: the plugin's folder."""
    record = home / ".claude" / "plugins" / "installed_plugins.json"
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps({"version": 2, "plugins": {"vault-kg@vault-kg": [{"scope": "user", "installPath": str(root), "version": "0.1.0"}]}}))


def test_a_plugin_whose_launcher_finds_no_kg_fails_with_the_install_command(setup: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "home" / ".claude" / "plugins" / "cache" / "vault-kg" / "vault-kg" / "0.1.0"
    shutil.copytree(REPO / "bin", root / "bin")
    install_plugin_record(tmp_path / "home", root)
    data = tmp_path / "home" / ".claude" / "plugins" / "data" / "vault-kg-vault-kg"
    data.mkdir(parents=True)
    found = lines(api.doctor(measure=False))["launcher"]
    assert found["verdict"] == "fail" and found["detail"].endswith("finds no kg") and found["fix"] == f"'{root / 'bin' / 'kg-launch'}' --provision"

    (data / "provision.failed").write_text(f"{root}\nvault-kg: installing kg failed: no network; fix that, then run: ...\n")
    failed = lines(api.doctor(measure=False))["launcher"]
    assert failed["verdict"] == "fail" and "installing kg failed: no network" in failed["detail"]

    kg = fake_kg(tmp_path / "home" / ".local" / "bin")  # a kg the launcher finds: this one
    ok = lines(api.doctor(measure=False))["launcher"]
    assert ok["verdict"] == "ok" and f"starts {kg} (installed;" in ok["detail"], ok

    (root / "vault_kg").mkdir()  # the plugin was upgraded; the kg it finds on its own was not
    (root / "vault_kg" / "__init__.py").write_text('__version__ = "9.9.9"\n')
    stale = lines(api.doctor(measure=False))["launcher"]
    assert stale["verdict"] == "warn" and stale["detail"].endswith(f"kg {__version__}, the plugin is 9.9.9") and "pipx upgrade kg-vault" in stale["fix"]


def test_a_hook_that_failed_today_is_named_with_its_log(setup: Path) -> None:
    log = setup / "kg-out" / "hooks.log"
    log.write_text(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} post-tool-use: OSError: disk full\n    Traceback ...\n")
    found = lines(api.doctor(measure=False))["hook failures"]
    assert found["verdict"] == "warn" and "post-tool-use: OSError: disk full" in found["detail"] and str(log) in found["fix"]
