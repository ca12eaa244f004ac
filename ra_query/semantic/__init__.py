"""Semantic search: the embedding model ra ships and how text becomes a vector (optional extra)."""
