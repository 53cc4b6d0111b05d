"""MAP and the paper's comparison settings: what memory the reader is given (paper 001).

MAP's tables compare its memory-active policy with other ways of giving a reader the user's
history. Each is a value of ``MemorySettings.setting``, described here by the memory it reads
(``source``) and how that memory is chosen (``selection``):

=================== =========== =========== ==================================================
setting             source      selection   the paper's name
=================== =========== =========== ==================================================
``map``             QA units    map         MAP (Tables 3, 4): activation, judger, refinement
``current_session`` none        none        Current Session Context (Table 1)
``full_context``    dialogue    all         Full Conversation Context (Table 1); "w/o MAP"
                                            full-context prompting (Table 3)
``dialogue_rag``    dialogue    ranked      BM25 / embedding / hybrid retrieval of historical
                                            dialogues (Table 1; by ``memory_retrieval``)
``qa_rag``          QA units    ranked      Hybrid RAG without the judger and refinement
                                            (Fig. 4, App. D.2)
``summary``         summaries   all         the ChatCite summary baseline (Table 4, App. D.1)
``summary_rag``     summaries   ranked      Hybrid RAG retrieving a summary (Fig. 5)
``oracle``          dialogue    oracle      Oracle, ground-truth context (Table 1)
``oracle_qa``       QA units    oracle      the relevant sessions' QA units (MAP's memory with
                                            perfect activation: the local reader's ceiling)
=================== =========== =========== ==================================================

``ranked`` keeps the ``memory_selected`` best of the ``memory_top_k`` activated (QA units as
question and answer, unrefined; whole dialogues or summaries); ``all`` gives every stored
session in session order; ``oracle`` the item's relevant sessions (the ground truth). QA units
are ranked against MAP's intent description k_i (Hybrid RAG shares MAP's activation, Fig. 4);
dialogues and summaries against the current session's context, as retrieval baselines are. The
ablations of MAP itself (no judger, Fig. 6; no refinement, Table 6) are ``map`` with
``memory_judger="none"`` or ``refine_memory=False``. BERT-DST, LDST and AutoTOD (Table 4) are
trained systems of their own and are not settings here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from todeval.nodes.context import SubsystemSettings

Source = Literal["qa", "dialogue", "summary", "none"]
BankSource = Literal["dialogue", "task_goal_oracle"]
"""What the local bank builder reads of a stored session (``MemorySettings.bank_source``)."""
Selection = Literal["map", "ranked", "all", "oracle", "none"]


@dataclass(frozen=True)
class MemorySetting:
    """What one setting reads and how it chooses (see the module docstring)."""

    source: Source
    selection: Selection

    @property
    def text_memory(self) -> bool:
        """The reader gets dialogue or summary text rather than QA units."""
        return self.source in ("dialogue", "summary")

    @property
    def ranks(self) -> bool:
        """Memory is activated by a ranking (Recall@k is defined)."""
        return self.selection in ("map", "ranked")


MEMORY_SETTINGS: dict[str, MemorySetting] = {
    "map": MemorySetting("qa", "map"),
    "current_session": MemorySetting("none", "none"),
    "full_context": MemorySetting("dialogue", "all"),
    "dialogue_rag": MemorySetting("dialogue", "ranked"),
    "qa_rag": MemorySetting("qa", "ranked"),
    "summary": MemorySetting("summary", "all"),
    "summary_rag": MemorySetting("summary", "ranked"),
    "oracle": MemorySetting("dialogue", "oracle"),
    "oracle_qa": MemorySetting("qa", "oracle"),
}

ACTIVATIONS = ("intent_key", "qa")
"""``Context.memory_activation`` values: the paper's intent-key matching, or per-QA ranking."""


def memory_setting(name: str) -> MemorySetting:
    """The setting called ``name``.

    Raises:
        ValueError: No such setting.
    """
    try:
        return MEMORY_SETTINGS[name]
    except KeyError:
        raise ValueError(
            f"memory_setting must be one of {sorted(MEMORY_SETTINGS)}, not {name!r}"
        ) from None


class MemorySettings(SubsystemSettings, section="memory"):
    """MAP's memory banks, activation, judger and refinement, and the slot repair loop."""

    bank_path: str | None = Field(
        None, description="The memory banks' Chroma folder; None: .todeval/memory_bank."
    )
    chroma_server: str | None = Field(
        None,
        description="A Chroma server (http://host:port) holding the memory banks instead of "
        "bank_path, so processes and machines share them. Where the vectors are kept, not what "
        "they are: it does not change a record's thread.",
    )
    bank_backend: str = Field(
        "chroma", description="chroma (units on disk) or memory (in process)."
    )
    bank_collection: str = Field(
        "memory_bank",
        description="The Chroma collection holding the banks (one per benchmark).",
    )
    bank_source: BankSource = Field(
        "dialogue",
        description="What the local bank builder stores of each session: dialogue (the slot "
        "values its user and system said, read off the text, as the paper's bank is built from "
        "the dialogue) or task_goal_oracle (its task goal, which on MS-TOD-style benches holds "
        "the values the gold confirmation has: an oracle memory, reported as such). An LLM "
        "bank builder reads the dialogue and the task goal (App. B.4) either way.",
    )
    retrieval: str = Field(
        "hybrid",
        description="Memory activation (MAP §4.2): dense (MiniLM over Chroma), bm25 or hybrid.",
    )
    activation: str = Field(
        "intent_key",
        description="What activation ranks: intent_key (the paper's: intent description against "
        "each session's intent key) or qa (each QA unit on its own).",
    )
    setting: str = Field(
        "map",
        description="What the reader is given: " + ", ".join(MEMORY_SETTINGS) + " (see "
        "nodes/memory/settings.py).",
    )
    top_k: int = Field(
        10, gt=0, description="QA memory units activated per query before judging (MAP §4.2)."
    )
    alpha: float = Field(
        0.5,
        description="Re-rank weight: s_final = alpha * s_retrieval + (1 - alpha) * s_judger.",
    )
    selected: int = Field(
        5, gt=0, description="QA units kept after re-ranking and passed to refinement."
    )
    refine: bool = Field(
        True, description="Refinement (MAP §4.2): drop the units' questions, keep the answers."
    )
    schema_defaults: bool = Field(
        True,
        description="With a schema, the reader confirms the schema's defaults for optional "
        "slots nobody set; memory and the context override them.",
    )
    max_repair_turns: int = Field(
        10, description="The repair loop stops after this many agent turns."
    )
