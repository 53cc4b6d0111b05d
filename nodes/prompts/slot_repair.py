"""Prompts of the proactive slot repair loop (MAP, paper 001, §4.3).

The paper gives no prompt for these roles; it says: compare the generated response r with the
task goal to get the set L of missing or wrong slots; the dialogue model talks with a simulated
user until L is empty; at each turn "a supervisor (played by an LLM) evaluates whether the
conversation accurately fulfills the slot information requirements" and removes each resolved
slot from L (Eq. 6). The prompts keep the bracketed section headers of the paper's own prompts
(Figures 9 and 11). The user simulator's prompt is in :mod:`nodes.prompts.simulation`.

Fields (``str.format``), shared by the three prompts where they appear:
    conversation_history: the new session's turns before the confirmation, one
        ``User: ...`` / ``Assistant: ...`` line each.
    task_goal: the gold slots, one ``- slot (slot in words): value`` line each.
    response: the confirmation response r being repaired.
    pending_slots: the slots still in L, one ``- slot (slot in words)`` line each.
    repair_history: the repair exchange so far, ``User:``/``Assistant:`` lines, or "(none yet)".
    agent_utterance: the assistant's latest repair turn.
    user_utterance: the user's reply to it.
"""

MISSING_SLOTS_SYSTEM_PROMPT = "You are a strict and objective supervisor of a dialogue assistant."

MISSING_SLOTS_PROMPT = """Compare the assistant's confirmation response with the user's task goal
and list every task-goal slot whose value the response leaves out or states incorrectly.

[Dialogue Context]
{conversation_history}

[Task Goal]
{task_goal}

[Response]
{response}

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
Assistant: {agent_utterance}
User: {user_utterance}

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
