"""How the local task user sounds, by AgentChangeBench persona (``user_personas.json``).

Each :class:`Tone` is a handful of phrases in the voice its persona file describes; the
values the user states never depend on it. ``EASY_1`` polite, ``EASY_2`` scattered,
``MEDIUM_1`` curt, ``MEDIUM_2`` chatty, ``HARD_1`` combative, ``HARD_2`` aggrieved; another name
takes its tier's tone (``EASY_*`` polite, ``MEDIUM_*`` curt, ``HARD_*`` combative), and no
persona a neutral one. ``declines`` (a fact the user lacks) and ``unsure`` (an ``unknown_info``
topic) templates take ``{what}``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tone:
    """Phrases of one voice (one is picked per use by the seeded generator)."""

    greetings: tuple[str, ...]
    answer_openers: tuple[str, ...]
    declines: tuple[str, ...]
    confirmations: tuple[str, ...]
    nudges: tuple[str, ...]
    closers: tuple[str, ...]
    give_ups: tuple[str, ...]
    transfers: tuple[str, ...] = ("Okay, I'll wait for the human agent.",)
    unsure: tuple[str, ...] = ("I'm not sure about that: {what} is something I don't know.",)


NEUTRAL = Tone(
    greetings=("Hi.", "Hello."),
    answer_openers=("Sure.", ""),
    declines=("I don't know {what}.", "I'm not sure about {what}."),
    confirmations=("Yes, please go ahead.", "Yes, that's right."),
    nudges=("Could you help me with that?", "So, can you help?"),
    closers=("That's everything I needed, thank you.", "Great, that's all for today."),
    give_ups=("I don't think this is getting anywhere. I'll leave it there.",),
)

TONES: dict[str, Tone] = {
    "polite": Tone(
        greetings=("Hello, thank you for taking my call.", "Hi there, I hope you can help me."),
        answer_openers=("Of course.", "Certainly, thank you for asking."),
        declines=(
            "I'm sorry, I don't have {what} with me.",
            "I'm afraid I'm not sure about {what}.",
        ),
        confirmations=("Yes, please go ahead. Thank you!", "Yes, that's correct, thank you."),
        nudges=("Could you walk me through that, please?", "I want to make sure I do this right."),
        closers=("That's very helpful, thank you for being so thorough.",),
        give_ups=("I appreciate your patience, but I'll try again another time.",),
    ),
    "scattered": Tone(
        greetings=("Hi! Sorry, I'm all over the place today.", "Oh, hi! Okay, so..."),
        answer_openers=("Oh, right!", "Yeah, okay."),
        declines=("Hmm, I'm not sure about {what}, sorry.", "Wait, I don't have {what}."),
        confirmations=("Yeah, okay cool, do it.", "Gotcha, yes please."),
        nudges=("Sorry, what was I asking about again?", "Hmm, I'm not sure what you mean."),
        closers=("Okay cool, that's everything! Thanks!",),
        give_ups=("Ugh, this is confusing. I'll just try later.",),
    ),
    "curt": Tone(
        greetings=("I'm short on time.", "Quick one."),
        answer_openers=("", "Here."),
        declines=("Don't have {what}. Check your records.", "No idea about {what}."),
        confirmations=("Yes. Do it.", "Confirmed. Go."),
        nudges=("Bottom line?", "What's the fastest way to get this done?"),
        closers=("That's all. Done.",),
        give_ups=("This is taking too long. I'm done.",),
    ),
    "chatty": Tone(
        greetings=("Hi! Oooh, okay, so I have a thing.", "Hey there! Quick one, promise."),
        answer_openers=("Oh sure!", "Yes, of course!"),
        declines=("Oh, I actually don't know {what}.", "Hmm, I don't have {what} handy."),
        confirmations=("Yes, let's just try it!", "Sure, go for it!"),
        nudges=("So, can we do that?", "While we're at it, can you help with this?"),
        closers=("Perfect, that's everything for now! Thanks so much!",),
        give_ups=("Okay, never mind, I'll come back to it later!",),
    ),
    "combative": Tone(
        greetings=("I need this handled now.", "Listen, I want this resolved today."),
        answer_openers=("You should already have this.", "For the record:"),
        declines=("I don't have {what}. Stop asking.", "I don't know {what}. Look it up."),
        confirmations=("Yes. Confirm it in writing.", "Yes, do it now."),
        nudges=("Action my request.", "I asked a clear question. Answer it."),
        closers=("Fine. That's all. Note this on my account.",),
        give_ups=("This is useless. I'm filing a complaint.",),
    ),
    "aggrieved": Tone(
        greetings=("I've been on hold for an hour. Don't make me start over.",),
        answer_openers=("Again:", "I already told the last agent this."),
        declines=("I don't have {what}. Just use what you have.",),
        confirmations=("Yes. Just flip the switch on your end.",),
        nudges=("Don't send me back to the bot.", "Are you going to help or not?"),
        closers=("Fine, that's it. Finally.",),
        give_ups=("Forget it. I'm done with this.",),
    ),
}

_BY_PERSONA = {
    "EASY_1": "polite",
    "EASY_2": "scattered",
    "MEDIUM_1": "curt",
    "MEDIUM_2": "chatty",
    "HARD_1": "combative",
    "HARD_2": "aggrieved",
}
_BY_TIER = {"EASY": "polite", "MEDIUM": "curt", "HARD": "combative"}


def tone_for(persona_name: str | None) -> Tone:
    """The tone of a persona name (see the module docstring)."""
    if not persona_name:
        return NEUTRAL
    name = persona_name.upper()
    tone = _BY_PERSONA.get(name) or _BY_TIER.get(name.split("_")[0])
    return TONES[tone] if tone else NEUTRAL


PUSH_BACKS: dict[str, tuple[str, ...]] = {
    "ignored": (
        "That doesn't help: you didn't answer what I asked.",
        "That's not helpful. You didn't answer my question.",
    ),
    "repeated": (
        "You said that already, and it doesn't help.",
        "You're repeating yourself. That's not helpful.",
    ),
    "false_success": (
        "That's not true: it isn't done, nothing went through.",
        "No, that's not correct. Nothing has been done yet.",
    ),
}
"""What the local task user says after an agent turn that failed it, by how it failed
(:mod:`~nodes.simulation.users.failures`), whatever the persona: each says outright what went
wrong, in the words the judges' user cues read as negative feedback."""

FAILURE_GIVE_UPS = (
    "Forget it, I give up.",
    "Never mind, this isn't getting done. I'll go elsewhere.",
)
"""How the local task user gives up after failed turns: abandonment, not thanks."""
