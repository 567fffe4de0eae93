"""JSX component uses as calls, and tsconfig/jsconfig path mapping, through the real engine.

Each test writes a small React/TypeScript monorepo into tmp_path, builds its code scope with
``vault_kg.update.engine.run`` and reads the edges back from ``graph.json``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from extract.lang.js_config import parse_jsonc
from vault_kg.update.engine import RunResult, run
from vault_kg.core.scopes import Scope

S = " › "

BASE_CONFIG = """{
  // shared by every package of the monorepo
  "compilerOptions": {
    "strict": true,
    "baseUrl": ".",
    /* several candidates, tried in order */
    "paths": { "@ui/*": ["packages/ui/src/*", "packages/ui/*",], },
  },
}
"""
WEB_CONFIG = """{
  "extends": "../../tsconfig.base",  // no .json: TypeScript adds it
}
"""
ADMIN_CONFIG = """{
  "compilerOptions": {
    "baseUrl": "src",
    "paths": {"@/*": ["*"], "~lib": ["lib/index"]}
  }
}
"""
BUTTON = """export default function Button(props: {onClick?: () => void}) {
  return <button onClick={props.onClick} />;
}
export function Icon() { return <svg />; }
"""
CARD = """export function Card(props: {children: unknown}) { return <section>{props.children}</section>; }
export const Fancy = { Box: () => null };
"""
WEB_APP = """import Button, { Icon } from "@ui/Button";
import * as ui from "@ui/Card";
import React from "react";
import { Missing } from "@ui/Missing";

export function App() {
  return (
    <ui.Card>
      <Button onClick={() => null} />
      <Icon />
      <div className="x"><span /><my-element /><svg:rect /></div>
      <React.Fragment />
      <Missing />
      <NotImported />
    </ui.Card>
  );
}

export const Page = () => <Button />;
"""
ADMIN_APP = """import Widget from "components/Widget";
import { helper } from "@/lib/util";
import { fromIndex } from "~lib";

