"""The console: the admin API's routes as pt-BR HTML pages, signed in with an API key."""
