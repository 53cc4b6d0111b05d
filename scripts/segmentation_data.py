"""Read the human-style segmentation dialogues of ``data/segmentation_train/`` (``*.txt``).

The files are written by hand in a compact form, one dialogue per block::

    ## dev-001 | multiwoz | restaurant, hotel
    + the user's message that starts a new goal
    > the assistant's reply
    - a user message that continues the current goal
    > the assistant's reply

Lines starting with ``#`` (one hash) are comments. ``python -m scripts.segmentation_data FILE``
writes the dialogues as Mind the Goal JSONL (for ``todeval segment``) to stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from todeval.evals.schema import Dialogue
from todeval.stores.paths import PROJECT_ROOT

#: Where the hand-written training and development dialogues live.
TRAIN_DIR = PROJECT_ROOT / "data" / "segmentation_train"


def parse_dialogues(text: str, source: str = "<text>") -> list[Dialogue]:
    """The dialogues of one file in the compact form (see the module notes).

    Raises:
        ValueError: A block is malformed (a reply without a user line, a user line without
            a reply, a first turn that does not start a goal, an unknown line).
    """
    dialogues: list[Dialogue] = []
    header: list[str] | None = None
    turns: list[dict[str, Any]] = []

    def close() -> None:
        if header is None:
            return
        if not turns or not turns[-1]["response"]:
            raise ValueError(f"{source}: {header[0]} ends without a reply")
        if not turns[0]["is_new_goal"]:
            raise ValueError(f"{source}: {header[0]} must open with a '+' line")
        metadata = {
            "style": header[1] if len(header) > 1 else "unknown",
            "domains": [d.strip() for d in header[2].split(",")] if len(header) > 2 else [],
            "synthetic": True,
            "labelled_by": "todeval team (segmentation training/dev set)",
        }
        dialogues.append(Dialogue(dialogue_id=header[0], turns=turns, metadata=metadata))

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if not line or (line.startswith("#") and not line.startswith("##")):
            continue
        if line.startswith("## "):
            close()
            header, turns = [part.strip() for part in line[3:].split("|")], []
        elif line[:2] in {"+ ", "- "}:
            if header is None or (turns and not turns[-1]["response"]):
                raise ValueError(f"{source}:{number}: a user line must follow a reply")
            turns.append(
                {
                    "turn_number": len(turns) + 1,
                    "user_msg": line[2:].strip(),
                    "response": "",
                    "is_new_goal": line[0] == "+",
                }
            )
        elif line.startswith("> "):
            if not turns or turns[-1]["response"]:
                raise ValueError(f"{source}:{number}: a reply must follow a user line")
            turns[-1]["response"] = line[2:].strip()
        else:
            raise ValueError(f"{source}:{number}: cannot read {line[:40]!r}")
    close()
    return dialogues


def load_training_dialogues(name: str) -> list[Dialogue]:
    """The dialogues of ``data/segmentation_train/<name>.txt`` (``train`` or ``dev``)."""
    path = TRAIN_DIR / f"{name}.txt"
    return parse_dialogues(path.read_text(encoding="utf-8"), str(path))


def main(argv: Sequence[str] | None = None) -> None:
    """Print a compact file as Mind the Goal JSONL."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("file", type=Path)
    args = parser.parse_args(argv)
    for dialogue in parse_dialogues(args.file.read_text(encoding="utf-8"), str(args.file)):
        sys.stdout.write(json.dumps(dialogue.model_dump(mode="json", by_alias=True)) + "\n")


if __name__ == "__main__":
    main()
