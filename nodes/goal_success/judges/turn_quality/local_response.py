"""``local:response``: turn quality from the response itself (paper 004, Appendix B).

Evidence read, for each turn on its own: the response text, the retrieved sources
(``source_snippets``, ``source_names``), the turn's metadata (``error``, ``latency_ms``,
``action.status``, ``route``) and, for routing only, the question. Never the user's reaction
(``local:signals``) nor embedding fit of answer to question (``local:semantic``).

Rules, first match wins (each is an Appendix B definition read off the record):

* **E5 System Error** - ``metadata.error`` is set, ``latency_ms`` >= 30000 (a timeout),
  ``metadata.action.status`` is an error; the response is empty, is an error string (HTTP
  status, "something went wrong", an ``ALL_CAPS_ERROR`` code), or stops mid-sentence (no
  terminal punctuation and a last word no statement ends on).
* **E4 Retrieval Failure** - the response says nothing was found ("I couldn't find any
  information", "no results").
* **E7 Out-of-Domain / Unsupported** - the response states a capability the assistant lacks
  or that the request is outside its scope ("isn't something I can do", "I can only help
  with ...", "not supported").
* **E2 Refusal** - any other refusal ("I'm sorry, I can't help with that").
* **E3 Incorrect Retrieval** - sources were shown and the answer is not supported by them:
  it states money amounts or percentages found in neither the snippets nor the dialogue, or
  fewer than 40% of its content words occur there (turns with a tool call are exempt: their
  facts come from the tool). Computed figures such as dates are not checked.
* **E6 Incorrect Routing** - ``metadata.route`` disagrees with the question's domain. Each
  route of the deployment's route table (``Context.routes``: name -> what it handles; the CLI
  fills in the corpus' routes, described by their names, when none is given) has a profile,
  its name's words ("hr_policy_bot" -> "hr policy") plus its description; the question is
  misrouted when another route's profile fits it better by at least ``ROUTE_MARGIN``. Only
  questions that carry their own domain words are checked (not follow-ups, acknowledgements
  or complaints); without route metadata, or with one known route, routing is not checked.
  The verdict depends only on the dialogue and the route table, never on which other
  dialogues were batched with it.
* Otherwise **success**: "no failure sign in the response". This teacher judges every turn.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from todeval.evals.schema import Dialogue, Turn, routes_used
from todeval.nodes.goal_success.judges.response_cues import (
    CAPABILITY_LIMIT,
    ERROR_CODE,
    ERROR_TEXT,
    NO_RESULTS,
    REFUSAL,
    is_clarification,
    looks_cut_off,
)
from todeval.nodes.goal_success.judges.turn_quality import ACTION_ERRORS, TeacherVerdict, TurnLabel
from todeval.nodes.goal_success.judges.user_cues import (
    carries_domain,
    content_words,
    is_acknowledgement,
)
from todeval.nodes.judges.vectors import Embed, FloatArray, VectorTable

#: A response slower than this timed out (paper 004 §4.3 aligns E5 with timeouts).
TIMEOUT_MS = 30_000
#: Below this share of content words found in the sources the answer is not grounded.
MIN_LEXICAL_SUPPORT = 0.4
#: How much better another route must fit a question before it counts as misrouted. Set on
#: SGD dev with services as routes described by their names, every service in the table and
#: 10% of questions re-routed at random: 0.31 flags 5% of the correctly routed questions and
#: catches 38% of the re-routed ones (``scripts/calibrate_semantic_teacher.py``). Route
#: descriptions in ``Context.routes`` sharpen the profiles.
ROUTE_MARGIN = 0.31

_GENERIC_ROUTE_WORDS = frozenset({"bot", "agent", "skill", "assistant", "handler", "route"})
_MONTHS = (
    r"(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?|"
    r"(mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?"
)
_ORDINAL = r"\d{1,2}(st|nd|rd|th)?"
#: Calendar dates, years and clock times: computed from "today", never quoted from a source.
_DATE = re.compile(
    rf"\b{_ORDINAL}(\s*[-–]\s*{_ORDINAL})?\s+(of\s+)?({_MONTHS})\b|"
    rf"\b({_MONTHS})\s+{_ORDINAL}(\s*[-–]\s*{_ORDINAL})?\b|\b(19|20)\d\d\b|"
    r"\b\d{1,2}:\d\d\b|\b\d{1,2}\s*(am|pm)\b",
    re.IGNORECASE,
)
#: Policy figures an answer should quote from its source: money and percentages.
_FIGURE = re.compile(
    r"[$€£]\s?\d[\d,]*(?:\.\d+)?|\b\d[\d,]*(?:\.\d+)?\s?(?:%|percent\b)", re.IGNORECASE
)
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def route_words(route: str) -> str:
    """A route's name as words: ``"hr_policy_bot"`` -> ``"hr policy"``."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", route)
    words = [w for w in re.split(r"[\W_\d]+", spaced.lower()) if w]
    return " ".join(w for w in words if w not in _GENERIC_ROUTE_WORDS) or route


