"""The events webhook: what a business is told about its conversations (recorded in the
transaction of the change that causes it, delivered later by the worker's cron)."""
