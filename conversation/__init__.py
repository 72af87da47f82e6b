"""One conversation around the agent turn: who holds it (lease, bursts), answering a burst,
the outbox and its order, a person in the conversation (handoff), the customer's opt-out,
follow-ups and after-hours. It calls the agent turn (turn/); the agent turn never calls it."""
