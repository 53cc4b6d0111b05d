"""The dialogue-generation role: an annotated trajectory made a dialogue (paper 000, §4.3, A.6).

Output, a *draft*: ``turns`` (``[{"speaker", "utterance"}]``), ``proactive_actions``
(``{"turn_id", "goal_id", "kind", "appropriate"}``, when known), ``labelled``, and for a
generator that knows the status changes it wrote, ``changes`` (``[[goal_id, new_status]]``).

``<provider>:<model>`` - :class:`LLMDialogueGenerator`:
:data:`~nodes.prompts.goal_tracking.DIALOGUE_GENERATION_PROMPT`. Its draft is unlabelled: an
LLM status annotator labels it turn by turn, as in the paper (§4.4).

``local`` - :class:`LocalDialogueGenerator`: the real SGD utterances of the planned episodes,
in plan order, with values taken from earlier goals rewritten
(:func:`~nodes.goal_tracking.synthesis.value_flows.substitute`), plus a few connecting lines
from the templates below (listed in the dataset README): a deferred transaction's pending
notice (:data:`DEFERRAL`), the later check by the user (:data:`USER_CHECK`, medium) or the
system (:data:`ASYNC_UPDATE`, complex), suggestions of dependent goals (:data:`SUGGESTION`)
and one declined suggestion (:data:`DECLINED_SUGGESTION`) in complex dialogues. A system line
is appended to the system utterance before it, so speakers keep alternating; the status
changes are the episodes' own SGD gold.
"""

from __future__ import annotations

import random
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from todeval.nodes.goal_tracking.synthesis.library import EpisodeLibrary
from todeval.nodes.goal_tracking.synthesis.value_flows import Flow, domain_of, substitute
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.judges.roles import PromptJudge

Draft = dict[str, Any]


class DialogueGenerator(Protocol):
    """Anything that writes the dialogue of an annotation."""

    name: str

    def generate(
        self, annotation: dict[str, Any], library: EpisodeLibrary, rng: random.Random
    ) -> JudgeResult[Draft]:
        """The draft, or None with the reason."""
        ...


WHAT: dict[str, str] = {
    "Alarm": "alarm", "Banks": "money transfer", "Buses": "bus tickets",
    "Calendar": "calendar event", "Events": "event tickets", "Flights": "flight",
    "Homes": "apartment visit", "Hotels": "hotel booking", "Media": "movie",
    "Messaging": "message", "Movies": "movie tickets", "Music": "song",
    "Payment": "payment", "RentalCars": "rental car", "Restaurants": "restaurant reservation",
    "RideSharing": "ride", "Services": "appointment", "Trains": "train tickets",
    "Travel": "sightseeing plans", "Weather": "weather forecast",
}  # fmt: skip
"""What a domain's goal is called in the connecting lines."""

DEFERRAL = (
    "I've put the request through for your {what}. The confirmation hasn't come back yet; "
    "I'll let you know as soon as it does. Is there anything else I can do meanwhile?"
)
USER_CHECK = "By the way, has my {what} been confirmed yet?"
ASYNC_UPDATE = "Also, an update on your {what}: {text}"
SUGGESTION = "Would you like me to help with {what} for {value} as well?"
DECLINED_SUGGESTION = "Would you also like me to look into {what} for you?"
DECLINE = "No, thanks. {text}"


def what(service: str) -> str:
    """The connecting lines' name for a service's goal."""
    return WHAT.get(domain_of(service), domain_of(service).lower())


def with_article(noun: str) -> str:
    """``ride`` -> ``a ride``; plurals (``bus tickets``) and mass nouns stay bare."""
    if noun.endswith("s") or noun.endswith("forecast"):
        return noun
    return f"{'an' if noun[0] in 'aeiou' else 'a'} {noun}"


class LocalDialogueGenerator:
    """Composes the planned episodes (module doc)."""

    name = "local"

    def generate(
        self, annotation: dict[str, Any], library: EpisodeLibrary, rng: random.Random
    ) -> JudgeResult[Draft]:
        """The labelled draft, or None when the annotation has no local plan."""
        plan = annotation.get("plan")
        if not plan:
            return JudgeResult(
                None, self.name, "the local generator composes only what the local annotator "
                "planned (this annotation has no plan)",
            )  # fmt: skip
        composer = _Composer(complex_=annotation["complexity_class"] == "complex")
        for k, task in enumerate(plan["tasks"]):
            composer.task(k, task, library)
        user, system = rng.choice(library.closings)
        composer.add("USER", user, [])
        composer.add("SYSTEM", system, [])
        draft: Draft = {
            "turns": composer.turns,
            "proactive_actions": composer.actions,
            "labelled": True,
        }
        return JudgeResult(draft, self.name)


