"""One module per programming language: its `Language` entry and the small functions that entry names.

`extract.languages` registers them, in order, by importing them. Adding a language is adding a
module here, importing it there, and a fixture under ``tests/fixtures/code``.
"""
