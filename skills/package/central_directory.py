"""Count a zip's central directory records from its raw bytes, before zipfile reads them.

CPython's zipfile builds one ZipInfo per record of the central directory as it opens an
archive, whatever the archive claims its entry count is: it walks the directory by its
declared size. So the count that bounds that work is the number of records in the region
zipfile will walk, and this module finds that region the way zipfile (3.11) does: the
end-of-central-directory record at the very end, else the last one in the 64 KiB comment
window, then the ZIP64 records right before it when their locator is there. The walk reads
only each record's fixed 46-byte header and stops one record past the limit, so its cost is
bounded by the limit, not by the archive. A test holds this count equal to
`len(zipfile.ZipFile(...).infolist())` on valid, mutated and random archives.
"""

from __future__ import annotations

import struct
from typing import Final

_END: Final = struct.Struct("<4s4H2LH")  # signature ... directory size, offset, comment size
_END_SIGNATURE: Final = b"PK\x05\x06"
_ZIP64_LOCATOR: Final = struct.Struct("<4sLQL")  # signature, disk, record offset, disks
_ZIP64_LOCATOR_SIGNATURE: Final = b"PK\x06\x07"
_ZIP64_END: Final = struct.Struct("<4sQ2H2L4Q")
_ZIP64_END_SIGNATURE: Final = b"PK\x06\x06"
_RECORD: Final = struct.Struct("<4s4B4HL2L5H2L")
_RECORD_SIGNATURE: Final = b"PK\x01\x02"
_RECORD_NAME_LENGTH_AT: Final = 28  # then extra field length and comment length, uint16 each
_MAX_COMMENT_BYTES: Final = 0xFFFF


def count_records(data: bytes, *, stop_after: int) -> int | None:
    """Records zipfile would read, counted up to `stop_after + 1` (enough to refuse), or None
    when zipfile would find no readable central directory (not a zip, or a damaged one)."""
    directory = _directory_region(data)
    if directory is None:
        return None
    start, size = directory
    count = 0
    offset = 0
    while offset < size and count <= stop_after:
        at = start + offset
        # zipfile reads `size` bytes from `start`; a header past them is truncated for it too.
        if min(start + size, len(data)) - at < _RECORD.size:
            return None
        if data[at : at + 4] != _RECORD_SIGNATURE:
            return None
        lengths = struct.unpack_from("<3H", data, at + _RECORD_NAME_LENGTH_AT)
        offset += _RECORD.size + sum(lengths)
        count += 1
    return count


def _directory_region(data: bytes) -> tuple[int, int] | None:
    """(start, size in bytes) of the central directory zipfile would read, or None."""
    end_at = _end_record_at(data)
    if end_at is None:
        return None
    size: int = _END.unpack_from(data, end_at)[5]
    location = end_at
    zip64 = _zip64_end(data, end_at)
    if zip64 is False:
        return None
    if isinstance(zip64, tuple):
        location, size = zip64
    # zipfile starts at offset + concat, where concat (bytes prepended to the archive) is
    # location - size - offset: the directory is the `size` bytes before its end record.
    start = location - size
    if start < 0:
        return None
    return start, size


def _end_record_at(data: bytes) -> int | None:
    """Where the end-of-central-directory record starts, found as zipfile finds it."""
    last = len(data) - _END.size
    if last < 0:
        return None
    if data[last : last + 4] == _END_SIGNATURE and data[-2:] == b"\0\0":
        return last
    window_at = max(len(data) - _MAX_COMMENT_BYTES - 1 - _END.size, 0)
    found = data.rfind(_END_SIGNATURE, window_at)
    if found < 0 or len(data) - found < _END.size:
        return None
    return found


def _zip64_end(data: bytes, end_at: int) -> tuple[int, int] | bool | None:
    """(location, directory size) from the ZIP64 end record; None when there is none (the
    classic record holds); False when zipfile would refuse the archive."""
    locator_at = end_at - _ZIP64_LOCATOR.size
    if locator_at < 0:
        return None
    signature, disk, _, disks = _ZIP64_LOCATOR.unpack_from(data, locator_at)
    if signature != _ZIP64_LOCATOR_SIGNATURE:
        return None
    if disk != 0 or disks > 1:
        return False  # a multi-disk archive
    record_at = locator_at - _ZIP64_END.size
    if record_at < 0:
        return False
    fields = _ZIP64_END.unpack_from(data, record_at)
    if fields[0] != _ZIP64_END_SIGNATURE:
        return None
    # zipfile subtracts both ZIP64 records from `concat`: the directory ends where the ZIP64
    # end record begins.
    size: int = fields[8]
    return record_at, size
