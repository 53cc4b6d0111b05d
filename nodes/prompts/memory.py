"""Memory-guided dialogue planning prompts: paper 001 (MAP), §4.2-4.3 and Appendix A.

Where the paper prints a prompt its wording is kept: the task slot query (Figure 8), the
confirmation response (Figure 9) and the GPT-4 evaluation (Figure 11). The paper describes but
does not print the intent capture prompt (§4.2, "a high-level intent description k_i, which
summarizes the user's objective") nor the memory judger's input (Eq. 2, a fine-tuned
LLaMA 3.1-8B scoring ``P(y=1 | c, q_miss, (q, a))``); those are written from the description.
Each prompt ends with the JSON it must print; literal braces are doubled for ``str.format``.

Shared fields (``str.format``):
    conversation_history: the dialogue context ``c``, one utterance per line as
        ``"user: ..."`` / ``"assistant: ..."``.
    intent: the session's intent in words (``"reserve restaurant"``), given to the system as in
        MS-TOD; ``"unknown"`` when not given.
"""

INTENT_CAPTURE_PROMPT = """You are a dialogue assistant with a long-term memory of the user's \
earlier sessions.

Read the current dialogue session and write a high-level intent description: one sentence, \
starting with "The user wants to", that summarises the user's objective in this session and \
names the specific entities (names, places, dates, times, counts) the user states. It will be \
used to retrieve related memories of earlier sessions.

[INTENT]
{intent}

[DIALOGUE]
<data>{conversation_history}</data>

Print only this JSON:
{{"intent_description": "The user wants to ..."}}"""
"""Intent capture (§4.2). Fields: intent, conversation_history."""

MISSING_SLOT_QUERY_PROMPT = """Please help me generate questions, based on the provided \
<data>{conversation_history}</data>, that correspond to unanswered attributes in the task goal \
{task_attributes}.

1. The questions should start with 'What,' 'When,' 'Why,' 'How,' or 'Where.'
2. Ensure that the generated questions are in third person.

Think step by step inside <think>...</think>: the user's intent is {intent}; for each \
attribute, say whether the conversation already gives its value; the attributes without a \
value are the missing ones.

Then print only this JSON (fill the following json):
{{"missing_slots": ["<attribute>", ...], "questions": ["<Question>", ...]}}"""
"""Task slot query generation with chain of thought (Figure 8, §4.2 "CoT prompting ... a
hypothesized missing slot query q_miss"). Fields: conversation_history, intent,
task_attributes (the intent's task attributes, slot names in words, comma-separated; never their
gold values)."""

MEMORY_JUDGER_SYSTEM_PROMPT = "You are a memory judger for a task-oriented dialogue assistant."

MEMORY_JUDGER_PROMPT = """The user has come back in a new dialogue session. A memory unit from \
one of the user's earlier sessions was retrieved. Judge whether this memory unit contributes to \
the task goal of the current session: it holds a value the assistant needs now (an answer to \
one of the missing-slot questions) and it comes from the earlier session the user is \
continuing, not from another session with a similar intent.

[DIALOGUE]
<data>{conversation_history}</data>

[MISSING SLOT QUERY]
{missing_query}

[MEMORY UNIT]
Session intent: {intent_description}
Question: <data>{question}</data>
Answer: <data>{answer}</data>

Give the probability (0 to 1) that this memory unit contributes to the task goal (y = 1) rather \
than being irrelevant (y = 0). Print only this JSON:
{{"probability": 0.0, "rationale": "<one short sentence>"}}"""
"""The memory judger (Eq. 2: ``s = P(y=1 | c_i, q_miss, (q, a))``). Fields:
conversation_history, missing_query (``q_miss``: the missing-slot questions, or "none"),
intent_description (the unit's session intent ``k_j``), question, answer."""

READER_SYSTEM_PROMPT = "You are an dialogue assistant."

READER_PROMPT = """Generate a confirmation response based on the users utterance. Include any \
relevant task goals [TASK GOALS] identified in the dialogue or related memory [MEMORY]. If \
[MEMORY] is unavailable, construct your response accurately and comprehensively using the \
provided conversation details. Ensure your reply acknowledges the users request clearly and \
incorporates relevant information from both the dialogue and the related memory units [MEMORY].

[DIALOGUE]
{conversation_history}

[TASK GOAL]
{task_goal}

[MEMORY]
{memory}

Print only this JSON:
{{"response": "<the confirmation response to the user>"}}"""
"""Confirmation response generation (Figure 9, system prompt "You are an dialogue assistant.").
Fields: conversation_history; task_goal (what the dialogue identifies: the intent, its task
attributes and the values the user states, never the gold values); memory (the refined core
answers ``A_core``, one per line, or "unavailable")."""

