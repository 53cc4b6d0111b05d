"""ProactiveEval data contracts (paper 003): environments, target plans, guidance dialogues.

An environment is the release's item ``{environment: {user_information, trigger_factor},
target, sub_target[], topic}`` with the domain and tier its file gives it (the release layout is
``dataset/<domain>/{eval,fair,hard}.json``). A target plan is a target and 2-4 sub-targets (what
an agent proposes in target planning, or the reference). A guidance dialogue is a conversation
the agent opens and leads, with the team's labels when it comes from the labelled sample.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, Field

#: The paper's six domains, in todeval's spelling (the bundled sample's folder names).
DOMAINS: tuple[str, ...] = (
    "recommendation",
    "persuasion",
    "ambiguous_instruction",
    "long_term_follow_up",
    "system_operation",
    "glasses_assistant",
)

#: Other spellings of the domains: Listing 1's dictionary keys and the paper's abbreviations.
DOMAIN_ALIASES: dict[str, str] = {
    "ambigious_instruction": "ambiguous_instruction",  # Listing 1's key
    "long-term_follow_up": "long_term_follow_up",  # Listing 1's key
    "rec": "recommendation",
    "per": "persuasion",
    "ai": "ambiguous_instruction",
    "lf": "long_term_follow_up",
    "sys": "system_operation",
    "gas": "glasses_assistant",
    "glasses": "glasses_assistant",
    "smart_glasses": "glasses_assistant",
}

#: The release's tiers (file stems): plain, Fair (one model finds the target), Hard (none does).
TIERS: tuple[str, ...] = ("eval", "fair", "hard")

Agreeableness = Literal["low", "medium", "high"]
"""The simulated user's agreeableness: resistance to being guided (paper 003, §Dialogue
Guidance), not how much detail the user gives (the repair loop's tiers)."""

AGREEABLENESS: tuple[Agreeableness, ...] = ("low", "medium", "high")

#: Guidance rubric dimensions (Listing 12), in the Listing's order.
GUIDANCE_DIMENSIONS: tuple[str, ...] = (
    "effectiveness",
    "personalization",
    "tone",
    "engagement",
    "naturalness",
)


def canonical_domain(name: str) -> str:
    """A domain name in todeval's spelling (``ambigious_instruction`` -> ``ambiguous_instruction``).

    Listing 1's keys, the paper's abbreviations and ``Long Term Follow-Up``-style spellings all
    map; a domain todeval does not know keeps its own name (lower-cased, ``_`` for spaces).
    """
    raw = name.strip().lower()
    if raw in DOMAIN_ALIASES:
        return DOMAIN_ALIASES[raw]
    flat = re.sub(r"[\s\-]+", "_", raw)
    return DOMAIN_ALIASES.get(flat, flat)


class Environment(BaseModel):
    """What the agent sees before it speaks (paper 003, Eq. 1: U and F)."""

    user_information: str = Field(description="Background on the user (U).")
    trigger_factor: str = Field(description="What prompts the assistant to speak first (F).")


class TargetPlan(BaseModel):
    """A target and its sub-targets: a reference, or what an agent planned."""

    target: str = Field(description="The proactive action, in under 10 words (Listing 4).")
    sub_target: list[str] = Field(description="2-4 steps of the conversation, in order.")


class ProactiveItem(BaseModel):
    """One evaluation environment with its reference target (one release item).

    ``eval_id`` is the item's ``id`` when it has one, else ``<domain>/<tier>/<n>``.
    """

    eval_id: str = Field(
        validation_alias=AliasChoices("eval_id", "id"), description="The item's id."
    )
    domain: str = Field(description="The domain, in todeval's spelling (see DOMAINS).")
    tier: str = Field(description="The file it came from: eval, fair, hard (or another stem).")
    environment: Environment = Field(description="User information and trigger factor.")
    target: str = Field(description="The reference target.")
    sub_target: list[str] = Field(description="The reference sub-targets.")
    topic: str | None = Field(default=None, description="The topic-tree leaf, when given.")

    @property
    def reference(self) -> TargetPlan:
        """The reference target and sub-targets as a plan."""
        return TargetPlan(target=self.target, sub_target=list(self.sub_target))

    def release_item(self) -> dict[str, Any]:
        """The item as the release stores it (plus ``id``)."""
        item: dict[str, Any] = {
            "id": self.eval_id,
            "environment": self.environment.model_dump(),
            "target": self.target,
            "sub_target": list(self.sub_target),
        }
        if self.topic is not None:
            item["topic"] = self.topic
        return item


class ChatMessage(BaseModel):
    """One message of a guidance dialogue."""

    role: Literal["assistant", "user"] = Field(description="Who wrote it.")
    content: str = Field(description="The text.")


class GuidanceScores(BaseModel):
    """The team's 1-10 scores of one guidance dialogue (Listing 12's dimensions and overall)."""

    overall: int = Field(ge=1, le=10, description="The Listing 12 score.")
    effectiveness: int = Field(ge=1, le=10, description="Step-by-step progress to the target.")
    personalization: int = Field(ge=1, le=10, description="Use of the user's information.")
    tone: int = Field(ge=1, le=10, description="Active, appropriate tone.")
    engagement: int = Field(ge=1, le=10, description="Short, clear messages.")
    naturalness: int = Field(ge=1, le=10, description="Chat format, no metadata leaks.")


class GuidanceDialogue(BaseModel):
    """A dialogue-guidance conversation, with the team's labels when it has them."""

    eval_id: str = Field(
        validation_alias=AliasChoices("eval_id", "id"), description="The dialogue's id."
    )
    environment_id: str = Field(description="The environment it was run in.")
    domain: str | None = Field(default=None, description="The environment's domain.")
    tier: str | None = Field(default=None, description="The environment's tier.")
    agreeableness: Agreeableness | None = Field(default=None, description="The user's tier.")
    messages: list[ChatMessage] = Field(description="The conversation; the assistant opens.")
    target_reached: bool | None = Field(default=None, description="Whether the user accepted.")
    scores: GuidanceScores | None = Field(default=None, description="The team's scores.")
    sub_targets_covered: list[int] | None = Field(
        default=None, description="0-based indices of the sub-targets the assistant covered."
    )
    labelled_by: str | None = Field(default=None, description="Who labelled it.")
    notes: str | None = Field(default=None, description="Why the labels are what they are.")


class LabelledPlan(BaseModel):
    """A candidate target plan scored against its environment's reference (Listing 11)."""

    eval_id: str = Field(
        validation_alias=AliasChoices("eval_id", "id"), description="The plan's id."
    )
    environment_id: str = Field(description="The environment whose reference it is scored on.")
    domain: str | None = Field(default=None, description="The environment's domain.")
    target: str = Field(description="The candidate target.")
    sub_target: list[str] = Field(description="The candidate sub-targets.")
    score: int | None = Field(default=None, ge=1, le=10, description="The team's 1-10 score.")
    labelled_by: str | None = Field(default=None, description="Who labelled it.")
    notes: str | None = Field(default=None, description="Why the score is what it is.")

    @property
    def plan(self) -> TargetPlan:
        """The candidate as a plan."""
        return TargetPlan(target=self.target, sub_target=list(self.sub_target))


class SynthesisSeed(BaseModel):
    """One environment for the synthesis pipeline to write: its id, domain and seed."""

    eval_id: str = Field(description="The id the synthesised item gets.")
    domain: str = Field(description="The domain to write it in.")
    seed: int = Field(description="Seeds the topic walk, persona and sampling.")


class ProactiveRun(BaseModel):
    """One run of a task on one environment: the record the task corpora run.

    ``eval_id`` is ``<environment id>/run<r>`` (planning) or ``<environment id>/<tier of
    agreeableness>/run<r>`` (guidance): one checkpointed thread each.
    """

    eval_id: str = Field(description="The run's id (see above).")
    environment_id: str = Field(description="The environment's id.")
    domain: str = Field(description="The environment's domain.")
    tier: str = Field(description="The environment's difficulty tier (eval, fair, hard).")
    environment: Environment = Field(description="User information and trigger factor.")
    reference: TargetPlan = Field(description="The reference target and sub-targets.")
    agent: str = Field(description="The agent under test (an agent spec).")
    run: int = Field(ge=0, description="The run's number (0-based), for mean and std.")
    agreeableness: Agreeableness | None = Field(default=None, description="Guidance only.")
    seed: int = Field(default=0, description="Seeds the simulated user (guidance).")
