"""The JSON schema a model sees for a tool's `Args`: flat, deterministic, no pydantic noise.

Invariants (the tool list is part of the byte-stable prompt prefix):
- the same `Args` always renders the same dict (pydantic's field order, nothing time- or
  process-dependent);
- no `title` anywhere, no `anyOf`: an optional field (`X | None = None`) renders as plain `X`
  and is left out of `required`; no `default: null`;
- top level is `{"type": "object", "properties": ..., "required": [...],
  "additionalProperties": false}`;
- a nested model (`$defs`, `$ref`) is written inline, by the same rules, as an object with
  `additionalProperties: false` (send_choices' list of choices): no `$ref` reaches a
  provider; a model nested in itself is refused when the schema is built.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

_NULL = {"type": "null"}


class ToolSchemaError(ValueError):
    """An `Args` model that cannot be rendered flat (a programming error, found at startup)."""


def flat_schema(args: type[BaseModel]) -> dict[str, Any]:
    raw = args.model_json_schema()
    return _object(args, raw, raw.get("$defs", {}), depth=0)


_MAX_DEPTH = 2  # a tool's argument, and objects in its lists: nothing deeper


def _object(
    args: type[BaseModel], raw: dict[str, Any], defs: dict[str, Any], *, depth: int
) -> dict[str, Any]:
    properties = {
        name: _inlined(args, _property(args, name, spec), defs, depth=depth)
        for name, spec in raw["properties"].items()
    }
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    required = raw.get("required", [])
    if required:
        schema["required"] = list(required)
    schema["additionalProperties"] = False
    return schema


def _inlined(args: type[BaseModel], node: Any, defs: dict[str, Any], *, depth: int) -> Any:
    """`node` with each `$ref` replaced by its model, rendered as an object."""
    if isinstance(node, list):
        return [_inlined(args, v, defs, depth=depth) for v in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        if depth >= _MAX_DEPTH - 1 or not ref.startswith("#/$defs/"):
            raise ToolSchemaError(f"{args.__qualname__}: models nested too deep")
        return _object(args, defs[ref.removeprefix("#/$defs/")], defs, depth=depth + 1)
    return {k: _inlined(args, v, defs, depth=depth) for k, v in node.items()}


def _property(args: type[BaseModel], name: str, spec: dict[str, Any]) -> dict[str, Any]:
    spec = {k: v for k, v in spec.items() if k != "title"}
    variants = spec.pop("anyOf", None)
    if variants is not None:
        kept = [v for v in variants if v != _NULL]
        if len(kept) != 1:
            raise ToolSchemaError(f"{args.__qualname__}.{name}: only `X | None` unions render")
        spec = {**kept[0], **spec}
        if spec.get("default", ...) is None:
            del spec["default"]
    if "anyOf" in str(spec):
        raise ToolSchemaError(f"{args.__qualname__}.{name}: not a flat argument")
    flat: dict[str, Any] = _without_titles(spec)
    return flat


def _without_titles(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_titles(v) for k, v in node.items() if k != "title"}
    if isinstance(node, list):
        return [_without_titles(v) for v in node]
    return node
