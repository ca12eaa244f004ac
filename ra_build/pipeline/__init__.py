"""The build: the doit task graph, its stages, the processes and cluster that run them."""
