"""Parse an untrusted skill .zip into a validated SkillPackage: bytes in, value out, no I/O.

A package is `SKILL.md` (YAML frontmatter + body, checked by skills.package_skill_md),
`references/` (UTF-8 text) and `assets/` (media), either at the archive root or inside exactly
one top-level folder, which is stripped. Every refusal raises `SkillPackageError` (from
skills.package_errors) whose `code` is a `PackageErrorCode` value and whose pt-BR message says
what to fix. Limits live in skills.package_limits. Order of checks: central directory records
counted on the raw bytes (skills.package_central_directory) -> archive opens -> every entry's
path and flags -> layout -> file count -> folders/extensions -> declared sizes -> SKILL.md
decompressed (capped) and validated -> support files decompressed (capped).

Decisions where issue 3 is silent:
- Every zip entry counts toward MAX_ARCHIVE_ENTRIES, ignored ones (`__MACOSX/`, `.DS_Store`,
  directories) too, and that count is taken before zipfile reads a single entry: an earlier
  choice let ignored entries go uncounted, and 100,000 `__MACOSX` records then cost seconds
  and tens of MiB before any limit applied ("Hardening", parsers that cannot be made to
  spin). The file limit (MAX_FILES) still counts only kept files, SKILL.md included; ignored
  entries are never decompressed. Paths are checked on every entry, ignored ones too.
- A file outside SKILL.md/references/assets (`scripts/run.sh`, `README.md`) or with an extension
  not allowed in its folder is `skill_extension_not_allowed` (a content-policy refusal);
  `skill_unsafe_path` is kept for attack-shaped entries: `..`, `.` or empty segments,
  absolute paths, backslashes, drive letters, control/format characters (NUL included),
  paths over MAX_PATH_CHARS, symlinks and other non-regular files.
- Encrypted entries and compression other than stored/deflate are `skill_not_a_zip`: we cannot
  read them. bzip2/lzma are refused because CPython inflates them without an output bound and
  lzma allocates whatever dictionary size the entry declares.
- A reference that is not UTF-8 is `skill_extension_not_allowed` (not the text its extension
  claims). Asset bytes are not sniffed: they are stored and never executed.
- Paths are NFC-normalized; duplicates are compared NFC + casefold (`SKILL.md` vs `skill.md`,
  or the NFD names macOS writes). Extensions are compared lower-cased; folder names and
  `SKILL.md` are case-sensitive. Nested folders under references/ and assets/ are allowed.
  The skill name need not match the folder name.
- `files` are sorted by path. `content_sha256` covers the paths after the top folder is
  stripped, so zip metadata (timestamps, compression, a wrapping folder) never changes it.
- CPython's zipfile stops inflating at the central directory's declared size and then checks
  the CRC, so a lying small size surfaces as a corrupt archive (`skill_not_a_zip`). The caps on
  decompressed bytes are still enforced here, in chunks, so they hold whatever the reader does.
"""

from __future__ import annotations

import hashlib
import io
import re
import stat
import struct
import unicodedata
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath
from typing import IO

from skills.models import FileKind, ManifestEntry, SkillMatcher
from skills.package_central_directory import count_records
from skills.package_errors import PackageErrorCode, SkillPackageError
from skills.package_limits import (
    ASSET_EXTENSIONS,
    BYTES_PER_MIB,
    MAX_ARCHIVE_ENTRIES,
    MAX_FILE_BYTES,
    MAX_FILES,
    MAX_PATH_CHARS,
    MAX_TOTAL_BYTES,
    READ_CHUNK_BYTES,
    REFERENCE_EXTENSIONS,
)
from skills.package_skill_md import parse_skill_md

__all__ = [
    "SKILL_MD_PATH",
    "PackageErrorCode",
    "PackageFile",
    "SkillPackage",
    "SkillPackageError",
    "parse_skill_package",
]

SKILL_MD_PATH = "SKILL.md"
_IGNORED_FOLDER = "__MACOSX"
_IGNORED_FILE = ".DS_Store"
_ENCRYPTED_FLAG = 0x1
_READABLE_COMPRESSION = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED})
_DRIVE_PATTERN = re.compile(r"[A-Za-z]:")
_SHOWN_PATH_CHARS = 120
# What zipfile and its decompressors raise on damaged input (UnicodeDecodeError is a ValueError).
_ZIP_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    NotImplementedError,
    EOFError,
    OSError,
    ValueError,
    zlib.error,
    struct.error,
)


