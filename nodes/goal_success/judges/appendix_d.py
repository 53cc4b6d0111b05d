"""Paper 004's Appendix D call: segmentation, turn quality and root cause of a dialogue at once.

Both LLM roles of goal success read it: the teacher (``quality``, ``rcof``) and the segmenter
(``is_new_goal``). Built with the same spec they send the same request, so the second one is
answered by the response cache: one call per dialogue per LLM. The prompt's root-cause codes are
mapped to the canonical ones (:data:`~nodes.prompts.goal_success.APPENDIX_D_RCOF`).

**Long dialogues.** A dialogue whose prompt would not fit the model's context window
(``Context.llm_context_tokens``, read as about 3 characters per token after the answer's share)
is judged in windows of consecutive turns: each window after the first repeats the turn before
it, marked as context only, so ``is_new_goal`` of its first turn still compares adjacent user
turns; the repeated turn's labels come from the window that judged it. A single turn longer than
a window is sent alone; if the model still refuses it, that turn is null with the reason. Nothing
is ever cut.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, get_args

from pydantic import BaseModel, Field, field_validator, model_validator

from todeval.evals.schema import Dialogue, Quality, Rcof, Turn, normalise_rcof, yes_no_to_bool
from todeval.nodes.judges.llm import LLMJudge
from todeval.nodes.judges.roles import JudgeRole
from todeval.nodes.judges.spec import JudgeSpec, parse_spec
from todeval.nodes.prompts.goal_success import (
    APPENDIX_D_PROMPT,
    APPENDIX_D_PROMPT_WITH_SOP,
    APPENDIX_D_RCOF,
    APPENDIX_D_SYSTEM_PROMPT,
    CONTEXT_TURN_NOTE,
    DIALOG_HEADER,
    TURN_TEMPLATE,
)

MAX_OUTPUT_TOKENS = 768
"""The longest answer asked for (a window's JSON; a few dozen tokens per turn)."""
CHARS_PER_TOKEN = 3.0
"""A cautious characters-per-token rate for the window budget (English is nearer 4)."""

_LINE_BREAKS = {ord(c): f"\\u{ord(c):04x}" for c in "\x85\u2028\u2029"}
_SPECIAL_TOKEN_OPEN = re.compile(r"<(?=[|\uff5c]|/?s>|(?:start|end)_of_turn>)")


class AppendixDTurn(BaseModel):
    """One turn of the Appendix D answer."""

    turn_number: int = Field(description="The turn's number, starting at 1.")
    is_new_goal: bool | None = Field(
        default=None, description="yes if this turn starts a new goal (adjacent user turns)."
    )
    quality: Quality | None = Field(
        default=None, description="success or failure, judged with the follow-ups."
    )
    rcof: Rcof | None = Field(
        default=None, description="Root cause E1-E7 in the prompt's numbering when a failure."
    )
    rationale: str = Field(default="", description="Why, when the model says (optional).")

    @field_validator("is_new_goal", mode="before")
    @classmethod
    def _yes_no(cls, value: object) -> object:
        return yes_no_to_bool(value)

    @field_validator("quality", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("rcof", mode="before")
    @classmethod
    def _canonical(cls, value: object) -> object:
        code = normalise_rcof(value)  # a code stays in the prompt's numbering, a name is canonical
        if isinstance(value, str) and isinstance(code, str) and value.strip()[:1] in "Ee":
            return APPENDIX_D_RCOF.get(code, code)
        return code

    @model_validator(mode="after")
    def _no_cause_for_success(self) -> AppendixDTurn:
        if self.quality == "success":
            self.rcof = None  # a root cause only describes a failure
        return self


class AppendixDOutput(BaseModel):
    """The Appendix D JSON."""

    dialog_id: str | int | None = Field(default=None, description="The dialogue's id.")
    turns: list[AppendixDTurn] = Field(description="One entry per turn.")


def window_schema(turn_numbers: Sequence[int]) -> dict[str, Any]:
    """The schema a window's answer is decoded under: every turn, in order, every label.

    Stricter than :class:`AppendixDOutput`, which parses leniently. With only ``turn_number``
    required and no length, a grammar-constrained small model stops after a turn or two; with
    the numbers as a free choice it numbers several entries "1" (both seen with SmolLM2 on
    llama.cpp). Here entry *k* is turn *k* of the window (``prefixItems``, one fixed number
    each) and needs ``is_new_goal``, ``quality`` and ``rcof`` in the prompt's own vocabulary.
    """

    def entry(number: int) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "turn_number": {"type": "integer", "enum": [number]},
                "is_new_goal": {"type": "string", "enum": ["yes", "no"]},
                "quality": {"type": "string", "enum": ["success", "failure"]},
                "rcof": {
                    "anyOf": [{"type": "string", "enum": list(get_args(Rcof))}, {"type": "null"}]
                },
            },
            "required": ["turn_number", "is_new_goal", "quality", "rcof"],
        }

    count = len(turn_numbers)
    turns = {
        "type": "array",
        "prefixItems": [entry(number) for number in turn_numbers],
        "minItems": count,
        "maxItems": count,
    }
    return {"type": "object", "properties": {"turns": turns}, "required": ["turns"]}


