"""The local goal extractor (ATOD §5.2, Stage 1).

A small MLP over MiniLM features against the schema's intents, or request detection without a
schema. Its LLM counterpart, :mod:`~nodes.goal_tracking.judges.goal_extraction.llm`, batches
extraction, existence check and status update in one call per utterance.

Without a schema, the extractor turns a user request ("I need a hotel in Chicago") into a goal
described by its request clause ("a hotel in chicago"); acknowledgements, answers to the
system's questions and small talk are not requests (:func:`request_clause`, :func:`is_request`).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from todeval.evals.datasets.sgd_schema import ServiceSchema, load_sgd_schema, stated_values
from todeval.nodes.goal_tracking.judges.goal_extraction import (
    CandidateGoal,
    Utterance,
    in_context,
)
from todeval.nodes.goal_tracking.judges.goal_extraction.features import (
    UtteranceInput,
    goal_features_many,
)
from todeval.nodes.goal_tracking.judges.goal_extraction.schema_index import SchemaIndex
from todeval.nodes.judges.classifier import MLPClassifier
from todeval.nodes.judges.text import cue, sentences
from todeval.nodes.judges.vectors import Embed, FloatArray, VectorTable, minilm_table

MODEL_PATH = Path(__file__).parent / "goal_extractor_mlp.npz"

_Key = tuple[str, tuple[tuple[str, str], ...]]
"""What an utterance's scores depend on (:func:`_key`)."""

#: At most this many schema goals per utterance (SGD users raise one, rarely two, at a time).
MAX_GOALS_PER_UTTERANCE = 2


#: A request: the user wants something done or found.
REQUEST_CUE = cue(
    r"\b(i|we)( would|'d) (like|love)\b|\b(i|we) (want|need|wanna|have to)\b|"
    r"\b(i'm|i am|we're|we are) (looking|searching|trying) (for|to)\b|"
    r"\b(can|could|would|will) you\b|\bplease\b|\b(help|let) me\b|"
    r"^\s*(find|search|look|book|reserve|buy|get|show|play|rent|schedule|call|set|transfer|"
    r"check|make|order)\b|\bi'm interested in\b|\bis it possible to\b"
)
#: A task verb: strong enough to read as a new request even right after a system question.
TASK_VERB = cue(
    r"\b(find|search|look (for|up)|book|reserve|buy|purchase|rent|schedule|play|transfer|"
    r"call|order|make a (reservation|booking|payment|transfer|appointment)|get me)\b"
)
_FILLER = cue(
    r"^(hi|hello|hey|ok|okay|yes|yeah|sure|great|well|so|and|also|thanks|thank you|please)"
    r"\b[\s,!.]*"
)
_PREFIX = cue(
    r"^(i|we)( would|'d) (like|love)( you)?( to)?\s+|^(i|we) (want|need|wanna|have)( you)?( to)?"
    r"\s+|^(i'm|i am|we're|we are) (looking|searching|trying) (for|to)\s+|"
    r"^(can|could|would|will) you( please)?\s+|^please\s+|^(help|let) me( to)?\s+|"
    r"^i'm interested in\s+|^is it possible to\s+"
)


def request_clause(text: str) -> str | None:
    """The request clause of ``text``, normalised ("a hotel in chicago"), or None if none.

    The first sentence with a request cue, lower-cased, without greetings, politeness and
    the "I would like to" / "can you" frame, and without trailing punctuation.
    """
    for sentence in sentences(text):
        if not REQUEST_CUE.search(sentence):
            continue
        clause = sentence.lower().strip()
        for pattern in (_FILLER, _FILLER, _PREFIX, _PREFIX):
            clause = pattern.sub("", clause).strip(" ,")
        clause = re.sub(r"\s+", " ", clause).rstrip(" .!?,")
        clause = re.sub(r"[\s,]+please$", "", clause)
        if len(clause.split()) >= 2:
            return clause
    return None


