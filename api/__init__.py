"""The business's own surface: the admin HTTP API (`skillet api`) with org-scoped keys."""
