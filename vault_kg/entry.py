"""The `kg` entry point. Hooks take a fast path that imports nothing heavy before it must."""

from __future__ import annotations

import sys


def main() -> None:
    argv = sys.argv[1:]
    if argv[:1] == ["hook"]:
        from hooks.dispatch import main as hook_main

        sys.exit(hook_main(argv[1:]))
    from .cli import main as cli_main

    sys.exit(cli_main(argv))
