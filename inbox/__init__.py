"""Inbound messages: their one shape and their storage, below the webhook, the jobs and the turn."""
