"""Which model names an agent may carry: the providers and the rule each one's name follows.

The worker builds adapters for these (worker.model_providers); the CLI and the admin API
validate an agent's choice against them before writing it.
"""

from __future__ import annotations

# The providers an agent may name, and those that need a model name (`local` needs none).
PROVIDERS = ("anthropic", "local", "openai")
NAMED_PROVIDERS = frozenset({"anthropic", "openai"})
MAX_MODEL_NAME_CHARS = 200  # the agents_model_name_length check
