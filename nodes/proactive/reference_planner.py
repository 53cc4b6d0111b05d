"""The local reference agent's target planning: a plan a careful reader writes from the environment.

It reads only what Listing 4 gives the agent under test (the environment and the domain) and
writes what the domain description asks for: a target that names the proactive action and what
it is about, and 3-4 sub-targets that are the steps of the conversation towards it, each an
action ("Ask about ...", "Explain ...", "Suggest ...").

What it is about comes from key phrases of the environment: short runs of content words (no
function word inside, at most :data:`PHRASE_WORDS` words), ranked by how close (MiniLM) they are
to *both* fields, so that the common ground of the user and the trigger wins and an injected
detail that concerns neither (the hard tier's noise) loses. A named entity of the trigger (the
product, the contact, the error message) is kept whole. The steps are each domain's usual
conversation (Listing 1's description and Table 6's examples): share, highlight and suggest for
a recommendation; acknowledge, explain and propose for persuasion; ask about the missing details
of an ambiguous request; ask how the last conversation's plan went for a follow-up; point out
what the glasses see and what to do; point out an error, its cause and the fix for system
operation. Phrases are short, so a plan is never a copy of the environment's text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from todeval.evals.proactive_schema import Environment, TargetPlan
from todeval.nodes.judges.vectors import FloatArray, VectorTable
from todeval.nodes.proactive.text import STOPWORDS

PHRASE_WORDS = 4
"""The longest key phrase, in words."""
SALIENCE = 2.0
"""Weight of the phrase's sentence's closeness to the other field (a noise sentence has little)."""
LONGER = 0.1
"""Bonus of a name or a phrase of two words or more over a lone word."""
MAX_WORDS = 9
"""Listing 4: a target and each sub-target under 10 words."""

_TOKEN = re.compile(r"[A-Za-z0-9£$€#][A-Za-z0-9'’.&%:/#-]*[A-Za-z0-9%]|[A-Za-z0-9]")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9'\"‘“])")
_CLOSE = r"(?:(?<!s)['’](?![A-Za-z])|(?<=s)['’](?=[.,;:!?]|$)|[\"”])"
_CLAUSE = re.compile(rf"([,;:()\"“”]|\s-\s|\s–\s|(?:^|\s)['‘]|{_CLOSE})")
_QUOTE = re.compile(rf"(?:^|[\s:])['‘\"“](.+?){_CLOSE}")
_AGE = re.compile(r"^\d+-year-olds?$")

#: Words that say where a detail came from or when, not what it is: no key phrase holds them.
FILLER = frozenset(
    """says said say typed wrote writes asked asks shows showed show lists listed reads read
    saved logged noticed noticed recently lately often also currently still ago today tonight
    yesterday morning evening now then last next week weeks day days month months year years
    time times minutes minute hours hour seconds second conversation happened current
    been being having got gets get getting keeps kept likes like enjoys enjoy loves love
    wants want prefers prefer finds find feels feel thinks think knows know says went one two
    three four five six seven eight nine ten first lot lots glasses thing things something anything
    way ways really just well quite much many little new old year-old years-old
    every since near across ahead around via per without within along behind beside inside
    outside towards toward upon among onto instead even yet ever never always usually sometimes
    already almost away together again back
    holds hold picks pick touches makes make takes take runs run plays play works work lives
    live drives drive listens listen uses use visits visit leaves leave watches watch walks
    walk cooks cook travels travel needs need hosts host tracks track carries carry receives
    receive pays pay streams stream spends spend sends send shares share teaches teach studies
    study joined join goes go comes come looks look stays stay tries try helps help starts
    start stops stop gives give puts put sees see became become becomes rather avoid altogether
    keep matches match using used pretending twice whenever righto yes okay ok remind whose"""
    " monday tuesday wednesday thursday friday saturday sunday".split()
)
WEEKDAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())
_SKIP = STOPWORDS | FILLER


@dataclass(frozen=True)
class Phrase:
    """A key phrase of the environment and where it was found."""

    text: str
    field: str  # "user" or "trigger"
    entity: bool  # a capitalised name (its capital not a sentence's opening)
    sentence: str  # the sentence it was found in


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text.strip()) if s.strip()]


def _is_content(token: str, named: bool = False) -> bool:
    """A word a key phrase may hold; inside a name (``named``) only function words are not."""
    lowered = token.lower().strip("'’").removesuffix("'s").removesuffix("’s")
    past = lowered.endswith(("ed", "ly")) and len(lowered) > 4 and token[0].islower()
    skip = STOPWORDS | WEEKDAYS if named else _SKIP
    return (
        bool(lowered)
        and lowered not in skip
        and not _AGE.match(lowered)
        and not past
        and len(token) > 1
    )


def _clauses(sentence: str) -> list[tuple[str, bool]]:
    """The sentence's clauses, each with whether it opens a sentence.

    The first clause does, and so does one that a quote opens: their first word is capitalised
    as an opening, not as a name.
    """
    parts = _CLAUSE.split(sentence)
    found = [(parts[0], True)]
    for delimiter, clause in zip(parts[1::2], parts[2::2], strict=True):
        found.append((clause, delimiter.strip() in {"'", "‘", '"', "“"}))
    return found


def phrases(text: str, field: str) -> list[Phrase]:
    """Every run of 1-:data:`PHRASE_WORDS` content words inside one clause of ``text``."""
    found: dict[str, Phrase] = {}
    for sentence in _sentences(text):
        for clause, opens in _clauses(sentence):
            tokens = _TOKEN.findall(clause)
            run: list[tuple[str, bool]] = []
            for index, token in enumerate([*tokens, ""]):
                opening = index == 0 and opens
                if token and _is_content(token, token[0].isupper() and not opening):
                    name = token[0].isupper() and (index > 0 or not opens)
                    run.append((token.rstrip(".").rstrip("'’"), name or token[0].isdigit()))
                    continue
                for start in range(len(run)):
                    for end in range(start + 1, min(len(run), start + PHRASE_WORDS) + 1):
                        part = run[start:end]
                        words = " ".join(word for word, _ in part)
                        named = all(flag for _, flag in part) and any(
                            w[0].isupper() for w, _ in part
                        )
                        found.setdefault(words.lower(), Phrase(words, field, named, sentence))
                run = []
    return list(found.values())


def quotes(text: str) -> list[str]:
    """What the text quotes (a request, a message on screen), outer quotes removed."""
    return [q.strip().rstrip(".!?") for q in _QUOTE.findall(text) if len(q.split()) >= 1]


_TURN = re.compile(r"\b(User|Assistant)\s*:\s*(.*?)(?=\s+(?:User|Assistant)\s*:|$)")


def turns(text: str) -> list[tuple[str, str]]:
    """The quoted turns of a past conversation (``User: '...' Assistant: '...'``), in order."""
    found = []
    for speaker, said in _TURN.findall(text):
        quoted = quotes(said)
        if quoted:
            found.append((speaker.lower(), quoted[0]))
    return found


class KeyPhrases:
    """The environment's key phrases, ranked by closeness to both of its fields."""

    def __init__(self, environment: Environment, embed: Callable[[list[str]], FloatArray]) -> None:
        self.environment = environment
        user, trigger = environment.user_information, environment.trigger_factor
        self.all = phrases(user, "user") + phrases(trigger, "trigger")
        sentences = list(dict.fromkeys(p.sentence for p in self.all))
        texts = [user, trigger, *sentences, *(p.text for p in self.all)]
        vectors: FloatArray = embed(texts) if self.all else np.zeros((2, 1), np.float32)
        self.field_vectors = {"user": vectors[0], "trigger": vectors[1]}
        found = vectors[2 + len(sentences) :]
        self.vectors = {p.text.lower(): found[i] for i, p in enumerate(self.all)}
        # A sentence's salience: how close it is to the other field (noise is close to neither).
        other = {"user": vectors[1], "trigger": vectors[0]}
        fields = {p.sentence: p.field for p in self.all}
        self.salience = {
            sentence: float(vectors[2 + i] @ other[fields[sentence]])
            for i, sentence in enumerate(sentences)
        }
        self.embed = embed

    def score(self, phrase: Phrase, towards: FloatArray | None = None) -> float:
        """Closeness to both fields (and to ``towards``) plus its sentence's salience."""
        vector = self.vectors[phrase.text.lower()]
        closeness = sum(float(vector @ field) for field in self.field_vectors.values())
        if towards is not None:
            closeness += float(vector @ towards)
        longer = phrase.entity or len(phrase.text.split()) > 1
        return closeness + SALIENCE * self.salience[phrase.sentence] + (LONGER if longer else 0.0)

    def best(
        self,
        field: str,
        *,
        towards: str | None = None,
        avoid: Sequence[str] = (),
        entity: bool | None = None,
        within: str | None = None,
    ) -> str | None:
        """The best phrase of ``field`` that shares no word with ``avoid``.

        Optionally only named entities (``entity``), only phrases inside ``within``, and ranked
        also by closeness to ``towards``. A phrase of two words or more (or a name) is preferred.
        """
        avoided = {w.lower() for text in avoid for w in text.split()}
        scope = within.lower() if within is not None else None
        candidates = [
            p
            for p in self.all
            if p.field == field
            and (entity is None or p.entity == entity)
            and not ({w.lower() for w in p.text.split()} & avoided)
            and (scope is None or p.text.lower() in scope)
        ]
        if not candidates:
            return None
        target = self.embed([towards])[0] if towards else None
        return max(candidates, key=lambda p: self.score(p, target)).text

    def first_name(self, field: str) -> str | None:
        """The first name the field's most salient sentence holding one introduces (whole).

        A trigger introduces the thing it is about by name before it describes it ("The
        assistant has been playing Lantern Keepers, a cooperative ...").
        """
        names = [p for p in self.all if p.field == field and p.entity]
        if not names:
            return None
        sentence = max((p.sentence for p in names), key=lambda s: self.salience[s])
        here = [p for p in names if p.sentence == sentence]
        return min(here, key=lambda p: (_position(p), -len(p.text))).text


