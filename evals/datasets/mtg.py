"""Mind the Goal dialog records (paper 004, Appendix E).

The file format is the data contract itself (:class:`evals.schema.Dialogue`): ``dialog_id`` (or
``dialogue_id``), ``turns[{turn_number, user_msg, response, source_urls, source_names,
source_snippets}]`` plus the optional fields the schema allows, including the paper's
``yes``/``no`` gold labels. Converting a record is therefore plain validation.
"""

from __future__ import annotations

from typing import Any

from todeval.evals.schema import Dialogue


def mtg_dialogue(raw: Any) -> Dialogue:
    """Validate one Mind the Goal record.

    Raises:
        pydantic.ValidationError: The record does not match the schema; the error locations
            are the record's own field paths (``turns.3.user_msg``).
    """
    return Dialogue.model_validate(raw)
