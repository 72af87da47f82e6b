"""Text Postgres can store (core.text), checked at the API's two doors for text. Pure.

- every path parameter a route's path names (`check_path`, called by api.guard.run_route
  for the API and the console alike): 422 `invalid_path`;
- every string of a JSON body, keys too, at any depth (`check_body`, called by
  api.bodies.read_json, which also reads the console's forms): 422 `invalid_text`.
Both messages name the parameter or field and the character. A refused call's audit row keeps
what was asked with each such character as U+FFFD (core.text.storable).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from api.errors import ApiError
from core.text import first_unstorable, storable, unstorable, what_unstorable

# `{name}`, or `{path:.+}` (a parameter with aiohttp's pattern).
_PARAMETER = re.compile(r"\{(\w+)(?::[^{}]*)?\}")


def check_path(template: str, params: Mapping[str, str]) -> None:
    """The parameters `template` (a route's path, `/v1/skills/{name}`) names: a console page
    reads its lists through routes whose paths have none, under its own action's URL."""
    for name in _PARAMETER.findall(template):
        value = params.get(name, "")
        if unstorable(value):
            raise ApiError(
                422,
                "invalid_path",
                f"O parâmetro `{name}` do caminho tem {what_unstorable(value)}, que não pode "
                "ser guardado. Tire esse caractere do endereço.",
            )


def check_body(document: Any) -> None:
    found = first_unstorable(document)
    if found is None:
        return
    where, text = found
    field = f"O campo `{storable(where)}`" if where else "O corpo"
    raise ApiError(
        422,
        "invalid_text",
        f"{field} tem {what_unstorable(text)}, que não pode ser guardado. Tire esse caractere "
        "e envie de novo.",
    )
