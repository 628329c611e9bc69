"""Where sampler workers run: local processes, or Ray actors on a cluster."""