def _position(phrase: Phrase) -> int:
    """Where the phrase's first word stands in its sentence."""
    first = phrase.text.split()[0]
    found = re.search(rf"(?<![\w'’-]){re.escape(first)}", phrase.sentence)
    return found.start() if found else len(phrase.sentence)


def pronoun(user_information: str) -> str:
    """The user's possessive as the environment says it ("her", "his", else "their")."""
    counted = [
        len(re.findall(pattern, user_information, re.IGNORECASE))
        for pattern in (r"\b(she|her|hers)\b", r"\b(he|his|him)\b")
    ]
    return "her" if counted[0] > counted[1] else "his" if counted[1] > counted[0] else "their"


def _clip(text: str, limit: int = MAX_WORDS) -> str:
    parts = text.split()
    return " ".join(parts[:limit])


def _fit(*variants: str) -> str:
    """The first variant within Listing 4's word limit (else the last one, cut to it)."""
    return next((v for v in variants if len(v.split()) <= MAX_WORDS), _clip(variants[-1]))


def _lower_first(text: str) -> str:
    return text if text[:2].isupper() else text[:1].lower() + text[1:]


def _first(*options: str | None) -> str:
    return next((o for o in options if o), "")


Planner = Callable[[KeyPhrases, str], TargetPlan]


