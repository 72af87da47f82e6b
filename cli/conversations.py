"""`skillet conversations list|show|takeover|release|reply`: a person in the conversation from
the shell. The same actions as the API (conversation.person_actions), audited with the actor
`cli`, which is also who holds a conversation the CLI takes over or replies in."""

from __future__ import annotations

import argparse
import uuid
from typing import TYPE_CHECKING, Any

from cli.args import org_command, uuid_arg
from conversation.mode import ConversationMode
from worker.settings import Settings

if TYPE_CHECKING:
    from conversation.person_queries import ConversationView

CLI_ACTOR = "cli"
DEFAULT_LIMIT = 50
MODES = tuple(ConversationMode)


def _line(view: ConversationView) -> str:
    holder = f" ({view.held_by})" if view.held_by else ""
    last = ""
    if view.last_body is not None:
        last = f"  {view.last_author}: {(view.last_body or '')[:60]!r}"
    opted = "  opted out (PARAR)" if view.opted_out_at is not None else ""
    return (
        f"{view.id}  {view.contact_id}  {view.mode}{holder}  {view.unanswered} unanswered"
        f"{opted}{last}"
    )


def _actor(args: argparse.Namespace) -> Any:
    from conversation.person_actions import Actor

    # An operator with the owner's database URL: --force takes it from anyone.
    return Actor(args.org, CLI_ACTOR, may_force=True)


async def _wake(
    settings: Settings, org: uuid.UUID, conversation_id: uuid.UUID, job_id: str
) -> None:
    """A job for the conversation's holder (a lost one: the sweep wakes it)."""
    from jobs.payloads import HANDLE_INBOUND_MESSAGE, ConversationPayload
    from jobs.queue import open_queue

    payload = ConversationPayload(organization_id=org, conversation_id=conversation_id)
    redis = await open_queue(settings.redis_url, settings.queue_name)
    try:
        await redis.enqueue_job(
            HANDLE_INBOUND_MESSAGE, payload.model_dump(mode="json"), _job_id=job_id
        )
    finally:
        await redis.aclose()


async def cmd_list(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from conversation.person_queries import list_conversation_views
    from core.db import connection

    async with connection(settings.owner_url) as conn:
        views = await list_conversation_views(
            conn, args.org, mode=args.mode, after=None, limit=args.limit
        )
    return {
        "conversations": [v.as_json() for v in views],
        "message": "\n".join(_line(v) for v in views) or "no conversations",
    }


async def cmd_show(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from conversation.person_actions import missing
    from conversation.person_queries import fetch_conversation_view
    from core.db import connection

    async with connection(settings.owner_url) as conn:
        view = await fetch_conversation_view(conn, args.org, args.id)
    if view is None:
        raise missing()
    return {**view.as_json(), "message": _line(view)}


async def cmd_takeover(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from conversation.person_actions import take_over
    from core.db import connection

    async with connection(settings.owner_url) as conn:
        change = await take_over(conn, _actor(args), args.id, force=args.force)
    return {**change.view.as_json(), "message": f"taken over: {_line(change.view)}"}


async def cmd_release(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from conversation.person_actions import release, wake_job_id
    from core.db import connection

    async with connection(settings.owner_url) as conn:
        change = await release(conn, _actor(args), args.id, answer_pending=args.answer_pending)
    if change.pending or change.asked:
        await _wake(settings, args.org, args.id, wake_job_id("release", args.id))
    message = f"back to the agent: {_line(change.view)}"
    if change.asked:
        message += " (the customer is asked how it went)"
    if change.pending:
        message += f" (it answers {change.pending} pending message(s))"
    return {**change.view.as_json(), "message": message}


async def cmd_reply(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from datetime import UTC, datetime

    from conversation.person_actions import person_message_json, reply, reply_text, wake_job_id
    from core.db import connection

    text = reply_text(args.text)
    async with connection(settings.owner_url) as conn:
        _, sent = await reply(conn, _actor(args), args.id, text, datetime.now(UTC))
    await _wake(settings, args.org, args.id, wake_job_id("person", sent.message_id))
    body = person_message_json(sent.message_id, text, sent.created_at, CLI_ACTOR)
    return {**body, "message": f"reply {sent.message_id} queued for delivery"}


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    """Add `conversations` to the `skillet` parser."""
    group = sub.add_parser(
        "conversations", help="conversations: who answers them, take over, reply"
    ).add_subparsers(dest="conversations_command", required=True)
    listing = org_command(group, common, "list", "an org's conversations, newest first")
    listing.add_argument("--mode", choices=MODES, help="only this mode (waiting: oldest first)")
    listing.add_argument("--limit", type=int, default=DEFAULT_LIMIT)
    listing.set_defaults(handler=cmd_list)
    show = org_command(group, common, "show", "one conversation")
    show.add_argument("id", type=uuid_arg)
    show.set_defaults(handler=cmd_show)
    take = org_command(group, common, "takeover", "a person holds it: the agent stops answering")
    take.add_argument("id", type=uuid_arg)
    take.add_argument("--force", action="store_true", help="take it from whoever holds it")
    take.set_defaults(handler=cmd_takeover)
    give = org_command(group, common, "release", "give it back to the agent")
    give.add_argument("id", type=uuid_arg)
    give.add_argument(
        "--answer-pending",
        action="store_true",
        help="the agent answers the customer messages no person answered (default: context only)",
    )
    give.set_defaults(handler=cmd_release)
    answer = org_command(group, common, "reply", "send the customer a person's reply")
    answer.add_argument("id", type=uuid_arg)
    answer.add_argument("--text", required=True)
    answer.set_defaults(handler=cmd_reply)
