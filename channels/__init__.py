"""WhatsApp channels: the numbers an org connected, contact ids, and the outbound senders."""