class _Composer:
    def __init__(self, *, complex_: bool) -> None:
        self.complex = complex_
        self.turns: list[dict[str, Any]] = []
        self.actions: list[dict[str, Any]] = []
        self.pending: list[tuple[int, str, str, list[tuple[str, str, list[list[str]]]]]] = []

    def add(self, speaker: str, text: str, changes: list[list[str]]) -> int:
        self.turns.append({"speaker": speaker, "utterance": text, "changes": changes})
        return len(self.turns)

    def system_line(self, text: str, changes: list[list[str]]) -> int:
        """A system line, appended to the system utterance before it when there is one."""
        if self.turns and self.turns[-1]["speaker"] == "SYSTEM":
            last = self.turns[-1]
            last["utterance"] = f"{last['utterance']} {text}"
            last["changes"] = [*last["changes"], *changes]
            return len(self.turns)
        return self.add("SYSTEM", text, changes)

    def task(self, k: int, task: dict[str, Any], library: EpisodeLibrary) -> None:
        episode = library.episodes[(task["service"], tuple(task["intents"]))][task["episode"]]
        flows = [Flow(f["slot"], f["value"], f["source_slot"], tuple(f["replaced"]))
                 for f in task["flows"]]  # fmt: skip
        ids = task["goal_ids"]
        said = [
            (u.speaker, substitute(u.text, flows), [[ids[g], s] for g, s in u.changes])
            for u in episode.utterances
        ]
        if task.get("declined_domain"):
            offered = WHAT.get(task["declined_domain"], task["declined_domain"].lower())
            turn = self.system_line(DECLINED_SUGGESTION.format(what=with_article(offered)), [])
            self.actions.append(
                {"turn_id": turn, "goal_id": None, "kind": "suggestion", "appropriate": False}
            )
            speaker, text, changes = said[0]
            said[0] = (speaker, DECLINE.format(text=text), changes)
        elif task.get("suggested_from") and flows:
            turn = self.system_line(
                SUGGESTION.format(what=with_article(what(task["service"])), value=flows[0].value),
                [],
            )
            self.actions.append(
                {"turn_id": turn, "goal_id": ids[0], "kind": "suggestion", "appropriate": True}
            )
        if task["deferred"] and episode.deferrable is not None:
            cut = episode.deferrable
            for speaker, text, changes in said[:cut]:
                self.add(speaker, text, changes)
            self.add("SYSTEM", DEFERRAL.format(what=what(task["service"])), [])
            goal_id = said[cut][2][0][0]
            self.pending.append((k, goal_id, task["service"], said[cut:]))
        else:
            for speaker, text, changes in said:
                self.add(speaker, text, changes)
        self.release(k)

    def release(self, k: int) -> None:
        """The deferred outcomes of earlier services, now that another one has run."""
        ready = [p for p in self.pending if p[0] < k]
        self.pending = [p for p in self.pending if p[0] >= k]
        for _, goal_id, service, tail in ready:
            (_, text, changes), rest = tail[0], tail[1:]
            if self.complex:
                turn = self.system_line(ASYNC_UPDATE.format(what=what(service), text=text), changes)
                self.actions.append(
                    {"turn_id": turn, "goal_id": goal_id, "kind": "async_update",
                     "appropriate": True}
                )  # fmt: skip
            else:
                self.add("USER", USER_CHECK.format(what=what(service)), [])
                self.add("SYSTEM", text, changes)
            for speaker, line, moved in rest:
                self.add(speaker, line, moved)


class GeneratedTurn(BaseModel):
    """One generated utterance."""

    speaker: Literal["USER", "SYSTEM"] = Field(description="Who speaks.")
    utterance: str = Field(min_length=1, description="What is said.")


class GeneratedDialogue(BaseModel):
    """The prompt's JSON."""

    turns: list[GeneratedTurn] = Field(min_length=2, description="The dialogue, in order.")


def agentic_attributes(annotation: dict[str, Any]) -> str:
    """``{agentic_attrs}``: the behaviours the metadata asks for, one per line."""
    metadata, goals = annotation["metadata"], annotation["goals"]
    lines = []
    if metadata.get("async_execution"):
        lines.append("- asynchronous execution: at least one booking's confirmation arrives "
                     "later; the goal stays pending meanwhile")  # fmt: skip
    if metadata.get("interleaving"):
        lines.append("- interleaving: the user suspends a goal for another and resumes it")
    if metadata.get("proactivity"):
        lines.append("- proactivity: the assistant reminds the user of pending goals and "
                     "suggests the next useful action without being asked")  # fmt: skip
    defective = [g["id"] for g in goals if g.get("defectiveness_label")]
    if defective:
        lines.append(f"- defects: {', '.join(defective)} fail or are left incomplete")
    depending = [g for g in goals if g.get("dependencies")]
    if depending:
        lines.append("- dependencies: " + "; ".join(
            f"{g['id']} only after {', '.join(g['dependencies'])}" for g in depending
        ))  # fmt: skip
    return "\n".join(lines) or "- none"


class LLMDialogueGenerator(PromptJudge[GeneratedDialogue]):
    """The generation prompt through one LLM spec."""

    llm_settings = {"max_output_tokens": 8192}  # a 54-turn dialogue is a long answer

    def generate(
        self, annotation: dict[str, Any], library: EpisodeLibrary, rng: random.Random
    ) -> JudgeResult[Draft]:
        """Ask the LLM for the dialogue."""
        goals = "\n".join(
            f"- {g['id']} ({g['domain']} / {g['intent']}): {g.get('content') or g['intent']}"
            + (f"; depends on {', '.join(g['dependencies'])}" if g.get("dependencies") else "")
            for g in annotation["goals"]
        )
        result = self.ask(
            complexity=annotation["complexity_class"],
            estimated_turns=annotation["metadata"].get("estimated_turns", 30),
            goal_descriptions=goals,
            agentic_attrs=agentic_attributes(annotation),
        )
        if result.value is None:
            return JudgeResult(None, self.name, result.reason)
        turns = [t.model_dump() for t in result.value.turns]
        return JudgeResult({"turns": turns, "proactive_actions": [], "labelled": False}, self.name)
