"""Failures made from real SGD turns (E1-E7) and the user reactions written for them.

Used by ``scripts/turn_quality_data.py``. Every template here was written by the todeval team.
The reaction to a corrupted reply is never the real next user turn (that one reacted to the
original reply): it is written here (a repetition or paraphrase of the request, a complaint or
correction that fits the failure, a generic complaint, giving up), or, for the stackers' data
only, the real next turn marked ``benign`` (a failure the user did not react to).
"""

from __future__ import annotations

import random
import re

NOUNS = {
    "Banks": ("account", "transfer"), "Buses": ("bus", "bus ticket"),
    "Calendar": ("event", "calendar entry"), "Events": ("event", "ticket"),
    "Flights": ("flight", "plane ticket"), "Homes": ("apartment", "visit"),
    "Hotels": ("hotel", "room"), "Media": ("movie", "stream"), "Movies": ("movie", "show"),
    "Music": ("song", "song"), "RentalCars": ("rental car", "car"),
    "Restaurants": ("restaurant", "table"), "RideSharing": ("ride", "cab"),
    "Services": ("doctor", "appointment"), "Travel": ("attraction", "trip"),
    "Weather": ("forecast", "forecast"), "Alarm": ("alarm", "alarm"),
    "Messaging": ("message", "message"), "Payment": ("payment", "payment"),
    "Trains": ("train", "train ticket"),
}  # fmt: skip

REFUSALS = [
    "I'm sorry, but I can't help with that request.",
    "Unfortunately I'm not able to assist with this.", "I'm afraid I can't do that for you.",
    "Sorry, I won't be able to book the {thing} for you.", "I cannot provide that information.",
    "That's not something I'm able to help with right now, sorry.",
    "I'm unable to process this request.", "Sorry, I can't share those details with you.",
    "I'd rather not answer that.", "Apologies, but I can't complete this request.",
    "I can't help you find a {noun}, sorry.", "Sorry, I am not allowed to make that reservation.",
    "I'm not able to look that up for you.",
    "Unfortunately, I can't assist with {noun} requests at the moment.",
]  # fmt: skip
NOTHING_FOUND = [
    "Sorry, I couldn't find any {noun}s matching your request.",
    "There are no {noun}s available for those criteria.", "I searched but nothing came up.",
    "No results were found for your search.",
    "Unfortunately there's nothing that matches what you're looking for.",
    "I wasn't able to find any {noun} like that.",
    "I'm sorry, I don't have any information about that {noun}.",
    "Nothing matched your search, sorry.",
    "I could not find anything for those dates.", "Sorry, there are no matching {noun}s.",
    "My search returned no {noun}s.",
]  # fmt: skip
ERRORS = [
    "Error 500: internal server error.", "Something went wrong while processing your request.",
    "Request timed out. Please try again later.", "", "null", "SERVICE_UNAVAILABLE",
    "[ERROR] backend call failed", "An unexpected error occurred.",
    "{{{slot}}} is available at {{time}}.",
    "Sorry, the service is temporarily unavailable.", "HTTP 503 Service Unavailable", "...",
]  # fmt: skip
OUT_OF_SCOPE = [
    "I can only help with {other}s.", "{Noun}s are outside of what I can help with.",
    "I don't support {thing} requests.",
    "That's beyond my capabilities; I'm only set up for {other}s.",
    "Booking a {thing} isn't something I can do.", "Sorry, {noun} searches are not supported here.",
    "I'm just a {other} assistant, so I can't do that.", "That request is out of my scope.",
    "I don't have the ability to handle {noun}s.",
]  # fmt: skip
REPAIR_OPENINGS = [
    "Sorry about that. ", "You're right, sorry. ", "Apologies for the confusion. ",
    "Sorry for the mix-up. ", "Sorry, my mistake. ", "Thanks for clarifying. ", "Understood. ",
    "Sorry, I got that wrong earlier. ", "My apologies. ", "Good question. ", "Sure thing. ",
]  # fmt: skip
"""Openings of adversarial positives: a right reply that opens like a repair stays a success."""