def _recommendation(keys: KeyPhrases, their: str) -> TargetPlan:
    item = _first(keys.first_name("trigger"), keys.best("trigger"), "it")
    interest = _first(keys.best("user", avoid=[item]), "interests")
    feature = _first(keys.best("trigger", avoid=[item]), "what makes it special")
    return TargetPlan(
        target=_fit(f"Recommend {item} for {their} {interest}", f"Recommend {item}"),
        sub_target=[
            _clip(f"Ask about {their} {interest}"),
            _clip(f"Share the assistant's experience with {item}"),
            _clip(f"Highlight {feature}"),
            _clip(f"Suggest trying {item}"),
        ],
    )


#: What persuasion's user information describes (Listing 1: the user's habit or resistance).
STRUGGLE = "a habit or problem the user struggles with"


def _persuasion(keys: KeyPhrases, their: str) -> TargetPlan:
    practice = _first(keys.best("trigger"), "a better habit")
    problem = _first(keys.best("user", towards=STRUGGLE, avoid=[practice]), "current habits")
    benefit = _first(keys.best("trigger", avoid=[practice]), "the benefits")
    return TargetPlan(
        target=_clip(f"Persuade the user to try {practice}"),
        sub_target=[
            _clip(f"Acknowledge {their} {problem}"),
            _clip(f"Explain how {practice} would help"),
            _clip(f"Point out {benefit}"),
            _clip(f"Suggest a first step with {practice}"),
        ],
    )


#: Words of a request that say nothing about what is asked.
REQUEST_FILLER = frozenset(
    "can could would you please me my i the a an some something of to for more just".split()
)


