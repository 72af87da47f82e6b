"""Pages of skill files this worker has already read from object storage, kept in memory.

A skill version's files never change: every write goes to a new version id, which is part
of the object key (`{org}/{skill}/{version}/{path}`). So a page read once is the page for
good, and a popular skill's reference costs one storage round trip per worker instead of
one per turn. Entries are keyed by the object key (org first: one tenant's key never names
another's object) and the manifest's sha256 (bytes written again under an old key would
be a different file, never served from here); the oldest go first past a byte budget.
"""

from __future__ import annotations

from collections import OrderedDict

from core.object_store import StoredObject

DEFAULT_MAX_BYTES = 32 * 1024 * 1024

# (object key, sha256 of the whole file, offset, max bytes of the page)
PageKey = tuple[str, str, int, int]


class StoredPageCache:
    """Least-recently-used pages up to `max_bytes` of page data (0 keeps nothing)."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self._max_bytes = max_bytes
        self._pages: OrderedDict[PageKey, StoredObject] = OrderedDict()
        self._bytes = 0

    @property
    def bytes_held(self) -> int:
        return self._bytes

    def get(self, key: PageKey) -> StoredObject | None:
        page = self._pages.get(key)
        if page is not None:
            self._pages.move_to_end(key)
        return page

    def put(self, key: PageKey, page: StoredObject) -> None:
        size = len(page.data)
        if size > self._max_bytes or key in self._pages:
            return
        self._pages[key] = page
        self._bytes += size
        while self._bytes > self._max_bytes:
            _, oldest = self._pages.popitem(last=False)
            self._bytes -= len(oldest.data)
