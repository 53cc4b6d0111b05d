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
<data>{context}</data>

Latest utterance ({speaker}): <data>{utterance}</data>

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
<data>{context}</data>

Reason inside <think>...</think>, then print only this JSON:
{{"updates": [{{"goal_id": "g1", "status": "completed", "evidence": "..."}}]}}"""

FULL_CONTEXT_PROMPT = """You evaluate a task-oriented dialogue. Read the whole dialogue so far and
list every user goal with its current status, one of: {statuses}.

Schema:
{schema}

Dialogue so far:
<data>{context}</data>

Reason inside <think>...</think>, then print only this JSON:
{{"goals": [{{"description": "...", "service": "...", "intent": "...", "status": "open"}}]}}"""
"""The zero-shot full-context baseline (paper 000 §7: LLM judges read the whole dialogue)."""

# -- ATOD synthesis (paper 000, §4.2-4.4, Appendix A.4-A.7) ----------------------------------
#
# The paper prints its quality-control (A.5), dialogue-generation (A.6) and status-annotation
# (A.7) templates as figures, which the text of the paper does not carry. What the text gives is
# kept word for word: A.6's placeholders ({complexity}, {estimated_turns}, {goal_descriptions},
# {agentic_attrs}), A.7's inputs ("the current dialogue turn, the list of goals with their
# current statuses, and the expected JSON schema"), Listing 1's annotation fields and Table 9's
# criteria. The wording around them is todeval's.

COMPLEXITY_CRITERIA = """Medium: 2-8 goals, 8-35 turns, asynchronous execution, interleaving, at
most 2 dependencies, no proactivity, no defective goals.
Complex: 7 or more goals, 30 or more turns, asynchronous execution, interleaving, 2 or more
dependencies, proactivity, defective goals.
Ambiguous cases are resolved using domain diversity, dependency depth and behaviours."""
"""Table 9, in words (``{criteria}`` of :data:`TRAJECTORY_ANNOTATION_PROMPT`)."""

TRAJECTORY_ANNOTATION_PROMPT = """You annotate a goal trajectory for a synthetic task-oriented
dialogue. The goals below were sampled together from real dialogues; the dialogue will be
{complexity}.

Goals (service / intent: what it does; required slots):
{goals}

Complexity criteria:
{criteria}

1. Give every goal concrete, mutually consistent slot values (the same city, dates that fit
   together, a ride to the place that was booked).
2. Give the dependencies between goals: a goal depends on another when it needs that goal's
   outcome first (e.g. a payment after a booking). Give parent_id when a goal is a sub-goal
   (a later step) of another.
3. Describe each goal in words (content) and in a short standard form (core_content).
4. Mark dependency_label (the goal has dependencies) and defectiveness_label (the goal will
   fail or be left incomplete, only in complex dialogues).
5. Quality control: check that each goal is clear, that its slot values are valid for its
   slots and that the annotations agree with each other; drop duplicate or incompatible goals.

Reason inside <think>...</think>, then print only this JSON:
{{"complexity_class": "medium|complex",
  "metadata": {{"num_goals": 0, "estimated_turns": 0, "async_execution": true,
                "interleaving": true, "proactivity": false}},
  "goals": [{{"id": "g1", "domain": "...", "intent": "...", "slots": ["..."],
              "slot_values": {{"slot": "value"}}, "dependencies": [], "parent_id": null,
              "content": "...", "core_content": "...", "dependency_label": false,
              "defectiveness_label": false}}]}}"""
"""Fields: ``complexity`` (medium or complex), ``goals`` (one line per sampled goal),
``criteria`` (:data:`COMPLEXITY_CRITERIA`)."""

DIALOGUE_GENERATION_PROMPT = """Generate a realistic multi-turn conversation between a USER and
an AI assistant (SYSTEM) with tools, for a {complexity} task-oriented dialogue of about
{estimated_turns} turns (one turn = one utterance).

The user pursues these goals (id, description, dependencies):
{goal_descriptions}

The dialogue must show these agentic behaviours:
{agentic_attrs}

Rules: the user raises the goals in a natural order, may suspend one goal for another and
resume it; a goal is never completed before the goals it depends on; slot values stay the same
wherever they are repeated; when a tool result is delayed the assistant says so and reports it
later; the assistant never invents goals the user did not ask for, except as suggestions.

Print only this JSON:
{{"turns": [{{"speaker": "USER", "utterance": "..."}}, {{"speaker": "SYSTEM", "utterance": "..."}}]}}"""  # noqa: E501
"""The paper's A.6 placeholders: ``complexity``, ``estimated_turns``, ``goal_descriptions``
(one goal per line), ``agentic_attrs`` (one behaviour per line)."""

STATUS_ANNOTATION_PROMPT = """You annotate goal statuses in a task-oriented dialogue, one turn at
a time. Statuses: {statuses}. not_mentioned = not raised yet; open = requested and being worked
on; pending = waiting on the user or on an external result; completed = done; failed = could not
be done; abandoned = the user dropped it.

Goals with their current statuses:
{goals}

Earlier turns (most recent last):
<data>{context}</data>

Current turn {turn_id} ({speaker}): <data>{utterance}</data>