export default function Admin() {
  helper();
  fromIndex();
  return <Widget />;
}
"""


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, body in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)


def _bump(path: Path, body: str) -> None:
    """Rewrite a file and move its mtime on, so the stat fast path cannot miss the edit."""
    path.write_text(body)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000_000))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "mono"
    _write(
        root,
        {
            "tsconfig.base.json": BASE_CONFIG,
            "apps/web/tsconfig.json": WEB_CONFIG,
            "apps/web/src/App.tsx": WEB_APP,
            "packages/ui/src/Button.tsx": BUTTON,
            "packages/ui/Card.tsx": CARD,
            "apps/admin/jsconfig.json": ADMIN_CONFIG,
            "apps/admin/src/Admin.jsx": ADMIN_APP,
            "apps/admin/src/components/Widget.jsx": "export default function Widget() { return <p/>; }\n",
            "apps/admin/src/lib/util.js": "export function helper() {}\n",
            "apps/admin/src/lib/index.js": "export function fromIndex() {}\n",
        },
    )
    return root


def _build(root: Path) -> tuple[RunResult, dict]:
    result = run(Scope("mono", "code", root, root / "kg-out"))
    return result, json.loads((root / "kg-out" / "graph.json").read_text())


def _edges(graph: dict, relation: str) -> set[tuple[str, str]]:
    return {(e["source"], e["target"]) for e in graph["edges"] if e["relation"] == relation}


def _node(graph: dict, node_id: str) -> dict:
    return next(n for n in graph["nodes"] if n["id"] == node_id)


WEB_APP_FN = f"apps/web/src/App.tsx{S}function App"
BUTTON_FN = f"packages/ui/src/Button.tsx{S}function Button"


def test_jsx_component_uses_are_calls_resolved_through_imports(repo: Path) -> None:
    _, graph = _build(repo)
    calls = _edges(graph, "calls")
    assert (WEB_APP_FN, BUTTON_FN) in calls  # <Button />: a default import via "@ui/*"
    assert (WEB_APP_FN, f"packages/ui/src/Button.tsx{S}function Icon") in calls  # <Icon />
    assert (WEB_APP_FN, f"packages/ui/Card.tsx{S}function Card") in calls  # <ui.Card> via the namespace receiver
    assert (WEB_APP_FN, "external:react") in calls  # <React.Fragment />, like React.createElement()
    assert (f"apps/web/src/App.tsx{S}function Page", BUTTON_FN) in calls  # an arrow-function component
    app = _node(graph, WEB_APP_FN)
    # <NotImported /> has no binding; <Missing /> is imported from a mapped path with no file
    assert app["unresolved_call_names"] == ["Missing", "NotImported"]
    assert app["unresolved_calls"] == 2
    # intrinsic elements are not calls, and nothing is matched by a bare name
    assert not any(t.endswith(("div", "span", "section")) for _, t in calls)
    assert (f"apps/admin/src/Admin.jsx{S}function Admin", f"apps/admin/src/components/Widget.jsx{S}function Widget") in calls  # .jsx


def test_tsconfig_paths_baseurl_and_extends_resolve_imports(repo: Path) -> None:
    result, graph = _build(repo)
    assert result.warnings == []
    imports = _edges(graph, "imports")
    web = "file:apps/web/src/App.tsx"
    # the second candidate of "@ui/*" (packages/ui/*) is used when the first has no file
    assert (web, "file:packages/ui/Card.tsx") in imports
    assert (web, BUTTON_FN) in imports
    assert (web, "external:react") in imports  # baseUrl finds no file: still a package
    # a specifier that a "paths" pattern claims but no file answers is a broken import, not a package
    assert _node(graph, web)["unresolved_imports"] == ["@ui/Missing (Missing)"]
    assert not any(t.startswith("external:@ui") for _, t in imports)
    admin = f"apps/admin/src/Admin.jsx{S}function Admin"
    calls = _edges(graph, "calls")
    assert (admin, f"apps/admin/src/lib/util.js{S}function helper") in calls  # "@/*" -> src/*
    assert (admin, f"apps/admin/src/lib/index.js{S}function fromIndex") in calls  # exact pattern "~lib"


def test_nearest_config_applies_per_package(repo: Path) -> None:
    """The admin app's jsconfig maps "@/*" to its own src; the web app has no "@/*" at all."""
    _write(repo, {"apps/web/src/Other.tsx": 'import { helper } from "@/lib/util";\nexport function O() { helper(); }\n'})
    _, graph = _build(repo)
    imports = _edges(graph, "imports")
    assert ("file:apps/web/src/Other.tsx", "external:@/lib") in imports
    assert not any(t.startswith("apps/admin") for s, t in imports if s == "file:apps/web/src/Other.tsx")


def test_tsconfig_edit_is_seen_by_the_next_update(repo: Path) -> None:
    _, graph = _build(repo)
    assert (WEB_APP_FN, BUTTON_FN) in _edges(graph, "calls")
    base = repo / "tsconfig.base.json"
    _bump(base, BASE_CONFIG.replace('"@ui/*"', '"@kit/*"'))
    result, graph = _build(repo)
    assert result.extracted == ["tsconfig.base.json"]
    assert (WEB_APP_FN, BUTTON_FN) not in _edges(graph, "calls")
    assert ("file:apps/web/src/App.tsx", "external:@ui/Button") in _edges(graph, "imports")
    _bump(base, BASE_CONFIG)
    _, graph = _build(repo)
    assert (WEB_APP_FN, BUTTON_FN) in _edges(graph, "calls")
    (repo / "apps/web/tsconfig.json").unlink()  # no config above the app any more: no mapping
    result, graph = _build(repo)
    assert result.removed == ["apps/web/tsconfig.json"]
    assert (WEB_APP_FN, BUTTON_FN) not in _edges(graph, "calls")


