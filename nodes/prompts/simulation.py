"""User simulator prompt: the simulated user of MAP §4.3, written after tau2's guidelines.

Paper 001 gives no prompt for its simulated user: it says only that the user agent is told the
set L of missing or wrong slots and talks to the dialogue model until L is empty. The system
prompt below follows the tau2 / AgentChangeBench user-simulation guidelines (one message at a
time, never invent information, disclose progressively, ``###STOP###`` when done) and adds
persona lines: a disclosure tier (how many details one answer gives, and whether the user pushes
back), verbosity and cooperativeness. The disclosure tiers are todeval's own; they are not
ProactiveEval's agreeableness (resistance to guidance, paper 003).

Fields of :data:`USER_SIMULATOR_PROMPT` (``str.format``):
    persona: the persona lines (disclosure, verbosity, cooperativeness, free style).
    instructions: the scenario's free-text instructions, or "none".
    task_goal: the goal the user knows, one ``- slot (in words): value`` line each.
    focus_slots: the slots the user knows were missed or got wrong (L), in words, or "none".
    goal_shift: what changes in the goal on this turn, or "none".
    conversation_history: the dialogue so far, one ``Speaker: utterance`` line each.
    asked_slots: the slots the assistant's last message asked about, in words, or "none".
"""

USER_SIMULATOR_SYSTEM_PROMPT = """You are playing the role of a user talking to a task-oriented
dialogue assistant.
Your goal is to simulate a realistic user while following the scenario you are given.

Core principles:
- Generate one message at a time, maintaining natural conversation flow.
- Strictly follow the scenario: the task goal below is everything you know. Never make up
  information that is not in it; anything else is unknown to you.
- Do not repeat the task goal verbatim; paraphrase naturally.
- Disclose information progressively: answer what the assistant asks about; follow your
  persona on whether to volunteer more.
- When the assistant states a detail of your goal wrongly, correct it with the right value.
- If everything in your goal has been handled, end your message with the token ###STOP###."""

USER_SIMULATOR_PROMPT = """[Persona]
{persona}

[Scenario]
{instructions}

[Task Goal]
{task_goal}

[Details the assistant missed or got wrong]
{focus_slots}

[Change of plan on this turn]
{goal_shift}

[Conversation so far]
{conversation_history}

[The assistant's last message asked about]
{asked_slots}

Write your next message as the user. Reply with JSON only:
{{"utterance": "<your message>",
 "revealed_slots": {{"<slot>": "<the value you stated>"}},
 "stop": <true if you ended with ###STOP###, else false>}}
Use the slot names exactly as listed in the task goal (the text before the colon)."""

DISCLOSURE_LINES = {
    "high": (
        "Disclosure: high. You are forthcoming: you gladly answer everything the assistant "
        "asks in one message."
    ),
    "medium": (
        "Disclosure: medium. You are polite but a little reserved: you answer the "
        "assistant's questions, at most two details per message."
    ),
    "low": (
        "Disclosure: low. You are impatient: you may complain that you already said this, "
        "ask the assistant to check its records, and give at most one detail per message."
    ),
}
"""Persona lines for the disclosure tiers (how much one answer gives; MAP's repair loop)."""

VERBOSITY_LINES = {
    "terse": "Verbosity: terse. Use as few words as possible.",
    "normal": "Verbosity: normal. Use one or two short sentences.",
    "verbose": "Verbosity: verbose. Use several sentences and some small talk.",
}
"""Persona lines for the verbosity setting."""

COOPERATIVENESS_LINES = {
    True: "Answer only what the assistant asks about; do not volunteer other details.",
    False: "You may volunteer the details the assistant missed or got wrong, unasked.",
}
"""Persona lines keyed by ``answers_only_asked``."""

TASK_USER_SYSTEM_PROMPT = """{guidelines}

{user_policy}"""
"""The task user's system prompt (AgentChangeBench's user simulator): tau2's simulation
guidelines, then the domain's user policy, both read at run time from
``$TODEVAL_DATA_DIR/agentchangebench/`` (``user_simulator/simulation_guidelines.md``,
``domains/<domain>/user_policy.md``), never copied here.

Fields: ``guidelines`` the guidelines text; ``user_policy`` the domain's user policy, or "" when
the domain has none."""

TASK_USER_PROMPT = """<scenario>
{scenario}
</scenario>

Your goals, in the order of your goal sequence (track them yourself; never mention goal
numbers or labels to the agent):
{goals}

The conversation so far (you are the customer):
{conversation_history}

Write your next message to the agent, following the guidelines, your persona and your scenario.
Reply with JSON only:
{{"message": "<your next message, ending with a ###...### token when the guidelines say so>",
 "goal_index": <the number of the goal in the list above that this message is about>,
 "shifted": <true if this message moves on to a new goal of the sequence, else false>,
 "stop": <true if this message ends the conversation, else false>}}"""
"""The task user's turn prompt. AgentChangeBench's user simulator answers in plain text; the
JSON wrapper (goal number, shift, stop) is todeval's own, so every reply records which goal it
is on and whether it shifted (for failure attribution).

Fields: ``scenario`` the user scenario as AgentChangeBench renders it (persona, instructions,
goal shifts); ``goals`` the goal sequence, one ``N. label`` line each (or "none");
``conversation_history`` the text turns so far, one ``Agent: ...`` / ``You: ...`` line each."""