List only the goals whose status changes at this turn. Print only this JSON:
{{"goal_status_changes": [{{"goal_id": "g1", "new_status": "open"}}]}}"""
"""Fields: ``statuses``, ``goals`` (``id: description [status]`` lines), ``context``,
``turn_id``, ``speaker``, ``utterance``."""

# -- Memory baselines as goal trackers (paper 000, §7, Table 3, Figure 4) ----------------------
#
# "Since these architectures primarily target open-domain retention, we adapt their prompting
# strategies to align with our specific goal status schema." The paper prints none of the
# adapted prompts. todeval keeps each method's memory (what it stores, how it recalls) and
# replaces its response generation by one answer: every user goal with its status, given the
# memory it recalled, its own last answer and the latest utterance (MEMORY_TRACKER_PROMPT).
# LLM-Rsum also rewrites its summary after every utterance (RSUM_UPDATE_PROMPT) and MemoChat
# writes memos for every finished span (MEMOCHAT_MEMO_PROMPT), as the methods do.

MEMORY_TRACKER_PROMPT = """You track the user goals of a task-oriented dialogue with {method}.
After each utterance, list every user goal with its status, one of: {statuses}.
open = requested and being worked on; pending = waiting on the user or an external result;
completed = done; failed = could not be done; abandoned = the user dropped it.

Schema:
{schema}

{memory_title}:
<data>{memory}</data>

Goals so far (your last answer):
{goals}

Latest utterance ({speaker}): <data>{utterance}</data>

Reason inside <think>...</think>, then print only this JSON:
{{"goals": [{{"description": "...", "service": "...", "intent": "...", "status": "open"}}]}}"""
"""Fields: ``method`` (the baseline in words), ``statuses``, ``schema``, ``memory_title`` and
``memory`` (what the method recalled), ``goals`` (its last answer, one per line, or "none"),
``speaker``, ``utterance``."""

RSUM_UPDATE_PROMPT = """You keep a running summary of a task-oriented dialogue (recursive
summarisation). Update the previous summary with the new utterances. Keep every user goal, the
details the user gave for it (slot values) and where it stands (its status); drop small talk.

Previous summary:
<data>{summary}</data>

New utterances:
<data>{utterances}</data>

Print only this JSON:
{{"summary": "..."}}"""
"""Fields: ``summary`` (or "none"), ``utterances`` (``SPEAKER: text`` lines)."""

MEMOCHAT_MEMO_PROMPT = """Write memos for a finished span of a task-oriented dialogue, one memo
per topic (a user goal or request): the topic, a one-sentence summary with the details given
and where it stands.

Span:
<data>{utterances}</data>

Print only this JSON:
{{"memos": [{{"topic": "...", "summary": "..."}}]}}"""
"""Fields: ``utterances`` (``SPEAKER: text`` lines)."""

# Proactivity Effectiveness (§6.2): the paper names the judgement ("contextually appropriate and
# beneficial") but prints no prompt; this one asks exactly that of one proactive action.

PROACTIVITY_PROMPT = """You judge one proactive action of a task-oriented dialogue system: a goal
or status change the system initiated without the user asking for it at that point (a reminder,
an asynchronous update, a suggestion). Decide whether it was contextually appropriate (timely,
relevant to the user's goals, not a digression) and beneficial (it helped the user's goals
forward).

Dialogue before the action:
<data>{context}</data>

Action ({kind}) on the goal "{goal}", now {status}:
SYSTEM: <data>{utterance}</data>

The user's next utterance: <data>{reaction}</data>
The goal's status at the end of the dialogue: {final_status}

Reason inside <think>...</think>, then print only this JSON:
{{"appropriate": true, "beneficial": true, "reason": "..."}}"""
"""Fields: ``context`` (``SPEAKER: text`` lines), ``kind`` (suggestion or update), ``goal``,
``status``, ``utterance``, ``reaction`` (or "(the dialogue ends)"), ``final_status``."""

# Response quality (§6.3): G-Eval style (Liu et al., 2023: criteria, evaluation steps, a 1-5
# score) on the paper's two dimensions, turn-level relevance and dialogue-level coherence. The
# paper prints no prompt; this one follows G-Eval's form.

RESPONSE_QUALITY_PROMPT = """You will be given a task-oriented dialogue between a USER and a
SYSTEM. Your task is to rate the SYSTEM's responses on two criteria.

Evaluation criteria:
Relevance (1-5), per SYSTEM turn: the response addresses what the user needs at that point
(their request, their pending goals), with no irrelevant or redundant content.
Coherence (1-5), for the whole dialogue: the SYSTEM's responses fit together, stay consistent
with what was said and done before (slot values, statuses of the user's goals) and keep the
dialogue well organised across interleaved goals.

Evaluation steps:
1. Read the dialogue and note the user's goals and how they evolve.
2. For each SYSTEM turn, check whether it addresses the user's current need; score 1-5.
3. Check the whole dialogue for contradictions, forgotten goals and confusing switches; score
coherence 1-5.

Dialogue (turns numbered):
<data>{dialogue}</data>

Reason inside <think>...</think>, then print only this JSON:
{{"relevance": [{{"turn": 2, "score": 4}}], "coherence": 4}}"""
"""Fields: ``dialogue`` (``[turn] SPEAKER: text`` lines)."""
