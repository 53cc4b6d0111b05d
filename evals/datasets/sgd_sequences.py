"""Goal sequences of SGD dialogues (ATOD, paper 000, Appendix A.2, Table 7).

"Each sequence is an ordered list of user goals (domain-intent pairs) within a dialogue." A
goal is a ``(service, intent)`` pair a user frame makes active. The sequence lists them in the
order the user pursues them, one entry each time the user switches to another goal, so a goal
the user leaves and comes back to appears twice (``revisits=True``); consecutive utterances on
the same goal are one entry. ``revisits=False`` gives each goal once, in first-mention order (the
compact files' ``goals``).
"""

from __future__ import annotations

from todeval.evals.datasets.sgd import NO_INTENT
from todeval.evals.schema import Dialogue

Goal = tuple[str, str]
"""``(service, intent)``."""


def goal_sequence(dialogue: Dialogue, *, revisits: bool = True) -> list[Goal]:
    """The goals the user pursues in ``dialogue``, in order (module doc).

    Raises:
        KeyError: A user frame lacks ``svc`` or ``intent`` (not SGD data).
    """
    sequence: list[Goal] = []
    for turn in dialogue.turns:
        for frame in turn.metadata.get("sgd_user_frames") or []:
            if frame["intent"] == NO_INTENT:
                continue
            goal = (str(frame["svc"]), str(frame["intent"]))
            if sequence and sequence[-1] == goal:
                continue
            if not revisits and goal in sequence:
                continue
            sequence.append(goal)
    return sequence
