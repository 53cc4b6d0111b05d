"""``local:semantic``: turn quality from how well the answer fits the question (MiniLM).

Reads the question (with the previous user message prepended when the question leans on it:
"what about contractors?"), the response and the retrieved snippets; never surface failure
signs (``local:response``) nor the user's reaction (``local:signals``).

Rules:

* Abstain (``None``) when there is nothing to fit: an empty response, an acknowledgement or
  small talk, a report back that asks nothing, a clarifying question back, or a response that
  is not an answer (a refusal, "nothing found", an error: their low fit says nothing).
* **E3**: snippets were shown, the question names its own topic, the best snippet fits it less
  than ``FAIL_BELOW`` while the answer follows its snippets (cosine >= ``SUCCEED_ABOVE``).
* **E1**: the answer fits the question less than ``FAIL_BELOW``.
* **success**: the answer fits the question at least ``SUCCEED_ABOVE``.
* In between: ``None`` with the fit in the rationale.

Fit is ``max(cos(question, answer), cos(previous + question, answer))`` for a question that
leans on the previous one, ``cos(question, answer)`` otherwise.

Calibration (``scripts/calibrate_semantic_teacher.py``, SGD dev): true pairs are the 13,936
turns this teacher judges; wrong answers pair a question with a reply from another dialogue of
the same service (what E1 looks like). ``FAIL_BELOW`` = 0.13 is the 5th percentile of true
pairs, ``SUCCEED_ABOVE`` = 0.50 the 95th of wrong answers; AUC 0.82. The stricter cut points
of SGD's purest question-answer turns (0.26 / 0.53) call a tenth of its transactional replies
off-topic, and the previous message is kept because real follow-ups cannot be read without
it. MiniLM cosine separates a fitting answer from an on-topic wrong one only in the tails,
hence the wide uncertain band.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np

from todeval.evals.schema import Dialogue, Turn
from todeval.nodes.goal_success.judges.response_cues import (
    CAPABILITY_LIMIT,
    ERROR_CODE,
    ERROR_TEXT,
    NO_RESULTS,
    PREVIOUS_REPLY_CUES,
    REFUSAL,
    is_clarification,
)
from todeval.nodes.goal_success.judges.turn_quality import TeacherVerdict, TurnLabel
from todeval.nodes.goal_success.judges.user_cues import (
    CORRECTION,
    NEGATIVE_FEEDBACK,
    USER_CUES,
    carries_domain,
    is_acknowledgement,
    is_elliptic,
    makes_request,
)
from todeval.nodes.judges.vectors import Embed, FloatArray, VectorTable

#: A message that opens with an acknowledgement or a report of what the user did.
_OPENS_OR_CLOSES = re.compile(
    r"^\s*(ok(ay)?|k|great|thanks|thx|cool|alright|done|did (that|it)|got (it|the)|found)\b",
    re.IGNORECASE,
)

#: Answer-question cosine below which the answer addresses a different question (E1).
FAIL_BELOW = 0.13
#: Answer-question cosine from which the answer fits the question (success).
SUCCEED_ABOVE = 0.50


def needs_context(message: str) -> bool:
    """True when a user message needs the previous one to be understood."""
    return is_elliptic(message) or bool(
        NEGATIVE_FEEDBACK.search(message) or CORRECTION.search(message)
    )


def question_texts(dialogue: Dialogue) -> list[tuple[str, str | None]]:
    """Per turn, the question and (when it leans on it) previous message + question."""
    out: list[tuple[str, str | None]] = []
    previous: str | None = None
    for turn in dialogue.turns:
        question = turn.user_msg
        context = f"{previous} {question}" if previous and needs_context(question) else None
        out.append((question, context))
        previous = question
    return out


def abstention(turn: Turn) -> str | None:
    """Why the answer-question fit of ``turn`` means nothing, or None when it can be read."""
    response = turn.response.strip()
    if not response:
        return "empty response: nothing to fit"
    message = turn.user_msg
    if is_acknowledgement(message):
        return "user message is an acknowledgement or small talk: no question to fit"
    if (_OPENS_OR_CLOSES.search(message) or USER_CUES["closing"].search(message)) and not (
        makes_request(message)
    ):
        return "user acknowledges or reports back and asks nothing: no question to fit"
    if is_clarification(response):
        return "response is a clarifying question back to the user: nothing to fit yet"
    if PREVIOUS_REPLY_CUES["asks_confirmation"].search(response):
        return "response asks the user to confirm before acting: nothing to fit yet"
    if any(
        p.search(response) for p in (REFUSAL, NO_RESULTS, CAPABILITY_LIMIT, ERROR_TEXT, ERROR_CODE)
    ):
        return "response is a refusal, a 'nothing found' or an error message, not an answer"
    return None


def answer_fit(question: FloatArray, context: FloatArray | None, answer: FloatArray) -> float:
    """The fit of ``answer`` to the question, read with its context when it has one."""
    fit = float(question @ answer)
    return max(fit, float(context @ answer)) if context is not None else fit


class SemanticTeacher:
    """Labels each turn from MiniLM answer-question and snippet fit (see module doc)."""

    name = "local:semantic"

    def __init__(self, embed: Embed | None = None) -> None:
        """Use ``embed`` (default: MiniLM, loaded on first use)."""
        self.vectors = VectorTable(embed)

    def prepare(self, dialogues: Sequence[Dialogue]) -> None:
        """Embed the chunk's questions, contexts, responses and snippets in one batch."""
        texts: list[str] = []
        for dialogue in dialogues:
            for turn, (question, context) in zip(
                dialogue.turns, question_texts(dialogue), strict=True
            ):
                texts += [question, turn.response, *turn.source_snippets]
                if context is not None:
                    texts.append(context)
        self.vectors.load(texts)

    def label(
        self, dialogue: Dialogue, *, routes: Mapping[str, str] | None = None
    ) -> TeacherVerdict:
        """One label per turn, in order."""
        labels = []
        for turn, (question, context) in zip(dialogue.turns, question_texts(dialogue), strict=True):
            reason = abstention(turn)
            if reason is not None:
                labels.append(TurnLabel(turn.turn_number, None, None, reason))
            else:
                labels.append(self._label_turn(turn, question, context))
        return TeacherVerdict(judge=self.name, turns=labels)

    def _label_turn(self, turn: Turn, question: str, context: str | None) -> TurnLabel:
        k = turn.turn_number
        texts = [question, turn.response, *([context] if context else []), *turn.source_snippets]
        vectors = self.vectors.get(texts)
        q, r = vectors[0], vectors[1]
        c = vectors[2] if context else None
        snippets = vectors[3 if context else 2 :]
        fit = answer_fit(q, c, r)
        if len(snippets) and fit < SUCCEED_ABOVE and carries_domain(question):
            on_topic = float(np.max(snippets @ q))  # a self-contained question: no context
            followed = float(np.max(snippets @ r))
            if on_topic < FAIL_BELOW and followed >= SUCCEED_ABOVE:
                return TurnLabel(
                    k,
                    "failure",
                    "E3",
                    f"snippets off-topic for the question (best {on_topic:.2f}) while the "
                    f"answer follows them ({followed:.2f})",
                )
        if fit < FAIL_BELOW:
            return TurnLabel(
                k,
                "failure",
                "E1",
                f"answer does not fit the question (cosine {fit:.2f} < {FAIL_BELOW}): it "
                "addresses a different question",
            )
        if fit >= SUCCEED_ABOVE:
            return TurnLabel(k, "success", None, f"answer fits the question (cosine {fit:.2f})")
        return TurnLabel(
            k,
            None,
            None,
            f"answer-question fit {fit:.2f} is between {FAIL_BELOW} and {SUCCEED_ABOVE}, "
            "where right and wrong answers overlap",
        )
