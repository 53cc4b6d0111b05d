"""Goal-shift prompts (paper 002): shift detection (Appendix G) and NL assertions (TSR channel).

Appendix G describes the shift-detection judge: a structured prompt holding the allowed goal
sequence and the conversation history, answered with JSON giving the shifts and their
acknowledgment, tool and outcome turns. The event definitions are Section 4.3's (GSRT: first
agent turns after the shift that acknowledge the new goal, call a tool relevant to it, achieve
it; recovery needs acknowledgment and no transfer to a human).

Fields of :data:`SHIFT_DETECTION_PROMPT` (``str.format``):
    goals: the ordered goal tokens, comma separated.
    required_shifts: how many shifts the task scripts (``len(goals) - 1`` by default).
    transcript: one line per turn, ``<turn>:<role>:<text>`` (:data:`TRANSCRIPT_LINE`).

Fields of :data:`NL_ASSERTION_PROMPT`:
    transcript: as above.
    assertions: the task's assertions, one per line, numbered from 1.
"""

SHIFT_DETECTION_SYSTEM_PROMPT = (
    "You are a judge of customer-service conversations between a user and a tool-using AI "
    "agent. The user was scripted to pursue an ordered sequence of goals and to move from one "
    "goal to the next during the conversation. You find where the user shifted goals and when "
    "the agent recovered."
)

# Literal JSON braces are doubled for str.format.
SHIFT_DETECTION_PROMPT = """GOAL RULES
- Use only goals from allowed_goals, in the given order; never introduce other goals.
- The first user turn that establishes the first goal is start_goal; it is not a shift.
- A goal shift is a USER turn that moves from the current goal to the next goal in the list.
  Sub-requests of a goal stay within it (filing a dispute is still "dispute").
- Report at most required_shifts shifts. If the user never reached a goal, report no shift.

RECOVERY EVENTS (turn numbers of later turns, or null if it never happens)
- acknowledgment_turn: the first ASSISTANT turn after the shift that explicitly acknowledges
  or starts working on the new goal.
- tool_turn: the first ASSISTANT tool call after the shift that is relevant to the new goal.
- outcome_turn: the first turn after the shift at which the new goal is achieved.
- transferred_to_human: true if the agent transferred the user to a human agent after the
  shift (before the next shift).

TASK CONTEXT
- allowed_goals (ordered): [{goals}]
- required_shifts: {required_shifts}

CONVERSATION (one line per turn; format <turn>:<role>:<text>)
<data>{transcript}</data>

OUTPUT: only this JSON, no other text.
{{
  "start_goal": {{"turn": <int>, "goal": <goal>}},
  "user_goal_shifts": [
    {{"turn": <int>, "from": <goal>, "to": <goal>, "acknowledgment_turn": <int or null>,
      "tool_turn": <int or null>, "outcome_turn": <int or null>,
      "transferred_to_human": <true/false>}}
  ]
}}
"""

TRANSCRIPT_LINE = "{turn}:{role}:{text}"
"""One transcript line. Fields: turn, role (user/assistant/tool), text (tool calls as
``[call] name({{json arguments}})``, results as ``[result]`` or ``[error]`` then the content)."""

NL_ASSERTION_SYSTEM_PROMPT = (
    "You are a strict evaluator of customer-service conversations. You check whether the "
    "agent's behaviour in a transcript meets each stated expectation."
)

NL_ASSERTION_PROMPT = """Read the conversation and decide, for each expectation, whether the
agent met it. Judge only from the transcript; if it gives no evidence that an expectation was
met, it was not met.

CONVERSATION (one line per turn; format <turn>:<role>:<text>)
<data>{transcript}</data>

EXPECTATIONS
{assertions}

OUTPUT: only this JSON, one entry per expectation, in the same order.
{{"results": [{{"nl_assertion": <the expectation>, "met": <true/false>,
  "justification": <one sentence>}}]}}
"""
