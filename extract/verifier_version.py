"""The verifier's version, apart from `extract.verify` (which re-exports it).

Part of the model pass's mode (`extract.llm_pass.Settings.mode`), not of the answer cache key: a
change re-verifies every stored answer at the next build, without a model call. Kept in its own
module so the mode, which a no-op `kg update` computes, does not import the verifier and its
entity patterns.
"""

VERIFIER_VERSION = 5  # 5: entities the note names by its form (extract.stated_entities)
