"""Goal-segmentation prompt: paper 004 (Mind the Goal), Appendix D, segmentation part.

The paper's template asks one call for ``is_new_goal``, ``quality`` and ``rcof`` per turn; the
segmentation role keeps its system prompt, instructions and ``<think>`` reasoning and asks for
``is_new_goal`` only (turn quality is the teachers' role).

Fields of :data:`SEGMENTATION_PROMPT` (``str.format``):
    dialog_id: the dialogue's id.
    question: the dialogue rendered by :func:`render_dialogue` ("Turn k", user, assistant).
"""

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