def is_request(text: str, previous_system: str) -> bool:
    """A request, not an answer to the system's question nor an acknowledgement."""
    if not REQUEST_CUE.search(text):
        return False
    answering = "?" in previous_system and not re.search(r"anything else", previous_system, re.I)
    return not answering or bool(TASK_VERB.search(text))


class LocalGoalExtractor:
    """``local``: the schema-scoring MLP with a schema, request clauses without one."""

    name = "local"

    def __init__(
        self,
        schema: Mapping[str, ServiceSchema] | None = None,
        *,
        model: MLPClassifier | None = None,
        embed: Embed | None = None,
        max_goals: int = MAX_GOALS_PER_UTTERANCE,
    ) -> None:
        self.schema = dict(schema) if schema is not None else None
        self._model = model
        # MiniLM's vectors come from the table the segmenter and the learned teachers share:
        # a chunk's utterances are their messages, embedded once for all of them (a table of
        # its own held a second copy, and its load read every vector again).
        self.vectors = VectorTable(embed) if embed is not None else minilm_table()
        self.max_goals = max_goals
        self._index: SchemaIndex | None = None
        # Each prepared utterance's probabilities and the best of them.
        self._prepared: dict[_Key, tuple[FloatArray, float]] = {}

    @property
    def model(self) -> MLPClassifier:
        """The scorer, loaded on first use."""
        if self._model is None:
            if not MODEL_PATH.exists():
                raise FileNotFoundError(
                    f"No goal-extraction model at {MODEL_PATH}; run `make train-goal-extractor`."
                )
            self._model = MLPClassifier.load(MODEL_PATH)
        return self._model

    @property
    def index(self) -> SchemaIndex:
        """The schema's embedded texts, built on first use."""
        if self._index is None:
            assert self.schema is not None
            self._index = SchemaIndex.build(self.schema, lambda t: self.vectors.embed(list(t)))
        return self._index

    def prepare(self, texts: Sequence[str]) -> None:
        """Embed the chunk's utterances (and the schema, once) in one batch."""
        if self.schema is not None:
            _ = self.index
            self.vectors.load(texts)

    def extract(self, utterance: Utterance, context: Sequence[Utterance]) -> list[CandidateGoal]:
        """Candidate goals of a user utterance; ``[]`` for a system utterance."""
        if utterance.speaker != "USER" or not utterance.text.strip():
            return []
        if self.schema is None:
            system = next((u.text for u in reversed(context) if u.speaker == "SYSTEM"), "")
            clause = request_clause(utterance.text)
            if clause is None or not is_request(utterance.text, system):
                return []
            return [CandidateGoal(clause, "", "", {}, 0.6, utterance.text)]
        return self._schema_goals(utterance, context)

    def _inputs(
        self, pending: Sequence[tuple[Utterance, Sequence[Utterance]]]
    ) -> list[UtteranceInput]:
        """What the features read of each utterance and its context.

        The texts' vectors are looked up once for all (a dialogue's utterances are each other's
        context); each utterance's own rows are then gathered as one new array, the utterance
        first, as its own lookup would stack them.
        """
        texts = [u.text for utterance, context in pending for u in (utterance, *context)]
        row_of = {text: row for row, text in enumerate(dict.fromkeys(texts))}
        table = self.vectors.get(list(row_of))
        inputs = []
        for utterance, context in pending:
            system = next((u.text for u in reversed(context) if u.speaker == "SYSTEM"), "")
            users = [u.text for u in context if u.speaker == "USER" and u.text.strip()]
            everything = [u.text for u in context if u.text.strip()]
            vectors = table[[row_of[text] for text in (utterance.text, *everything)]]
            by_text = dict(zip(everything, vectors[1:], strict=True))
            inputs.append(
                UtteranceInput(
                    vectors[0],
                    utterance.text,
                    by_text[system] if system else None,
                    system,
                    table[[row_of[text] for text in users]] if users else vectors[:0],
                    vectors[1:],
                    tuple(everything),
                )
            )
        return inputs

    def features(self, utterance: Utterance, context: Sequence[Utterance]) -> FloatArray:
        """Feature rows for every intent of the schema (row order of ``index``)."""
        return goal_features_many(self.index, self._inputs([(utterance, context)]))

    def prepare_dialogue(self, pending: Sequence[tuple[Utterance, Sequence[Utterance]]]) -> None:
        """Score a dialogue's user utterances (each with its context) in one step.

        :meth:`probabilities` then reads them: the same numbers as one utterance at a time
        (:func:`~.features.goal_features_many`), at about half the cost. Each call that has
        something new to score replaces the scores kept, so memory stays flat; utterances
        already scored (by :meth:`prepare_dialogues`, for the chunk) are not scored again. An
        utterance not prepared (another dialogue's, in a concurrent run) is scored on its own.
        """
        if self.schema is None:
            return
        wanted = [(u, c) for u, c in pending if _scored_here(u)]
        if all(_key(u, c) in self._prepared for u, c in wanted):
            return
        self._prepared = self._scores(wanted)

    def _scores(
        self, wanted: Sequence[tuple[Utterance, Sequence[Utterance]]]
    ) -> dict[_Key, tuple[FloatArray, float]]:
        """Each user utterance's probabilities and the best of them, scored in one step."""
        n = len(self.index)
        if not wanted or not n:
            return {}
        features = goal_features_many(self.index, self._inputs(wanted))
        # The model's products run per utterance (over more rows they may round otherwise);
        # each utterance's best intent too is read for all at once (a maximum is exact).
        scores = self.model.predict_proba_blocks(features, n).reshape(len(wanted), n)
        best = np.maximum.reduce(scores, axis=1).tolist()
        return {_key(u, c): (scores[k], best[k]) for k, (u, c) in enumerate(wanted)}

    def prepare_dialogues(self, dialogues: Sequence[Sequence[Utterance]]) -> list[str]:
        """Score a chunk's dialogues; the descriptions of the goals the tracker will insert.

        Every utterance is read with its context (:func:`in_context`), as the tracker reads
        it, so the tracker's own :meth:`prepare_dialogue` finds it scored. A description is
        given for the first goal of each (service, intent) in a dialogue, the one Stage 1
        finds new (a later one matches it in memory), repeats removed: the goal memory embeds
        them in one batch instead of one model call per goal.
        """
        if self.schema is None or not len(self.index):
            return []
        prepared: dict[_Key, tuple[FloatArray, float]] = {}
        descriptions: dict[str, None] = {}
        # A dialogue at a time, as before: the whole chunk at once raised a worker's peak memory
        # on SGD dev from 138 to 151 MB, for no time measurably saved.
        for utterances in dialogues:
            scored = self._scores([(u, c) for u, c in in_context(utterances) if _scored_here(u)])
            prepared |= scored
            raised: set[tuple[str, str]] = set()
            for (text, _), (probabilities, best) in scored.items():
                if best < self.model.threshold:
                    continue
                clause = request_clause(text)
                for row, _ in self._goal_rows(probabilities):
                    if self.index.pairs[row] not in raised:
                        raised.add(self.index.pairs[row])
                        descriptions[self._description(clause, row)] = None
        self._prepared = prepared
        return list(descriptions)

    def probabilities(self, utterance: Utterance, context: Sequence[Utterance]) -> FloatArray:
        """The model's probability for every intent of the schema (row order of ``index``)."""
        return self._scored(utterance, context)[0]

    def _scored(
        self, utterance: Utterance, context: Sequence[Utterance]
    ) -> tuple[FloatArray, float]:
        """:meth:`probabilities` and the best of them."""
        prepared = self._prepared.get(_key(utterance, context))
        if prepared is not None:
            return prepared
        probabilities = self.model.predict_proba(self.features(utterance, context))
        return probabilities, float(np.maximum.reduce(probabilities))

    def ranked(self, utterance: Utterance, context: Sequence[Utterance]) -> list[tuple[int, float]]:
        """The ``max_goals`` best intents (row, probability), best first.

        An intent whose sibling (the same intent of another service, e.g. two hotel services'
        ``ReserveHotel``) ranks higher is skipped: the user pursues one of them, not both. So
        is an intent of the same service and kind (search or transaction) as a higher one:
        one-way and round-trip flight searches are alternatives, whereas a search and a
        booking of one service can come in one breath.
        """
        return self._best(self.probabilities(utterance, context))

    def _best(self, probabilities: FloatArray) -> list[tuple[int, float]]:
        """:meth:`ranked`, given the utterance's probabilities."""
        chosen: list[tuple[int, float]] = []
        for row in np.argsort(-probabilities):
            if any(self._alternatives(int(row), other) for other, _ in chosen):
                continue
            chosen.append((int(row), float(probabilities[row])))
            if len(chosen) == self.max_goals:
                break
        return chosen

    def _alternatives(self, row: int, other: int) -> bool:
        """Whether intents ``row`` and ``other`` are ways to the same goal (pick one)."""
        if self.index.siblings[row, other]:
            return True
        (service, _), (other_service, _) = self.index.pairs[row], self.index.pairs[other]
        kind = self.index.intents[row].is_transactional
        return service == other_service and kind == self.index.intents[other].is_transactional

    def _schema_goals(
        self, utterance: Utterance, context: Sequence[Utterance]
    ) -> list[CandidateGoal]:
        assert self.schema is not None
        if not len(self.index):
            return []
        probabilities, best = self._scored(utterance, context)
        # The best intent ranks first: below the threshold, no goal (most user utterances),
        # and neither the ranking nor the request clause is needed.
        if best < self.model.threshold:
            return []
        clause = request_clause(utterance.text)
        goals = []
        for row, p in self._goal_rows(probabilities):
            service, intent = self.index.pairs[row]
            description = self._description(clause, row)
            slots = stated_values(self.schema[service], intent, utterance.text)
            goals.append(
                CandidateGoal(description, service, intent, slots, round(p, 4), utterance.text)
            )
        return goals

    def _goal_rows(self, probabilities: FloatArray) -> list[tuple[int, float]]:
        """The ranked intents (:meth:`_best`) at or above the model's threshold."""
        rows = []
        for row, p in self._best(probabilities):
            if p < self.model.threshold:
                break
            rows.append((row, p))
        return rows

    def _description(self, clause: str | None, row: int) -> str:
        """A goal's description: the request clause, else its intent's description or name."""
        return clause or self.index.intents[row].description or self.index.pairs[row][1]


def _scored_here(utterance: Utterance) -> bool:
    """Whether the schema model scores the utterance: a user's, with words."""
    return utterance.speaker == "USER" and bool(utterance.text.strip())


def _key(utterance: Utterance, context: Sequence[Utterance]) -> _Key:
    """What an utterance's scores depend on: its text and its context's speakers and texts."""
    return utterance.text, tuple((u.speaker, u.text) for u in context)


class LocalGoalExtraction:
    """The role's ``local`` judge: one :class:`LocalGoalExtractor` per schema.

    The schema comes with the data (``Context.schema_path``), not with the spec, so the judge
    the spec names hands out the extractor of a schema, built once per schema (each keeps its
    embedded schema and vectors).
    """

    name = "local"

    def __init__(self) -> None:
        self._extractors: dict[str | None, LocalGoalExtractor] = {}
        self._lock = threading.Lock()

    def for_schema(self, schema_path: str | None) -> LocalGoalExtractor:
        """The extractor for an SGD ``schema.json``; None for schema-free extraction."""
        with self._lock:
            found = self._extractors.get(schema_path)
            if found is None:
                schema = load_sgd_schema(schema_path) if schema_path else None
                found = self._extractors[schema_path] = LocalGoalExtractor(schema)
            return found
