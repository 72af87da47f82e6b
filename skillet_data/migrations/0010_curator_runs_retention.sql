-- Old curator reports are pruned by age (SKILLET_CURATOR_RUNS_KEEP_DAYS), each org's newest
-- scheduled run always kept: the schedule and `skillet status` read it.
create index curator_runs_created_idx on curator_runs (created_at);
