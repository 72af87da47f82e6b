"""Parse an untrusted skill .zip into a validated SkillPackage: bytes in, value out, no I/O.

A package is an Agent Skills (agentskills.io) folder: `SKILL.md` (YAML frontmatter + body,
checked by skills.package.skill_md) and any other files in any folders (`references/`,
`scripts/`, `templates/`, `assets/`, `examples/`, `LICENSE.txt`, `reference.md` at the
root...), either at the archive root or inside exactly one top-level folder, which is
stripped. Every file is stored and listed; none is ever executed (skillet runs no code).
Every refusal raises `SkillPackageError` (from skills.package.errors) whose `code` is a
`PackageErrorCode` value and whose pt-BR message says what to fix. The size limits are a
`PackageLimits` value passed in (skills.package.limits). Order of checks: central directory
records counted on the raw bytes (skills.package.central_directory) -> archive opens -> every
entry's path and flags -> layout -> file count -> declared sizes -> SKILL.md decompressed
(capped) and validated -> other files decompressed (capped) and classified.

How a file's kind is decided (skills.models.FileKind), folder first, then content; "text"
means valid UTF-8 (as references have always been checked):
- `references/...`: REFERENCE; it must be text (`skill_extension_not_allowed` otherwise),
  since read_skill_reference serves it to the model as text.
- `scripts/...` text: SCRIPT; `templates/...` text: TEMPLATE (skill_view reads both; scripts
  are never run).
- `assets/...` text: TEMPLATE too (the spec's assets are "templates, images, data files":
  an HTML page or a CSV is readable with skill_view); binary: ASSET.
- anywhere else (root files such as `LICENSE.txt` or `reference.md`, `examples/`, any other
  folder): REFERENCE when text, so a matched skill's body can point at `reference.md` as
  Anthropic's skills do.
- binary content outside references/ is ASSET (a font, a PDF, a .tar.gz under scripts/).
Extensions decide nothing: an upload that names a text file `.py` or `.xsd` is still text.

Decisions where issue 3 is silent:
- Every zip entry counts toward `limits.max_archive_entries`, ignored ones (`__MACOSX/`,
  `.DS_Store`, directories) too, and that count is taken before zipfile reads a single
  entry: an earlier choice let ignored entries go uncounted, and 100,000 `__MACOSX` records
  then cost seconds and tens of MiB before any limit applied ("Hardening", parsers that
  cannot be made to spin). The file limit (`limits.max_files`) still counts only kept
  files, SKILL.md included; ignored entries are never decompressed. Paths are checked on
  every entry, ignored ones too.
- Any folder and any extension is accepted (Agent Skills interop: Anthropic's public skills
  ship `scripts/`, `LICENSE.txt` and root-level .md files); `skill_unsafe_path` is kept for
  attack-shaped entries: `..`, `.` or empty segments, absolute paths, backslashes, drive
  letters, control/format characters (NUL included), paths over MAX_PATH_CHARS, symlinks and
  other non-regular files.
- Encrypted entries and compression other than stored/deflate are `skill_not_a_zip`: we cannot
  read them. bzip2/lzma are refused because CPython inflates them without an output bound and
  lzma allocates whatever dictionary size the entry declares.
- A file under references/ that is not text is `skill_extension_not_allowed` (the only
  content refusal left). Other bytes are stored as they are and never executed.
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
from typing import IO

from core.units import BYTES_PER_MIB
from skills.models import FileKind, ManifestEntry, SkillMatcher
from skills.package.central_directory import count_records
from skills.package.errors import PackageErrorCode, SkillPackageError
from skills.package.frontmatter import SkillFrontmatter
from skills.package.limits import (
    DEFAULT_LIMITS,
    MAX_PATH_CHARS,
    READ_CHUNK_BYTES,
    PackageLimits,
)
from skills.package.skill_md import parse_skill_md

__all__ = [
    "SKILL_MD_PATH",
    "PackageErrorCode",
    "PackageFile",
    "PackageLimits",
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
    """One file besides SKILL.md, with the kind the module docstring decides."""

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
    """A validated package; `skill_md` keeps the raw SKILL.md bytes for storage and hashing.

    `frontmatter` holds the Agent Skills fields kept with the version (license,
    compatibility, metadata, allowed-tools); an empty matcher means an index-only skill."""

    name: str
    description: str
    matcher: SkillMatcher
    body: str
    files: tuple[PackageFile, ...]
    skill_md: bytes = field(repr=False)
    frontmatter: SkillFrontmatter = field(default_factory=SkillFrontmatter)

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


def parse_skill_package(data: bytes, *, limits: PackageLimits = DEFAULT_LIMITS) -> SkillPackage:
    """Validate an untrusted .zip; raise SkillPackageError with a pt-BR fix on any refusal."""
    _check_entry_count(data, limits)
    with _open_archive(data) as archive:
        entries = _strip_top_folder(_kept_entries(archive.infolist()))
        if len(entries) > limits.max_files:
            raise _error(
                PackageErrorCode.TOO_MANY_FILES,
                f"O pacote tem {len(entries)} arquivos; o máximo é {limits.max_files} "
                "(contando o SKILL.md). Remova arquivos ou junte referências.",
            )
        _check_declared_sizes(entries, limits)
        reader = _CappedReader(archive, limits)
        skill_md = reader.read(next(e for e in entries if e.path == SKILL_MD_PATH))
        parsed = parse_skill_md(skill_md)
        files = tuple(
            _support_file(e.path, reader.read(e))
            for e in sorted(entries, key=lambda e: e.path)
            if e.path != SKILL_MD_PATH
        )
    return SkillPackage(
        parsed.name,
        parsed.description,
        parsed.matcher,
        parsed.body,
        files,
        skill_md,
        parsed.frontmatter,
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


def _check_entry_count(data: bytes, limits: PackageLimits) -> None:
    """Refuse on the central directory's record count, before zipfile builds any entry."""
    most = limits.max_archive_entries
    count = count_records(data, stop_after=most)
    if count is None:
        raise _not_a_zip()  # zipfile would find no readable central directory either
    if count > most:
        raise _error(
            PackageErrorCode.TOO_MANY_FILES,
            f"O .zip tem mais de {most} entradas; o máximo é {most}, contando pastas e itens "
            "ignorados (__MACOSX, .DS_Store). "
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
        # The name as the archive holds it: zipfile's `filename` stops at a NUL.
        shown = _shown(info.orig_filename if has_control else path)
        raise _error(
            PackageErrorCode.UNSAFE_PATH,
            f"O caminho {shown} não é permitido. Use caminhos relativos com '/', sem "
            "'..', sem barra no início, sem letra de unidade e sem caracteres de controle.",
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


_FOLDER_KINDS = {
    "references": FileKind.REFERENCE,
    "scripts": FileKind.SCRIPT,
    "templates": FileKind.TEMPLATE,
    "assets": FileKind.ASSET,
}


def _is_text(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _kind_of(path: str, data: bytes) -> FileKind:
    """The kind the module docstring decides: folder first, then content."""
    folder = _FOLDER_KINDS.get(path.partition("/")[0]) if "/" in path else None
    if not _is_text(data):
        if folder is FileKind.REFERENCE:
            raise _error(
                PackageErrorCode.EXTENSION_NOT_ALLOWED,
                f"{_shown(path)} não é um texto em UTF-8, e references/ só guarda textos que o "
                "agente lê. Salve o texto em UTF-8 ou mova o arquivo para assets/.",
            )
        return FileKind.ASSET
    if folder is FileKind.ASSET:
        return FileKind.TEMPLATE  # text in assets/: a template or data file, not media
    return folder or FileKind.REFERENCE


# --- sizes: declared first, then the bytes actually decompressed -----------------------------


def _mib(size_bytes: int) -> str:
    """A limit for a message: `5 MiB`, `1.5 MiB` (pt-BR decimal comma)."""
    return f"{size_bytes / BYTES_PER_MIB:.2f}".rstrip("0").rstrip(".").replace(".", ",") + " MiB"


def _file_too_large(path: str, limits: PackageLimits) -> SkillPackageError:
    return _error(
        PackageErrorCode.FILE_TOO_LARGE,
        f"O arquivo {_shown(path)} passa de {_mib(limits.max_file_bytes)} descompactado. "
        "Reduza ou divida o arquivo.",
    )


def _package_too_large(limits: PackageLimits) -> SkillPackageError:
    return _error(
        PackageErrorCode.TOO_LARGE,
        f"O pacote passa de {_mib(limits.max_total_bytes)} descompactado no total. "
        "Reduza ou remova arquivos.",
    )


def _check_declared_sizes(entries: Sequence[_Entry], limits: PackageLimits) -> None:
    """Refuse on the sizes the archive declares, before decompressing a single byte."""
    total_bytes = 0
    for entry in entries:
        if entry.info.file_size > limits.max_file_bytes:
            raise _file_too_large(entry.path, limits)
        total_bytes += entry.info.file_size
    if total_bytes > limits.max_total_bytes:
        raise _package_too_large(limits)


class _CappedReader:
    """Decompresses members in chunks and enforces the caps on the bytes actually produced."""

    def __init__(self, archive: zipfile.ZipFile, limits: PackageLimits) -> None:
        self._archive = archive
        self._limits = limits
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
            limits = self._limits
            allowed = min(
                limits.max_file_bytes - size, limits.max_total_bytes - self.total_bytes - size
            )
            chunk = stream.read(min(READ_CHUNK_BYTES, allowed + 1))
            if not chunk:
                return b"".join(chunks)
            size += len(chunk)
            chunks.append(chunk)
            if size > limits.max_file_bytes:
                raise _file_too_large(path, limits)
            if self.total_bytes + size > limits.max_total_bytes:
                raise _package_too_large(limits)


def _support_file(path: str, data: bytes) -> PackageFile:
    return PackageFile.from_bytes(path, data, _kind_of(path, data))
