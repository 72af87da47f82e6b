"""WhatsApp ingress (verify, route to an org, enqueue)."""
