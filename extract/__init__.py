"""Extraction: one source file becomes an `Extraction` (notes, code through tree-sitter, the model pass), and references resolve across a scope."""
