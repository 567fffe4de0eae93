"""One exception type for every failure a user can cause: its message is the one line they see."""

__all__ = ["KgError", "StoreBusy"]


class KgError(Exception):
    """A user-facing error: the message names the file and says what to do."""

    exit_code = 1


class StoreBusy(KgError):
    """Another `kg` process holds the scope's lock longer than we are willing to wait."""

    exit_code = 75
