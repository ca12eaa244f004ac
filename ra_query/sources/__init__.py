"""The sources of the trees: walking them, globs, the stale count and the watcher."""
