-- Which body a distillation proposal carries (issue 27): the model's rewrite of the
-- umbrella's body, or the deterministic one and why (consolidation.rewrite).
--   rewrite  'model' | 'kept_deterministic' | 'rejected: <reason>'
-- Older workers insert without it: their proposals are deterministic, which is what they
-- carry.
alter table skill_proposals
    add column rewrite text not null default 'kept_deterministic'
        check (length(rewrite) <= 200);
