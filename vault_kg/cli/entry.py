"""The `kg` entry point. Hooks and no-op updates take fast paths that import nothing heavy before they must."""

from __future__ import annotations

import os
import sys


def main() -> None:
    # numpy's OpenBLAS would start a thread per core that spins after any BLAS call; nothing
    # here needs threaded linear algebra, and on 2 cores the spinning steals from real work.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    argv = sys.argv[1:]
    if argv[:1] == ["hook"] and not {"--help", "-h"} & set(argv):  # help comes from the CLI
        from hooks.dispatch import main as hook_main

        sys.exit(hook_main(argv[1:]))
    if argv[:1] == ["update"]:  # a no-op update answers before the CLI framework is imported
        from vault_kg.cli.noop_update import main as quick_update

        code = quick_update(argv[1:])
        if code is not None:
            sys.exit(code)
    from vault_kg.cli.app import main as cli_main

    sys.exit(cli_main(argv))
