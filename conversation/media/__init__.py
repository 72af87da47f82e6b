"""Media customers send: fetched, sniffed, stored and (voice notes) transcribed inside a turn."""