@dataclass(frozen=True)
class PackageFile:
    """One support file: `references/...` (UTF-8 text) or `assets/...` (media)."""

    path: str
    data: bytes = field(repr=False)
    size: int
    sha256: str
    kind: FileKind

    @classmethod
    def from_bytes(cls, path: str, data: bytes, kind: FileKind) -> PackageFile:
        return cls(path, data, len(data), hashlib.sha256(data).hexdigest(), kind)


@dataclass(frozen=True)
class SkillPackage:
    """A validated package; `skill_md` keeps the raw SKILL.md bytes for storage and hashing."""

    name: str
    description: str
    matcher: SkillMatcher
    body: str
    files: tuple[PackageFile, ...]
    skill_md: bytes = field(repr=False)

    @property
    def manifest(self) -> tuple[ManifestEntry, ...]:
        return tuple(ManifestEntry(f.path, f.size, f.sha256, f.kind) for f in self.files)

    @property
    def content_sha256(self) -> str:
        """Digest of SKILL.md and every file's path + sha256, sorted: equal iff same content."""
        digest = hashlib.sha256(b"skillet-package-v1\n")
        digest.update(hashlib.sha256(self.skill_md).hexdigest().encode("ascii") + b"\n")
        # Paths cannot hold NUL or newline (control characters are refused), so this is
        # unambiguous.
        for item in sorted(self.files, key=lambda f: f.path):
            digest.update(item.path.encode("utf-8") + b"\0" + item.sha256.encode("ascii") + b"\n")
        return digest.hexdigest()


@dataclass(frozen=True)
class _Entry:
    path: str
    info: zipfile.ZipInfo


def parse_skill_package(data: bytes) -> SkillPackage:
    """Validate an untrusted .zip; raise SkillPackageError with a pt-BR fix on any refusal."""
    _check_entry_count(data)
    with _open_archive(data) as archive:
        entries = _strip_top_folder(_kept_entries(archive.infolist()))
        if len(entries) > MAX_FILES:
            raise _error(
                PackageErrorCode.TOO_MANY_FILES,
                f"O pacote tem {len(entries)} arquivos; o máximo é {MAX_FILES} (contando o "
                "SKILL.md). Remova arquivos ou junte referências.",
            )
        kinds = {e.path: _classify(e.path) for e in entries if e.path != SKILL_MD_PATH}
        _check_declared_sizes(entries)
        reader = _CappedReader(archive)
        skill_md = reader.read(next(e for e in entries if e.path == SKILL_MD_PATH))
        parsed = parse_skill_md(skill_md)
        files = tuple(
            _support_file(e.path, reader.read(e), kinds[e.path])
            for e in sorted(entries, key=lambda e: e.path)
            if e.path != SKILL_MD_PATH
        )
    return SkillPackage(
        parsed.name, parsed.description, parsed.matcher, parsed.body, files, skill_md
    )


def _error(code: PackageErrorCode, message: str) -> SkillPackageError:
    return SkillPackageError(message, code=code)


def _shown(path: str) -> str:
    """Quote an untrusted path for a one-line message (repr escapes control characters)."""
    if len(path) > _SHOWN_PATH_CHARS:
        path = path[:_SHOWN_PATH_CHARS] + "…"
    return repr(path)


def _not_a_zip() -> SkillPackageError:
    return _error(
        PackageErrorCode.NOT_A_ZIP,
        "O arquivo enviado não é um .zip válido. Compacte a pasta da skill em formato .zip e "
        "envie de novo.",
    )


def _check_entry_count(data: bytes) -> None:
    """Refuse on the central directory's record count, before zipfile builds any entry."""
    count = count_records(data, stop_after=MAX_ARCHIVE_ENTRIES)
    if count is None:
        raise _not_a_zip()  # zipfile would find no readable central directory either
    if count > MAX_ARCHIVE_ENTRIES:
        raise _error(
            PackageErrorCode.TOO_MANY_FILES,
            f"O .zip tem mais de {MAX_ARCHIVE_ENTRIES} entradas; o máximo é "
            f"{MAX_ARCHIVE_ENTRIES}, contando pastas e itens ignorados (__MACOSX, .DS_Store). "
            "Gere o .zip só com os arquivos da skill, sem pastas __MACOSX nem arquivos "
            ".DS_Store.",
        )


