"""Upstream trees: framework pages fetched over HTTP, cached as markdown, indexed like docs."""
