"""The console's Painel (the first page an admin sees): GET /v1/insights drawn as SVG charts,
each with its numbers in a table beside it, for a period the person picks; and the same
series as a CSV file.

Both run the API's route through its gate (api.guard.run_route), so the page shows what the
API answers for the same key. A refused period keeps what was typed and says why beside the
field it is about.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

from aiohttp import web

from api.console.auth import Visit
from api.console.charts import Chart, Ranking, lines, ranking, stacked_bars
from api.console.pages import PageData, read
from api.console.render import SECURITY_HEADERS
from api.errors import ApiError
from api.guard import run_route
from api.insight_routes import DEFAULT_DAYS, MAX_DAYS
from api.route_table import ROUTES

OPERATION = "get_insights_route"
PRESETS = (7, 30, 90)  # days ending today: the period links above the charts
# (cause, as the legend says it, as a table's narrow column says it)
CAUSE_NAMES = (
    ("customer", "pedido do cliente", "cliente"),
    ("tool", "o agente chamou", "agente"),
    ("console", "assumida no console", "console"),
    ("phone", "celular da empresa", "celular"),
)
# What a refused period says beside its field (the API's messages name its query fields).
FIELD_MESSAGES = {
    "invalid_date": "Data inválida: escolha um dia no calendário (dd/mm/aaaa).",
    "from_after_to": "O início precisa ser antes do fim, ou o mesmo dia.",
    "range_too_long": f"Escolha no máximo {MAX_DAYS} dias, do início ao fim.",
}


def integer(value: float) -> str:
    return f"{round(value):,}".replace(",", ".")


def decimal(value: float, places: int = 1) -> str:
    text = f"{value:,.{places}f}"
    return text.replace(",", "_").replace(".", ",").replace("_", ".")


def percent(value: float) -> str:
    return decimal(value) + "%"


def money(value: float) -> str:
    return "R$ " + decimal(value, 2)


def tokens(value: float) -> str:
    """Token counts on an axis or a title: 1,2 mi, 350 mil, 999."""
    if value >= 1_000_000:
        return decimal(value / 1_000_000) + " mi"
    if value >= 1_000:
        return decimal(value / 1_000) + " mil"
    return integer(value)


def duration(seconds: float) -> str:
    """A reply time as people say it: 45 s, 2 min 5 s, 1 h 20 min."""
    total = round(seconds)
    if total < 60:
        return f"{decimal(seconds) if seconds < 10 else total} s"
    minutes, secs = divmod(total, 60)
    if minutes < 60:
        return f"{minutes} min" + (f" {secs} s" if secs else "")
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h" + (f" {minutes} min" if minutes else "")


def _durations(label: str, days: list[str], p50: list[Any], p90: list[Any]) -> Chart:
    """Reply times on an axis of seconds, or of minutes once they pass two minutes."""
    longest = max((v for v in p50 + p90 if v is not None), default=0)
    unit = 60 if longest >= 120 else 1
    scaled = [
        (name, [None if v is None else v / unit for v in values])
        for name, values in (("mediana", p50), ("90% até", p90))
    ]
    return lines(
        label,
        days,
        scaled,
        lambda v: duration(v * unit),
        axis=lambda v: f"{integer(v)} {'min' if unit == 60 else 's'}",
    )


def _short(day: str) -> str:
    return date.fromisoformat(day).strftime("%d/%m")


def _long(day: str) -> str:
    return date.fromisoformat(day).strftime("%d/%m/%Y")


def _charts(insights: dict[str, Any]) -> dict[str, Chart | Ranking | None]:
    days = [_short(d) for d in insights["days"]]
    s = insights["series"]
    cost = None
    if insights["priced"]:
        cost = stacked_bars(
            "Custo em reais por dia",
            days,
            [("custo", s["cost_brl"])],
            money,
            axis=lambda v: f"R$ {integer(v)}",
        )
    return {
        "conversations": stacked_bars(
            "Conversas por dia",
            days,
            [
                ("só o agente", s["conversations_agent_only"]),
                ("com uma pessoa", s["conversations_with_person"]),
            ],
            integer,
        ),
        "handoffs": stacked_bars(
            "Passagens para uma pessoa por dia, por motivo",
            days,
            [(name, s[f"handoffs_{cause}"]) for cause, name, _ in CAUSE_NAMES],
            integer,
        ),
        "person_reply": _durations(
            "Primeira resposta de uma pessoa depois da passagem",
            days,
            s["person_first_reply_p50_s"],
            s["person_first_reply_p90_s"],
        ),
        "agent_reply": _durations(
            "Tempo de resposta do agente", days, s["agent_reply_p50_s"], s["agent_reply_p90_s"]
        ),
        "after_hours": stacked_bars(
            "Mensagens de clientes fora do horário, em porcentagem",
            days,
            [("fora do horário", [v or 0 for v in s["after_hours_share"]])],
            percent,
            axis=lambda v: f"{integer(v)}%",
            empty=not any(s["customer_messages"]),
        ),
        "tokens": stacked_bars(
            "Tokens por dia",
            days,
            [
                ("entrada", s["tokens_input"]),
                ("entrada do cache", s["tokens_cached_input"]),
                ("saída", s["tokens_output"]),
            ],
            tokens,
            axis=lambda v: tokens(v).replace(",0 ", " "),
        ),
        "cost": cost,
        "top_skills": ranking(
            "Skills mais usadas",
            [(t["name"], t["uses"]) for t in insights["top_skills"]],
            integer,
        ),
        "top_unanswered": ranking(
            "Procura sem resposta",
            [(t["name"], t["searches"]) for t in insights["top_unanswered"]],
            integer,
            series=2,
        ),
    }


def _formatter(name: str) -> Callable[[float], str]:
    if name.endswith("_s"):
        return duration
    return {"after_hours_share": percent, "cost_brl": money}.get(name, integer)


def _rows(insights: dict[str, Any]) -> list[dict[str, str]]:
    """One row per day, newest first, each value as the tables beside the charts show it
    ("—" where there was nothing to measure)."""
    columns = [(name, values, _formatter(name)) for name, values in insights["series"].items()]
    return [
        {
            "day": _long(day),
            **{name: "—" if v[i] is None else f(v[i]) for name, v, f in columns},
        }
        for i, day in reversed(list(enumerate(insights["days"])))
    ]


def _period_links(today: date) -> list[tuple[str, str]]:
    return [
        (f"?from={today - timedelta(days=n - 1)}&to={today}", f"últimos {n} dias") for n in PRESETS
    ]


async def painel(request: web.Request, visit: Visit) -> PageData:
    typed = {"from": request.query.get("from", ""), "to": request.query.get("to", "")}
    context: dict[str, Any] = {
        "typed": typed,
        "period_error": None,
        "next": None,
        "default_days": DEFAULT_DAYS,
    }
    try:
        insights = await read(request, visit, OPERATION)
    except ApiError as exc:
        if exc.status != 422:
            raise
        field = str(exc.extra.get("field", "from"))
        message = FIELD_MESSAGES.get(exc.code, exc.message)
        return "painel.html", {**context, "insights": None, "period_error": (field, message)}
    today = date.fromisoformat(insights["today"])
    satisfaction = await read(request, visit, "list_satisfaction_route")  # the same period
    return "painel.html", {
        **context,
        "insights": insights,
        "satisfaction": satisfaction,
        "typed": {"from": insights["from"], "to": insights["to"]},
        "charts": _charts(insights),
        "rows": _rows(insights),
        "summary": insights["summary"],
        "periods": _period_links(today),
        "fmt": {
            "integer": integer,
            "percent": percent,
            "money": money,
            "tokens": tokens,
            "duration": duration,
        },
        "causes": CAUSE_NAMES,
    }


API_ROUTE = next(r for r in ROUTES if r.operation_id == OPERATION)


async def painel_csv(request: web.Request, visit: Visit) -> web.StreamResponse:
    """The period's series, one line per day (the API's names as the header; UTC days for
    the token columns, as their names in the JSON say)."""
    insights = await run_route(API_ROUTE, request, visit.principal)
    names = list(insights["series"])
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(["day", *names])
    for i, day in enumerate(insights["days"]):
        values = [insights["series"][n][i] for n in names]
        writer.writerow([day, *("" if v is None else v for v in values)])
    filename = f"painel-{insights['from']}-{insights['to']}.csv"
    return web.Response(
        text=out.getvalue(),
        content_type="text/csv",
        charset="utf-8",
        headers={
            **SECURITY_HEADERS,
            "Content-Disposition": f'attachment; filename="{filename}"',
        },
    )
