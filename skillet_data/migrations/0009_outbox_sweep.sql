-- `skillet status` counts the replies that failed lately, by reason, without scanning every
-- sent row; the sweep of abandoned claims reads outbox_pending_idx.
create index outbox_failed_idx on outbox (created_at) where status = 'failed';