@dataclass(frozen=True)
class AppendixDVerdict:
    """The call's labels per turn (None where not judged) and why some are missing."""

    turns: list[AppendixDTurn | None]
    reason: str | None


def render_turn(turn: Turn) -> str:
    """One turn as the prompt shows it, with its retrieved sources.

    Every text is a JSON string literal (:func:`quoted`): whatever a user, an assistant or a
    retrieved snippet says, no line of it can open a fake turn or end the dialogue early.
    """
    return TURN_TEMPLATE.format(
        turn_number=turn.turn_number,
        user_msg=quoted(turn.user_msg),
        response=quoted(turn.response),
        sources=_sources(turn),
    )


def quoted(text: str) -> str:
    """``text`` as a JSON string literal: verbatim once decoded, and inert in the prompt.

    JSON escapes quotes, backslashes and control characters; the line breaks it leaves as they
    are (NEL, U+2028, U+2029) are escaped too, and so is the ``<`` that opens a chat template's
    special token (``<|im_start|>``, ``<｜User｜>``, ``</s>``, ``<start_of_turn>``): local
    servers (llama.cpp, vLLM) tokenize message text with special tokens parsed, so a raw one
    would start a real system turn.
    """
    literal = json.dumps(text, ensure_ascii=False).translate(_LINE_BREAKS)
    return _SPECIAL_TOKEN_OPEN.sub(r"\\u003c", literal)


def render_dialogue(dialogue: Dialogue, turns: Sequence[Turn] | None = None) -> str:
    """The ``question``: the dialogue id, then each turn (a window's first may be context)."""
    shown = list(turns if turns is not None else dialogue.turns)
    lines = [DIALOG_HEADER.format(dialog_id=quoted(str(dialogue.dialogue_id)))]
    for turn in shown:
        lines.append(render_turn(turn))
    return "\n\n".join(lines)


def windows(dialogue: Dialogue, budget_chars: int) -> list[list[Turn]]:
    """Consecutive turns per call; each later window opens with the turn before it (context)."""
    turns = dialogue.turns
    header = len(APPENDIX_D_PROMPT) + len(DIALOG_HEADER) + 40
    result: list[list[Turn]] = []
    start = 0
    while start < len(turns):
        window = [turns[start - 1]] if start > 0 else []
        size = header + sum(len(render_turn(t)) for t in window)
        if window and size + len(render_turn(turns[start])) > budget_chars:
            # A turn longer than a window goes alone, and is not repeated as the next window's
            # context either: it would make that window too long as well.
            window, size = [], header
        end = start
        while end < len(turns):
            more = len(render_turn(turns[end]))
            if end > start and size + more > budget_chars:
                break
            size += more
            window.append(turns[end])
            end += 1
        result.append(window)
        start = end
    return result


