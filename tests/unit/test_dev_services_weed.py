"""find_weed: beside the interpreter, else on PATH, else an error naming the extra to install."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dev.processes import DevServicesError
from dev.weed import find_weed


def _executable(path: Path) -> Path:
    path.write_text("#!/bin/sh\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def test_weed_beside_the_interpreter_wins(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "path").mkdir()
    beside = _executable(tmp_path / "bin" / "weed")
    _executable(tmp_path / "path" / "weed")
    assert find_weed(str(tmp_path / "bin" / "python"), str(tmp_path / "path")) == str(beside)


def test_weed_on_path_is_the_fallback(tmp_path: Path) -> None:
    on_path = _executable(tmp_path / "weed")
    assert find_weed(str(tmp_path / "venv" / "python"), str(tmp_path)) == str(on_path)


def test_no_weed_names_the_extra_to_install(tmp_path: Path) -> None:
    with pytest.raises(DevServicesError) as caught:
        find_weed(str(tmp_path / "python"), os.fspath(tmp_path))
    assert "dev-services" in str(caught.value)
