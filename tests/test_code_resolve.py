"""Resolution per language on small fixture repositories: calls, imports, inheritance."""

from __future__ import annotations

import pytest
from code_helpers import FIXTURES, Built, build

S = " › "


@pytest.fixture(scope="module")
def py() -> Built:
    return build(FIXTURES / "python_repo")


def test_python_calls_resolve_through_imports_receivers_and_bases(py: Built) -> None:
    calls = py.edges("calls")
    run = f"pkg/core.py{S}class Engine{S}method run"
    assert (run, f"pkg/core.py{S}class Base{S}method start") in calls  # self.start() via the base class
    assert (run, f"pkg/core.py{S}class Base{S}method stop") in calls  # super().stop()
    assert (run, f"pkg/util.py{S}function helper") in calls  # from pkg.util import helper
    assert (run, "external:os") in calls  # os.path.join()
    main = f"app.py{S}function main"
    assert (main, f"pkg/core.py{S}class Engine") in calls  # pkg.Engine() through pkg/__init__
    assert (main, f"pkg/core.py{S}class Engine{S}method make") in calls  # alias E.make()
    assert (main, f"pkg/util.py{S}function helper") in calls  # pkg.helper via a star import
    assert (main, f"pkg/util.py{S}function _private_but_exported") in calls  # listed in __all__
    go = f"pkg/sub/deep.py{S}function go"
    assert (go, f"pkg/core.py{S}class Engine{S}method make") in calls  # from ..core import Engine
    assert (go, f"pkg/sub/deep.py{S}function go{S}function inner") in calls  # nested def
    assert (f"pkg/sub/deep.py{S}function go{S}function inner", go) in calls


def test_python_unresolved_calls_are_counted_on_the_caller_not_guessed(py: Built) -> None:
    main = py.node(f"app.py{S}function main")
    assert main["unresolved_call_names"] == ["obj.method", "undefined_name"]
    assert main["unresolved_calls"] == 2
    run = py.node(f"pkg/core.py{S}class Engine{S}method run")
    assert run["unresolved_call_names"] == ["path.strip"]
    assert run["builtin_calls"] == 2  # len(), super()
    # a bare name is never matched to a same-named def elsewhere
    assert not any(t.endswith("undefined_name") for _, t in py.edges("calls"))


def test_python_imports_and_externals(py: Built) -> None:
    imports = py.edges("imports")
    assert ("file:app.py", "external:requests") in imports
    assert ("file:app.py", "file:pkg/__init__.py") in imports
    assert ("file:app.py", f"pkg/core.py{S}class Engine") in imports
    assert ("file:pkg/sub/deep.py", "file:pkg/util.py") in imports  # from .. import util
    assert py.node("external:requests")["kind"] == "external"
    assert py.node("file:pkg/sub/deep.py")["unresolved_imports"] == ["..missing (nothing)"]


def test_python_inheritance(py: Built) -> None:
    assert (f"pkg/core.py{S}class Engine", f"pkg/core.py{S}class Base") in py.edges("inherits")


def test_python_file_node_has_module_and_language(py: Built) -> None:
    node = py.node("file:pkg/sub/deep.py")
    assert node["module"] == "pkg.sub.deep"
    assert node["language"] == "python"
    assert py.node("file:pkg/__init__.py")["module"] == "pkg"


def test_edges_are_owned_by_the_file_holding_the_reference(py: Built) -> None:
    for record in py.resolution.edges:
        if record["relation"] in ("calls", "inherits"):
            assert record["source"].startswith(record["owner"] + S)
        elif record["relation"] == "imports":
            assert record["source"] == "file:" + record["owner"]


def test_resolution_is_deterministic() -> None:
    first = build(FIXTURES / "python_repo").resolution
    second = build(FIXTURES / "python_repo").resolution
    assert first.edges == second.edges
    assert list(first.nodes) == sorted(first.nodes)
    assert first.nodes == second.nodes


def test_typescript() -> None:
    ts = build(FIXTURES / "ts_repo")
    run = f"src/engine.ts{S}class Engine{S}method run"
    calls = ts.edges("calls")
    assert (run, f"src/base.ts{S}class Base{S}method start") in calls  # this.start() via extends
    assert (run, f"src/util.ts{S}function helper") in calls  # util.helper() via import * as util
    assert (run, "external:lodash") in calls
    assert ts.node(run)["unresolved_call_names"] == ["mystery"]
    app = f"src/index.tsx{S}function App"
    assert (app, f"src/engine.ts{S}class Engine") in calls  # new Engine()
    assert (app, f"src/engine.ts{S}class Engine{S}method run") in calls  # new Engine().run()
    assert (app, f"src/util.ts{S}function twice") in calls  # re-exported through export * from
    assert (f"src/engine.ts{S}class Engine", f"src/base.ts{S}class Base") in ts.edges("inherits")
    assert (f"src/engine.ts{S}class Engine", f"src/base.ts{S}interface Runner") in ts.edges("implements")
    assert ts.node(f"src/base.ts{S}interface Runner")["subkind"] == "interface"
    assert ts.node(f"src/base.ts{S}class Base")["doc"] == "The base of all things."


