"""Model provider adapters behind turn.model.Model, and the per-agent registry."""
