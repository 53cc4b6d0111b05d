"""``local`` shift detection: transparent rules over MiniLM similarities to the task's goals.

The task says which goals come in which order, so the judge only has to find *where* the user
moves on and *when* the agent follows:

* Each goal label becomes a short description (the label's words, plus :data:`GOAL_HINTS` for
  AgentChangeBench's terse labels). A user message is scored against each goal by cosine
  similarity plus a bonus for the description's words it contains.
* Walking the user messages in order (the first establishes goal 1), a message shifts to the
  next goal when it scores at least ``margin`` higher for the next goal than for the current one
  and at least ``floor`` overall. At most ``len(goals) - 1`` shifts.
* After a shift at turn tau (and before the next shift), the agent acknowledges the new goal
  at the first of: an assistant text that scores at least ``ack_floor`` for the new goal and
  no lower than for the old one, names the goal (a word of its description, or a score of at
  least ``named_floor``) and says at least ``own_words`` words of its own (not said by the
  user so far, not a called tool's name: an echo of the user, "Done!" or "I called
  get_transactions." acknowledges nothing); or a
  relevant call that ran without an error on arguments that are not made up
  (:mod:`evals.metrics.goal_shift.grounding`). The tool turn is the first call of a tool
  relevant to the new goal (shared words or similarity) whose arguments are not made up; the
  outcome is the first assistant text after such a call succeeded; a
  ``transfer_to_human_agents`` call marks a transfer. Goals reached without any relevant tool
  get no outcome (the rules cannot tell an answer from an attempt).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from todeval.evals.goal_shift_schema import Conversation, Message, ShiftJudgment
from todeval.evals.metrics.goal_shift.grounding import TRANSFER_TOOL, serving_calls
from todeval.evals.record_views import CONTROL_TOKENS
from todeval.nodes.goal_shift.judges.shift_detection import NO_SHIFT_TO_FIND, ShiftVerdict
from todeval.nodes.judges.text import to_the_user
from todeval.stores.byte_cache import byte_bounded
from todeval.stores.embeddings import cosine_matrix, get_embedder

GOAL_HINTS: dict[str, str] = {
    "authentication": "verify identity, log in, login problem, sign in, customer lookup",
    "account_info": "account details, account balance, account information",
    "transactions": "recent transactions, charges, transaction history",
    "dispute": "dispute a charge, file a dispute, unauthorized transaction",
    "fraud_response": "fraud, suspicious charge, lock card, unauthorized activity",
    "statements": "account statements, monthly statement",
    "payments": "pay a bill, make a payment, payee",
    "cards": "card lock, unlock card, replace card",
    "insights": "spending insights, budgeting, spending analysis",
}
"""Descriptions for goal labels too short to embed well (banking); others use their words."""

_WORD = re.compile(r"[a-z]+")
_STOP = frozenset(
    "get by the and for with from into this that your my our about make made info".split()
)
_TRANSFER_NOTICE = re.compile(r"transferr?(ed|ing) (you )?to a human", re.IGNORECASE)


def _stems(text: str) -> set[str]:
    return {w.rstrip("s") for w in _WORD.findall(text.lower()) if len(w) > 3 and w not in _STOP}


def goal_description(goal: str) -> str:
    """The text a goal label is compared with."""
    words = goal.replace("_", " ").strip()
    hint = GOAL_HINTS.get(goal.strip().lower())
    return f"{words}: {hint}" if hint else words


@dataclass(frozen=True)
class _Scorer:
    """Similarity of texts to goals: cosine plus a bonus for shared description words."""

    goal_vectors: NDArray[np.float32]
    goal_words: list[set[str]]
    word_bonus: float

    def scores(self, texts: Sequence[str]) -> NDArray[np.float32]:
        if not texts:
            return np.zeros((0, len(self.goal_words)), dtype=np.float32)
        similarity = cosine_matrix(get_embedder().embed(list(texts)), self.goal_vectors)
        bonus = np.array(
            [[min(len(_stems(t) & words), 2) for words in self.goal_words] for t in texts],
            dtype=np.float32,
        )
        return similarity + self.word_bonus * bonus


class LocalShiftDetector:
    """Rule-based shift detection (see the module docstring); deterministic and offline."""

    name = "local"

    def __init__(
        self,
        *,
        margin: float = 0.05,
        floor: float = 0.25,
        ack_floor: float = 0.2,
        tool_similarity: float = 0.45,
        word_bonus: float = 0.1,
        own_words: int = 2,
        named_floor: float = 0.3,
    ) -> None:
        self.margin, self.floor, self.ack_floor = margin, floor, ack_floor
        self.tool_similarity, self.word_bonus = tool_similarity, word_bonus
        self.own_words, self.named_floor = own_words, named_floor

    def detect(self, conversation: Conversation) -> ShiftVerdict:
        """Shifts and their recovery events from the transcript and the goal order."""
        goals = conversation.task.goals if conversation.task else []
        if len(goals) < 2:
            return ShiftVerdict([], self.name, NO_SHIFT_TO_FIND)
        descriptions = [goal_description(goal) for goal in goals]
        scorer = _Scorer(
            get_embedder().embed(descriptions), [_stems(d) for d in descriptions], self.word_bonus
        )
        users = [m for m in conversation.messages if m.role == "user" and _said(m)]
        user_scores = scorer.scores([_said(m) for m in users])
        shift_turns: list[int] = []
        for i in range(1, len(users)):
            j = len(shift_turns)
            if j + 1 >= len(goals):
                break
            gain = user_scores[i, j + 1] - user_scores[i, j]
            if gain >= self.margin and user_scores[i, j + 1] >= self.floor:
                shift_turns.append(users[i].turn)
        ends: list[int | None] = [*shift_turns[1:], None][: len(shift_turns)]
        task_tools = conversation.task.allowed_tool_names if conversation.task else None
        serving = serving_calls(conversation.messages, task_tools)
        shifts = [
            self._events(conversation.messages, scorer, goals, s, turn, end, serving)
            for s, (turn, end) in enumerate(zip(shift_turns, ends, strict=True))
        ]
        return ShiftVerdict(shifts, self.name)

    def _events(
        self,
        messages: Sequence[Message],
        scorer: _Scorer,
        goals: Sequence[str],
        index: int,
        turn: int,
        end: int | None,
        serving: set[str],
    ) -> ShiftJudgment:
        old, new = index, index + 1
        after = [m for m in messages if m.turn > turn and (end is None or m.turn < end)]
        texts = [m for m in after if m.role == "assistant" and _said(m)]
        text_scores = scorer.scores([_said(m) for m in texts])
        said_by_user = _user_words(messages)
        ack = next(
            (
                m.turn
                for m, row in zip(texts, text_scores, strict=True)
                if row[new] >= self.ack_floor
                and row[new] >= row[old]
                and not _TRANSFER_NOTICE.search(m.content)
                and (row[new] >= self.named_floor or _stems(_said(m)) & scorer.goal_words[new])
                and self._own_words(m, said_by_user(m.turn), messages)
            ),
            None,
        )
        results = {m.tool_call_id: m for m in after if m.role == "tool"}
        tool_turn = outcome = acted = None
        transferred = False
        for message in after:
            for call in message.tool_calls if message.role == "assistant" else []:
                transferred |= call.name == TRANSFER_TOOL
                if call.id not in serving or not self._relevant(call.name, scorer, new):
                    continue  # a hand-over, made-up arguments, or a tool for another goal
                tool_turn = message.turn if tool_turn is None else tool_turn
                result = results.get(call.id)
                if result is not None and not result.error:
                    acted = message.turn if acted is None else acted
                    if outcome is None:
                        outcome = next((m.turn for m in texts if m.turn > result.turn), None)
        # The agent targets the new goal by a reply that addresses it or by a relevant call
        # that ran on the dialogue's own identifiers (paper 002: "acknowledges/targets").
        events = [t for t in (ack, acted) if t is not None]
        return ShiftJudgment(
            turn=turn,
            from_goal=goals[old],
            to_goal=goals[new],
            acknowledgment_turn=min(events) if events else None,
            tool_turn=tool_turn,
            outcome_turn=outcome,
            transferred_to_human=transferred,
        )

    def _own_words(self, reply: Message, user_words: set[str], messages: Sequence[Message]) -> bool:
        """At least :attr:`own_words` words the user has not said so far, not tool names."""
        words = _stems(_said(reply))
        tools = {
            stem
            for m in messages
            if m.role == "assistant" and m.turn <= reply.turn
            for call in m.tool_calls
            for stem in _stems(call.name.replace("_", " "))
        }
        return len(words - user_words - tools) >= self.own_words

    def _relevant(self, tool: str, scorer: _Scorer, goal: int) -> bool:
        if _stems(tool.replace("_", " ")) & scorer.goal_words[goal]:
            return True
        similarity = cosine_matrix(_tool_vector(tool), scorer.goal_vectors[goal])[0, 0]
        return bool(similarity >= self.tool_similarity)


# A tool name and its MiniLM row are about 1.9 KB: 256 KiB holds about 140 tools, every tool
# of the three simulated domains (49; banking's 20 the most) with room for made-up names.
@byte_bounded(256 << 10)
def _tool_vector(tool: str) -> NDArray[np.float32]:
    return get_embedder().embed([tool.replace("_", " ")])


def _user_words(messages: Sequence[Message]) -> Callable[[int], set[str]]:
    """The stems the user said before a turn (a function of the turn)."""
    users = [(m.turn, _stems(_said(m))) for m in messages if m.role == "user"]

    def before(turn: int) -> set[str]:
        return {stem for t, stems in users if t < turn for stem in stems}

    return before


def _said(message: Message) -> str:
    """The message's text, without control tokens (``###STOP###``) or words to a judge."""
    text = to_the_user(message.content) if message.role == "assistant" else message.content
    return CONTROL_TOKENS.sub("", text).strip()
