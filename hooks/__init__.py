"""The Claude Code hooks (a face): JSON on stdin, JSON on stdout, failing open; `dispatch` routes `kg hook EVENT`."""
