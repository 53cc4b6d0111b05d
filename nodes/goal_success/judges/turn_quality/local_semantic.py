"""``local:semantic``: turn quality from how well the answer fits the question (MiniLM).

Evidence read, for each turn: the user's question (with the previous user message prepended
when the question leans on it: "what about contractors?", "how long are those", "no, I meant
..."), the response and the retrieved snippets, as MiniLM vectors. Never surface failure signs
(``local:response``) nor the user's reaction (``local:signals``).

Rules:

* Abstain (``None``) when there is nothing to fit: an empty response, a user message that is
  an acknowledgement or small talk ("thx", "ok", an emoji) or that acknowledges or reports
  back without asking anything ("ok, found it", "paying myself for now, thanks"), a response
  that is a clarifying
  question back to the user, or a response that is not an answer at all (a refusal, "nothing
  found", an error message: the response teacher's evidence, and their low fit says nothing
  about understanding).
* **E3**: snippets were shown, the question names its own topic (not a follow-up or a
  complaint, whose snippet fit cannot be read alone), the best snippet fits it less than
  ``FAIL_BELOW``
  while the answer follows its snippets (cosine >= ``SUCCEED_ABOVE``): the retrieval brought
  the wrong content and the answer repeated it.
* **E1**: the answer fits the question less than ``FAIL_BELOW``: it addresses a different
  question.
* **success**: the answer fits the question at least ``SUCCEED_ABOVE``.
* In between: ``None`` with the fit in the rationale. The two cut points were calibrated on
  public data, and between them the fit does not tell a right answer from a wrong one.

Fit is ``max(cos(question, answer), cos(previous + question, answer))`` for a question that
leans on the previous one, ``cos(question, answer)`` otherwise.

Calibration (``scripts/calibrate_semantic_teacher.py``, SGD dev): *true pairs* are the 13,936
SGD turns this teacher does not abstain on, each question with its own reply; *wrong answers*
pair the same question with a reply from another dialogue of the same service (on topic, but
answering something else: what E1 looks like). ``FAIL_BELOW`` = 0.13 is the 5th percentile of
true pairs (5% of right answers fall below it, 33% of wrong ones do); ``SUCCEED_ABOVE`` = 0.50
the 95th percentile of wrong answers (5% of wrong answers reach it, 38% of right ones do);
AUC 0.82. On SGD's purest question-answer turns (a slot request answered with exactly those
slots) the contrast is sharper (AUC 0.89, cut points 0.26 / 0.53), but those cut points call
a tenth of SGD's transactional replies (offers, bookings) off-topic, so the teacher uses the
cut points of everything it judges. Reading the question alone scores a little higher on SGD
(AUC 0.91 vs 0.89 on the slot requests); the context is kept because SGD's previous messages
are mostly "yes, that works", while real follow-ups such as "what about contractors?" cannot
be read without theirs. A wide uncertain band is the honest outcome: MiniLM cosine separates
a fitting answer from an on-topic wrong one only in the tails.
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
