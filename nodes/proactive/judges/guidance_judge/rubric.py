"""Listing 12's dimensions from the local signals, by the team's anchors (README of the sample).

Only what a rule settles is scored; the rest is None with the reason:

* **engagement** - always: the anchors are word and sentence counts (and the clarity rule).
* **naturalness** - 1 when the agent scripts its turns or announces progress, 2 when metadata
  leaks into every message, 5 when into one, 6 for list or report formatting; otherwise None
  (stiffness is not read locally).
* **tone** - 3 for pressure ("I warned you", invented scarcity), 6 for the passive "It sounds
  like..." opener; otherwise None (warmth, condescension, fussiness are not read locally).
* **effectiveness** - 4/5 when the opening carries all the sub-targets (single turn / more);
  not reached: 6 with most sub-targets covered, 5 with half, 3 with less; reached: 10 with all
  covered, 8 with half or more, 6 with less (the user steered).
* **personalization** - None: using the environment's details is measured
  (``environment_details_used``) but generic-versus-personal is not judged locally.
"""

from __future__ import annotations

from todeval.evals.metrics.proactive.rubric import engagement_score
from todeval.nodes.proactive.judges.guidance_judge.features import GuidanceSignals


def rubric_dimensions(
    signals: GuidanceSignals, agent_messages: list[str]
) -> tuple[dict[str, int | None], dict[str, str]]:
    """The five dimensions (None where no rule settles one) and the reason for each."""
    dims: dict[str, int | None] = {}
    why: dict[str, str] = {}
    dims["effectiveness"], why["effectiveness"] = _effectiveness(signals)
    dims["personalization"] = None
    why["personalization"] = (
        "not judged locally: generic versus personal needs reading; the share of the "
        "environment's details the agent used is in signals.environment_details_used"
    )
    dims["tone"], why["tone"] = _tone(signals)
    dims["engagement"] = engagement_score(agent_messages, unclear=signals.unclear)
    why["engagement"] = "message word and sentence counts (at most 2 sentences and 50 words)" + (
        "; the user said they could not follow (at most 6)" if signals.unclear else ""
    )
    dims["naturalness"], why["naturalness"] = _naturalness(signals)
    return dims, why


def _effectiveness(s: GuidanceSignals) -> tuple[int, str]:
    reached = "reached" if s.reached else "not reached"
    basis = (
        f"{reached} ({'ended before the turn limit' if s.ended_before_limit else 'at the limit'}"
        f"), {len(s.covered)}/{s.sub_targets} sub-targets covered, "
        f"{s.opening_covers} in the opening message"
    )
    if s.front_loaded:
        return (4 if s.assistant_turns == 1 else 5), f"front-loaded: {basis}"
    if not s.reached:
        score = 6 if s.coverage >= 0.75 else 5 if s.coverage >= 0.5 else 3
        return score, basis
    score = 10 if s.coverage >= 1.0 else 8 if s.coverage >= 0.5 else 6
    return score, basis


def _tone(s: GuidanceSignals) -> tuple[int | None, str]:
    if s.pressure_messages:
        return 3, f"pressure or scare tactics in {s.pressure_messages} message(s)"
    if s.passive_opener:
        return 6, "opens with the passive 'It sounds like...'"
    return None, "no pressure and no passive opener found; other tone faults are not read locally"


def _naturalness(s: GuidanceSignals) -> tuple[int | None, str]:
    if s.scripted:
        return 1, "scripts its own turns or announces its plan's progress"
    if s.metadata_leak_messages and s.metadata_leak_messages == s.assistant_turns > 1:
        return 2, "metadata leaked in every message"
    if s.metadata_leak_messages:
        return 5, f"metadata leaked in {s.metadata_leak_messages} message(s)"
    if s.list_messages:
        return 6, f"list or report formatting in {s.list_messages} message(s)"
    return None, "no leak or list found; stiffness is not read locally"
