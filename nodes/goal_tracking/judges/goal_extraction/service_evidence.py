"""Which of two sibling services a goal belongs to, from what the dialogue says (ATOD §5.2).

A schema may offer the same intent in several services (SGD: ``Hotels_1`` and ``Hotels_4``
both have ``SearchHotel``; ``Media_2`` and ``Movies_2`` both ``FindMovies``). The user's request
rarely says which; the conversation that follows often does, through a categorical slot only
one of them has: a hotel "has wifi" in one service, "smoking is allowed" in the other; a movie
rental offers "subtitles". So the tracker names a goal's service by this evidence once it
appears, and keeps the extractor's choice while there is none.

The evidence words are the tokens of each service's categorical slot names that no sibling's
slot names contain (``has_wifi`` -> ``wifi``; ``smoking_allowed`` -> ``smoking``,
``allowed``). Only categorical slots count: their values are stated in a fixed form, whereas
free-text slot names (``number_of_days`` vs ``stay_length``) describe things every sibling
talks about. Measured on SGD dev over dialogues with a sibling service: the rule picks the
gold service alone in 340 cases, a wrong one in 2, and has no evidence in 555.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from todeval.evals.datasets.sgd_schema import ServiceSchema

#: Slot-name tokens shorter than this carry no meaning of their own ("of", "to", "has").
MIN_TOKEN_LENGTH = 4


@dataclass(frozen=True)
class ServiceEvidence:
    """Sibling services and the words that tell each apart, built from a schema.

    Attributes:
        siblings: Service -> the other services that share an intent name with it.
        patterns: Service -> a regex of its distinctive words (absent when it has none).
        intents: Service -> its intent names.
    """

    siblings: Mapping[str, frozenset[str]]
    patterns: Mapping[str, re.Pattern[str]]
    intents: Mapping[str, frozenset[str]]

    @classmethod
    def build(cls, schema: Mapping[str, ServiceSchema]) -> ServiceEvidence:
        """Find the siblings and each service's distinctive categorical slot words."""
        intents = {
            name: frozenset(i.name for i in service.intents) for name, service in schema.items()
        }
        siblings = {
            name: frozenset(
                other for other in schema if other != name and intents[name] & intents[other]
            )
            for name in schema
        }
        patterns: dict[str, re.Pattern[str]] = {}
        for name, others in siblings.items():
            if not others:
                continue
            theirs = {
                token
                for other in others
                for slot in schema[other].slots
                for token in slot.name.lower().split("_")
            }
            mine = {
                token
                for slot in schema[name].slots
                if slot.is_categorical
                for token in slot.name.lower().split("_")
                if len(token) >= MIN_TOKEN_LENGTH
            }
            words = sorted(mine - theirs)
            if words:
                patterns[name] = re.compile(r"\b(" + "|".join(map(re.escape, words)) + ")", re.I)
        return cls(siblings, patterns, intents)

    def preferred(self, service: str, intent: str, text: str) -> str | None:
        """The one service among ``service`` and its siblings that ``text`` gives evidence of.

        Only siblings that offer ``intent`` compete. None when no sibling offers it, or when
        none or several are evidenced.
        """
        group = [
            name for name in sorted(self.siblings.get(service, ())) if intent in self.intents[name]
        ]
        if not group:
            return None
        evidenced = [
            name
            for name in (service, *group)
            if name in self.patterns and self.patterns[name].search(text)
        ]
        return evidenced[0] if len(evidenced) == 1 else None
