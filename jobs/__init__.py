"""arq entrypoints and the queue's public payload models."""