def _open_archive(data: bytes) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    except _ZIP_ERRORS as exc:
        raise _not_a_zip() from exc


# --- entries: which ones we keep, and whether their names are safe ---------------------------


def _kept_entries(infos: Sequence[zipfile.ZipInfo]) -> list[_Entry]:
    kept: list[_Entry] = []
    seen: set[str] = set()
    for info in infos:
        path = _checked_path(info)
        if _is_ignored(path):
            continue
        _check_file_type(info, path)
        if _is_directory(info):
            continue
        _check_readable(info, path)
        if len(path) > MAX_PATH_CHARS:
            raise _error(
                PackageErrorCode.UNSAFE_PATH,
                f"O caminho {_shown(path)} passa de {MAX_PATH_CHARS} caracteres. Encurte os "
                "nomes de pastas e arquivos.",
            )
        key = path.casefold()
        if key in seen:
            raise _error(
                PackageErrorCode.DUPLICATE_ENTRY,
                f"O arquivo {_shown(path)} aparece mais de uma vez no pacote (nomes que só "
                "diferem em maiúsculas e minúsculas contam como iguais). Deixe só um.",
            )
        seen.add(key)
        kept.append(_Entry(path, info))
    return kept


def _checked_path(info: zipfile.ZipInfo) -> str:
    """The NFC entry name without a directory's trailing slash, or raise skill_unsafe_path."""
    # orig_filename still holds what zipfile cut at a NUL byte ("SKILL.md\0.exe").
    has_control = any(unicodedata.category(c).startswith("C") for c in info.orig_filename)
    path = unicodedata.normalize("NFC", info.filename)
    if _is_directory(info):
        path = path[:-1]
    segments = path.split("/")
    if (
        has_control
        or not path
        or "\\" in path
        or _DRIVE_PATTERN.match(path)
        or any(segment in ("", ".", "..") for segment in segments)
    ):
        raise _error(
            PackageErrorCode.UNSAFE_PATH,
            f"O caminho {_shown(path)} não é permitido. Use caminhos relativos com '/', sem "
            "'..', sem barra no início e sem letra de unidade.",
        )
    return path


def _is_directory(info: zipfile.ZipInfo) -> bool:
    # Not ZipInfo.is_dir(): it raises IndexError on the empty names a crafted archive can hold.
    return info.filename.endswith("/")


def _is_ignored(path: str) -> bool:
    segments = path.split("/")
    return _IGNORED_FOLDER in segments or segments[-1] == _IGNORED_FILE


def _check_file_type(info: zipfile.ZipInfo, path: str) -> None:
    # The high 16 bits of external_attr are the Unix st_mode; 0 when the tool did not record it.
    file_type = stat.S_IFMT(info.external_attr >> 16)
    if file_type not in (0, stat.S_IFREG, stat.S_IFDIR):
        raise _error(
            PackageErrorCode.UNSAFE_PATH,
            f"{_shown(path)} é um link simbólico ou arquivo especial. Coloque no .zip o "
            "arquivo de verdade.",
        )


def _check_readable(info: zipfile.ZipInfo, path: str) -> None:
    if info.flag_bits & _ENCRYPTED_FLAG:
        raise _error(
            PackageErrorCode.NOT_A_ZIP,
            f"O arquivo {_shown(path)} está protegido por senha. Gere o .zip sem senha.",
        )
    if info.compress_type not in _READABLE_COMPRESSION:
        raise _error(
            PackageErrorCode.NOT_A_ZIP,
            f"O arquivo {_shown(path)} usa um método de compressão não suportado. Gere o "
            ".zip com a compressão padrão (deflate).",
        )


