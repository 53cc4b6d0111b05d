"""ProactiveEval's simulated user (paper 003, Dialogue Guidance): agreeableness = resistance.

The paper's user answers an agent that opened the conversation, from the environment, the
dialogue so far and an agreeableness tier (Big Five): "a lower agreeableness level signifies
stronger resistance to the model's guidance". This is not MAP's ``disclosure`` (how many details
per answer). The paper prints no prompt for it, so both backends are todeval's own:

* ``local`` - :class:`LocalProactiveUser`, seeded: it pushes back (declines, asks why, partially
  accepts) a number of times set by the tier (high 0, medium 1, low 2-4 by seed) on messages that
  raise a sub-target, then accepts each step, and agrees to the target once every sub-target was
  raised. A message that raises none gets a puzzled answer. Which sub-targets a message raises
  is the caller's reading (the proactive nodes pass it), so the user holds no matcher of its own.
* ``<provider>:<model>`` - :class:`LLMProactiveUser`, :data:`PROACTIVE_USER_PROMPT` (todeval's).
"""

from __future__ import annotations

import functools
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from todeval.evals.proactive_schema import Agreeableness
from todeval.nodes.judges.llm_role import LLMRole
from todeval.nodes.judges.local import resolve_local_variant
from todeval.nodes.judges.spec import parse_spec
from todeval.nodes.simulation.roles import USER_SIMULATOR
from todeval.nodes.simulation.users.scenario import stable_seed

Act = Literal["decline", "ask_why", "partial", "accept_step", "accept_target", "neutral"]

#: todeval's wording of the paper's tiers, given to the LLM user.
AGREEABLENESS_TIERS: dict[str, str] = {
    "low": "low: you resist being guided. You often decline, question the assistant's motives "
    "or ask why, and agree only after several convincing reasons that fit your situation.",
    "medium": "medium: you are open but cautious. You ask questions or accept only in part "
    "before you agree.",
    "high": "high: you are cooperative and easy to guide. You go along with reasonable "
    "suggestions readily.",
}

#: Push-backs of the local user before it goes along, per tier: (fewest, most), seeded.
RESISTANCE: dict[str, tuple[int, int]] = {"high": (0, 0), "medium": (1, 1), "low": (2, 4)}

#: The local user's push-backs by tier, in the order the seed draws from.
PUSHBACKS: dict[str, tuple[Act, ...]] = {
    "low": ("decline", "ask_why"),
    "medium": ("ask_why", "partial"),
    "high": ("partial",),
}

#: The local user's words for each act (todeval's own).
PHRASES: dict[Act, tuple[str, ...]] = {
    "decline": ("No thanks, I'm not interested in that right now.", "I'd rather not, honestly."),
    "ask_why": ("Why would I want to do that?", "What makes you think I need that?"),
    "partial": ("Maybe, but I'm not convinced yet.", "I might. Tell me a bit more first?"),
    "accept_step": ("Okay, that sounds reasonable.", "Sure, go on."),
    "accept_target": ("Sure, let's do that.", "Okay, you've convinced me, I'll do it."),
    "neutral": ("Hmm, what do you mean?", "Sorry, where are you going with this?"),
}

#: todeval's own prompt of the LLM user (the paper's GPT-4o user has none printed).
PROACTIVE_USER_PROMPT = """\
<Task>
You play a user in an online chat that an AI assistant started.
Stay in character and answer the assistant's last message in one or two short sentences.
</Task>
<User>
user information: {user_information}
what is happening now: {trigger_factor}
</User>
<Agreeableness>
Your agreeableness is {agreeableness}
</Agreeableness>
<Conversation>
{conversation}
</Conversation>
<Format>
Just return a JSON {{"message": "(your reply)", "accepted": true/false}}.
"accepted" is true only when your reply agrees to what the assistant is leading you to.
</Format>
"""