def test_malformed_tsconfig_warns_once_and_maps_nothing(repo: Path) -> None:
    _bump(repo / "apps/admin/jsconfig.json", '{"compilerOptions": {"baseUrl": "src" "paths": {}}}\n')
    result, graph = _build(repo)
    assert len(result.warnings) == 1
    warning = result.warnings[0]
    assert warning.startswith("apps/admin/jsconfig.json: not valid JSON (line 1 column 39: Expecting ',' delimiter)")
    assert "path mapping is ignored" in warning
    imports = _edges(graph, "imports")
    assert ("file:apps/admin/src/Admin.jsx", "external:components") in imports  # no baseUrl any more
    assert (WEB_APP_FN, BUTTON_FN) in _edges(graph, "calls")  # the other package is untouched
    again, _ = _build(repo)
    assert again.warnings == []  # reported when the file is read, not on every update


def test_extends_to_a_missing_file_is_recorded_on_the_config(repo: Path) -> None:
    _bump(repo / "apps/web/tsconfig.json", '{"extends": ["@tsconfig/strictest", "./nope.json"]}')
    _, graph = _build(repo)
    assert _node(graph, "file:apps/web/tsconfig.json")["unresolved_extends"] == ["./nope.json"]


def test_config_dir_template_means_the_config_in_use(repo: Path) -> None:
    """``${configDir}`` in an inherited option is the folder of the tsconfig that applies, not the base's."""
    _bump(repo / "tsconfig.base.json", '{"compilerOptions": {"paths": {"#own/*": ["${configDir}/src/*"]}}}')
    _write(
        repo,
        {
            "apps/web/src/lib/own.ts": "export function own() {}\n",
            "apps/web/src/Uses.tsx": 'import { own } from "#own/lib/own";\nexport function U() { own(); }\n',
        },
    )
    _, graph = _build(repo)
    assert (f"apps/web/src/Uses.tsx{S}function U", f"apps/web/src/lib/own.ts{S}function own") in _edges(graph, "calls")


def test_extends_cycle_does_not_hang(repo: Path) -> None:
    _write(
        repo,
        {
            "tsconfig.base.json": '{"extends": "./apps/web/tsconfig.json", "compilerOptions": {"baseUrl": "packages/ui/src"}}',
            "apps/web/src/Bare.tsx": 'import Button from "Button";\nexport function B() { return <Button />; }\n',
        },
    )
    _, graph = _build(repo)
    assert (f"apps/web/src/Bare.tsx{S}function B", BUTTON_FN) in _edges(graph, "calls")  # the base's baseUrl still applies


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"a": "/* not a comment */", // one\n "b": "x//y",}', {"a": "/* not a comment */", "b": "x//y"}),
        ('{"p": {"@/*": ["src/*",],},} /* tail */', {"p": {"@/*": ["src/*"]}}),
        ('{"a": [1, 2, // two\n ], "s": "\\" ,}"}', {"a": [1, 2], "s": '" ,}'}),
    ],
)
def test_jsonc_accepts_comments_and_trailing_commas_outside_strings(raw: str, expected: dict) -> None:
    assert parse_jsonc(raw) == expected


@pytest.mark.parametrize("raw", ['{"a": 1,, }', "{'a': 1}", '{"a": 1', '{"a": /* open'])
def test_jsonc_rejects_what_typescript_rejects(raw: str) -> None:
    with pytest.raises(ValueError, match=r"^line \d+ column \d+: "):
        parse_jsonc(raw)


@pytest.mark.parametrize("data", [b"[" * 200_000, b"\xff\xfe{}", b"\x00\x01", b"/*" * 100_000, b"[]", b'{"compilerOptions": 5}'])
def test_hostile_config_files_never_raise_and_say_why(data: bytes) -> None:
    from extract.code import extract_file

    extraction = extract_file("tsconfig.json", data)
    assert len(extraction.warnings) == 1 and extraction.warnings[0].startswith("tsconfig.json: ")
    assert "baseUrl" not in extraction.meta["code"]["js_config"]
