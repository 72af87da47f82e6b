-- What each function is for, stored with the function (COMMENT ON FUNCTION) instead of in SQL
-- comments spread over the migrations that defined, redefined and re-commented it. The text
-- follows the function through CREATE OR REPLACE; skillet_data/functions.sql shows each one
-- beside its current definition (tools/dump_functions.py writes that file from the catalog).

-- Tenancy
comment on function skillet_current_org() is $$The org the current statement acts for
(`skillet.organization_id`, bound by skillet_bind_org or core.tenancy), or null. Every
tenant_isolation policy compares organization_id with it.$$;

comment on function skillet_bind_org(uuid) is $$Bind an org for the rest of the transaction
(set_config(..., true)): the turn's functions call it first, so row-level security applies to
everything they do and nothing is left on the pooled connection for its next user.$$;

comment on function skillet_is_system() is $$Whether the current role is a member of
skillet_system (cross-org work). Kept for anything that still calls it: the system_access
policies name the role directly.$$;

-- The API's and the console's way in
comment on function skillet_api_key_lookup(text, bytea) is $$The one way in before an org is
known: a live key's org, role and id for (prefix, sha256), or no row. SECURITY DEFINER, owned
by the schema owner (row-level security does not apply to it), search_path pinned so nobody's
objects can stand in for ours. Stamps last_used_at at most once a minute per key, so a busy key
does not write on every request.$$;

comment on function skillet_console_session_lookup(bytea) is $$The one way in for a console
session: the org, role, key id and key prefix of a live session (not expired) of a live key
(not revoked), or no row. SECURITY DEFINER with search_path pinned, like
skillet_api_key_lookup.$$;

-- Inbound (the webhook)
comment on function skillet_channel_by_address(text, text) is $$The channel a webhook event's
receiving number (kind, address) belongs to, or no row.$$;

comment on function skillet_waha_channel_key(text) is $$One WAHA session's org and key (null:
no key of its own, use the global fallback); no row when no WAHA channel has that session.
SECURITY DEFINER: it reads past channel_waha_keys' policy, and only ever returns the row of the
session it is given.$$;

-- The turn: take, commit, continue
comment on function skillet_take_conversation(uuid, uuid, uuid, double precision, integer,
    integer) is $$Step one of a turn: take the conversation's lease (free or expired) under a
fresh token for p_ttl_s seconds and read its first burst (skillet_read_burst). No row: someone
else holds it. `undelivered`: a committed reply still waits to be handed to its channel (a
crash between commit and send): the holder delivers it before reading. Binds its org itself.$$;

comment on function skillet_read_burst(uuid, uuid, integer, integer) is $$The next burst of a
conversation (org bound by the caller), oldest first: each open message with the answering
agent of the last one, the org's catalog revision and up to p_history_limit messages of
history before it. A burst of messages that expect no reply is kept as context here (context_at)
and comes back empty (the holder then lets go, or reads again).$$;

comment on function skillet_commit_turn(uuid, uuid, text, uuid[], timestamp with time zone,
    text, text[], text[], text[], text[], timestamp with time zone, uuid, jsonb, boolean) is
$$Step two of a turn: the fenced reply commit. Serialized on the conversation row; refused
with outcome 'lease_lost' (p_lease is not the live lease), 'overtaken' (an older message that
expects a reply is still open: read again) or 'answered' (part of the burst was answered
first); else 'replied': the reply, its outbox row, the 'answered' marks, the turn's counts
(skillet_bump_usage, skillet_bump_activation_daily, skillet_bump_token_usage) and, with
p_claim, the delivery claim of its outbox row (skillet_claim_outbox), so the sender needs no
statement before the send. The claim comes before the increments: those rows are shared by
every turn of an org, so they are locked last, for the shortest time. A crash between this
commit and the send leaves a claimed row, which skillet_fail_abandoned_claims fails as
`delivery_unknown`; a row without a route is not claimed, and the next holder delivers it.$$;

comment on function skillet_commit_reply(uuid, uuid, text, uuid[], timestamp with time zone,
    text, text[], text[], text[], text[], timestamp with time zone, uuid, jsonb) is $$The
commit of workers of the previous release during a rolling deploy (and its six-argument form,
by the defaults): skillet_commit_turn without the claim (they claim apart), same outcomes.$$;

