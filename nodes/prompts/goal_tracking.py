"""Goal-tracker prompts: paper 000 (ATOD), §5.2 and Appendix B.2.

The paper describes three templates, used in sequence: (i) goal extraction from a turn,
(ii) turn-level goal status classification, (iii) goal graph evolution. Their exact text is not
printed, so these follow the description and the annotation prompt of Appendix A.7 (the current
turn, the goals with their current statuses, and the expected JSON). To keep a turn at about
two LLM calls, :data:`TURN_UPDATE_PROMPT` asks for (i) and (ii) at once, with the retrieved
neighbours of each candidate so the model also answers the existence check; (iii) runs only
when a new goal is inserted, and :data:`AUDIT_PROMPT` every ``audit_every`` turns.

Shared fields (``str.format``):
    statuses: the allowed statuses, e.g. "open, pending, completed, failed, abandoned".
    context: the last few utterances, one per line as "SPEAKER: text".
    speaker, utterance: the utterance being processed.
    goals: the goals in memory that may be concerned (id, description, status, slots), one per
        line, or "none".
    schema: the domain's services and intents with descriptions, or "none" (free-text goals).
"""

GOAL_TRACKER_SYSTEM_PROMPT = (
    "You maintain the memory of a task-oriented dialogue evaluator. You track every user goal "
    "(a task or information need) and its lifecycle across the conversation."
)

# Literal JSON braces are doubled for str.format.
TURN_UPDATE_PROMPT = """Read the latest utterance of a task-oriented dialogue.

1. Goal extraction: list the user goals this utterance raises, continues or settles. A goal is
   one task or information need (e.g. "reserve a table at Sino for 2 at 11:30"). If a schema is
   given, name each goal by its service and intent from the schema.
2. Existence check: for each goal, say whether it is one of the goals already in memory (give
   its id and your confidence 0-1) or a new one (id null).
3. Status: give each goal's status after this utterance, one of: {statuses}.
   open = requested and being worked on; pending = waiting on the user or an external event;
   completed = done (booked, confirmed, answered); failed = could not be done;
   abandoned = the user dropped it.

Schema:
{schema}

Goals in memory:
{goals}

Recent context:
{context}

Latest utterance ({speaker}): {utterance}

Reason inside <think>...</think>, then print only this JSON:
{{"goals": [{{"description": "...", "service": "...", "intent": "...", "slots": {{"slot": "value"}},
  "memory_id": "g1" | null, "confidence": 0.0, "status": "open"}}]}}
An utterance that concerns no goal gives {{"goals": []}}."""

GRAPH_EVOLUTION_PROMPT = """A new goal was added to the memory of a task-oriented dialogue.
Decide which existing goals it is related to, and whether it depends on them (it cannot be
completed before they are, e.g. a payment after a booking, a ride to a restaurant after the
table is reserved).

New goal: {new_goal}

Existing goals:
{goals}

Reason inside <think>...</think>, then print only this JSON:
{{"links": [{{"goal_id": "g1", "relation": 0.0, "depends_on": true}}]}}
relation is 0-1 (how strongly the goals belong together); list only related goals."""

AUDIT_PROMPT = """Audit the open and pending goals of a task-oriented dialogue against what has
been said and what the tools returned. For each goal whose status is out of date, give its
correct status, one of: {statuses}. Leave out goals that are up to date.

Goals:
{goals}

Dialogue so far (most recent last):
{context}

Reason inside <think>...</think>, then print only this JSON:
{{"updates": [{{"goal_id": "g1", "status": "completed", "evidence": "..."}}]}}"""

FULL_CONTEXT_PROMPT = """You evaluate a task-oriented dialogue. Read the whole dialogue so far and
list every user goal with its current status, one of: {statuses}.

Schema:
{schema}

Dialogue so far:
{context}

Reason inside <think>...</think>, then print only this JSON:
{{"goals": [{{"description": "...", "service": "...", "intent": "...", "status": "open"}}]}}"""
"""The zero-shot full-context baseline (paper 000 §7: LLM judges read the whole dialogue)."""
