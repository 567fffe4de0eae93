"""The one table of languages the code extractor knows, registered by importing each language's module.

Each entry (`extract.lang.base.Language`) says, for one language: which file extensions it owns,
which grammar of ``tree-sitter-language-pack`` parses it, and one tree-sitter query whose captures
name the symbols (``@def.<segment>`` + ``@name``), calls (``@call`` + ``@callee``; JSX elements
too, a component use being a call in React semantics), imports (``@import``), comments
(``@comment``) and indentation blocks (``@block``). The few things a query cannot say (how an
import statement binds names, what a class inherits) are small functions named in the entry,
kept beside it in ``extract/lang/<language>.py``. Adding a language is adding such a module,
importing it here, and a fixture under ``tests/fixtures/code``.
"""

from __future__ import annotations

from functools import cache

import tree_sitter as ts
import tree_sitter_language_pack as tslp

from extract.lang import go, java, javascript, python, rust
from extract.lang.base import Language, ProjectFile

LANGUAGES: tuple[Language, ...] = (python.LANGUAGE, *javascript.LANGUAGES, go.LANGUAGE, rust.LANGUAGE, java.LANGUAGE)
# Files that are no source but say how imports resolve (go.mod, tsconfig.json), listed and kept as file nodes.
PROJECT_FILES: tuple[ProjectFile, ...] = (*go.PROJECT_FILES, *javascript.PROJECT_FILES)

BY_NAME: dict[str, Language] = {lang.name: lang for lang in LANGUAGES}
BY_EXTENSION: dict[str, Language] = {ext: lang for lang in LANGUAGES for ext in lang.extensions}


def language_for(relpath: str) -> Language | None:
    """The language owning a path, by its extension (None when no entry claims it)."""
    dot = relpath.rfind(".")
    if dot < 0 or "/" in relpath[dot:]:
        return None
    return BY_EXTENSION.get(relpath[dot:].lower())


def project_file(name: str) -> ProjectFile | None:
    """The project file a file name is (`go.mod`, `tsconfig.json`, ...), or None."""
    return next((found for found in PROJECT_FILES if found.matches(name)), None)


@cache
def parser_for(name: str) -> ts.Parser:
    return tslp.get_parser(BY_NAME[name].grammar)  # type: ignore[arg-type]


@cache
def query_for(name: str) -> ts.Query:
    """The compiled query of a language (compiled once per process)."""
    lang = BY_NAME[name]
    return ts.Query(lang.ts_language, lang.query)
