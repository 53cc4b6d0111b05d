"""The memory subsystem's judge roles (MAP / MS-TOD, paper 001), each in its own package.

``bank_builder`` (sessions -> QA units), ``intent_capture`` and ``missing_slot_query`` (the
planning steps), ``memory_judger`` (each unit's contribution), ``reader`` (the confirmation),
``confirmation_score`` (Figure 11's GPT-4 score, the ``scorer_judge``), ``summary_writer``
(session summaries of the summary baseline) and ``slot_repair`` (the repair agent and the
supervisor). :func:`check_memory_judges` builds every one a run needs before it starts.
"""

from __future__ import annotations

from todeval.nodes.context import Context
from todeval.nodes.judges.spec import JudgeSpecError, parse_spec
from todeval.nodes.memory.judges.confirmation_score import confirmation_scorer
from todeval.nodes.memory.judges.intent_capture import intent_capturer
from todeval.nodes.memory.judges.memory_judger import memory_judger
from todeval.nodes.memory.judges.missing_slot_query import missing_slot_querier
from todeval.nodes.memory.judges.reader import memory_reader
from todeval.nodes.memory.judges.summary_writer import session_summarizer
from todeval.nodes.memory.settings import ACTIVATIONS, memory_setting


def check_memory_judges(context: Context, *, judgers: tuple[str, ...] = ()) -> None:
    """Build the planning, reader and judger judges now, so a bad spec fails before any item.

    The nodes reuse the judges built here (each factory caches per spec). A local judger's model
    is loaded now: a missing model is one error, not one per item.

    Args:
        context: The run's specs.
        judgers: Further judger specs the run will use (the ablation grid's).

    Raises:
        JudgeSpecError, JudgeConfigError: A spec is unknown or cannot be built here.
        ValueError: The memory setting is unknown.
        FileNotFoundError: A local model is missing.
    """
    parse_spec(context.memory_bank_builder)  # built when the banks are filled
    memory_setting(context.memory_setting)
    if context.memory_activation not in ACTIVATIONS:
        raise JudgeSpecError(
            f"memory_activation must be one of {ACTIVATIONS}, not {context.memory_activation!r}"
        )
    intent_capturer(context.memory_planner, context.schema_path)
    missing_slot_querier(context.memory_planner)
    memory_reader(context.reader_judge)
    confirmation_scorer(context.scorer_judge)
    session_summarizer(context.memory_summarizer)
    for spec in {context.memory_judger, *judgers} - {"none"}:
        getattr(memory_judger(spec), "model", None)
