"""Benchmark: parse speed of a 5 MiB skill package, and peak memory when a zip bomb arrives.

Run: .venv/bin/python bench/package_parse.py

Prints MiB/s for `parse_skill_package` on a package at the 5 MiB cap (median of several
runs), then peak RSS for that package and for two zip bombs of about 20 KiB that declare over
1 GiB (many central directory records sharing one deflate stream; with one shared name a
naive extractor really inflates 1 GiB, which the script checks by streaming it). Each figure
is the VmHWM of a fresh child process, next to a child that only loads the same bytes, so
runs never mix. Exits 1 if a bomb is accepted or parsing it costs more than the 5 MiB cap
plus RSS_SLACK_MIB. The bomb's figure is printed last.
"""

from __future__ import annotations

import json
import random
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
import zlib
from pathlib import Path

import _script  # noqa: F401  (first: keeps bench/ off sys.path)

# Runnable as a script from the repo root without installing: put the repo on the path.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.units import BYTES_PER_KIB, BYTES_PER_MIB
from skills.package import parse_skill_package
from skills.package.limits import MAX_FILE_BYTES, MAX_TOTAL_BYTES

REPEATS = 7
SEED = 20_241_130
RSS_SLACK_MIB = 8  # "within a few MB of the caps"

SKILL_MD = (
    b"---\nname: bench\ndescription: Pacote no limite de 5 MiB para medir o parser.\n"
    b"matcher:\n  any_keywords: [bench]\n---\nCorpo da skill de benchmark.\n"
)
# fmt: off
WORDS = ["cliente", "pedido", "entrega", "prazo", "boleto", "frete", "desconto", "horário",
         "consulta", "agenda", "valor", "parcela", "pix", "troca", "garantia", "produto",
         "atendimento", "retorno", "confirmação", "endereço"]
# fmt: on

# Runs in a child: argv = [zip path, "parse" | "load", repo]. Peak RSS is the kernel's VmHWM of
# this process image. Not ru_maxrss: Linux carries the parent's peak across fork + exec.
CHILD = """
import json, sys
sys.path.insert(0, sys.argv[3])
from skills.package import SkillPackageError, parse_skill_package

def status_kib(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise LookupError(field)

data = open(sys.argv[1], "rb").read()
outcome = "not parsed"
if sys.argv[2] == "parse":
    try:
        package = parse_skill_package(data)
        outcome = f"accepted ({len(package.files)} files)"
    except SkillPackageError as exc:
        outcome = f"refused: {exc.code}"
print(json.dumps({"peak_kib": status_kib("VmHWM"), "outcome": outcome}))
"""


def _text(rng: random.Random, size: int) -> bytes:
    words: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(WORDS)
        words.append(word)
        length += len(word.encode()) + 1
    return " ".join(words).encode()[:size]


def five_mib_package() -> bytes:
    """SKILL.md + 3 text references + 2 binary assets: exactly MAX_TOTAL_BYTES uncompressed."""
    rng = random.Random(SEED)
    files = {
        "SKILL.md": SKILL_MD,
        "references/a.md": _text(rng, MAX_FILE_BYTES),
        "references/b.md": _text(rng, MAX_FILE_BYTES),
        "references/c.csv": _text(rng, MAX_FILE_BYTES),
        "assets/foto.jpg": rng.randbytes(MAX_FILE_BYTES),
        "assets/audio.ogg": rng.randbytes(MAX_TOTAL_BYTES - 4 * MAX_FILE_BYTES - len(SKILL_MD)),
    }
    assert sum(map(len, files.values())) == MAX_TOTAL_BYTES
    with tempfile.SpooledTemporaryFile() as buffer:
        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for path, data in files.items():
                archive.writestr(path, data)
        buffer.seek(0)
        return buffer.read()


def _local_header(name: bytes, crc: int, compressed: int, size: int, method: int) -> bytes:
    return struct.pack(
        "<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0x21, crc, compressed, size, len(name), 0
    ) + name  # fmt: skip


def _central_record(
    name: bytes, crc: int, compressed: int, size: int, method: int, offset: int
) -> bytes:
    return struct.pack(
        "<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, method, 0, 0x21, crc, compressed, size,
        len(name), 0, 0, 0, 0, 0o100644 << 16, offset,
    ) + name  # fmt: skip


