"""Anchored knowledge: locators and span hashes, validity dates, the anchors pass of a vault build, `kg check`, freshness at read time."""
