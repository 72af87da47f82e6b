"""The curator: long-idle agent-authored skills active -> stale -> archived, never deleted.

`rules` is the pure reference (next_state, a pass's report); `queries` runs the same rules
set-wise in Postgres (skillet_curator_pass); `run` is one pass for the CLI and the cron,
`schedule` and `tick` decide when a pass is due. The contract's names are re-exported here.
"""

from skills.curator.rules import (
    CuratorPolicy,
    CuratorReport,
    SkillRecord,
    SkipReason,
    Transition,
    next_state,
    plan_report,
    report_from_json,
)

__all__ = [
    "CuratorPolicy",
    "CuratorReport",
    "SkillRecord",
    "SkipReason",
    "Transition",
    "next_state",
    "plan_report",
    "report_from_json",
]