@dataclass(frozen=True)
class ProactiveUserRequest:
    """What the user answers: the environment, its tier and the conversation (agent last).

    ``raised_now`` / ``raised``: sub-targets (0-based) raised by the agent's last message / any
    message so far (the caller's reading); ``resisted``: push-backs already given.
    """

    user_information: str
    trigger_factor: str
    agreeableness: Agreeableness
    messages: tuple[Mapping[str, str], ...]
    raised_now: frozenset[int]
    raised: frozenset[int]
    n_sub_targets: int
    resisted: int
    seed: int


class ProactiveUserTurn(BaseModel):
    """The user's reply, the act it performs and who answered."""

    content: str = Field(description="The message ('' when an LLM gave no usable one).")
    act: Act | None = Field(default=None, description="The local user's act (LLM: None).")
    accepted: bool | None = Field(default=None, description="Agrees to where it is led.")
    resisted: bool = Field(default=False, description="A push-back (counts toward the tier).")
    judge: str = Field(description="The spec that answered.")
    reason: str | None = Field(default=None, description="Why there is no reply, when so.")


class LocalProactiveUser:
    """See the module docstring."""

    name = "local"

    def reply(self, request: ProactiveUserRequest) -> ProactiveUserTurn:
        """The next reply, a pure function of the request."""
        act = self.act(request)
        turn = len([m for m in request.messages if m.get("role") == "user"])
        rng = random.Random(stable_seed("proactive-user", request.seed, turn, act))
        return ProactiveUserTurn(
            content=rng.choice(PHRASES[act]),
            act=act,
            accepted=act in ("accept_step", "accept_target"),
            resisted=act in ("decline", "ask_why", "partial"),
            judge=self.name,
        )

    def act(self, request: ProactiveUserRequest) -> Act:
        """Puzzled, push back while the tier's budget lasts, then step or target accepted."""
        if not request.raised_now:
            return "neutral"
        if request.resisted < budget(request.agreeableness, request.seed):
            options = PUSHBACKS[request.agreeableness]
            return options[request.resisted % len(options)]
        if len(request.raised) >= request.n_sub_targets:
            return "accept_target"
        return "accept_step"


def budget(agreeableness: str, seed: int) -> int:
    """How many times the local user pushes back in one dialogue."""
    low, high = RESISTANCE[agreeableness]
    return random.Random(stable_seed("resistance", agreeableness, seed)).randint(low, high)


class UserReply(BaseModel):
    """The LLM user's JSON."""

    message: str = Field(min_length=1, description="The user's reply.")
    accepted: bool = Field(default=False, description="True when the reply agrees.")


class LLMProactiveUser(LLMRole[UserReply]):
    """One call per reply (:data:`PROACTIVE_USER_PROMPT`)."""

    role = USER_SIMULATOR.name
    prompt = PROACTIVE_USER_PROMPT
    output_model = UserReply

    def reply(self, request: ProactiveUserRequest) -> ProactiveUserTurn:
        """The reply; a failed call gives an empty message with the reason."""
        result = self.llm.invoke(
            {
                "user_information": request.user_information,
                "trigger_factor": request.trigger_factor,
                "agreeableness": AGREEABLENESS_TIERS[request.agreeableness],
                "conversation": render_lines(request.messages),
            }
        )
        if result.value is None:
            return ProactiveUserTurn(content="", judge=self.name, reason=result.reason)
        said = result.value
        return ProactiveUserTurn(content=said.message, accepted=said.accepted, judge=self.name)


def render_lines(messages: Sequence[Mapping[str, str]]) -> str:
    """One ``role: text`` line per message."""
    return "\n".join(
        f"{m.get('role')}: {' '.join(str(m.get('content', '')).split())}" for m in messages
    )


@functools.lru_cache(maxsize=16)
def proactive_user(spec: str, max_retries: int = 3) -> LocalProactiveUser | LLMProactiveUser:
    """The ProactiveEval user for a ``user_simulator`` spec (built once per spec)."""
    parsed = parse_spec(spec)
    if parsed.is_local:
        resolve_local_variant(USER_SIMULATOR.name, parsed.variant)  # the same variants as MAP's
        return LocalProactiveUser()
    return LLMProactiveUser(parsed, max_retries=max_retries)
