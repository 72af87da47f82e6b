"""The send contract: an outbox row and its file, its route and recipient, the Sender protocol
and how a send fails. Channels implement it; the conversation uses it."""