# -- written reactions -------------------------------------------------------------------------
REACT_OFF_TOPIC = [  # E1, E6
    "That's not what I asked for.", "That doesn't answer my question.",
    "Huh? I was asking about the {noun}.", "What? I asked about the {noun}.",
    "That has nothing to do with my question.", "I think you misunderstood me.",
    "Why are you telling me about that?", "No, I was asking something else.",
    "Did you even read my question?", "Wait, what? That's not what I meant.",
    "I don't think you understood.", "Not what I wanted. {repeat}",
]  # fmt: skip
REACT_REFUSAL = [  # E2
    "Why can't you help with that?", "Why not? It's a simple request.",
    "Come on, you should be able to do this.", "Seriously? I just need a {thing}.",
    "What do you mean you can't?", "Why won't you do it?", "But that's what you're for.",
    "Please just do it. {repeat}",
]  # fmt: skip
REACT_WRONG_VALUE = [  # E3
    "No, I said {right}, not {wrong}.", "That's wrong, it should be {right}.", "No, {right}.",
    "I asked for {right}.", "Not {wrong}, {right}.", "No no, {right} please.",
    "That's not right. I wanted {right}.", "You got it wrong, I said {right}.",
    "Wait, {wrong}? I told you {right}.",
]  # fmt: skip
REACT_NOTHING = [  # E4
    "Really? There's nothing at all?", "Can you check again? There must be something.",
    "Are you sure? Please search again.", "That can't be right, look again.",
    "Nothing? Try again please. {repeat}", "Hmm, that's odd. Can you search once more?",
    "Seriously, no {noun}s at all?",
]  # fmt: skip
REACT_BROKEN = [  # E5
    "Your message got cut off.", "What? Your reply is incomplete.", "Hello? Are you still there?",
    "I didn't get a proper answer, can you try again?", "??", "Your answer stopped halfway.",
    "That message didn't come through properly.", "Is something broken? {repeat}",
    "I got an error. Can you retry?",
]  # fmt: skip
REACT_UNSUPPORTED = [  # E7
    "But I thought you could help with {noun}s?", "So you can't do it at all?",
    "That's disappointing, I thought this was supported.", "Then what can you do?",
    "Really? Other assistants can do that.", "Ok so where am I supposed to do it then?",
]  # fmt: skip
REACT_GENERIC = [
    "That's not right.", "No, that's not it.", "That's not helpful.", "Ugh, this isn't working.",
    "Can you try again?", "Hmm, no.", "That doesn't help me.", "This is useless.", "No. {repeat}",
    "Try again. {repeat}", "That's not what I need.", "You're not understanding me.",
]  # fmt: skip
REACT_GIVE_UP = [
    "Never mind, I'll do it myself.", "Forget it.", "Ok, I'll look somewhere else.",
    "Never mind. Goodbye.", "This isn't working, I'll call them directly.",
    "Fine, forget about it.", "Forget it, I'll use another app.", "Never mind, that's all.",
    "I give up.", "Ok whatever, bye.",
    "Let's just forget it. {new}",
]  # fmt: skip
REPEAT_PREFIX = [
    "", "", "I said, ", "Again, ", "Let me repeat: ", "Like I said, ", "As I said, ", "I meant: ",
    "No, I meant ", "Once more: ", "Please, ",
]  # fmt: skip
BY_CODE = {
    "E1": REACT_OFF_TOPIC, "E6": REACT_OFF_TOPIC, "E2": REACT_REFUSAL, "E3": REACT_WRONG_VALUE,
    "E4": REACT_NOTHING, "E5": REACT_BROKEN, "E7": REACT_UNSUPPORTED,
}  # fmt: skip
CODE_WEIGHTS = {"E1": 2.0, "E2": 1.0, "E3": 2.0, "E4": 1.2, "E5": 1.2, "E6": 1.5, "E7": 1.0}
"""How often each code is drawn for a corruption."""


def noun(service: str) -> tuple[str, str]:
    """What a service's dialogues are about: (thing searched, thing booked)."""
    return NOUNS.get(service.split("_")[0], ("option", "request"))


