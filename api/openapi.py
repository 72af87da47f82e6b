"""The OpenAPI 3.1 document of the API, written from the route table (api.app.ROUTES).

Every route's least role is in `x-skillet-role`, its audit action in `x-skillet-audit`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from api.routing import Route
from core.http_metrics import METRICS_PATH

_PARAM_RE = re.compile(r"{([a-z_]+)(?::[^{}]*)?}")  # `{name}`, or `{path:.+}` (aiohttp's)
OPENAPI_PATH = "/openapi.json"
HEALTH_PATH = "/healthz"

_ERROR = {
    "type": "object",
    "required": ["error", "message"],
    "properties": {"error": {"type": "string"}, "message": {"type": "string"}},
}
_QUERY = {
    "limit": ("integer", "itens por página (1-200, padrão 50)"),
    "cursor": ("string", "o `next` da página anterior"),
    "status": ("string", "pending (padrão), approved, rejected ou all"),
    "days": ("integer", "dias UTC até hoje, hoje incluído (1-90, padrão 30)"),
    "agent_id": ("string", "só os de um agente (o id de `GET /v1/agents`)"),
    "mode": ("string", "só as de um modo: agent, waiting (mais antigas primeiro) ou human"),
    "q": ("string", "busca de 2 a 100 caracteres no nome, no número ou nas mensagens do cliente"),
    "held_by": ("string", "só as que alguém atende: me, phone ou o id de uma pessoa"),
    "unanswered": ("boolean", "true: só as com mensagens do cliente sem resposta"),
    "base_version_id": ("string", "a versão de que a alteração parte (409 se mudou)"),
    "version_id": ("string", "uma versão anterior (padrão: a atual)"),
    "against": ("string", "a versão comparada no diff (padrão: a atual)"),
    "from": ("string", "primeiro dia AAAA-MM-DD, dia da organização (padrão: `to` - 29)"),
    "to": ("string", "último dia AAAA-MM-DD, incluído (padrão: hoje); até 90 dias no total"),
}
# Query parameters a read refuses with 422 (writes document 422 anyway).
_REFUSED_QUERY = {"days", "agent_id", "q", "held_by", "unanswered", "from", "to"}
_BODIES: dict[str, dict[str, Any]] = {
    "json": {"application/json": {"schema": {"type": "object"}}},
    "bytes": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}},
    "zip": {
        "application/zip": {"schema": {"type": "string", "format": "binary"}},
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "properties": {"file": {"type": "string", "format": "binary"}},
            }
        },
    },
}


def _responses(route: Route) -> dict[str, Any]:
    error = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
    responses: dict[str, Any] = {str(route.status): {"description": "ok"}}
    if route.method == "PUT" and route.status == 201:
        responses["200"] = {"description": "uma versão nova do que já existia"}
    if route.produces is not None:
        responses[str(route.status)] = {
            "description": "os bytes; Content-Type: o tipo lido nos bytes; "
            'Content-Disposition: attachment; filename="nome-limpo"; '
            "X-Content-Type-Options: nosniff",
            "content": {route.produces: {"schema": {"type": "string", "format": "binary"}}},
        }
    for status, what in (
        ("401", "sem chave válida"),
        ("403", "papel insuficiente"),
        ("404", "a organização não tem isso"),
        ("429", "muitas autenticações falhas deste endereço, ou pedidos desta chave; Retry-After"),
    ):
        responses[status] = {"description": what, **error}
    if route.action is not None:
        responses["409"] = {"description": "conflito com o estado atual", **error}
    if route.body is not None or "cursor" in route.query:
        # invalid_json, invalid_multipart, invalid_cursor, invalid_limit
        responses["400"] = {"description": "pedido ilegível", **error}
    refused_path = _PARAM_RE.search(route.path) is not None  # invalid_path (a NUL)
    if route.action is not None or refused_path or _REFUSED_QUERY.intersection(route.query):
        responses["422"] = {"description": "entrada recusada", **error}
    if route.body == "zip":
        responses["413"] = {"description": "pacote acima de 8 MiB", **error}
    return responses


def _operation(route: Route) -> dict[str, Any]:
    parameters: list[dict[str, Any]] = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
        for name in _PARAM_RE.findall(route.path)
    ]
    parameters += [
        {
            "name": name,
            "in": "query",
            "required": False,
            "schema": {"type": _QUERY[name][0]},
            "description": _QUERY[name][1],
        }
        for name in route.query
    ]
    operation: dict[str, Any] = {
        "operationId": route.operation_id,
        "summary": route.summary,
        "tags": list(route.tags),
        "security": [{"bearer": []}],
        "x-skillet-role": route.role.value,
        "parameters": parameters,
        "responses": _responses(route),
    }
    if route.action is not None:
        operation["x-skillet-audit"] = route.action
    if route.body is not None:
        operation["requestBody"] = {"required": True, "content": _BODIES[route.body]}
    return operation


def _public(summary: str) -> dict[str, Any]:
    return {
        "get": {"summary": summary, "security": [], "responses": {"200": {"description": "ok"}}}
    }


def build_openapi(routes: Sequence[Route]) -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {
        OPENAPI_PATH: _public("este documento"),
        HEALTH_PATH: _public("o processo responde"),
        METRICS_PATH: _public("métricas no formato de texto do Prometheus"),
    }
    for route in routes:
        path = _PARAM_RE.sub(r"{\1}", route.path)  # OpenAPI names a parameter, no pattern
        paths.setdefault(path, {})[route.method.lower()] = _operation(route)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "skillet admin API",
            "version": "1",
            "description": "A superfície da empresa: skills, rascunhos, conversas, números "
            'e chaves, por organização. Erros: {"error": código, "message": texto}.',
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {"Error": _ERROR},
        },
        "paths": paths,
    }