class AppendixDJudge:
    """The Appendix D call for one LLM spec, windowed to the model's context (``context_tokens``).

    ``business_rules``: the domain's SOP text, put into the prompt (``SOP_BLOCK``); "" for none.
    """

    def __init__(
        self,
        role: str,
        spec: JudgeSpec,
        *,
        max_retries: int = 3,
        context_tokens: int = 8192,
        business_rules: str = "",
    ) -> None:
        self.name = spec.raw
        self.business_rules = business_rules
        budget = int(max(256, context_tokens - MAX_OUTPUT_TOKENS) * CHARS_PER_TOKEN)
        # the rules are sent with every window, so they come out of each window's budget
        self.budget_chars = max(256, budget - len(business_rules))
        prompt = APPENDIX_D_PROMPT_WITH_SOP if business_rules else APPENDIX_D_PROMPT
        # The run's settings (retries, backoff, cache, accounting) live on ``llm``; each window
        # is asked by a copy that decodes under that window's schema (``llm_for``).
        self.llm: LLMJudge[AppendixDOutput] = LLMJudge(
            role=role,
            spec=spec,
            prompt=prompt,
            system=APPENDIX_D_SYSTEM_PROMPT,
            output_model=AppendixDOutput,
            max_retries=max_retries,
            max_output_tokens=MAX_OUTPUT_TOKENS,
        )
        self._judges: dict[tuple[int, ...], LLMJudge[AppendixDOutput]] = {}

    def llm_for(self, turn_numbers: Sequence[int]) -> LLMJudge[AppendixDOutput]:
        """The judge of one window: ``llm``'s settings, decoding under :func:`window_schema`."""
        key = tuple(turn_numbers)
        if key not in self._judges:
            self._judges[key] = LLMJudge(
                role=self.llm.role,
                spec=self.llm.spec,
                prompt=self.llm.prompt,
                system=self.llm.system,
                output_model=AppendixDOutput,
                max_retries=self.llm.max_retries,
                max_output_tokens=MAX_OUTPUT_TOKENS,
                decoding_schema=window_schema(key),
            )
        judge = self._judges[key]
        judge.max_retries, judge.backoff_s = self.llm.max_retries, self.llm.backoff_s
        judge.cache, judge.accounting = self.llm.cache, self.llm.accounting
        judge.system = self.llm.system
        return judge

    def judge(self, dialogue: Dialogue) -> AppendixDVerdict:
        """Every turn's labels: one call, or one per window of a long dialogue."""
        labels: dict[int, AppendixDTurn] = {}
        reasons: list[str] = []
        for window in windows(dialogue, self.budget_chars):
            context = window[0].turn_number if window[0].turn_number in labels else None
            question = render_dialogue(dialogue, window)
            if context is not None:
                question += "\n\n" + CONTEXT_TURN_NOTE.format(turn_number=context)
            variables = {"question": question}
            if self.business_rules:
                variables["business_rules"] = self.business_rules
            result = self.llm_for([t.turn_number for t in window]).invoke(variables)
            if result.value is None:
                reasons.append(result.reason or "the judge gave no answer")
                continue
            wanted = {t.turn_number for t in window} - {context}
            said, conflicting = _window_labels(result.value.turns, wanted)
            labels.update(said)
            if conflicting:
                reasons.append(
                    f"the answer labels turns {conflicting} more than once, differently; "
                    "they are not judged"
                )
        missing = [t.turn_number for t in dialogue.turns if t.turn_number not in labels]
        if missing and not reasons:
            reasons.append(f"the judge gave no label for turns {missing}")
        return AppendixDVerdict(
            [labels.get(t.turn_number) for t in dialogue.turns], "; ".join(reasons) or None
        )


class AppendixDRoleJudge:
    """The LLM judge of either goal-success role: one :class:`AppendixDJudge` for one spec.

    Both roles name a subclass as their declaration's ``llm``; it reads its labels off
    :attr:`call`'s verdict. Built with the same spec and business rules, the segmenter and a
    teacher send the same request, so the second is answered from the response cache. The
    domain's business rules (``Context.teacher_sop``) go into the prompt
    (:data:`~nodes.prompts.goal_success.SOP_BLOCK`), as the paper's teachers share the SOP.
    """

    def __init__(
        self,
        role: JudgeRole[Any],
        spec: JudgeSpec | str,
        *,
        max_retries: int = 3,
        context_tokens: int = 8192,
        business_rules: str = "",
    ) -> None:
        parsed = parse_spec(spec) if isinstance(spec, str) else spec
        self.name = parsed.raw
        self.reads_business_rules = bool(business_rules)
        self.call = AppendixDJudge(
            role.name,
            parsed,
            max_retries=max_retries,
            context_tokens=context_tokens,
            business_rules=business_rules,
        )

    def prepare(self, dialogues: Sequence[Dialogue]) -> None:
        """Nothing to batch: one call per dialogue."""


def _window_labels(
    answer: Sequence[AppendixDTurn], wanted: set[int]
) -> tuple[dict[int, AppendixDTurn], list[int]]:
    """The answer's labels for the turns asked about, and the turns it labels in conflict.

    A label for any other number (a turn of another window, or one the dialogue does not have,
    say from a fake turn inside a message) is dropped: a label is only ever applied to the turn
    it names. Two different labels for one turn leave it unjudged rather than pick one.
    """
    said: dict[int, AppendixDTurn] = {}
    conflicting: set[int] = set()
    for turn in answer:
        if turn.turn_number not in wanted:
            continue
        earlier = said.setdefault(turn.turn_number, turn)
        if (earlier.is_new_goal, earlier.quality, earlier.rcof) != (
            turn.is_new_goal,
            turn.quality,
            turn.rcof,
        ):
            conflicting.add(turn.turn_number)
    for number in conflicting:
        del said[number]
    return said, sorted(conflicting)


def _sources(turn: Turn) -> str:
    if not (turn.source_names or turn.source_snippets or turn.source_urls):
        return "none"
    n = max(len(turn.source_names), len(turn.source_snippets), len(turn.source_urls))
    parts: list[str] = []
    for i in range(n):
        name = _at(turn.source_names, i) or _at(turn.source_urls, i) or f"source {i + 1}"
        snippet = _at(turn.source_snippets, i)
        parts.append(f"[{name}] {snippet}" if snippet else f"[{name}]")
    return "[" + ", ".join(quoted(part) for part in parts) + "]"


def _at(items: Sequence[str], index: int) -> str:
    return items[index] if index < len(items) else ""