def _strip_top_folder(entries: list[_Entry]) -> list[_Entry]:
    """Keep a root SKILL.md layout, or strip the single top-level folder that holds one."""
    if any(e.path == SKILL_MD_PATH for e in entries):
        return entries
    tops = {e.path.split("/", 1)[0] for e in entries}
    if len(tops) == 1 and all("/" in e.path for e in entries):
        stripped = [replace(e, path=e.path.split("/", 1)[1]) for e in entries]
        if any(e.path == SKILL_MD_PATH for e in stripped):
            return stripped
    raise _error(
        PackageErrorCode.MD_MISSING,
        "O pacote precisa de um SKILL.md (com esse nome, em maiúsculas) na raiz ou dentro de "
        "uma única pasta.",
    )


def _classify(path: str) -> FileKind:
    folder = path.partition("/")[0]
    extension = PurePosixPath(path).suffix.lower().removeprefix(".")
    if folder == "references":
        kind, allowed = FileKind.REFERENCE, REFERENCE_EXTENSIONS
    elif folder == "assets":
        kind, allowed = FileKind.ASSET, ASSET_EXTENSIONS
    else:
        raise _error(
            PackageErrorCode.EXTENSION_NOT_ALLOWED,
            f"{_shown(path)} não é permitido: o pacote só pode ter o SKILL.md, textos em "
            "references/ e mídias em assets/. Nada executável (como scripts/).",
        )
    if extension not in allowed:
        raise _error(
            PackageErrorCode.EXTENSION_NOT_ALLOWED,
            f"{_shown(path)}: em {folder}/ só são aceitos arquivos "
            f"{', '.join('.' + e for e in sorted(allowed))}.",
        )
    return kind


# --- sizes: declared first, then the bytes actually decompressed -----------------------------


def _file_too_large(path: str) -> SkillPackageError:
    return _error(
        PackageErrorCode.FILE_TOO_LARGE,
        f"O arquivo {_shown(path)} passa de {MAX_FILE_BYTES // BYTES_PER_MIB} MiB "
        "descompactado. Reduza ou divida o arquivo.",
    )


def _package_too_large() -> SkillPackageError:
    return _error(
        PackageErrorCode.TOO_LARGE,
        f"O pacote passa de {MAX_TOTAL_BYTES // BYTES_PER_MIB} MiB descompactado no total. "
        "Reduza ou remova arquivos.",
    )


def _check_declared_sizes(entries: Sequence[_Entry]) -> None:
    """Refuse on the sizes the archive declares, before decompressing a single byte."""
    total_bytes = 0
    for entry in entries:
        if entry.info.file_size > MAX_FILE_BYTES:
            raise _file_too_large(entry.path)
        total_bytes += entry.info.file_size
    if total_bytes > MAX_TOTAL_BYTES:
        raise _package_too_large()


class _CappedReader:
    """Decompresses members in chunks and enforces the caps on the bytes actually produced."""

    def __init__(self, archive: zipfile.ZipFile) -> None:
        self._archive = archive
        self.total_bytes = 0

    def read(self, entry: _Entry) -> bytes:
        try:
            with self._archive.open(entry.info) as stream:
                data = self._read_capped(stream, entry.path)
        except _ZIP_ERRORS as exc:
            raise _error(
                PackageErrorCode.NOT_A_ZIP,
                f"O .zip está corrompido (não foi possível ler {_shown(entry.path)}). Gere o "
                ".zip de novo e envie outra vez.",
            ) from exc
        self.total_bytes += len(data)
        return data

    def _read_capped(self, stream: IO[bytes], path: str) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while True:
            # Ask for one byte past what is still allowed, so going over is detected.
            allowed = min(MAX_FILE_BYTES - size, MAX_TOTAL_BYTES - self.total_bytes - size)
            chunk = stream.read(min(READ_CHUNK_BYTES, allowed + 1))
            if not chunk:
                return b"".join(chunks)
            size += len(chunk)
            chunks.append(chunk)
            if size > MAX_FILE_BYTES:
                raise _file_too_large(path)
            if self.total_bytes + size > MAX_TOTAL_BYTES:
                raise _package_too_large()


def _support_file(path: str, data: bytes, kind: FileKind) -> PackageFile:
    if kind is FileKind.REFERENCE:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _error(
                PackageErrorCode.EXTENSION_NOT_ALLOWED,
                f"{_shown(path)} não está em UTF-8. Salve o texto com a codificação UTF-8.",
            ) from exc
    return PackageFile.from_bytes(path, data, kind)
