"""tsconfig.json / jsconfig.json: the module-resolution options a TypeScript project declares.

These files are sources of a code scope (so an edit to one is seen by ``kg update`` like any
other file edit). What matters for the graph is ``compilerOptions.baseUrl``,
``compilerOptions.paths`` and ``extends``; they are read here, file by file, and applied by
:mod:`extract.lang.js_paths` when imports are resolved.

TypeScript reads these files as JSON with comments and trailing commas. Both are blanked out
(keeping every other byte where it was, so a JSON error still names the right line and column)
and the rest is parsed by the standard ``json`` module, which rejects anything else.
"""

from __future__ import annotations

import json
import re
from typing import Any

CONFIG_NAME = re.compile(r"^(?:ts|js)config(?:[.-][^/]*)?\.json$")
NEAREST_NAMES = ("tsconfig.json", "jsconfig.json")  # the files that apply to the folder they sit in
LANGUAGE = "jsconfig"

_STRING = r'"(?:[^"\\\n]|\\.)*"'
_COMMENTS = re.compile(_STRING + r"|//[^\n]*|/\*.*?(?:\*/|\Z)", re.DOTALL)
_TRAILING_COMMA = re.compile(_STRING + r"|,(?=\s*[\]}])")


def is_config(name: str) -> bool:
    """True for ``tsconfig.json``, ``jsconfig.json`` and variants like ``tsconfig.base.json``."""
    return CONFIG_NAME.match(name) is not None


def _blank(match: re.Match[str]) -> str:
    found = match.group(0)
    if found.startswith('"'):
        return found
    return "".join(c if c == "\n" else " " for c in found)


def parse_jsonc(raw: str) -> Any:
    """JSON with ``//`` and ``/* */`` comments and trailing commas, as TypeScript accepts it.

    Raises ``ValueError`` with ``line L column C: reason`` for anything else.
    """
    cleaned = _TRAILING_COMMA.sub(_blank, _COMMENTS.sub(_blank, raw))
    try:
        return json.loads(cleaned)
    except json.JSONDecodeError as exc:
        raise ValueError(f"line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise ValueError("nested too deeply to read") from None


def read_config(relpath: str, data: bytes) -> tuple[dict[str, Any], list[str]]:
    """The path-mapping options of one config file, and one warning line per problem.

    The result has ``baseUrl`` (str), ``paths`` (pattern -> list of substitutions) and
    ``extends`` (list of str) where the file sets them; ``malformed`` when it does not parse,
    in which case the file maps nothing.
    """
    fix = "its path mapping is ignored until it is fixed"
    try:
        value = parse_jsonc(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        return {"malformed": True}, [f"{relpath}: not UTF-8 (byte {exc.start}); {fix} (re-save it as UTF-8)"]
    except ValueError as exc:
        return {"malformed": True}, [f"{relpath}: not valid JSON ({exc}); {fix}"]
    if not isinstance(value, dict):
        return {"malformed": True}, [f"{relpath}: the top level is not a JSON object; {fix}"]
    config: dict[str, Any] = {}
    warnings: list[str] = []
    extends = value.get("extends")
    if isinstance(extends, str):
        config["extends"] = [extends]
    elif isinstance(extends, list) and all(isinstance(e, str) for e in extends):
        config["extends"] = list(extends)
    elif extends is not None:
        warnings.append(f"{relpath}: 'extends' is neither a string nor a list of strings; ignored")
    options = value.get("compilerOptions", {})
    if not isinstance(options, dict):
        warnings.append(f"{relpath}: 'compilerOptions' is not an object; {fix}")
        return config, warnings
    base_url = options.get("baseUrl")
    if isinstance(base_url, str):
        config["baseUrl"] = base_url
    elif base_url is not None:
        warnings.append(f"{relpath}: 'compilerOptions.baseUrl' is not a string; ignored")
    paths = options.get("paths")
    if isinstance(paths, dict):
        good = {k: v for k, v in paths.items() if isinstance(v, list) and v and all(isinstance(s, str) for s in v)}
        bad = sorted(set(paths) - set(good))
        if bad:
            warnings.append(f"{relpath}: 'compilerOptions.paths' entries {', '.join(bad)} are not non-empty lists of strings; ignored")
        config["paths"] = good
    elif paths is not None:
        warnings.append(f"{relpath}: 'compilerOptions.paths' is not an object; ignored")
    return config, warnings
