"""Episodic memory: the journal, date phrases, the memsearch recall index and the session-end summary."""
