"""What every layer shares: the error tree, the clock, the database pool and tenant binding."""