def _ambiguous(keys: KeyPhrases, their: str) -> TargetPlan:
    said = quotes(keys.environment.trigger_factor)
    request = max(said, key=lambda q: len(q.split())) if said else keys.environment.trigger_factor
    task = _first(keys.best("trigger", within=request), keys.best("trigger"), "the request")
    constraint = _first(keys.best("user", towards=request), "preferences")
    detail = _first(keys.best("user", towards=request, avoid=[constraint]), "constraints")
    asked = " ".join(w for w in request.split() if w.lower().strip(",.!?") not in REQUEST_FILLER)
    return TargetPlan(
        target=_clip(f"Clarify the request to {_lower_first(_clip(asked, 6))}"),
        sub_target=[
            _clip(f"Ask what {task} should include"),
            _clip("Ask about the date, budget and preferences"),
            _clip(f"Check constraints such as {constraint}"),
            _clip(f"Ask how to handle {detail}"),
        ],
    )


def _follow_up(keys: KeyPhrases, their: str) -> TargetPlan:
    said = [q for _, q in turns(keys.environment.trigger_factor)]
    said = said or quotes(keys.environment.trigger_factor)
    issue_text = said[0] if said else keys.environment.trigger_factor
    plan_text = " ".join(said[1:]) if len(said) > 1 else issue_text
    talk = " ".join(said) or None
    issue = _first(
        keys.best("trigger", within=issue_text, towards=talk), keys.best("trigger"), "last talk"
    )
    step = _first(
        keys.best("trigger", within=plan_text, towards=talk, avoid=[issue]), "the plan agreed"
    )
    context = _first(keys.best("user", towards=talk, avoid=[issue, step]), "situation")
    return TargetPlan(
        target=_fit(f"Follow up on {their} {issue} and {step}", f"Follow up on {their} {issue}"),
        sub_target=[
            _clip(f"Ask how things went with {their} {issue}"),
            _clip(f"Check progress on {step}"),
            _clip(f"Ask about {their} {context}"),
            _clip(f"Encourage the next step with {step}"),
        ],
    )


def _glasses(keys: KeyPhrases, their: str) -> TargetPlan:
    seen = _first(keys.best("trigger"), "what is in view")
    need = _first(keys.best("user", avoid=[seen]), "current task")
    detail = _first(keys.best("trigger", avoid=[seen]), "the situation")
    return TargetPlan(
        target=_fit(f"Help with {seen} given {their} {need}", f"Help with {seen}"),
        sub_target=[
            _clip(f"Point out the {seen}"),
            _clip(f"Mention the {detail}"),
            _clip(f"Suggest a next step for {their} {need}"),
        ],
    )


#: What an error message on screen says (a quote holding one of these words is the error).
ERROR_WORDS = re.compile(
    r"\b(not|can't|cannot|error|errors|fail|failed|limit|exceeds|offline|off|unable|denied|"
    r"full|missing|slow|invalid)\b|#",
    re.IGNORECASE,
)


def _system(keys: KeyPhrases, their: str) -> TargetPlan:
    said = [q for q in quotes(keys.environment.trigger_factor) if ERROR_WORDS.search(q)]
    shown = said[0] if said and len(said[0].split()) <= 6 else None
    error = _first(shown, keys.best("trigger", towards="error failed not working"), "problem")
    cause = _first(keys.best("trigger", towards=error, avoid=[error]), "the cause")
    tool = _first(keys.best("trigger", avoid=[error, cause]), "the settings")
    return TargetPlan(
        target=_clip(f"Help fix the {error} problem"),
        sub_target=[
            _clip(f"Point out the {error} problem"),
            _clip(f"Explain the cause: {cause}"),
            _clip(f"Guide the user through {tool}"),
            _fit(f"Confirm the {error} problem is solved", "Confirm the problem is solved"),
        ],
    )


PLANNERS: dict[str, Planner] = {
    "recommendation": _recommendation,
    "persuasion": _persuasion,
    "ambiguous_instruction": _ambiguous,
    "long_term_follow_up": _follow_up,
    "glasses_assistant": _glasses,
    "system_operation": _system,
}


_VECTORS = VectorTable()


def plan_target(
    domain: str, environment: Environment, embed: Callable[[list[str]], FloatArray] | None = None
) -> TargetPlan:
    """The reference agent's plan for ``environment`` (a ``domain`` item)."""
    keys = KeyPhrases(environment, embed or _VECTORS.embed)
    planner = PLANNERS.get(domain, _recommendation)
    return planner(keys, pronoun(environment.user_information))
