"""A person in the conversation: when the customer or the agent asks for one, and what the
agent says around it."""
