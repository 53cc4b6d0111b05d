"""Goal sequences of SGD dialogues (ATOD, paper 000, Appendix A.2, Table 7).

"Each sequence is an ordered list of user goals (domain-intent pairs) within a dialogue." A
goal is a ``(service, intent)`` pair a user frame makes active. The sequence lists them in the
order the user pursues them, one entry each time the user switches to another goal, so a goal
the user leaves and comes back to appears twice (``revisits=True``); consecutive utterances on
the same goal are one entry. ``revisits=False`` gives each goal once, in first-mention order (the
compact files' ``goals``). The paper's Table 7 counts the multi-domain dialogues only ("All
10,739 sequences are multi-domain"), which is what ``multi_domain`` selects: SGD train has
exactly 10,739 of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from todeval.evals.datasets.sgd import NO_INTENT
from todeval.evals.schema import Dialogue, RecordError

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


def goal_sequences(
    records: Iterable[Dialogue | RecordError],
    *,
    multi_domain: bool = True,
    revisits: bool = True,
) -> Iterator[list[Goal]]:
    """Every readable dialogue's goal sequence (unreadable records are skipped).

    Args:
        records: SGD dialogues as :func:`~evals.datasets.load_dialogues` yields them.
        multi_domain: Keep only dialogues over two or more services (the paper's Table 7).
        revisits: Whether a goal the user returns to is listed again (module doc).
    """
    for record in records:
        if isinstance(record, RecordError):
            continue
        services = record.metadata.get("services") or []
        if multi_domain and len(services) < 2:
            continue
        sequence = goal_sequence(record, revisits=revisits)
        if sequence:
            yield sequence
