"""Text Postgres can store, checked at the API's edge: path parameters and JSON bodies. Pure.

Postgres `text` and `jsonb` cannot hold U+0000, and UTF-8 cannot encode a lone UTF-16
surrogate (U+D800-U+DFFF, which JSON's `"\\ud800"` escape and Python's `str` both allow).
Either one fails the statement in the driver, deep in a transaction, as a 500 that quoted the
driver. So the two doors text comes in by are checked here, before any handler runs:
- every path parameter (`check_path`, called by api.guard.run_route for the API and the
  console alike): 422 `invalid_path`;
- every string of a JSON body, keys too, at any depth (`check_body`, called by
  api.bodies.read_json, which also reads the console's forms): 422 `invalid_text`.
Both messages name the parameter or field. `storable` is for the trace of a refusal: the
audit row of a refused call keeps what was asked, with each such character as U+FFFD.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from api.errors import ApiError

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_PARAMETER = re.compile(r"\{(\w+)\}")


def unstorable(text: str) -> bool:
    return _UNSTORABLE.search(text) is not None


def storable(text: str) -> str:
    return _UNSTORABLE.sub("\ufffd", text)


def _what(text: str) -> str:
    if "\x00" in text:
        return "o caractere nulo (U+0000)"
    return "um substituto UTF-16 isolado (U+D800 a U+DFFF, como \\ud800)"


def check_path(template: str, params: Mapping[str, str]) -> None:
    """The parameters `template` (a route's path, `/v1/skills/{name}`) names: a console page
    reads its lists through routes whose paths have none, under its own action's URL."""
    for name in _PARAMETER.findall(template):
        value = params.get(name, "")
        if unstorable(value):
            raise ApiError(
                422,
                "invalid_path",
                f"O parâmetro `{name}` do caminho tem {_what(value)}, que não pode ser "
                "guardado. Tire esse caractere do endereço.",
            )


def check_body(document: Any) -> None:
    """Walk a parsed JSON document without recursion (its depth is the client's choice)."""
    stack: list[tuple[str, Any]] = [("", document)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            if unstorable(value):
                raise _bad_text(where, value)
        elif isinstance(value, dict):
            for key, item in value.items():
                at = f"{where}.{key}" if where else key
                if unstorable(key):
                    raise _bad_text(at, key)
                stack.append((at, item))
        elif isinstance(value, list):
            stack.extend((f"{where}.{i}" if where else str(i), v) for i, v in enumerate(value))


def _bad_text(where: str, text: str) -> ApiError:
    field = f"O campo `{storable(where)}`" if where else "O corpo"
    return ApiError(
        422,
        "invalid_text",
        f"{field} tem {_what(text)}, que não pode ser guardado. Tire esse caractere e "
        "envie de novo.",
    )