GPT4_SCORE_SYSTEM_PROMPT = (
    "You are a strict and objective evaluator. Your task is to assess the quality of the final "
    "predicted response using the provided conversation context, the user's target goal "
    "attributes, and a reference answer. Your evaluation should be fair, professional, and "
    "reflect an expert judgment of the response's quality."
)

GPT4_SCORE_PROMPT = """[Dialogue Context] <data>{conversation_history}</data>
[Task Goal] {task_goal}
[reference_answer] <data>{reference_answer}</data>
[predict_answer] <data>{predict_answer}</data>

Evaluation Criteria:

Requirement Alignment: Does the final predict_answer meet the user's task goal?

Content Accuracy: Is the information in the final response correct, clear, and logically \
organized?

Language Quality: Is the language fluent, coherent, and readable? Are there any obvious \
grammatical or word choice errors?

Comparison to Reference Answer: Compared to the reference answer, how does the final response \
differ in terms of completeness, professionalism, and clarity?

Overall Score: Assign a score from 1 to 10 (10 being the best), considering all of the above \
factors.

The evaluation must be structured in the following JSON format:
{{
    "Rationale": "<Explain the rationale of your score.>",
    "Score": <An integer score from 1 to 10.>
}}"""
"""The GPT-4 score of a confirmation response (Figure 11). Fields: conversation_history,
task_goal (the gold slot values, as ``slot: value`` lines: the evaluator may see them),
reference_answer, predict_answer."""


# --- memory bank -------------------------------------------------------------------------------
# Memory bank construction prompt: paper 001 (MAP / MS-TOD), Appendix A.2 and B.4.
#
# The paper builds each stored session's intent description and QA memory with GPT-4 (App. B.4:
# "an intent description and the corresponding QA memory ... each query is a question about a
# task attribute under that intent, and the answer is the slot value corresponding to that task
# attribute") but prints only the output (Figure 13), not the prompt. This prompt keeps the
# wording of the task slot query prompt (Figure 8, App. A.2: questions that start with
# What/When/Why/How/Where, in third person) turned to the attributes the session *answers*, and
# asks for Figure 13's JSON. Each pair also names its task attribute (``Slot``) so a unit can be
# traced to the slot it answers. Literal braces are doubled for ``str.format``.
#
# Fields of :data:`MEMORY_BANK_PROMPT` (``str.format``):
#     conversation_history: the stored session, one utterance per line, ``"user: ..."`` /
#         ``"assistant: ..."``.
#     intent: the session's intent in words (``"reserve restaurant"``).
#     task_goal: the session's task goal, one ``"<slot>: <value>"`` per line (``"none"`` if empty).

MEMORY_BANK_SYSTEM_PROMPT = "You are a memory construction assistant for a dialogue system."

MEMORY_BANK_PROMPT = """Please help me generate an intent description and questions, based on \
the provided conversation history, that correspond to the answered attributes in the task goal.

[INTENT]
{intent}

[CONVERSATION HISTORY]
<data>{conversation_history}</data>

[TASK GOAL]
{task_goal}

1. The intent description is one sentence, starting with "The user's intent is to", that \
summarises what the user wants in this session and names its specific entities.
2. Generate one question for each attribute of the task goal, and for any other task detail \
the conversation settles.
3. The questions should start with 'What,' 'When,' 'Why,' 'How,' or 'Where.'
4. Ensure that the generated questions are in third person.
5. Each answer is one sentence stating the attribute's value, e.g. "The user's reservation is \
from March 5th to March 7th."
6. "Slot" is the task goal attribute the question is about, or null for another detail.

fill the following json:
{{"intent_description": "The user's intent is to ...", "qa_summary": [{{"Question": "...", \
"Answer": "...", "Slot": "..."}}]}}"""
"""Intent description and QA memory of one session (App. B.4, Fig. 13). Fields:
conversation_history, intent, task_goal."""


# --- session summaries --------------------------------------------------------------------------
# The summary-based memory baseline of MAP (paper 001, §5.1, Table 4): "a summarization-based
# baseline inspired by ChatCite, which produces concise history summaries for each session",
# with GPT-4o-mini. The paper prints no prompt; this one is written from that sentence and keeps
# the bracketed headers of the paper's own prompts.
#
# Fields of :data:`SESSION_SUMMARY_PROMPT` (``str.format``):
#     intent: the session's intent in words (``"reserve restaurant"``).
#     conversation_history: the stored session, one ``"user: ..."`` / ``"assistant: ..."`` line
#         per utterance.

