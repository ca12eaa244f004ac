"""Refresh before read: is the index current, the stamp that proves it fast, the refreshed store."""
