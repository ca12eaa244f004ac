"""Answering: the query language, the search pipeline, budgets, rendering, context and get."""