SESSION_SUMMARY_SYSTEM_PROMPT = "You are a dialogue summarization assistant."

SESSION_SUMMARY_PROMPT = """Write a concise summary of this past dialogue session between a \
user and an assistant, to be kept as long-term memory for the user's later sessions. State \
what the user wanted and every specific detail the session settled (names, places, dates, \
times, counts, preferences), in two or three sentences.

[INTENT]
{intent}

[DIALOGUE]
<data>{conversation_history}</data>

Print only this JSON:
{{"summary": "<the summary>"}}"""
"""A session's summary for the summary-based baseline (MAP Table 4). Fields: intent,
conversation_history."""


# --- slot repair -------------------------------------------------------------------------------
# Prompts of the proactive slot repair loop (MAP, paper 001, §4.3).
#
# The paper gives no prompt for these roles; it says: compare the generated response r with the
# task goal to get the set L of missing or wrong slots; the dialogue model talks with a simulated
# user until L is empty; at each turn "a supervisor (played by an LLM) evaluates whether the
# conversation accurately fulfills the slot information requirements" and removes each resolved
# slot from L (Eq. 6). The prompts keep the bracketed section headers of the paper's own prompts
# (Figures 9 and 11). The user simulator's prompt is in :mod:`nodes.prompts.simulation`.
#
# Fields (``str.format``), shared by the three prompts where they appear:
#     conversation_history: the new session's turns before the confirmation, one
#         ``User: ...`` / ``Assistant: ...`` line each.
#     task_goal: the gold slots, one ``- slot (slot in words): value`` line each.
#     response: the confirmation response r being repaired.
#     pending_slots: the slots still in L, one ``- slot (slot in words)`` line each.
#     repair_history: the repair exchange so far, ``User:``/``Assistant:`` lines, or "(none yet)".
#     agent_utterance: the assistant's latest repair turn.
#     user_utterance: the user's reply to it.

MISSING_SLOTS_SYSTEM_PROMPT = "You are a strict and objective supervisor of a dialogue assistant."

MISSING_SLOTS_PROMPT = """Compare the assistant's confirmation response with the user's task goal
and list every task-goal slot whose value the response leaves out or states incorrectly.

[Dialogue Context]
<data>{conversation_history}</data>

[Task Goal]
{task_goal}

[Response]
<data>{response}</data>

A slot is correct only if the response states the task goal's value for it (a paraphrase of
the same value, such as "7 pm" for "19:00", is correct). A slot the response does not mention,
or mentions with a different value, is missing or wrong.

Reply with JSON only:
{{"missing_or_wrong_slots": ["<slot name as written in the task goal>", ...],
 "rationale": "<one sentence>"}}"""

SUPERVISOR_PROMPT = """You supervise a repair dialogue. The assistant's confirmation missed or
got wrong some slots of the user's task goal; the assistant and the user are now fixing them.
Decide which of the unresolved slots the latest exchange resolved.

[Task Goal]
{task_goal}

[Unresolved Slots]
{pending_slots}

[Latest Exchange]
Assistant: <data>{agent_utterance}</data>
User: <data>{user_utterance}</data>

A slot is resolved when this exchange establishes the task goal's value for it: the user
states that value, or the assistant states it and the user accepts it. A slot for which a
different value was given is not resolved. Only slots listed as unresolved can be resolved.

Reply with JSON only:
{{"resolved_slots": ["<slot name as written in the task goal>", ...],
 "rationale": "<one sentence>"}}"""

REPAIR_AGENT_SYSTEM_PROMPT = "You are an dialogue assistant."

REPAIR_AGENT_PROMPT = """Your confirmation response to the user missed or got wrong some
details of their request. Proactively resolve them with the user: ask about the details still
unresolved, and confirm back any corrected values the user has given you. Be brief and natural;
ask only about what is needed.

[Dialogue Context]
{conversation_history}

[Your Confirmation Response]
{response}

[Unresolved Details]
{pending_slots}

[Repair Dialogue So Far]
{repair_history}

Write your next message to the user. Reply with JSON only:
{{"utterance": "<your message>",
 "asked_slots": ["<slot name of each detail your message asks about or confirms>", ...]}}"""
