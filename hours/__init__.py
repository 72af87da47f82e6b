"""An org's business hours: the weekly schedule, its time zone, closed days, and what the
agent does after hours (hours.schedule parses, hours.opening decides, hours.change writes)."""
