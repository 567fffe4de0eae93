"""vault-kg: a knowledge graph over a markdown vault and code repositories, for coding agents."""

__version__ = "0.1.0"
