"""jobs.queue.enqueue_once writes what arq's own enqueue_job writes, in one round trip."""

from __future__ import annotations

import uuid

from arq.constants import job_key_prefix, result_key_prefix
from arq.jobs import deserialize_job

from jobs import serialization
from jobs.queue import enqueue_once, open_queue
from worker.settings import Settings


async def test_the_job_is_arqs_own_and_deduplicated_like_it(settings: Settings) -> None:
    redis = await open_queue(settings.redis_url, settings.queue_name)
    ours, theirs = f"once-{uuid.uuid4()}", f"arq-{uuid.uuid4()}"
    payload = {"organization_id": str(uuid.uuid4()), "conversation_id": str(uuid.uuid4())}
    try:
        job = await enqueue_once(
            redis, "handle_inbound_message", payload, job_id=ours, defer_ms=1000
        )
        assert job is not None and job.job_id == ours
        assert await redis.enqueue_job(
            "handle_inbound_message", payload, _job_id=theirs, _defer_by=1.0
        )
        written = [await redis.get(job_key_prefix + i) for i in (ours, theirs)]
        mine, arqs = (deserialize_job(w, deserializer=serialization.loads) for w in written)
        assert (mine.function, mine.args, mine.kwargs, mine.job_try) == (
            arqs.function,
            arqs.args,
            arqs.kwargs,
            arqs.job_try,
        )
        ttls = [await redis.pttl(job_key_prefix + i) for i in (ours, theirs)]
        assert abs(ttls[0] - ttls[1]) < 1000
        scores = [await redis.zscore(settings.queue_name, i) for i in (ours, theirs)]
        assert scores[0] is not None and scores[1] is not None
        assert abs(scores[0] - scores[1]) < 1000
        # The same id again, queued or finished (a result kept): refused like arq refuses it.
        assert await enqueue_once(redis, "handle_inbound_message", payload, job_id=ours) is None
        await redis.set(result_key_prefix + "done-" + ours, b"x")
        done = await enqueue_once(redis, "f", payload, job_id="done-" + ours)
        assert done is None
    finally:
        await redis.delete(
            settings.queue_name,
            *(job_key_prefix + i for i in (ours, theirs)),
            result_key_prefix + "done-" + ours,
        )
        await redis.aclose()
