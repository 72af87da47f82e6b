"""Refusals of a rehearsal, with stable codes (pt-BR messages).

SkilletError (core.errors)
└── RehearsalError
    ├── RehearsalBusy        rehearsal_busy: another rehearsal of the org is running (429)
    └── (by code)            rehearsal_days_invalid (422), draft_not_found,
                             proposal_not_found, skill_not_installed (404)
A typed skill the package rules refuse raises skills.package.SkillPackageError (422).
"""

from __future__ import annotations

from core.errors import SkilletError

MIN_DAYS = 1
MAX_DAYS = 90


class RehearsalError(SkilletError):
    code = "rehearsal_error"


class RehearsalBusy(RehearsalError):
    code = "rehearsal_busy"

    def __init__(self) -> None:
        super().__init__(
            "Já há um ensaio de skills rodando nesta organização; tente de novo em alguns segundos."
        )


def check_days(days: object) -> int:
    """`days` as a rehearsal reads it, or `rehearsal_days_invalid`."""
    if isinstance(days, bool) or not isinstance(days, int) or not MIN_DAYS <= days <= MAX_DAYS:
        raise RehearsalError(
            f"`days` deve ser um número inteiro de {MIN_DAYS} a {MAX_DAYS}.",
            code="rehearsal_days_invalid",
        )
    return days


def draft_not_found(name: str) -> RehearsalError:
    return RehearsalError(f"Não há rascunho pendente da skill {name}.", code="draft_not_found")


def proposal_not_found(proposal_id: object) -> RehearsalError:
    return RehearsalError(
        f"Não há proposta pendente {proposal_id} nesta organização.", code="proposal_not_found"
    )


def skill_not_installed(name: str) -> RehearsalError:
    return RehearsalError(
        f"A skill {name!r} não está instalada nesta organização.", code="skill_not_installed"
    )
