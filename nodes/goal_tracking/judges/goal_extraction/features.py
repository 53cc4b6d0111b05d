"""Features for the local goal extractor: one row per (user utterance, schema intent).

ATOD (paper 000, Section 5.2) extracts candidate goals from the utterance ``u_t`` and its
context ``c_t``. With an SGD-style schema a goal is a ``(service, intent)`` pair, so the
question for every intent of the schema is "does this utterance raise it?". Every feature is
*relational* (MiniLM cosines between the utterance, or its context, and the schema's own
texts; ranks and margins among the intents; cue flags), never a raw embedding, so a model
trained on SGD train applies to services it has never seen (SGD dev/test), as long as their
schema describes them.

The schema texts compared: each intent's name and description, its service's domain and
description, and the descriptions of the slots the intent takes. The context used: the
system's previous utterance (an offer such as "Would you like to book a table?" followed by
"Yes" starts a booking) and the user's previous utterances (a booking after a lookup in the
same service).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from todeval.nodes.goal_tracking.judges.goal_extraction.schema_index import (
    MaskRuns,
    SchemaIndex,
    ServiceGroups,
    TextWords,
)
from todeval.nodes.judges.text import cue
from todeval.nodes.judges.vectors import FloatArray

#: The user asks for a transaction (booking, purchase, payment, playback, a ride).
TRANSACT_CUE = cue(
    r"\b(book|booking|reserve|reservation|buy|purchase|rent|schedule|set up|set an?|add|"
    r"transfer|send|pay|play|call (me )?an?|get me an?|make an?|order|hire|visit|tickets?)\b"
)
#: The user asks to look something up.
LOOKUP_CUE = cue(
    r"\b(find|search|look(ing)? (for|up)|show|check|what|which|where|any|suggest|recommend|"
    r"browse|discover|list|know|tell me|options?|available|how)\b"
)
#: The user accepts or confirms what the system said.
AFFIRM_CUE = cue(
    r"^\s*(yes|yeah|yep|yup|sure|ok|okay|correct|right|great|perfect|fine|sounds good|"
    r"that (works|sounds|is|would)|please do|go ahead|do it|absolutely|definitely|of course)\b"
)
#: The user closes or declines.
CLOSING_CUE = cue(
    r"\b(thanks|thank you|that('s| is| will be) (all|it)|nothing else|bye|goodbye|"
    r"no,? (thanks|thank you)|not (now|right now|at the moment))\b"
)
#: The system offers a transaction ("Would you like to book ...?").
OFFER_CUE = cue(
    r"\b(would|do) you (like|want|wish)( me)? to (book|reserve|buy|purchase|rent|make|schedule|"
    r"play|set|transfer|get|call|proceed|visit|order|add)\b|\bshall i (book|reserve|buy|"
    r"make|schedule|play|set|get)\b"
)
#: The system offers further help.
MORE_HELP_CUE = cue(r"\banything else\b|\bsomething else\b|\bhelp (you )?with\b")
NEGATION_CUE = cue(r"^\s*(no|nope|nah)\b|\b(don't|do not|not)\b")

FEATURE_NAMES: tuple[str, ...] = (
    "u_intent",
    "u_service",
    "u_slots",
    "u_score",
    "u_margin",
    "u_inverse_rank",
    "u_margin_in_service",
    "u_service_margin",
    "s_intent",
    "s_service",
    "s_slots",
    "s_margin",
    "ctx_intent",
    "ctx_service",
    "ctx_service_margin",
    "ctx_lookup_in_service",
    "has_sibling",
    "u_sibling_margin",
    "s_sibling_margin",
    "ctx_sibling_margin",
    "slot_affinity_sibling_margin",
    "topic_service",
    "topic_service_margin",
    "topic_slots_margin",
    "u_name_overlap",
    "u_domain_overlap",
    "u_description_overlap",
    "ctx_domain_overlap",
    "u_overlap_margin",
    "transactional",
    "transactional_x_transact_cue",
    "lookup_x_lookup_cue",
    "transactional_x_offer",
    "transact_cue",
    "lookup_cue",
    "affirm",
    "closing",
    "negation",
    "question",
    "n_words",
    "system_offer",
    "system_more_help",
    "system_question",
)


def _margins(scores: FloatArray) -> FloatArray:
    """Per row of ``scores`` ``(m, n)``: each value minus the best *other* value of its row.

    The best other value is the row's best, or its second best for the best itself: the same
    values as the masked maximum of :func:`_masked_margins`, in O(n).
    """
    m, n = scores.shape
    if n < 2:
        return np.zeros((m, n), np.float32)
    order = np.argsort(-scores, axis=1, kind="stable")
    rows = np.arange(m)
    best, second = scores[rows, order[:, 0]], scores[rows, order[:, 1]]
    others = np.repeat(best[:, None], n, axis=1)
    others[rows, order[:, 0]] = second
    return (scores - others).astype(np.float32)


def _masked_margins(scores: FloatArray, allowed: np.ndarray | MaskRuns) -> FloatArray:
    """Per row of ``scores`` ``(m, n)``: each value minus the best value ``allowed`` lets in.

    Value ``i`` is compared with the values ``j`` where ``allowed[i, j]`` (0 when none is).
    The maximum is exact, so each row's values are those of its own call, bit for bit.
    """
    others = _masked_max(scores, allowed)
    return np.where(np.isfinite(others), scores - others, 0.0).astype(np.float32)


def _masked_max(scores: FloatArray, allowed: np.ndarray | MaskRuns) -> FloatArray:
    """Per row of ``scores`` ``(m, n)``: each ``i``'s best value where ``allowed[i, j]``.

    -inf when ``allowed`` lets no value in. Only the allowed values are gathered (the masks
    are sparse: siblings, a service's intents), and each ``i``'s run of them is reduced in one
    ``maximum.reduceat``: the same maxima as masking every value, without an ``(m, n, n)``
    array. ``allowed`` may come as its runs (:class:`~.schema_index.MaskRuns`, kept with the
    schema's masks).
    """
    runs = allowed if isinstance(allowed, MaskRuns) else MaskRuns.of(allowed)
    best = np.full(scores.shape, -np.inf, scores.dtype)
    if len(runs.columns):
        best[:, runs.compared] = np.maximum.reduceat(scores[:, runs.columns], runs.starts, axis=1)
    return best


def _row_means(products: FloatArray, out: FloatArray | None = None) -> FloatArray:
    """``products.mean(axis=1)``, by np.mean's own steps without its Python wrapper.

    The float32 sums, divided by the count as numpy's mean does (an ``intp`` count: the
    division runs in float64 and is rounded back into the float32 sums), bit for bit.
    ``out``: a float32 row to write the means into (the sums are taken there).
    """
    sums = np.add.reduce(products, axis=1, out=out)
    count = np.intp(products.shape[1])
    means: FloatArray = np.true_divide(sums, count, out=sums, casting="unsafe")
    return means


def _margins_to_other_groups(
    scores: FloatArray, groups: np.ndarray, grouping: ServiceGroups | None = None
) -> FloatArray:
    """Per row of ``scores`` ``(m, n)``: each value minus the best value of another group.

    :func:`_masked_margins` with ``allowed[i, j]`` when ``groups[i] != groups[j]`` (a service's
    intents against every other service's), the same exact maxima: each group's best, then per
    row the best group's and the runner-up's (which ties the best when two groups do). The
    best value of another group is the runner-up for the best group's values, else the best.
    ``grouping``: ``groups`` sorted, as :class:`~.schema_index.ServiceGroups` keeps it.
    """
    m = scores.shape[0]
    order, starts, group_of = (grouping or ServiceGroups.of(groups)).sorted()
    group_best = np.maximum.reduceat(scores.T[order], starts, axis=0)  # (groups, m)
    top = group_best.argmax(axis=0)
    best = group_best[top, np.arange(m)]
    group_best[top, np.arange(m)] = -np.inf
    runner_up = group_best.max(axis=0)
    others = np.where(group_of[None, :] == top[:, None], runner_up[:, None], best[:, None])
    return np.where(np.isfinite(others), scores - others, 0.0).astype(np.float32)


@dataclass(frozen=True)
class UtteranceInput:
    """What the features read of one user utterance.

    Vectors are MiniLM; ``system`` is None at the dialogue's start.
    """

    utterance: FloatArray
    utterance_text: str
    system: FloatArray | None
    system_text: str
    context_users: FloatArray
    context_all: FloatArray | None = None
    context_texts: tuple[str, ...] = ()


def goal_features_many(index: SchemaIndex, items: Sequence[UtteranceInput]) -> FloatArray:
    """Feature rows of several user utterances, stacked: ``(len(items) * n, F)``.

    Rows ``k * n`` to ``(k + 1) * n`` are the ``n`` intents' rows of ``items[k]``, the same bits
    whatever else is in ``items``: the products with the schema's vectors (and the context
    means) are taken per utterance, and only the element-wise steps, maxima and sorts, which
    give the same bits however many rows they run over, go over every utterance of a dialogue
    in one step (about a third of the cost of one call per utterance). The margins that share a
    mask are taken in one step (:func:`_masked_margins`); the masks that depend on the schema
    only come from the index (:class:`~.schema_index.FeatureMasks`, built once).
    """
    n, m = len(index), len(items)
    if not m:
        return np.zeros((0, len(FEATURE_NAMES)), np.float32)
    masks = index.masks
    zeros = np.zeros(n, np.float32)
    # Per utterance, its own, its system turn's and its context's products (zeros where there
    # is none), written into one block: the same products as one call per utterance.
    u_intent, u_service, u_slots = np.empty((3, m, n), np.float32)
    s_i, s_s, s_sl, c_i, c_s, slot_affinity, topic_all, topic_slots_all = np.zeros(
        (8, m, n), np.float32
    )
    # Each product and reduction writes into its block (``out=``): the same kernels and bits
    # as a new array copied in, without the copies (a dialogue's utterances run this loop).
    intent_vecs, service_vecs, slot_vecs = index.intent_vecs, index.service_vecs, index.slot_vecs
    service_slot_vecs = index.service_slot_vecs
    matmul, maximum = np.matmul, np.maximum.reduce
    for k, item in enumerate(items):
        utterance = item.utterance
        matmul(intent_vecs, utterance, out=u_intent[k])
        matmul(service_vecs, utterance, out=u_service[k])
        matmul(slot_vecs, utterance, out=u_slots[k])
        system, users = item.system, item.context_users
        if system is not None:
            matmul(intent_vecs, system, out=s_i[k])
            matmul(service_vecs, system, out=s_s[k])
            matmul(slot_vecs, system, out=s_sl[k])
        if len(users):
            maximum(intent_vecs @ users.T, axis=1, out=c_i[k])
            maximum(service_vecs @ users.T, axis=1, out=c_s[k])
        # Telling sibling intents apart: which service's texts and slots the dialogue is about
        # (the rows stacked as np.vstack stacks them, without its per-array checks).
        in_play = np.concatenate(
            [
                utterance[None, :],
                *([system[None, :]] if system is not None else []),
                *([users] if len(users) else []),
            ]
        )
        maximum(service_slot_vecs @ in_play.T, axis=1, out=slot_affinity[k])
        # The topic in play over the whole context (and, below, plain word overlap: MiniLM
        # blurs "one way" and "round trip").
        if item.context_all is not None and len(item.context_all):
            _row_means(service_vecs @ item.context_all.T, topic_all[k])
            _row_means(service_slot_vecs @ item.context_all.T, topic_slots_all[k])
    u_score = u_intent + 0.5 * u_service
    u_in_service = _masked_margins(u_intent, masks.same_service_runs)
    u_in_service = np.where(masks.shares_service[None, :], u_in_service, 0.0)
    # A transaction after a lookup in the same service: how strongly the utterance and its
    # context raised the service's lookup intents.
    # (A transaction is no lookup, so -1 is always among the values its maximum is taken over.)
    raised = np.maximum(u_intent, c_i)
    lookup_in_service = np.maximum(_masked_max(raised, masks.lookup_runs), -1.0)
    lookup_in_service = np.where(masks.transactional[None, :], np.maximum(lookup_in_service, 0), 0)
    texts = [item.utterance_text for item in items]
    systems = [item.system_text for item in items]
    flags = {
        "transact": _column([bool(TRANSACT_CUE.search(t)) for t in texts]),
        "lookup": _column([bool(LOOKUP_CUE.search(t)) for t in texts]),
        "affirm": _column([bool(AFFIRM_CUE.search(t)) for t in texts]),
        "closing": _column([bool(CLOSING_CUE.search(t)) for t in texts]),
        "negation": _column([bool(NEGATION_CUE.search(t)) for t in texts]),
        "question": _column(["?" in t for t in texts]),
        "offer": _column([bool(OFFER_CUE.search(t)) for t in systems]),
        "more_help": _column([bool(MORE_HELP_CUE.search(t)) for t in systems]),
        "system_question": _column(["?" in t for t in systems]),
    }
    s_score = s_i + 0.5 * s_s
    siblings = np.stack([u_score, s_score, c_i + 0.5 * c_s, slot_affinity], axis=1)
    sibling_margins = np.where(
        masks.has_sibling, _masked_margins(siblings.reshape(4 * m, n), masks.sibling_runs), 0.0
    ).astype(np.float32)
    sibling_margins = sibling_margins.reshape(m, 4, n)
    in_service = _margins_to_other_groups(
        np.stack([u_service, c_s, topic_all, topic_slots_all], axis=1).reshape(4 * m, n),
        index.service_ids,
        index.service_groups,
    ).reshape(m, 4, n)
    no_users = np.asarray([not len(item.context_users) for item in items])
    in_service[no_users, 1] = zeros
    # Each text of the dialogue tokenised once (contexts overlap), keeping the tables' words.
    read = TextWords(index.lexicon)
    domains = index.domain_rows.vocabulary
    said = [read.of(item.utterance_text) for item in items]
    lexical = np.stack(
        [
            index.name_rows.overlaps(said),
            index.domain_rows.overlaps(said),
            index.description_rows.overlaps(said),
            index.domain_rows.overlaps(
                [read.joined_among(item.context_texts, domains) for item in items]
            ),
        ],
        axis=2,
    ).astype(np.float32)
    lexical_sum = lexical[:, :, 0] + lexical[:, :, 1] + lexical[:, :, 2]
    overall = _margins(np.stack([u_score, s_score, lexical_sum], axis=1).reshape(3 * m, n))
    overall = overall.reshape(m, 3, n)
    no_system = np.asarray([item.system is None for item in items])
    overall[no_system, 1] = zeros

    tx = index.transactional
    ranks = np.empty((m, n), np.float32)
    np.put_along_axis(
        ranks, np.argsort(-u_score, axis=1), np.arange(n, dtype=np.float32)[None, :], axis=1
    )
    rows = [
        u_intent,
        u_service,
        u_slots,
        u_score,
        overall[:, 0],
        (1.0 / (1.0 + ranks)).astype(np.float32),
        u_in_service,
        in_service[:, 0],
        s_i,
        s_s,
        s_sl,
        overall[:, 1],
        c_i,
        c_s,
        in_service[:, 1],
        lookup_in_service,
        np.broadcast_to(masks.has_sibling, (m, n)),
        *(sibling_margins[:, k] for k in range(4)),
        topic_all,
        in_service[:, 2],
        in_service[:, 3],
        *(lexical[:, :, k] for k in range(4)),
        overall[:, 2],
        np.broadcast_to(tx, (m, n)),
        tx * flags["transact"],
        (1 - tx) * flags["lookup"],
        tx * flags["offer"],
    ]
    # The same value on every intent's row: the cues and the utterance's length.
    constant = [flags[name] for name in ("transact", "lookup", "affirm", "closing", "negation")]
    lengths = [min(len(t.split()), 40) / 20.0 for t in texts]
    constant += [flags["question"], _column(lengths)]
    constant += [flags["offer"], flags["more_help"], flags["system_question"]]
    # Each column is written whole (contiguous, cast to float32 as it is written), then the
    # columns are turned into rows in one copy: the same values, in fewer strided writes.
    columns = np.empty((len(rows) + len(constant), m, n), np.float32)
    for column, values in enumerate([*rows, *constant]):
        columns[column] = values
    return columns.transpose(1, 2, 0).reshape(m * n, -1)


def _column(values: Sequence[float] | Sequence[bool]) -> np.ndarray:
    """One value per utterance, as a column that broadcasts over the intents."""
    return np.asarray(values)[:, None]