def lower_first(text: str) -> str:
    """``text`` with its first letter lower-cased (unless it opens with "I ")."""
    return text[:1].lower() + text[1:] if text[:2] != "I " else text


def fill(template: str, service: str, other_service: str, rng: random.Random, **extra: str) -> str:
    """A template with its ``{noun}``, ``{thing}``, ``{other}``... fields filled."""
    thing_noun, thing = noun(service)
    slot = rng.choice(["restaurant_name", "time", "city", "date", "count"])
    if "{{" in template:  # a template leak: keep literal braces
        return template.replace("{{{slot}}}", "{" + slot + "}").replace("{{time}}", "{time}")
    fields = {
        "noun": thing_noun,
        "Noun": thing_noun.capitalize(),
        "thing": thing,
        "other": noun(other_service)[0],
        "slot": slot,
        **extra,
    }
    text = template
    for key, value in fields.items():
        text = text.replace("{" + key + "}", value)
    return text


def cut_off(text: str, rng: random.Random) -> str | None:
    """``text`` cut off mid-sentence (None when it is too short to cut)."""
    words = text.split()
    if len(words) < 6:
        return None
    keep = rng.randint(max(2, len(words) // 3), len(words) - 2)
    return " ".join(words[:keep]).rstrip(".,!?;:") + rng.choice(["", "", " ", ",", " -"])


def swap_value(
    response: str, state: dict[str, list[str]], pool: dict[str, list[str]], rng: random.Random
) -> tuple[str, str, str] | None:
    """Replace a value of the user's state that the reply repeats with another of its slot.

    Returns:
        ``(new reply, right value, wrong value)``, or None when the reply repeats no value.
    """
    options = []
    for slot, given in state.items():
        lowered = {value.lower() for value in given}
        for value in given:
            if value and re.search(rf"(?<!\w){re.escape(value)}(?!\w)", response, re.IGNORECASE):
                others = [other for other in pool.get(slot, []) if other.lower() not in lowered]
                if others:
                    options.append((value, others))
    if not options:
        return None
    right, others = rng.choice(options)
    wrong = rng.choice(others)
    pattern = rf"(?<!\w){re.escape(right)}(?!\w)"
    return re.sub(pattern, wrong, response, count=1, flags=re.IGNORECASE), right, wrong


def write_reaction(
    code: str,
    user: str,
    services: tuple[str, str],
    rng: random.Random,
    paraphrases: list[str],
    new_requests: list[str],
    values: tuple[str, str] = ("", ""),
) -> str:
    """A user's reaction to a failed turn of ``code`` (see the module doc).

    Args:
        code: The failure's root cause.
        user: The request the failed reply answered.
        services: The dialogue's service and another domain's service.
        rng: The random source.
        paraphrases: Other users' requests with the same service, intent and slots.
        new_requests: Opening requests of other dialogues (for "forget it, <new request>").
        values: ``(right, wrong)`` values of a swapped-value failure (E3), else empty.
    """
    service, other = services
    right, wrong = values
    roll = rng.random()
    repeat = rng.choice(paraphrases) if paraphrases and rng.random() < 0.6 else user
    new = rng.choice(new_requests) if new_requests else ""
    if roll < 0.30:  # a repetition or rephrase of the request
        prefix = rng.choice(REPEAT_PREFIX)
        return prefix + (lower_first(repeat) if prefix else repeat)
    if code == "E3" and right and roll < 0.65:
        return fill(rng.choice(REACT_WRONG_VALUE), service, other, rng, right=right, wrong=wrong)
    if roll < 0.62:
        pool = REACT_GENERIC if code == "E3" else BY_CODE.get(code, REACT_GENERIC)
        return fill(rng.choice(pool), service, other, rng, repeat=repeat, new=new)
    if roll < 0.82:
        return fill(rng.choice(REACT_GENERIC), service, other, rng, repeat=repeat, new=new)
    return fill(rng.choice(REACT_GIVE_UP), service, other, rng, repeat=repeat, new=new).strip()