def route_profile(route: str, description: str = "") -> str:
    """The text a route is known by: its name's words, then its description if any."""
    words = route_words(route)
    return f"{words}: {description}" if description.strip() else words


@dataclass(frozen=True)
class RouteDomains:
    """The route table as vectors: one profile per route."""

    routes: tuple[str, ...]
    profiles: FloatArray

    @classmethod
    def build(cls, table: Mapping[str, str], vectors: VectorTable) -> RouteDomains:
        """From ``route -> description`` (an empty description: the name alone)."""
        routes = tuple(sorted(table))
        profiles = vectors.get([route_profile(r, table[r]) for r in routes])
        return cls(routes, profiles)

    def fit(self, question: FloatArray) -> FloatArray:
        """Cosine of ``question`` to every route's profile."""
        fits: FloatArray = self.profiles @ question
        return fits

    def fit_many(self, questions: FloatArray) -> FloatArray:
        """Cosines of many questions (rows) to every route's profile (columns)."""
        fits: FloatArray = questions @ self.profiles.T
        return fits


def route_table(dialogue: Dialogue, routes: Mapping[str, str] | None) -> dict[str, str]:
    """The given table plus any route the dialogue uses that it lacks (described by name)."""
    table = dict(routes or {})
    for turn in dialogue.turns:
        route = turn.metadata.get("route")
        if route and str(route) not in table:
            table[str(route)] = ""
    return table


class ResponseTeacher:
    """Labels each turn from its response, sources and metadata (see module doc)."""

    name = "local:response"

    def __init__(self, embed: Embed | None = None) -> None:
        """Use ``embed`` for the routing check (default: MiniLM, loaded on first use)."""
        self.vectors = VectorTable(embed)
        # Route tables seen so far: a corpus has few (the given table plus routes it uses).
        self._domains: dict[tuple[tuple[str, str], ...], RouteDomains] = {}

    def prepare(self, dialogues: Sequence[Dialogue]) -> None:
        """Embed the chunk's routed questions and the route names in one batch."""
        texts = [
            turn.user_msg
            for dialogue in dialogues
            for turn in dialogue.turns
            if turn.metadata.get("route") and carries_domain(turn.user_msg)
        ]
        self.vectors.load(texts + [route_profile(route) for route in routes_used(dialogues)])

    def label(
        self, dialogue: Dialogue, *, routes: Mapping[str, str] | None = None
    ) -> TeacherVerdict:
        """One label per turn, in order; ``routes`` is the deployment's route table."""
        table = route_table(dialogue, routes)
        domains = self._route_domains(table) if len(table) > 1 else None
        history: list[str] = []
        labels = []
        for turn in dialogue.turns:
            history.append(turn.user_msg)
            labels.append(self._label_turn(turn, history, domains))
        return TeacherVerdict(judge=self.name, turns=labels)

    def _route_domains(self, table: Mapping[str, str]) -> RouteDomains:
        """The table's route profiles, embedded once per distinct table."""
        key = tuple(sorted(table.items()))
        if key not in self._domains:
            self._domains[key] = RouteDomains.build(table, self.vectors)
        return self._domains[key]

    def _label_turn(
        self, turn: Turn, history: list[str], domains: RouteDomains | None
    ) -> TurnLabel:
        k = turn.turn_number
        found = (
            system_error(turn)
            or retrieval_failure(turn.response)
            or unsupported_or_refused(turn.response)
            or ungrounded(turn, history)
            or self._misrouted(turn, domains)
        )
        if found is not None:
            code, why = found
            return TurnLabel(k, "failure", code, why)
        if not turn.metadata.get("route"):
            why = "no failure sign in the response (routing not checked: no route metadata)"
        else:
            why = "no failure sign in the response"
        return TurnLabel(k, "success", None, why)

    def _misrouted(self, turn: Turn, domains: RouteDomains | None) -> tuple[str, str] | None:
        route = turn.metadata.get("route")
        if domains is None or not route or not carries_domain(turn.user_msg):
            return None
        if is_clarification(turn.response) or is_acknowledgement(turn.user_msg):
            return None
        question = self.vectors.get([turn.user_msg])[0]
        fits = domains.fit(question)
        best = int(np.argmax(fits))
        own = float(fits[domains.routes.index(str(route))])
        if domains.routes[best] == route or fits[best] - own < ROUTE_MARGIN:
            return None
        return "E6", (
            f"question fits route {domains.routes[best]} ({fits[best]:.2f}) better than "
            f"{route} ({own:.2f}), which answered it"
        )


