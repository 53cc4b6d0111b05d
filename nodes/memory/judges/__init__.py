"""The memory subsystem's judges (MAP / MS-TOD, paper 001): each role's types, local judges and LLM.

``bank_builder`` (sessions -> QA units), ``intent_capture`` and ``missing_slot_query`` (the
planning steps, with :mod:`.planning`'s task attributes), ``memory_judger`` (each unit's
contribution), ``reader`` (the confirmation), ``confirmation_score`` (Figure 11's GPT-4 score),
``summary_writer`` (session summaries of the summary baseline), ``repair_agent`` and
``supervisor`` (the slot repair loop); :mod:`.units` renders what they share. The roles are
declared in :mod:`nodes.memory.roles`.
"""
