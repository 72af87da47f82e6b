"""`skillet skills export`: an installed skill as an Agent Skills .zip.

`archive` builds the SKILL.md and the .zip from a stored version (pure); `installed` reads
the org's installed version and its files from object storage and hands them to it.
"""
