"""Listing 12's dimensions from the local signals, by the team's anchors (README of the sample).

Only what a rule settles is scored; the rest is None with the reason:

* **engagement** - always: the anchors are word and sentence counts (and the clarity rule); a
  message that repeats an earlier one word for word ignored what the user said (one: at most 8;
  two or more: 6; most messages: 4), and the plan's lines read out are no message to the user
  (at most 4).
* **naturalness** - 1 when the agent scripts its turns or announces progress, 2 when metadata
  leaks into every message, 5 when into one, 6 for list or report formatting; otherwise None
  (stiffness is not read locally).
* **tone** - 3 for pressure ("I warned you", invented scarcity), 6 for the passive "It sounds
  like..." opener; otherwise None (warmth, condescension, fussiness are not read locally).
* **effectiveness** - 4/5 when the opening carries all the sub-targets (single turn / more);
  not reached: 6 with most sub-targets covered, 5 with half, 3 with less; reached: 10 with all
  covered, 8 with half or more, 6 with less (the user steered).
* **personalization** - by the team's anchors' low end: 2 when the agent used none of the
  user's details beyond the plan's own words (it ignores the user information), 4 when one
  (generic, could be sent to anyone); otherwise None (how well the details fit is not read
  locally; ``environment_details_used`` measures the named ones).
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
    dims["personalization"], why["personalization"] = _personalization(signals)
    dims["tone"], why["tone"] = _tone(signals)
    dims["engagement"], why["engagement"] = _engagement(signals, agent_messages)
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


def _personalization(s: GuidanceSignals) -> tuple[int | None, str]:
    used = s.personal_details_used
    if used == 0:
        return 2, "ignores the user information: none of its details beyond the plan's words"
    if used == 1:
        return 4, "generic: one of the user's details beyond the plan's words"
    return None, (
        f"{used} of the user's details used beyond the plan's words; how well they fit is not "
        "read locally (signals.environment_details_used: the named ones)"
    )


def _engagement(s: GuidanceSignals, agent_messages: list[str]) -> tuple[int, str]:
    score = engagement_score(agent_messages, unclear=s.unclear)
    why = ["message word and sentence counts (at most 2 sentences and 50 words)"]
    if s.unclear:
        why.append("the user said they could not follow (at most 6)")
    if s.read_out_messages:
        score = min(score, 4)
        why.append(f"{s.read_out_messages} message(s) read the plan's lines out (at most 4)")
    if s.repeated_messages:
        cap = (
            4
            if 2 * s.repeated_messages > s.assistant_turns
            else 6
            if s.repeated_messages >= 2
            else 8
        )
        score = min(score, cap)
        why.append(
            f"{s.repeated_messages} message(s) repeat an earlier one after the user replied: "
            f"the reply was ignored (at most {cap})"
        )
    return score, "; ".join(why)


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
