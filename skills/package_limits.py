"""Limits and allow-lists applied to an uploaded skill package, with units in every name."""

from __future__ import annotations

BYTES_PER_KIB = 1024
BYTES_PER_MIB = 1024 * BYTES_PER_KIB

# Files kept from the archive (SKILL.md included; ignored entries and directories excluded).
MAX_FILES = 64
# One file, uncompressed; checked on the declared size and again on the bytes decompressed.
MAX_FILE_BYTES = 1 * BYTES_PER_MIB
# Every kept file together (SKILL.md included), uncompressed; checked the same two ways.
MAX_TOTAL_BYTES = 5 * BYTES_PER_MIB
# Decompression reads at most this many bytes per call, so peak memory stays near the caps.
READ_CHUNK_BYTES = 64 * BYTES_PER_KIB
# A kept entry's name in the archive (top folder included): keeps object keys short.
MAX_PATH_CHARS = 255

# The YAML between the two `---` lines, in UTF-8 bytes, bounded before yaml.safe_load runs.
MAX_FRONTMATTER_BYTES = 8 * BYTES_PER_KIB
MAX_NAME_CHARS = 64
MAX_DESCRIPTION_CHARS = 1024
# Per list (`any_keywords` and `probe_keywords` each).
MAX_KEYWORDS = 50
MAX_KEYWORD_CHARS = 64
# The body (text after the closing `---`, surrounding whitespace stripped), in lines.
MAX_BODY_LINES = 200

# Extensions compared lower-cased and without the dot.
REFERENCE_EXTENSIONS = frozenset({"md", "txt", "json", "csv"})
ASSET_EXTENSIONS = frozenset({"png", "jpg", "jpeg", "webp", "gif", "pdf", "mp3", "ogg", "mp4"})
