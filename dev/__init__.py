"""Local services for development and tests: Postgres, Redis or Valkey, SeaweedFS."""
