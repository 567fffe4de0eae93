"""Services: writing and keeping the vault (the one guarded write, frontmatter edits, remember, journal, promote, consolidate, lint, anchor repair, sync and its git plumbing)."""