def overlap_bomb(entries: int, kernel_mib: int, *, same_name: bool) -> bytes:
    """A real SKILL.md, then one local file of zeros deflated once, which `entries` central
    records all point at: entries x kernel_mib MiB for whoever inflates every record.

    With one shared name every record is a valid member for CPython's zipfile, so a naive
    `for info in infolist(): read()` really inflates all of it.
    """
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    zeros = bytes(BYTES_PER_MIB)
    stream = b"".join(compressor.compress(zeros) for _ in range(kernel_mib)) + compressor.flush()
    crc = 0
    for _ in range(kernel_mib):
        crc = zlib.crc32(zeros, crc)
    size = kernel_mib * BYTES_PER_MIB

    def name(i: int) -> bytes:
        return b"references/bomba.txt" if same_name else f"references/b{i:03d}.txt".encode()

    md_crc = zlib.crc32(SKILL_MD)
    skill = _local_header(b"SKILL.md", md_crc, len(SKILL_MD), len(SKILL_MD), 0) + SKILL_MD
    kernel_at = len(skill)
    body = skill + _local_header(name(0), crc, len(stream), size, 8) + stream
    central = _central_record(b"SKILL.md", md_crc, len(SKILL_MD), len(SKILL_MD), 0, 0)
    central += b"".join(
        _central_record(name(i), crc, len(stream), size, 8, kernel_at) for i in range(entries)
    )
    count = entries + 1
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, count, count, len(central), len(body), 0)
    return body + central + end


def naive_inflated_bytes(data: bytes) -> int:
    """What an extractor that trusts the archive would write: streamed, never held."""
    with tempfile.SpooledTemporaryFile() as raw:
        raw.write(data)
        raw.seek(0)
        total = 0
        with zipfile.ZipFile(raw) as archive:
            for info in archive.infolist():
                with archive.open(info) as member:
                    while chunk := member.read(BYTES_PER_MIB):
                        total += len(chunk)
        return total


def child_run(data: bytes, mode: str) -> tuple[float, str]:
    """Peak RSS (MiB) and outcome of a fresh interpreter loading or parsing `data`."""
    with tempfile.NamedTemporaryFile(suffix=".zip") as handle:
        handle.write(data)
        handle.flush()
        repo = str(Path(__file__).resolve().parent.parent)
        out = subprocess.run(
            [sys.executable, "-c", CHILD, handle.name, mode, repo],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    result = json.loads(out)
    return result["peak_kib"] / BYTES_PER_KIB, result["outcome"]


def parse_speed(data: bytes) -> float:
    seconds = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        parse_skill_package(data)
        seconds.append(time.perf_counter() - started)
    return MAX_TOTAL_BYTES / BYTES_PER_MIB / statistics.median(seconds)


def declared_bytes(data: bytes) -> int:
    with tempfile.SpooledTemporaryFile() as raw:
        raw.write(data)
        raw.seek(0)
        with zipfile.ZipFile(raw) as archive:
            return sum(info.file_size for info in archive.infolist())


def peak_rss(data: bytes) -> tuple[float, float, str]:
    """(peak MiB loading only, peak MiB loading + parsing, outcome), each in a fresh child."""
    loaded, _ = child_run(data, "load")
    parsed, outcome = child_run(data, "parse")
    return loaded, parsed, outcome


def main() -> int:
    package = five_mib_package()
    mib_per_s = parse_speed(package)
    print(
        f"parse: {MAX_TOTAL_BYTES / BYTES_PER_MIB:.0f} MiB package (6 files, "
        f"{len(package) / BYTES_PER_MIB:.2f} MiB zipped), median of {REPEATS}: "
        f"{mib_per_s:.0f} MiB/s"
    )
    loaded, parsed, outcome = peak_rss(package)
    print(
        f"peak RSS parsing the 5 MiB package: {parsed:.1f} MiB "
        f"({parsed - loaded:+.1f} MiB over a child that only loads it), {outcome}"
    )
    shared = overlap_bomb(128, 8, same_name=True)
    inflated = naive_inflated_bytes(shared)
    print(f"a naive extractor inflates the shared-name bomb to {inflated / BYTES_PER_MIB:.0f} MiB")
    failed = False
    for label, bomb in (
        ("63 distinct names", overlap_bomb(63, 17, same_name=False)),
        ("128 records, one name", shared),
    ):
        loaded, parsed, outcome = peak_rss(bomb)
        failed |= not outcome.startswith("refused")
        failed |= parsed - loaded > MAX_TOTAL_BYTES / BYTES_PER_MIB + RSS_SLACK_MIB
        print(
            f"zip bomb ({label}): {len(bomb) / BYTES_PER_KIB:.1f} KiB -> "
            f"{declared_bytes(bomb) / BYTES_PER_MIB:.0f} MiB declared, {outcome}; "
            f"peak RSS {parsed:.1f} MiB ({parsed - loaded:+.1f} MiB over loading it)"
        )
    if failed:
        print("FAIL: a bomb was accepted or its peak RSS went past the caps plus the slack")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
