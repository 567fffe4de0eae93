"""Where a bare TypeScript/JavaScript import points under tsconfig/jsconfig path mapping.

``import { x } from "@/lib/util"`` means a file of the project when the nearest
``tsconfig.json`` (or ``jsconfig.json``) above the importing file maps it through
``compilerOptions.paths`` or ``compilerOptions.baseUrl``, possibly inherited via ``extends``.
This module turns such a specifier into the scope-relative paths to try, in TypeScript's order:
the ``paths`` pattern with the longest matching prefix (an exact pattern first), each of its
substitutions in turn, then ``baseUrl`` itself. Trying extensions and ``index`` files is the
caller's job, the same as for relative imports.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any

from extract.lang.js_config import NEAREST_NAMES

_CONFIG_DIR = "${configDir}"
_MAX_EXTENDS = 16


@dataclass
class _Mapping:
    """Effective options of one config after ``extends``: each path is kept with the folder it is relative to."""

    base_url: tuple[str, str] | None = None  # (folder of the config that set it, raw value)
    paths: dict[str, list[str]] = field(default_factory=dict)
    paths_dir: str = ""  # folder of the config that set ``paths``


def _join(directory: str, value: str, config_dir: str) -> str:
    if value.startswith(_CONFIG_DIR):
        directory, value = config_dir, value[len(_CONFIG_DIR) :].lstrip("/")
    joined = posixpath.normpath(posixpath.join(directory, value))
    return "" if joined == "." else joined


def _match(patterns: dict[str, list[str]], module: str) -> tuple[str, str] | None:
    """TypeScript's choice: an exact pattern, else the ``prefix*suffix`` pattern with the longest prefix."""
    if module in patterns and "*" not in module:
        return module, ""
    best: tuple[str, str] | None = None
    best_len = -1
    for pattern in patterns:
        if pattern.count("*") != 1:
            continue
        prefix, suffix = pattern.split("*")
        if len(module) >= len(prefix) + len(suffix) and module.startswith(prefix) and module.endswith(suffix) and len(prefix) > best_len:
            best, best_len = (pattern, module[len(prefix) : len(module) - len(suffix)]), len(prefix)
    return best


class JsPathMapper:
    """Path mapping for every config file of a scope (memoized per folder and per config)."""

    def __init__(self, configs: dict[str, dict[str, Any]]) -> None:
        self.configs = configs
        self._nearest: dict[str, str | None] = {}
        self._effective: dict[str, _Mapping] = {}

    def nearest(self, directory: str) -> str | None:
        """The tsconfig.json/jsconfig.json in ``directory`` or the closest folder above it."""
        if directory in self._nearest:
            return self._nearest[directory]
        found: str | None = None
        for name in NEAREST_NAMES:
            candidate = posixpath.join(directory, name) if directory else name
            if candidate in self.configs:
                found = candidate
                break
        if found is None and directory:
            found = self.nearest(posixpath.dirname(directory))
        self._nearest[directory] = found
        return found

    def extends_target(self, config: str, value: str) -> str | None:
        """The in-scope config file an ``extends`` entry names (None for a package or a missing file)."""
        if not value.startswith((".", "/")):
            return None
        path = _join(posixpath.dirname(config), value, posixpath.dirname(config))
        for candidate in (path, path + ".json"):
            if candidate in self.configs:
                return candidate
        return None

    def missing_extends(self, config: str) -> list[str]:
        """Relative ``extends`` entries of a config that name no config file of the scope."""
        return [v for v in self.configs[config].get("extends", []) if v.startswith((".", "/")) and self.extends_target(config, v) is None]

    def mapping(self, config: str, chain: tuple[str, ...] = ()) -> _Mapping:
        """Options in force for ``config``: its bases' in order, then its own on top."""
        cached = self._effective.get(config)
        if cached is not None:
            return cached
        own = self.configs.get(config, {})
        result = _Mapping()
        if own.get("malformed") or config in chain or len(chain) > _MAX_EXTENDS:
            return result
        for value in own.get("extends", []):
            base = self.extends_target(config, value)
            if base is not None:
                inherited = self.mapping(base, (*chain, config))
                if inherited.base_url is not None:
                    result.base_url = inherited.base_url
                if inherited.paths:
                    result.paths, result.paths_dir = inherited.paths, inherited.paths_dir
        directory = posixpath.dirname(config)
        if "baseUrl" in own:
            result.base_url = (directory, own["baseUrl"])
        if "paths" in own:
            result.paths, result.paths_dir = own["paths"], directory
        if not chain:
            self._effective[config] = result
        return result

    def candidates(self, importer: str, module: str) -> tuple[list[str], bool]:
        """Scope-relative paths to try for ``module`` imported from ``importer``, in order.

        The flag is True when a ``paths`` pattern other than the catch-all ``*`` claimed the
        specifier: then finding no file means a broken import, not an external package.
        """
        config = self.nearest(posixpath.dirname(importer))
        if config is None:
            return [], False
        mapping = self.mapping(config)
        config_dir = posixpath.dirname(config)
        base_url = _join(*mapping.base_url, config_dir) if mapping.base_url is not None else None
        out: list[str] = []
        claimed = False
        matched = _match(mapping.paths, module)
        if matched is not None:
            pattern, star = matched
            claimed = pattern != "*"
            root = base_url if base_url is not None else mapping.paths_dir
            out.extend(_join(root, sub.replace("*", star), config_dir) for sub in mapping.paths[pattern])
        if base_url is not None:
            out.append(_join(base_url, module, config_dir))
        return out, claimed