def system_error(turn: Turn) -> tuple[str, str] | None:
    """E5 from the metadata, an empty or error-string response, or a cut-off one."""
    meta: Mapping[str, Any] = turn.metadata
    if meta.get("error"):
        return "E5", f"metadata.error = {meta['error']!r}"
    if meta.get("timeout") or meta.get("timed_out"):
        return "E5", "metadata says the request timed out"
    latency = meta.get("latency_ms")
    if isinstance(latency, int | float) and latency >= TIMEOUT_MS:
        return "E5", f"latency {latency:.0f} ms: timed out"
    action = meta.get("action")
    if isinstance(action, Mapping) and str(action.get("status", "")).lower() in ACTION_ERRORS:
        return "E5", f"tool call {action.get('tool', '?')} returned status {action['status']!r}"
    response = turn.response.strip()
    if not response:
        return "E5", "empty response"
    error = ERROR_CODE.search(response) or ERROR_TEXT.search(response)
    if error:
        return "E5", f"error text in the response ({error.group(0)!r})"
    if looks_cut_off(response):
        return "E5", f"response has no terminal punctuation: cut off ('…{response[-25:]}')"
    return None


def retrieval_failure(response: str) -> tuple[str, str] | None:
    """E4 when the response says nothing was found."""
    found = NO_RESULTS.search(response)
    return ("E4", f"response says nothing was found ({found.group(0)!r})") if found else None


def unsupported_or_refused(response: str) -> tuple[str, str] | None:
    """E7 for a stated capability limit or scope, E2 for any other refusal."""
    limit = CAPABILITY_LIMIT.search(response)
    if limit:
        return "E7", f"response states an unsupported request ({limit.group(0)!r})"
    refusal = REFUSAL.search(response)
    if refusal:
        return "E2", f"refusal ({refusal.group(0)!r}) with no capability or scope reason"
    return None


def ungrounded(turn: Turn, history: Sequence[str]) -> tuple[str, str] | None:
    """E3 when the answer says things its shown sources (and the dialogue) do not."""
    if not turn.source_snippets or turn.metadata.get("action"):
        return None
    if is_clarification(turn.response):
        return None
    evidence = " ".join([*turn.source_snippets, *turn.source_names, *history])
    known = {_plain_number(n) for n in _NUMBER.findall(evidence)}
    figures = [f.strip() for f in _FIGURE.findall(_DATE.sub(" ", turn.response))]
    missing = [f for f in figures if _plain_number(_NUMBER.findall(f)[0]) not in known]
    if missing:
        return "E3", f"figures not in the sources: {', '.join(missing[:3])}"
    words = content_words(turn.response)
    if len(words) >= 6:
        stems = {w[:5] for w in content_words(evidence)}
        support = sum(w[:5] in stems for w in words) / len(words)
        if support < MIN_LEXICAL_SUPPORT:
            return "E3", f"only {support:.0%} of the answer's content words are in its sources"
    return None


def _plain_number(text: str) -> str:
    value = text.replace(",", "")
    return value.rstrip("0").rstrip(".") if "." in value else value
