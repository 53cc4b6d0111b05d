"""ProactiveEval's judges: scoring plans and dialogues, and the synthesis pipeline's roles.

One module (or, with much local code, one package) per role, named after it; the roles are
declared in :mod:`nodes.proactive.roles`. Scoring: ``target_planning_judge`` (Listing 11),
``guidance_judge`` (Listing 12), ``target_density`` (Listing 13), ``target_reached`` (todeval's
own early stop). Synthesis: ``synthesis_writer`` (Listings 2-9), ``target_prediction`` (the
difficulty panel), ``difficulty_judge`` (its matcher), ``final_check`` (Listing 10).
"""

from __future__ import annotations

from todeval.nodes.context import Context
from todeval.nodes.judges import check_spec


def check_synthesis_judges(context: Context) -> None:
    """Fail before any work when a synthesis role's spec is malformed or unknown.

    Raises:
        JudgeSpecError: Naming the spec and what is available.
    """
    # Imported here: the declarations import this package's modules (and register on import).
    from todeval.nodes.proactive.roles import (
        DIFFICULTY_JUDGE,
        FINAL_CHECK,
        SYNTHESIS_WRITER,
        TARGET_PREDICTION,
    )

    check_spec(SYNTHESIS_WRITER.name, context.spec("synthesis_writer"))
    check_spec(DIFFICULTY_JUDGE.name, context.spec("difficulty"))
    for spec in context.specs("target_prediction"):
        check_spec(TARGET_PREDICTION.name, spec)
    for spec in context.specs("final_check"):
        check_spec(FINAL_CHECK.name, spec)


def check_scoring_judges(context: Context) -> None:
    """Fail before any work when a scoring role's spec is malformed or unknown.

    Raises:
        JudgeSpecError: Naming the spec and what is available.
    """
    from todeval.nodes.proactive.roles import (
        GUIDANCE_JUDGE,
        TARGET_DENSITY,
        TARGET_PLANNING_JUDGE,
        TARGET_REACHED,
    )

    check_spec(TARGET_PLANNING_JUDGE.name, context.spec("target_planning"))
    check_spec(GUIDANCE_JUDGE.name, context.spec("guidance"))
    check_spec(TARGET_DENSITY.name, context.spec("target_density"))
    check_spec(TARGET_REACHED.name, context.spec("target_reached"))
