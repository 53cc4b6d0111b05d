"""ProactiveEval's judge roles: scoring plans and dialogues, and the synthesis pipeline's roles.

Scoring: ``target_planning_judge`` (Listing 11), ``guidance_judge`` (Listing 12),
``target_density`` (Listing 13), ``target_reached`` (todeval's own early stop). Synthesis:
``synthesis_writer`` (Listings 2-9), ``target_prediction`` (the difficulty panel),
``difficulty_judge`` (its matcher), ``final_check`` (Listing 10).
"""

from __future__ import annotations

from todeval.nodes.context import Context
from todeval.nodes.judges import check_spec


def check_synthesis_judges(context: Context) -> None:
    """Fail before any work when a synthesis role's spec is malformed or unknown.

    Raises:
        JudgeSpecError: Naming the spec and what is available.
    """
    # Imported here: each package registers its local judges on import.
    from todeval.nodes.proactive.judges import (
        difficulty_judge,
        final_check,
        synthesis_writer,
        target_prediction,
    )

    check_spec(synthesis_writer.ROLE, context.synthesis_writer)
    check_spec(difficulty_judge.ROLE, context.difficulty_judge)
    for spec in context.difficulty_panel:
        check_spec(target_prediction.ROLE, spec)
    for spec in context.final_check_panel:
        check_spec(final_check.ROLE, spec)


def check_scoring_judges(context: Context) -> None:
    """Fail before any work when a scoring role's spec is malformed or unknown.

    Raises:
        JudgeSpecError: Naming the spec and what is available.
    """
    from todeval.nodes.proactive.judges import (
        guidance_judge,
        target_density,
        target_planning_judge,
        target_reached,
    )

    check_spec(target_planning_judge.ROLE, context.target_planning_judge)
    check_spec(guidance_judge.ROLE, context.guidance_judge)
    check_spec(target_density.ROLE, context.target_density_judge)
    check_spec(target_reached.ROLE, context.target_reached_judge)
