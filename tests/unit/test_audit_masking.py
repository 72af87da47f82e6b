"""What a non-admin reads of a URL in the audit log: its origin only."""

from __future__ import annotations

import pytest

from api.audit_masking import masked_detail, masked_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://hooks.example.com/t/SECRET", "https://hooks.example.com/…"),
        ("https://hooks.example.com/?token=SECRET", "https://hooks.example.com/…"),
        ("https://hooks.example.com", "https://hooks.example.com"),
        ("https://hooks.example.com/", "https://hooks.example.com"),
        ("http://user:pw@10.0.0.1:8080/x", "http://10.0.0.1:8080/…"),
        ("https://[::1", "…"),  # unparseable: nothing of it
        ("not a url /with/path", "not a url /with/path"),
    ],
)
def test_masked_url(url: str, shown: str) -> None:
    assert masked_url(url) == shown


def test_masked_detail_reaches_nested_values() -> None:
    detail = {
        "from": None,
        "to": ["https://h.example/a"],
        "n": 3,
        "x": {"y": "https://h.example/b"},
    }
    assert masked_detail(detail) == {
        "from": None,
        "to": ["https://h.example/…"],
        "n": 3,
        "x": {"y": "https://h.example/…"},
    }
