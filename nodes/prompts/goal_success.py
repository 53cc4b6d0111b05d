"""Goal success prompts: paper 004 (Mind the Goal), Appendix D: goal segmentation and turn quality.

One file per subsystem; each part below keeps its own notes on the prompt's ``str.format`` fields.
"""

# --- segmentation ------------------------------------------------------------------------------
# Goal-segmentation prompt: paper 004 (Mind the Goal), Appendix D, segmentation part.
#
# The paper's template asks one call for ``is_new_goal``, ``quality`` and ``rcof`` per turn; the
# segmentation role keeps its system prompt, instructions and ``<think>`` reasoning and asks for
# ``is_new_goal`` only (turn quality is the teachers' role).
#
# Fields of :data:`SEGMENTATION_PROMPT` (``str.format``):
#     dialog_id: the dialogue's id.
#     question: the dialogue rendered by :func:`render_dialogue` ("Turn k", user, assistant).

SEGMENTATION_SYSTEM_PROMPT = (
    "You are a helpful AI assistant. You will act as a judge to evaluate quality of "
    "employee experience chatbot."
)

# Literal JSON braces are doubled for str.format.
SEGMENTATION_OUTPUT_FORMAT = """{{
    dialog_id: xx,
    turns: [
        {{turn_number: 1, is_new_goal: yes/no}},
        {{turn_number: 2, is_new_goal: yes/no}},
        ...
    ]
}}

where
is_new_goal \\in {{yes,no}} # compare adjacent user turns
A new goal begins when the user asks something that constitutes a new or different
information need, as opposed to continuing or clarifying the previous question.
The first turn of a dialog is always a new goal."""

SEGMENTATION_PROMPT = (
    """You are provided with a dialog from an employee chatbot.
Output the JSON for every turn, reasoning inside
    <think>...</think> tags
but printing *only* the JSON.

output format:
"""
    + SEGMENTATION_OUTPUT_FORMAT
    + """

input:
dialog_id: {dialog_id}
{question}
"""
)

TURN_TEMPLATE = "Turn {turn_number}\nUser: {user_msg}\nAssistant: {response}"
"""How one turn is shown to the judge. Fields: turn_number, user_msg, response."""


# --- turn quality ------------------------------------------------------------------------------
# Teacher prompt: paper 004 (Mind the Goal), Appendix D, turn quality and root cause.
#
# The paper's template asks one call for ``is_new_goal``, ``quality`` and ``rcof`` per turn. A
# teacher keeps its system prompt, its ``<think>`` reasoning and its output format, and asks for
# ``quality``, ``rcof`` and a short ``rationale`` (segmentation is its own role). The RCOF list is
# written in the canonical numbering of Section 4.3 / Appendix B (the paper's Appendix D prompt
# numbers the same seven causes differently); each line keeps the prompt's short gloss.
#
# Fields of :data:`TEACHER_PROMPT` (``str.format``):
#     dialog_id: the dialogue's id.
#     question: the dialogue rendered turn by turn with :data:`TEACHER_TURN_TEMPLATE`.

TEACHER_SYSTEM_PROMPT = (
    "You are a helpful AI assistant. You will act as a judge to evaluate quality of "
    "employee experience chatbot."
)

# Literal JSON braces are doubled for str.format.
TEACHER_OUTPUT_FORMAT = """{{
    dialog_id: xx,
    turns: [
        {{turn_number: 1, quality: success/failure, rcof: E1-E7 | null, rationale: "..."}},
        {{turn_number: 2, quality: success/failure, rcof: E1-E7 | null, rationale: "..."}},
        ...
    ]
}}

where
quality \\in {{success,failure}} # based on response + follow-ups
rcof \\in {{E1-E7}} if failure else null
rationale: one short sentence saying why

RCOF codes
E1 Language Understanding - misinterprets question
E2 Refusal to Answer - unwarranted refusal
E3 Incorrect Retrieval - irrelevant or wrong docs retrieved
E4 Retrieval Failure - no docs retrieved
E5 System Error - blank / truncated response
E6 Incorrect Routing - wrong domain/department
E7 Out-of-Domain Query - capability not supported"""

TEACHER_PROMPT = (
    """You are provided with a dialog from an employee chatbot.
Output the JSON for every turn, reasoning inside
    <think>...</think> tags
but printing *only* the JSON.

output format:
"""
    + TEACHER_OUTPUT_FORMAT
    + """

input:
dialog_id: {dialog_id}
{question}
"""
)

TEACHER_TURN_TEMPLATE = (
    "Turn {turn_number}\nUser: {user_msg}\nAssistant: {response}\nSources: {sources}"
)
"""How one turn is shown to a teacher. Fields: turn_number, user_msg, response, sources (the
retrieved sources' names and snippets, or "none")."""
