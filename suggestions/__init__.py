"""Sugestões: what people of the business answered customers (lessons), grouped by question,
taught to the agent as a draft skill with customers' data removed."""