comment on function skillet_continue_conversation(uuid, uuid, uuid, uuid, text[], integer,
    integer) is $$Step three of a turn, after the send (`p_sent`: the outbox row, with the
provider's message ids; null: nothing was sent): mark it sent and store its receipts, then let
the conversation go if nothing waits (skillet_release_lease), else read the next burst
(skillet_read_burst), all in one statement. `held` false: the lease is no longer this
holder's (stop). Binds its org itself.$$;

comment on function skillet_release_lease(uuid, uuid) is $$Release the lease only when nothing
waits: a message committed before this statement is seen (and the holder keeps going); one
committed after it finds the lease free. True when released, null (not false) when the lease
stays.$$;

comment on function skillet_conversations_waiting(double precision, integer) is $$The
conversation sweep (jobs.conversation_sweep): conversations with a message that expects a
reply, unanswered for more than p_after_s seconds, and no live lease; ids only (the woken job
reads them under its org). SECURITY DEFINER, for skillet_worker.$$;

-- What a turn counts
comment on function skillet_bump_usage(uuid[], text[], bigint[], bigint[], bigint[],
    timestamp with time zone) is $$The one home of the skill_usage increment (skills.usage_queries
calls it for patches and pins and the activation writer's batches; skillet_commit_turn for
uses and views). Increments happen inside the row update, so concurrent writers never lose a
count; `greatest` ignores nulls, so a stamp only moves forward. created_by of a new row comes
from the version the org has installed under that name. Rows are taken in the given order
(callers sort), so concurrent batches lock alike.$$;

comment on function skillet_bump_activation_daily(uuid, text[], text[],
    timestamp with time zone) is $$One turn's matches counted into skill_activation_daily for
its UTC day, by trigger (p_triggers: 'hard' | 'intent' | 'probe' | 'capped').$$;

comment on function skillet_bump_token_usage(uuid, jsonb, timestamp with time zone) is $$One
turn's model usage ({agent_id, provider, model, calls, input_tokens, output_tokens,
cache_read_tokens, cache_write_tokens}; a null count: the provider did not report it) added to
token_usage_daily for its UTC day, in one of 32 slots per key (by backend pid) so concurrent
turns of an org rarely wait on one row; readers sum the slots.$$;

comment on function skillet_record_activations(uuid[], text[], uuid[], text[], text[]) is
$$Activation telemetry (skill_activations): one batch spans orgs; rows are only ever added,
never read back here. SECURITY DEFINER, for skillet_worker.$$;

-- Outbox and delivery
comment on function skillet_claim_outbox(uuid) is $$What the reply's sender needs, claiming the
outbox row for one send when it has a route (the channel the answered message came in on, else
the org's only channel): only such a row leaves the building, so only it could be sent twice by
a crash mid-send. No row: it is sent, failed or claimed already.$$;

comment on function skillet_fail_abandoned_claims(double precision) is $$The outbox sweep: a
claim older than any send can last (p_after_s) was interrupted (its job cancelled, its worker
dead): the reply may or may not have arrived, so it is failed as `delivery_unknown`, never
re-sent. SECURITY DEFINER, for skillet_worker.$$;

comment on function skillet_receipt_rank(text) is $$Rank of a delivery receipt's status
(accepted < sent < delivered < read < failed): a receipt only ever moves to a higher one.$$;

-- The skill catalog
comment on function bump_skill_catalog_revision() is $$Trigger: bump the org's row in
skill_catalog_revisions on every change to what its agent loads (skill_pointers, and
skill_usage rows entering or leaving 'archived'), so each worker's in-memory catalog validates
itself with one primary-key read per turn. Platform rows (organization_id null) bump nothing.$$;

-- The curator
comment on function curator_next_state(text, timestamp with time zone,
    timestamp with time zone, timestamp with time zone) is $$skills.curator.next_state, for
Postgres to evaluate a whole pass set-wise (the Python function is the reference;
tests/integration/test_curator_sql.py holds them equal). Never active (null) is newer than
any cutoff; archive first, then stale, then reactivate; cutoffs inclusive. Simple enough for
the planner to inline.$$;

comment on function skillet_curator_schedule() is $$The curator's schedule: orgs with at least
one installed skill, their last scheduled run and their newest inbound message (both index
probes per org). SECURITY DEFINER, for skillet_worker.$$;

comment on function skillet_curator_pass(uuid[], timestamp with time zone,
    timestamp with time zone, timestamp with time zone, text, boolean, boolean) is $$One curator
pass over a chunk of orgs (skills/curator_run.py takes their locks first, in the same
transaction). Every installed skill gets an outcome: a skip reason from the gates (provenance
is the installed version's created_by, then the pin), else the state curator_next_state gives;
absent usage row: active, unpinned, never active. With p_write the transitions are written with
a compare-and-set against what was read (so `moved` falls short of `planned` when a turn or an
operator changed a row since: the caller rolls back and redoes the chunk), revisions are bumped
once per org (the row trigger, bump_skill_catalog_revision, stands aside) and the reports are
stored; without it nothing is written (a dry run). Reports: one row per requested org, lists
sorted by name in code-point order (as Python sorts str). SECURITY DEFINER, for
skillet_worker.$$;

comment on function skillet_prune_curator_runs(integer, integer) is $$Curator reports written
more than p_keep_days ago (the database's clock), oldest first, at most p_limit per call; never
an org's newest scheduled run (the schedule and `skillet status` read it). Replayed runs
(`--now`) go by age alone. Returns how many went. SECURITY DEFINER, for skillet_worker.$$;

-- Jobs
comment on function skillet_record_dead_letter(text, text, jsonb, text, text, integer, uuid) is
$$What a job could not do (dead_letters). `p_org` only from a payload that validated (that org
may then list and requeue the row); null leaves it to operators. SECURITY DEFINER, for
skillet_worker.$$;
