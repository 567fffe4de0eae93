"""Run one pure, CPU-bound function in a forked child while the caller goes on.

An update on a 2-core machine spends a fifth of its time in Leiden clustering, which needs
nothing but a few numpy arrays; forking lets the parent sync the cache meanwhile. The child
inherits the arrays copy-on-write, sends back a pickle, and leaves with `os._exit` (no atexit
handlers, no flush of the parent's buffered output). Without `fork`, or if the child fails,
the function simply runs in the caller.
"""

from __future__ import annotations

import os
import pickle
from typing import Any, Callable, Generic, TypeVar

T = TypeVar("T")


class Forked(Generic[T]):
    """`Forked(fn, *args).result()` equals `fn(*args)`; the work starts at construction."""

    def __init__(self, fn: Callable[..., T], *args: Any) -> None:
        self.fn, self.args = fn, args
        self.pid = 0
        self.fd = -1
        if not hasattr(os, "fork") or os.environ.get("KG_NO_FORK"):
            return
        read_fd, write_fd = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(read_fd)
            os.close(write_fd)
            return
        if pid == 0:
            os.close(read_fd)
            code = 0
            try:
                payload = pickle.dumps(fn(*args), protocol=pickle.HIGHEST_PROTOCOL)
                with os.fdopen(write_fd, "wb") as pipe:
                    pipe.write(payload)
            except BaseException:
                code = 1
            os._exit(code)
        os.close(write_fd)
        self.pid, self.fd = pid, read_fd

    def close(self) -> None:
        """Abandon a child whose result is no longer wanted (on an error path): no zombie left."""
        if self.pid:
            try:
                os.kill(self.pid, 9)
                os.waitpid(self.pid, 0)
            except OSError:
                pass
            os.close(self.fd)
            self.pid = 0

    def result(self) -> T:
        if not self.pid:
            return self.fn(*self.args)
        with os.fdopen(self.fd, "rb") as pipe:
            payload = pipe.read()
        _, status = os.waitpid(self.pid, 0)
        self.pid = 0
        if status != 0 or not payload:
            return self.fn(*self.args)
        return pickle.loads(payload)
