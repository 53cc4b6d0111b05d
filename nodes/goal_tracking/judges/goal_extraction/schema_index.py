"""A schema's texts embedded once: the intents the goal extractor scores (ATOD §5.2).

One row per ``(service, intent)`` of an SGD-style schema, with the MiniLM vectors of the
intent's name and description, its service's domain and description, and its slots'
descriptions, plus which rows are siblings (the same intent offered by two services).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from todeval.evals.datasets.sgd_schema import IntentSchema, ServiceSchema
from todeval.nodes.judges.vectors import Embed, FloatArray

#: Intents of different services this similar (cosine of name + description) are siblings.
SIBLING_SIMILARITY = 0.8
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")

_WORD = re.compile(r"[a-z0-9]+")
STOP_WORDS = frozenset(
    "a an the for to of in on at by and or with your you user's user a given on any from "
    "this that their my".split()
)


def words(text: str) -> frozenset[str]:
    """Lower-cased words, a plural ``s`` cut ("flights" -> "flight"); "one-way" adds "oneway"."""
    return _words(_WORD.findall(text.lower()))


def _words(tokens: list[str]) -> frozenset[str]:
    found = tokens + [a + b for a, b in zip(tokens, tokens[1:], strict=False)]
    # _singular inline: a call per token was a third of the tokeniser's time.
    return frozenset([t[:-1] if len(t) > 3 and t[-1] == "s" else t for t in found])


def _singular(token: str) -> str:
    return token[:-1] if len(token) > 3 and token[-1] == "s" else token


@functools.lru_cache(maxsize=8)
def _prefixes(lexicon: frozenset[str]) -> frozenset[str]:
    """Every non-empty prefix of every word of ``lexicon`` (the words themselves included).

    Made once per lexicon (a schema's: every dialogue's features read it).
    """
    return frozenset(word[:end] for word in lexicon for end in range(1, len(word) + 1))


def _words_among(
    tokens: list[str], lexicon: frozenset[str], prefixes: frozenset[str]
) -> frozenset[str]:
    """``_words(tokens) & lexicon``, without making the pairs that cannot be in ``lexicon``.

    A pair's word is ``a + b`` or ``a + b[:-1]`` (a plural ``s`` cut), so it starts with its
    first token ``a``: only a pair whose ``a`` begins some word of the lexicon (``prefixes``)
    can be in it.
    """
    kept = [
        word
        for token in tokens
        if (word := token[:-1] if len(token) > 3 and token[-1] == "s" else token) in lexicon
    ]
    for first, second in zip(tokens, tokens[1:], strict=False):
        if first in prefixes and (word := _singular(first + second)) in lexicon:
            kept.append(word)
    return frozenset(kept)


class TextWords:
    """:func:`words` of a dialogue's texts, and of runs of them joined, each text read once.

    A token never spans two texts joined with a space, so the words of the joined text are
    each text's words and the pairs that meet across the joins: the context of every utterance
    (its previous four, joined) is read from its texts' words, not tokenised again.

    ``lexicon``: when given, only the words in it are kept (``words(text) & lexicon``): the
    word tables read nothing else of a text, and a word of the lexicon is found without making
    every word of the text (see :func:`_words_among`).
    """

    def __init__(self, lexicon: frozenset[str] | None = None) -> None:
        self._read: dict[str, tuple[list[str], frozenset[str]]] = {}
        self._among: dict[frozenset[str], dict[str, frozenset[str]]] = {}
        self._lexicon = lexicon
        self._prefixes = _prefixes(lexicon) if lexicon is not None else frozenset()

    def _tokens(self, text: str) -> tuple[list[str], frozenset[str]]:
        found = self._read.get(text)
        if found is None:
            tokens = _WORD.findall(text.lower())
            if self._lexicon is None:
                found = self._read[text] = (tokens, _words(tokens))
            else:
                kept = _words_among(tokens, self._lexicon, self._prefixes)
                found = self._read[text] = (tokens, kept)
        return found

    def of(self, text: str) -> frozenset[str]:
        """``words(text)`` (``& lexicon`` when one was given)."""
        return self._tokens(text)[1]

    def joined(self, texts: Sequence[str]) -> frozenset[str]:
        """``words(" ".join(texts))`` (``& lexicon`` when one was given)."""
        return self.joined_among(texts, self._lexicon)

    def joined_among(
        self, texts: Sequence[str], vocabulary: frozenset[str] | None
    ) -> frozenset[str]:
        """``words(" ".join(texts)) & vocabulary`` (every word when ``vocabulary`` is None).

        A word table reads only its own words of a text (:meth:`WordRows.overlaps`): a
        context's few table words are the union of its texts' (each taken once) and the pairs
        across the joins, not the union of every word of its four texts. With a lexicon,
        ``vocabulary`` must be within it.
        """
        if vocabulary is None and self._lexicon is not None:
            raise ValueError("a TextWords with a lexicon reads only words within it")
        among = self._among.setdefault(vocabulary, {}) if vocabulary is not None else None
        parts: list[frozenset[str]] = []
        across: list[str] = []
        last = None  # the last token before the join
        for text in texts:
            tokens, found = self._tokens(text)
            if not tokens:
                continue
            if among is not None and vocabulary is not None:
                kept = among.get(text)
                if kept is None:
                    kept = among[text] = found & vocabulary
                found = kept
            parts.append(found)
            if last is not None:
                pair = _singular(last + tokens[0])
                if vocabulary is None or pair in vocabulary:
                    across.append(pair)
            last = tokens[-1]
        return frozenset().union(*parts, across)


def humanise(name: str) -> str:
    """``ReserveRestaurant`` -> ``Reserve Restaurant``; ``Restaurants_2`` -> ``Restaurants``."""
    return _CAMEL.sub(" ", name.split("_")[0]).strip()


class WordRows:
    """One word set per row, as a matrix: how much of each row's set a text's words cover.

    ``overlaps([present])[0, i]`` is ``len(rows[i] & present) / len(rows[i])`` (0 for an empty
    set), the same numbers as the set arithmetic, for every row and text in one step.
    """

    def __init__(self, rows: Sequence[frozenset[str]]) -> None:
        vocabulary = sorted(set().union(*rows)) if rows else []
        self.vocabulary = frozenset(vocabulary)
        self.columns = {word: column for column, word in enumerate(vocabulary)}
        self.matrix = np.zeros((len(rows), len(vocabulary)), dtype=np.int32)
        for row, wanted in enumerate(rows):
            self.matrix[row, [self.columns[word] for word in wanted]] = 1
        self.sizes = np.asarray([len(wanted) for wanted in rows], dtype=np.int64)
        self.safe_sizes = np.maximum(self.sizes, 1)
        self._words_by_row = self.matrix.T.astype(np.float64)

    def overlaps(self, present: Sequence[frozenset[str]]) -> NDArray[np.float64]:
        """Each row's share of its words among each of ``present``: ``(len(present), rows)``.

        The shared words are counted by one product over every text (a dialogue's utterances):
        the counts are small integers, exact in float64 whatever the order of the sum, so each
        text's numbers are those of the set arithmetic, bit for bit.
        """
        said = np.zeros((len(present), len(self.columns)))
        for row, words_said in enumerate(present):
            for word in words_said & self.vocabulary:  # a few: cheaper one by one than a list
                said[row, self.columns[word]] = 1.0
        shared = said @ self._words_by_row
        return np.where(self.sizes > 0, shared / self.safe_sizes, 0.0)


@dataclass(frozen=True)
class ServiceGroups:
    """Rows sorted by their group (service), as the margins to other groups read them.

    Attributes:
        order: The rows in group order (a stable sort).
        starts: Where each group's run begins in ``order``.
        group_of: Each row's group number, counting the groups in sorted order.
    """

    order: np.ndarray
    starts: np.ndarray
    group_of: np.ndarray

    @classmethod
    def of(cls, groups: np.ndarray) -> ServiceGroups:
        """The sort of ``groups`` (one integer per row)."""
        order = np.argsort(groups, kind="stable")
        ordered = groups[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        return cls(order, starts, np.searchsorted(ordered[starts], groups))

    def sorted(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(order, starts, group_of)``."""
        return self.order, self.starts, self.group_of


@dataclass(frozen=True)
class MaskRuns:
    """A row mask ``allowed`` ``(n, n)`` as the masked maxima gather it.

    Attributes:
        columns: The allowed ``j`` of every row, row after row (``np.nonzero``'s order).
        compared: Rows that allow some ``j``.
        starts: Where each compared row's run of ``columns`` begins.
    """

    columns: np.ndarray
    compared: np.ndarray
    starts: np.ndarray

    @classmethod
    def of(cls, allowed: np.ndarray) -> MaskRuns:
        """The runs of ``allowed``."""
        rows, columns = np.nonzero(allowed)  # row-major: each i's allowed j form one run
        compared = np.asarray(allowed.any(axis=1))
        return cls(columns, compared, np.searchsorted(rows, np.flatnonzero(compared)))


@dataclass(frozen=True)
class FeatureMasks:
    """Which rows each feature of a row compares it with, fixed by the schema.

    Attributes:
        same_service_others: ``[i, j]`` for another intent ``j`` of row ``i``'s service.
        siblings: ``[i, j]`` for a sibling ``j`` of row ``i`` (:attr:`SchemaIndex.siblings`).
        shares_service: Rows whose service has other intents.
        has_sibling: Rows with a sibling.
        lookup_rows: ``[i, j]`` for a lookup (non-transactional) intent ``j`` of row ``i``'s
            service, ``i`` itself included.
        transactional: Transactional rows.
    """

    same_service_others: np.ndarray
    siblings: np.ndarray
    shares_service: np.ndarray
    has_sibling: np.ndarray
    lookup_rows: np.ndarray
    transactional: np.ndarray

    @functools.cached_property
    def same_service_runs(self) -> MaskRuns:
        """``same_service_others`` as runs (made once: every dialogue's features read it)."""
        return MaskRuns.of(self.same_service_others)

    @functools.cached_property
    def sibling_runs(self) -> MaskRuns:
        """``siblings`` as runs (made once)."""
        return MaskRuns.of(self.siblings)

    @functools.cached_property
    def lookup_runs(self) -> MaskRuns:
        """``lookup_rows`` as runs (made once)."""
        return MaskRuns.of(self.lookup_rows)


@dataclass(frozen=True)
class SchemaIndex:
    """The schema's intents and the MiniLM vectors of their texts, row ``i`` per intent.

    Attributes:
        pairs: ``(service, intent)`` per row.
        intents: The intent schemas, per row.
        intent_vecs: "Intent Name: intent description", embedded.
        service_vecs: "Domain: service description" of the row's service, embedded.
        slot_vecs: Normalised mean of the row's slot description vectors (zeros if none).
        service_slot_vecs: The same over all slots of the row's service.
        siblings: ``[i, j]`` when intents ``i`` and ``j`` of different services do the same
            thing (same name, or near-identical descriptions), e.g. two hotel services'
            ``ReserveHotel``: only the services' other texts and slots tell them apart.
        service_ids: The row's service as an integer, for within/between-service margins.
        transactional: 1.0 for transactional intents.
        name_words: Stemmed words of the intent's name ("reserve", "restaurant").
        domain_words: Stemmed words of the service's domain ("rental", "car").
        description_words: Stemmed content words of the intent's description.
    """

    pairs: list[tuple[str, str]]
    intents: list[IntentSchema]
    intent_vecs: FloatArray
    service_vecs: FloatArray
    slot_vecs: FloatArray
    service_slot_vecs: FloatArray
    siblings: np.ndarray
    service_ids: np.ndarray
    transactional: FloatArray
    name_words: list[frozenset[str]] = field(default_factory=list)
    domain_words: list[frozenset[str]] = field(default_factory=list)
    description_words: list[frozenset[str]] = field(default_factory=list)

    @functools.cached_property
    def name_rows(self) -> WordRows:
        """``name_words`` as a matrix (built once)."""
        return WordRows(self.name_words)

    @functools.cached_property
    def domain_rows(self) -> WordRows:
        """``domain_words`` as a matrix (built once)."""
        return WordRows(self.domain_words)

    @functools.cached_property
    def description_rows(self) -> WordRows:
        """``description_words`` as a matrix (built once)."""
        return WordRows(self.description_words)

    @functools.cached_property
    def lexicon(self) -> frozenset[str]:
        """Every word the word tables read (built once): a text's other words count for none."""
        return (
            self.name_rows.vocabulary
            | self.domain_rows.vocabulary
            | self.description_rows.vocabulary
        )

    @functools.cached_property
    def same_service(self) -> np.ndarray:
        """``[i, j]`` when rows ``i`` and ``j`` are intents of one service (built once)."""
        same: np.ndarray = self.service_ids[:, None] == self.service_ids[None, :]
        return same

    @functools.cached_property
    def service_groups(self) -> ServiceGroups:
        """``service_ids`` sorted (built once: every dialogue's features read it)."""
        return ServiceGroups.of(self.service_ids)

    @functools.cached_property
    def masks(self) -> FeatureMasks:
        """The row masks the goal extractor's features use (built once)."""
        same = self.same_service
        others_here = same & ~np.eye(len(self), dtype=bool)
        return FeatureMasks(
            same_service_others=others_here,
            siblings=self.siblings,
            shares_service=np.asarray(others_here.any(axis=1)),
            has_sibling=np.asarray(self.siblings.any(axis=1)),
            lookup_rows=same & (self.transactional[None, :] < 0.5),
            transactional=self.transactional > 0.5,
        )

    @classmethod
    def build(cls, schema: Mapping[str, ServiceSchema], embed: Embed) -> SchemaIndex:
        """Embed the schema's intent, service and slot texts in one batch."""
        pairs, intents, intent_texts, service_texts, slot_lists = [], [], [], [], []
        service_ids, service_slots = [], []
        for number, service in enumerate(schema.values()):
            descriptions = {slot.name: slot.description or slot.name for slot in service.slots}
            for intent in service.intents:
                pairs.append((service.service_name, intent.name))
                intents.append(intent)
                service_ids.append(number)
                intent_texts.append(f"{humanise(intent.name)}: {intent.description}")
                domain = humanise(service.service_name)
                service_texts.append(f"{domain}: {service.description}")
                names = [*intent.required_slots, *intent.optional_slots]
                slot_lists.append([descriptions.get(name, name) for name in names])
                service_slots.append(list(descriptions.values()))
        slot_texts = sorted({text for texts in service_slots for text in texts})
        vectors = embed([*intent_texts, *service_texts, *slot_texts]) if pairs else None
        n = len(pairs)
        if vectors is None:
            empty, none = np.zeros((0, 384), np.float32), np.zeros((0, 0), bool)
            zero = np.zeros(0, np.float32)
            return cls([], [], empty, empty, empty, empty, none, np.zeros(0, int), zero)
        slot_table = dict(zip(slot_texts, vectors[2 * n :], strict=True))
        names = [humanise(intent) for _, intent in pairs]
        same_name = np.array([[a == b for b in names] for a in names])
        ids = np.asarray(service_ids)
        near = vectors[:n] @ vectors[:n].T >= SIBLING_SIMILARITY
        return cls(
            pairs=pairs,
            intents=intents,
            intent_vecs=vectors[:n],
            service_vecs=vectors[n : 2 * n],
            slot_vecs=_mean_vectors(slot_lists, slot_table),
            service_slot_vecs=_mean_vectors(service_slots, slot_table),
            siblings=(same_name | near) & (ids[:, None] != ids[None, :]),
            service_ids=ids,
            transactional=np.asarray([i.is_transactional for i in intents], np.float32),
            name_words=[words(humanise(intent)) for _, intent in pairs],
            domain_words=[words(humanise(service)) for service, _ in pairs],
            description_words=[words(i.description) - STOP_WORDS for i in intents],
        )

    def __len__(self) -> int:
        """Number of intents."""
        return len(self.pairs)


def _mean_vectors(groups: list[list[str]], table: dict[str, FloatArray]) -> FloatArray:
    """Per group, the normalised mean of its texts' vectors (zeros for an empty group)."""
    dim = len(next(iter(table.values()))) if table else 384
    out = np.zeros((len(groups), dim), np.float32)
    for row, texts in enumerate(groups):
        known = [table[text] for text in texts if text in table]
        if known:
            mean = np.mean(known, axis=0)
            out[row] = mean / max(float(np.linalg.norm(mean)), 1e-6)
    return out
