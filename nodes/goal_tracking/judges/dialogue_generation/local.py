"""``local``: compose a dialogue from the real SGD utterances the local annotator planned.

The stand-in for the paper's LLM generator (§4.3). Every utterance is a real SGD utterance of the
planned episodes, in plan order, with the values they take from earlier goals rewritten
(:func:`~nodes.goal_tracking.synthesis.value_flows.substitute`), except a few connecting lines
from the templates below, which the dataset README lists:

* a deferred transaction (asynchrony): after the user agrees to it, the system says the
  confirmation is pending (:data:`DEFERRAL`); the episode's real outcome report and the rest of
  the episode come after the next service's goals (the goal is suspended, then resumed:
  interleaving). In a medium dialogue the user asks for it (:data:`USER_CHECK`); in a complex
  one the system brings it up unprompted (:data:`ASYNC_UPDATE`, a proactive action);
* a complex dialogue's system suggests each goal that depends on an earlier one before the user
  raises it (:data:`SUGGESTION`), and once suggests something the user declines
  (:data:`DECLINED_SUGGESTION`, the user's next utterance starting "No, thanks.");
* the dialogue ends with a real SGD closing exchange.

A system line is appended to the system utterance before it, so speakers keep alternating. The
status changes are the episodes' own SGD gold, so the draft is labelled.
"""

from __future__ import annotations

import random
from typing import Any

from todeval.nodes.goal_tracking.judges.dialogue_generation.role import ROLE, Draft
from todeval.nodes.goal_tracking.synthesis.library import EpisodeLibrary
from todeval.nodes.goal_tracking.synthesis.value_flows import Flow, domain_of, substitute
from todeval.nodes.judges.local import register_local_judge
from todeval.nodes.judges.result import JudgeResult

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


@register_local_judge(ROLE, "default", default=True)
def _local_generator() -> LocalDialogueGenerator:
    return LocalDialogueGenerator()
