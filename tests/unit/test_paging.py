"""Paging a stored text file: whole characters, every byte shown once, a clear way on."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from turn.tools.paging import page_of


def read_all(data: bytes, max_bytes: int) -> tuple[str, list[str]]:
    """Follow the pages as a model would, from offset 0 to the end."""
    offset, texts, rendered = 0, [], []
    while True:
        window = data[offset : offset + max_bytes + 1]  # what the store returns
        page = page_of(window, offset=offset, max_bytes=max_bytes, total=len(data))
        texts.append(page.text)
        rendered.append(page.render())
        if page.complete:
            return "".join(texts), rendered
        assert page.end > offset
        offset = page.end


def test_a_small_file_is_one_page_with_no_notice() -> None:
    _, rendered = read_all("Olá, cliente!".encode(), 100)
    assert rendered == ["Olá, cliente!"]


def test_pages_never_split_a_character_and_say_where_to_go_on() -> None:
    data = ("ção" * 10).encode()  # 5 bytes: ç and ã take 2
    text, rendered = read_all(data, 6)
    assert text == "ção" * 10
    assert "\ufffd" not in text
    assert rendered[0].endswith("chame de novo com offset=5]")
    assert "trecho final" in rendered[-1]


def test_an_offset_inside_a_character_skips_to_the_next_one() -> None:
    data = "aé😀b".encode()
    page = page_of(data[2:], offset=2, max_bytes=100, total=len(data))  # inside é
    assert (page.text, page.start) == ("😀b", 3)


@given(st.text(max_size=300), st.integers(min_value=4, max_value=64))
def test_following_the_pages_yields_the_whole_text(text: str, max_bytes: int) -> None:
    assert read_all(text.encode(), max_bytes)[0] == text
