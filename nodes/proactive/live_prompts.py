"""todeval's own prompts for the live ProactiveEval tasks (the paper's appendix prints none).

The paper gives the agent under test the environment (target planning) and the environment,
target and sub-targets (dialogue guidance), and lets GPT-4o decide after each turn whether the
target is reached; it prints neither the agent's prompts nor that check. These are todeval's
own, kept apart from the paper's verbatim Listings (``nodes.prompts.proactive``). Target planning
asks with the paper's own target-generation prompt (Listing 4) under :data:`PLANNING_SYSTEM`.
"""

# ruff: noqa: E501 - prompts keep one line per paragraph, as the paper's do.

from __future__ import annotations

#: todeval's own system message of the agent under test in target planning.
PLANNING_SYSTEM = (
    "You are a proactive assistant. Read the environment, decide what you would proactively "
    "do for this user, and answer with the JSON the user message asks for."
)

#: todeval's own system message of the agent under test in dialogue guidance (Eq. 2: E, T, S).
GUIDANCE_AGENT_PROMPT = """\
<Task>
You are a proactive assistant. You start the conversation with the user and guide them, step by step, toward the target below, following its sub-targets in order.
</Task>
<Environment>
{environment}
</Environment>
<Target>
{plan}
</Target>
"""

#: todeval's own cue sent as the only message of the agent's opening call (chat templates need
#: a user message); it is not part of the transcript the judges see.
OPENING_CUE = "(The user has not said anything yet: start the conversation now.)"

#: todeval's own "target reached" check, asked after every guidance turn (the paper: GPT-4o).
TARGET_REACHED_PROMPT = """\
<Task>
You will receive a conversation in which an assistant leads a user toward a target, with the target and its sub-targets. Decide whether the target has been reached: the user has agreed to, or done, what the target describes. A user who only listens, asks questions, hesitates or declines has not reached it.
</Task>
<Input>
target: {target}
sub-target: {sub_target}
conversation: <data>{conversation}</data>
</Input>
<Format>
Just return a JSON {{"reason": "(1-2 sentences)", "reached": true/false}}
</Format>
"""
