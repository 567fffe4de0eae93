"""Wrap named library functions and the engine's stages with a timer, for the phase benches."""

from __future__ import annotations

import importlib
from typing import Any, Callable

Wrap = Callable[[Callable[..., Any], str], Callable[..., Any]]


def instrument(table: dict[str, list[str]], wrap: Wrap, member_prefix: str = "", stage_prefix: str = "") -> None:
    """Replace each function named in `table` ({"module[:Class]": [names]}) and each stage in
    `engine.STAGES` by `wrap(fn, label)`; labels are "<prefix><module tail>.<name>" and
    "<stage_prefix><stage name>". Names a module no longer has are skipped."""
    import vault_kg.update.engine as engine

    for where, names in table.items():
        module_name, _, cls = where.partition(":")
        owner: Any = importlib.import_module(module_name)
        if cls:
            owner = getattr(owner, cls)
        for name in names:
            fn = getattr(owner, name, None)
            if fn is not None:
                setattr(owner, name, wrap(fn, f"{member_prefix}{module_name.split('.')[-1]}.{name}"))
    engine.STAGES = tuple(wrap(stage, f"{stage_prefix}{stage.__name__}") for stage in engine.STAGES)
