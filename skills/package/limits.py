"""Limits applied to a skill package, with units in every name.

The three size limits a deployment may raise (file count, total bytes, bytes per file) are a
`PackageLimits` value: the parser, imports, the catalog seed and the agent's own skills take
one explicitly (worker.settings builds it from `SKILLET_PACKAGE_MAX_FILES`,
`SKILLET_PACKAGE_MAX_BYTES` and `SKILLET_PACKAGE_MAX_FILE_BYTES`); nothing here reads the
environment. Everything else below is fixed: it bounds parser work, not what a business may
store. The defaults hold every skill of Anthropic's public skills repository whose files fit
64 files / 5 MiB (15 of 17 when measured); the two larger ones (83 files and 5.3 MiB of
fonts; 66 files) need the limits raised.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.units import BYTES_PER_KIB, BYTES_PER_MIB

# Files kept from the archive (SKILL.md included; ignored entries and directories excluded).
# The default of PackageLimits.max_files.
MAX_FILES = 64
# Every record of the archive's central directory, ignored ones (`__MACOSX/`, `.DS_Store`,
# directories) included, counted before zipfile builds one object per record. macOS Finder's
# "Compress" writes each file twice (the file and its `__MACOSX/._` twin) plus a directory
# record per folder in both trees: a package at MAX_FILES is about 2 x 64 + a few folders,
# so 4x leaves room for .DS_Store files and their twins while keeping zipfile's per-record
# cost (one ZipInfo each) trivial. Without this cap 100,000 `__MACOSX` records cost seconds.
ARCHIVE_ENTRIES_PER_FILE = 4
MAX_ARCHIVE_ENTRIES = ARCHIVE_ENTRIES_PER_FILE * MAX_FILES
# One file, uncompressed; checked on the declared size and again on the bytes decompressed.
# The default of PackageLimits.max_file_bytes.
MAX_FILE_BYTES = 1 * BYTES_PER_MIB
# Every kept file together (SKILL.md included), uncompressed; checked the same two ways.
# The default of PackageLimits.max_total_bytes.
MAX_TOTAL_BYTES = 5 * BYTES_PER_MIB
# A .zip is read whole before it is parsed: at most 3/2 of the uncompressed bytes allowed plus
# this slack (stored entries and zip headers can make an archive a little larger than its
# contents); 8 MiB at the defaults.
UPLOAD_SLACK_BYTES = BYTES_PER_MIB // 2
# Decompression reads at most this many bytes per call, so peak memory stays near the caps.
READ_CHUNK_BYTES = 64 * BYTES_PER_KIB
# A kept entry's name in the archive (top folder included): keeps object keys short.
MAX_PATH_CHARS = 255

# The YAML between the two `---` lines, in UTF-8 bytes, bounded before any YAML is read.
# A name, a description at its cap (1,024 characters), the spec's short fields and a few
# dozen keywords fit (the catalog's frontmatters are about 1.2 KiB; the largest of
# Anthropic's public skills, 1.2 KiB); the two keyword lists at their caps (2 x 50 x 64
# characters) do not, and need not: a header that big is a body in the wrong place.
MAX_FRONTMATTER_BYTES = 4 * BYTES_PER_KIB
# Collections nested in the frontmatter: the root map (1), `metadata` or the legacy `matcher`
# (2) and the legacy keyword lists (3) are all we read, plus one level of room for keys we
# ignore.
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

# Agent Skills' `compatibility` field, in characters (the spec's cap).
MAX_COMPATIBILITY_CHARS = 500
# `license` and `allowed-tools`, and each `metadata` key and value, in characters.
MAX_FIELD_CHARS = 1024
# The two keyword lists (`metadata.skillet-keywords` and `skillet-probe-keywords`), each in
# characters: a list that catches how customers actually write (stems, alternatives, a few
# dozen phrases) takes about 1,700; MAX_KEYWORDS x MAX_KEYWORD_CHARS bounds it anyway, and
# MAX_FRONTMATTER_BYTES still bounds the header, so both lists at this cap do not fit at once.
MAX_KEYWORD_LIST_CHARS = 3000


@dataclass(frozen=True)
class PackageLimits:
    """The size limits of one deployment; every caller passes one explicitly."""

    max_files: int = MAX_FILES  # kept files, SKILL.md included
    max_total_bytes: int = MAX_TOTAL_BYTES  # all kept files together, uncompressed
    max_file_bytes: int = MAX_FILE_BYTES  # one file, uncompressed

    def __post_init__(self) -> None:
        if min(self.max_files, self.max_total_bytes, self.max_file_bytes) < 1:
            raise ValueError("package limits must be positive")
        if self.max_file_bytes > self.max_total_bytes:
            raise ValueError("max_file_bytes cannot exceed max_total_bytes")

    @property
    def max_archive_entries(self) -> int:
        """Central directory records counted before zipfile reads any (see above)."""
        return ARCHIVE_ENTRIES_PER_FILE * self.max_files

    @property
    def max_upload_bytes(self) -> int:
        """The largest .zip worth reading for these limits (8 MiB at the defaults)."""
        return self.max_total_bytes * 3 // 2 + UPLOAD_SLACK_BYTES


DEFAULT_LIMITS = PackageLimits()
