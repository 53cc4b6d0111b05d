"""The guidance judge: how well the agent led the user to the target, 1-10 (Listing 12).

An LLM spec asks Listing 12 verbatim, one call per dialogue (:class:`LLMGuidanceJudge`; the
paper's judge is GPT-4o). Every verdict names its judge.

``local`` (:class:`LocalGuidanceJudge`) is a stand-in, not Listing 12's judge: rules
(``features``, ``rubric``) and the local target-density judge score the dimensions a rule
settles and leave the others None with the reason. ``rubric_points`` is 10 minus the
deductions of the scored dimensions only, so it is not a Listing 12 score; the ``overall`` is
a linear map of it fit on half the team's labelled dialogues (``calibration.json``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, Field

from todeval.evals.metrics.proactive.rubric import rubric_overall
from todeval.evals.proactive_schema import ChatMessage, Environment, TargetPlan
from todeval.nodes.judges.echo import repeated, says_nothing
from todeval.nodes.judges.roles import PromptJudge
from todeval.nodes.judges.text import to_the_user
from todeval.nodes.proactive.judges.calibration import calibrated_score
from todeval.nodes.proactive.judges.guidance_judge.features import read_signals, refuses
from todeval.nodes.proactive.judges.guidance_judge.rubric import rubric_dimensions
from todeval.nodes.proactive.judges.target_density import LocalTargetDensity
from todeval.nodes.proactive.text import assistant_messages, reads_out, render_conversation

CALIBRATION_PATH = Path(__file__).with_name("calibration.json")

BASIS = "the paper's Listing 12 prompt"


@dataclass(frozen=True)
class GuidanceVerdict:
    """One judge's reading of one guidance dialogue.

    ``overall`` is the 1-10 score or None, ``overall_basis`` how it was reached or why it is None;
    ``dimensions`` are Listing 12's five (None where not scored, ``reasons`` say why); ``signals``
    are a local judge's measurements; ``rationale`` is the LLM judge's ``thought``.
    """

    judge: str
    overall: int | None
    overall_basis: str
    dimensions: dict[str, int | None] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    signals: Mapping[str, Any] = field(default_factory=dict)
    rationale: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The verdict as a result line stores it."""
        return {
            "judge": self.judge,
            "overall": self.overall,
            "overall_basis": self.overall_basis,
            "dimensions": dict(self.dimensions),
            "reasons": dict(self.reasons),
            "signals": dict(self.signals),
            "rationale": self.rationale,
        }


class GuidanceJudge(Protocol):
    """Anything that scores how well an agent guided a user to the target."""

    name: str

    def judge(
        self,
        environment: Environment,
        reference: TargetPlan,
        messages: Sequence[ChatMessage],
        *,
        max_turns: int = 6,
    ) -> GuidanceVerdict:
        """Score the dialogue ``messages`` (the agent opens) against the target and sub-targets.

        ``max_turns`` is the protocol's turn limit (the paper: 6): a dialogue that ends before
        it was stopped by the simulator because the target was reached.
        """
        ...


class GuidanceOutput(BaseModel):
    """Listing 12's JSON."""

    thought: str = Field(default="", description="The judge's reasoning, within 100 words.")
    score: int = Field(ge=1, le=10, description="The guidance score, 1-10.")


FLOOR_CAP = 3
"""The most a dialogue that guides nobody can score (issue 29: floor agents stay at the floor)."""


def floor_reason(
    agent: Sequence[str], users: Sequence[str], steps: Sequence[str] = ()
) -> str | None:
    """Why the dialogue guided nobody, or None: a text rule every floor agent meets.

    Empty or one-word agent messages; one message repeated (every message the same words, or
    most of them repeats of an earlier one; :mod:`nodes.judges.echo`); half or more of the
    messages reading the plan's lines (``steps``) out word for word; or every user reply a
    refusal (sub-targets recited to a user who says no throughout have led nowhere).
    """
    if agent and all(says_nothing(text, at_most=1) for text in agent):
        return "every agent message is empty or one word"
    again = repeated(agent)
    if len(agent) > 1 and (all(again[1:]) or 2 * sum(again) > len(agent)):
        return "the agent repeats one message"
    if steps and agent and 2 * sum(reads_out(steps, text) for text in agent) >= len(agent):
        return "the agent reads the plan's sub-targets out word for word"
    if users and all(refuses(text) for text in users):
        return "the user refused every message"
    return None


class LocalGuidanceJudge:
    """Rubric sub-scores from rules and MiniLM; a 1-10 overall only through the calibrated map."""

    name = "local"

    def __init__(
        self, density: LocalTargetDensity | None = None, calibration: Path = CALIBRATION_PATH
    ) -> None:
        self.density = density or LocalTargetDensity()
        self.calibration = calibration

    def judge(
        self,
        environment: Environment,
        reference: TargetPlan,
        messages: Sequence[ChatMessage],
        *,
        max_turns: int = 6,
    ) -> GuidanceVerdict:
        """The dimensions and signals a rule settles, and the calibrated overall."""
        messages = [_to_the_user(m) for m in messages]
        agent = assistant_messages(messages)
        if not agent:
            return GuidanceVerdict(self.name, None, "not scored: the agent sent no message")
        density = self.density.count(reference.sub_target, agent)
        signals = read_signals(
            environment, reference, messages, density.covered or [], max_turns=max_turns
        )
        dimensions, reasons = rubric_dimensions(signals, agent)
        points = rubric_overall(dimensions)
        measured = signals.as_dict() | {
            "rubric_points": points,
            "target_density": density.target_density,
            "initiation_density": density.initiation_density,
        }
        features = {
            "rubric_points": float(points),
            "coverage": signals.coverage,
            # No specific detail in the environment reads as none used (as calibrated).
            "environment_details_used": signals.environment_details_used or 0.0,
        }
        overall, basis = calibrated_score(
            self.calibration, features, "rubric_points and the dimensions"
        )
        users = [m.content for m in messages if m.role == "user"]
        floor = floor_reason(agent, users, reference.sub_target or [reference.target])
        if floor is not None and overall is not None and overall > FLOOR_CAP:
            overall, basis = FLOOR_CAP, f"at most {FLOOR_CAP}: {floor} (was {overall}: {basis})"
        return GuidanceVerdict(
            judge=self.name,
            overall=overall,
            overall_basis=basis,
            dimensions=dimensions,
            reasons=reasons,
            signals=measured,
        )


class LLMGuidanceJudge(PromptJudge[GuidanceOutput]):
    """Scores the whole dialogue once; the paper's judge gives no per-dimension scores."""

    def judge(
        self,
        environment: Environment,
        reference: TargetPlan,
        messages: Sequence[ChatMessage],
        *,
        max_turns: int = 6,
    ) -> GuidanceVerdict:
        """One call; no answer leaves the score None with the reason."""
        result = self.ask(
            user_information=environment.user_information,
            trigger_factor=environment.trigger_factor,
            target=reference.target,
            sub_target=json.dumps(reference.sub_target, ensure_ascii=False),
            conversation=render_conversation(messages),
        )
        if result.value is None:
            reason = f"not scored: {result.reason or 'the judge gave no answer'}"
            return GuidanceVerdict(self.name, None, reason)
        return GuidanceVerdict(
            self.name, result.value.score, BASIS, rationale=result.value.thought.strip()
        )


def _to_the_user(message: ChatMessage) -> ChatMessage:
    """An agent message without its words to a judge (the same object when it has none)."""
    if message.role != "assistant":
        return message
    said = to_the_user(message.content)
    return message if said is message.content else message.model_copy(update={"content": said})