def test_javascript_commonjs() -> None:
    js = build(FIXTURES / "js_repo")
    calls = js.edges("calls")
    build_fn = f"lib/a.js{S}function build"
    assert (build_fn, f"lib/b.js{S}function make") in calls  # destructured require
    assert (build_fn, f"lib/a.js{S}class A") in calls
    assert (build_fn, "external:path") in calls
    assert (f"lib/a.js{S}class A{S}method constructor", f"lib/b.js{S}class B{S}method hello") in calls
    assert (f"lib/a.js{S}class A", f"lib/b.js{S}class B") in js.edges("inherits")


def test_go() -> None:
    go = build(FIXTURES / "go_repo")
    run = f"main.go{S}type Server{S}method Run"
    calls = go.edges("calls")
    assert (run, f"main.go{S}type Server{S}method stop") in calls  # receiver s
    assert (run, f"util/util.go{S}function Do") in calls  # through go.mod's module path
    assert (run, f"helper.go{S}function helper") in calls  # same package, other file
    assert (run, "external:fmt") in calls
    assert go.node(run)["unresolved_call_names"] == ["s.name.Missing"]
    assert go.node(run)["doc"] == "Run starts the server."
    assert (f"main.go{S}type Server", f"base.go{S}type Base") in go.edges("inherits")  # embedding
    assert ("file:main.go", "file:util/util.go") in go.edges("imports")
    assert go.node(f"main.go{S}type Server")["subkind"] == "struct"
    contains = {(e["source"], e["target"]) for x in go.extractions.values() for e in x.edges}
    assert (f"main.go{S}type Server", run) in contains


def test_rust() -> None:
    rs = build(FIXTURES / "rust_repo")
    run = f"src/lib.rs{S}function run"
    calls = rs.edges("calls")
    assert (run, f"src/util.rs{S}function helper") in calls  # use crate::util::helper
    assert (run, f"src/shapes.rs{S}impl Circle{S}method new") in calls  # shapes::Circle::new()
    assert (run, "external:std") in calls
    assert rs.node(run)["unresolved_call_names"] == ["unknown_fn"]
    area = f"src/shapes.rs{S}impl Shape for Circle{S}method area"
    assert (area, f"src/shapes.rs{S}trait Shape{S}method describe") in calls  # trait default method
    assert (area, f"src/shapes.rs{S}impl Circle{S}method new") in calls  # Self::new()
    assert (f"src/shapes.rs{S}struct Circle", f"src/shapes.rs{S}trait Shape") in rs.edges("implements")
    assert ("file:src/lib.rs", "file:src/util.rs") in rs.edges("imports")  # mod util;


def test_java() -> None:
    java = build(FIXTURES / "java_repo")
    run = f"src/com/x/App.java{S}class App{S}method run"
    calls = java.edges("calls")
    assert (run, f"src/com/x/App.java{S}class App{S}method helper") in calls  # bare call = this.helper()
    assert (run, f"src/com/y/Util.java{S}class Util{S}method go") in calls  # imported class
    assert (run, f"src/com/x/Base.java{S}class Base{S}method start") in calls  # inherited
    assert (run, f"src/com/x/Base.java{S}class Base") in calls  # new Base(), same package
    assert (f"src/com/x/App.java{S}class App", f"src/com/x/Base.java{S}class Base") in java.edges("inherits")
    assert java.node(f"src/com/x/App.java{S}class App")["unresolved_bases"] == ["Runnable"]


def test_a_go_folder_and_a_java_package_of_one_name_stay_apart(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A package target is settled by the importing file's language (Go folder `util`, Java package `util`)."""
    files = {
        "go.mod": "module example.com/m\n",
        "main.go": 'package main\n\nimport "example.com/m/util"\n\nfunc main() {\n\tutil.Run()\n}\n',
        "util/run.go": "package util\n\nfunc Run() {}\n",
        "util/Helper.java": "package util;\n\npublic class Helper {\n    public static void help() {}\n}\n",
        "app/Main.java": "package app;\n\nimport util.*;\n\npublic class Main {\n    void go() {\n        Helper.help();\n    }\n}\n",
    }
    for rel, body in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(body, encoding="utf-8")
    built = build(tmp_path)
    imports, calls = built.edges("imports"), built.edges("calls")
    assert ("file:main.go", "file:util/run.go") in imports
    assert ("file:main.go", "file:util/Helper.java") not in imports
    assert ("file:app/Main.java", "file:util/Helper.java") in imports
    assert ("file:app/Main.java", "file:util/run.go") not in imports
    assert (f"main.go{S}function main", f"util/run.go{S}function Run") in calls
    assert (f"app/Main.java{S}class Main{S}method go", f"util/Helper.java{S}class Helper{S}method help") in calls
