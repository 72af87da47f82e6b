"""The skill catalog: packages, versions and pointers, object storage, usage, curator."""
