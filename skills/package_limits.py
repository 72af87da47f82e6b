"""Limits and allow-lists applied to an uploaded skill package, with units in every name."""

from __future__ import annotations

BYTES_PER_KIB = 1024
BYTES_PER_MIB = 1024 * BYTES_PER_KIB

# Files kept from the archive (SKILL.md included; ignored entries and directories excluded).
MAX_FILES = 64
# Every record of the archive's central directory, ignored ones (`__MACOSX/`, `.DS_Store`,
# directories) included, counted before zipfile builds one object per record. macOS Finder's
# "Compress" writes each file twice (the file and its `__MACOSX/._` twin) plus a directory
# record per folder in both trees: a package at MAX_FILES is about 2 x 64 + a few folders,
# so 4x leaves room for .DS_Store files and their twins while keeping zipfile's per-record
# cost (one ZipInfo each) trivial. Without this cap 100,000 `__MACOSX` records cost seconds.
MAX_ARCHIVE_ENTRIES = 4 * MAX_FILES
# One file, uncompressed; checked on the declared size and again on the bytes decompressed.
MAX_FILE_BYTES = 1 * BYTES_PER_MIB
# Every kept file together (SKILL.md included), uncompressed; checked the same two ways.
MAX_TOTAL_BYTES = 5 * BYTES_PER_MIB
# Decompression reads at most this many bytes per call, so peak memory stays near the caps.
READ_CHUNK_BYTES = 64 * BYTES_PER_KIB
# A kept entry's name in the archive (top folder included): keeps object keys short.
MAX_PATH_CHARS = 255

# The YAML between the two `---` lines, in UTF-8 bytes, bounded before any YAML is read.
# A name, a description at its cap (1,024 characters) and a few dozen keywords fit; the two
# keyword lists at their caps (2 x 50 x 64 characters) do not, and need not: a header that
# big is a body in the wrong place.
MAX_FRONTMATTER_BYTES = 4 * BYTES_PER_KIB
# Collections nested in the frontmatter: the root map (1), `matcher` (2) and its keyword lists
# (3) are all we read, plus one level of room for keys we ignore (Agent Skills' `metadata`).
# Anything deeper is refused during the pre-scan, before a tree is built: deep nesting is only
# ever an attack on the scanner and the recursive constructor (8 KiB of nested `[` cost
# 0.7-5 s in the pure-Python scanner).
MAX_FRONTMATTER_DEPTH = 4
MAX_NAME_CHARS = 64
MAX_DESCRIPTION_CHARS = 1024
# Per list (`any_keywords` and `probe_keywords` each).
MAX_KEYWORDS = 50
MAX_KEYWORD_CHARS = 64
# The whole SKILL.md (frontmatter + body), in characters, checked before the YAML is read;
# the same cap for uploaded packages and for what the agent writes (skills.authoring_rules).
MAX_SKILL_MD_CHARS = 100_000
# The body (text after the closing `---`, surrounding whitespace stripped), in lines as
# str.splitlines() counts them: \r, \v, \f, U+0085, U+2028 and U+2029 end a line too.
MAX_BODY_LINES = 200

# Extensions compared lower-cased and without the dot.
REFERENCE_EXTENSIONS = frozenset({"md", "txt", "json", "csv"})
ASSET_EXTENSIONS = frozenset({"png", "jpg", "jpeg", "webp", "gif", "pdf", "mp3", "ogg", "mp4"})
