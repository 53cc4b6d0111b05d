"""Goal success prompts: paper 004 (Mind the Goal), Appendix D, as one call per dialogue.

The paper's template asks one call for ``is_new_goal``, ``quality`` and ``rcof`` of every turn.
todeval sends it as written: every LLM teacher answers segmentation, turn quality and root
cause at once, and an LLM segmenter with the same spec reads the same answer (the response
cache serves the second reader), so GSR costs one call per dialogue per LLM teacher.

The prompt numbers the root causes differently from the paper's Section 4.3 / Appendix B
(the canonical numbering todeval reports): :data:`APPENDIX_D_RCOF` maps the prompt's codes to
the canonical ones.

Fields of :data:`APPENDIX_D_PROMPT` (``str.format``):
    question: the dialogue, ``dialog_id: <id>`` then each turn rendered with
        :data:`TURN_TEMPLATE`.
:data:`APPENDIX_D_PROMPT_WITH_SOP` also has ``business_rules``: the domain's SOP text.
"""

APPENDIX_D_SYSTEM_PROMPT = (
    "You are a helpful AI assistant.\n"
    "You will act as a judge to evaluate quality\n"
    "of employee experience chatbot."
)

# Verbatim from Appendix D (line breaks as printed); literal braces doubled for str.format.
APPENDIX_D_OUTPUT_FORMAT = """{{
    dialog_id: xx,
    turns: [
        {{turn_number: 1, is_new_goal: yes/no, quality
         : success/failure, rcof: E1-E7 | null}},
        {{turn_number: 2, is_new_goal: yes/no, quality
         : success/failure, rcof: E1-E7 | null}},
        ...
    ]
}}

where
is_new_goal \\in {{yes,no}} # compare adjacent
user turns
quality \\in {{success,failure}} # based on
response + follow-ups
rcof \\in {{E1-E7}} if failure else null

RCOF codes
E1 Incorrect Sources - irrelevant docs
retrieved
E2 Retrieval Failure - no docs retrieved
E3 Refusal to Answer - unwarranted refusal
E4 Language Understanding - misinterprets
question
E5 System Error - blank / truncated response
E6 Incorrect Routing - wrong domain/department
E7 Out-of-Domain Query - capability not
supported"""

_APPENDIX_D_TASK = (
    """
You are provided with a dialog from an employee
chatbot.
Output the JSON for every turn, reasoning inside
    <think>...</think> tags
but printing *only* the JSON.

output format:
"""
    + APPENDIX_D_OUTPUT_FORMAT
    + """

input:
<data>{question}</data>
"""
)

APPENDIX_D_PROMPT = APPENDIX_D_SYSTEM_PROMPT + _APPENDIX_D_TASK
"""The paper's ``template``: its ``{system_prompt}`` is filled in, and the system message is
the same ``system_prompt``."""

SOP_BLOCK = """

Business rules (SOP) of this deployment. Judge each turn's quality and root cause
against them; a reply that breaks a rule is a failure even if it sounds helpful:
<sop>
{business_rules}
</sop>"""
"""The business rules, given to the LLM teachers right after the system prompt. Appendix D has
no slot for them, but Appendix C says the teachers were given "the same SOP guidelines" as
the human experts; they go where the template's ``{system_prompt}`` ends, before the task.
Field: business_rules (the SOP text as given)."""

APPENDIX_D_PROMPT_WITH_SOP = APPENDIX_D_SYSTEM_PROMPT + SOP_BLOCK + _APPENDIX_D_TASK
""":data:`APPENDIX_D_PROMPT` with the business rules. Fields: business_rules, question."""

APPENDIX_D_RCOF: dict[str, str] = {
    "E1": "E3",  # Incorrect Sources -> Incorrect Retrieval
    "E2": "E4",  # Retrieval Failure
    "E3": "E2",  # Refusal to Answer -> Refusal
    "E4": "E1",  # Language Understanding
    "E5": "E5",  # System Error
    "E6": "E6",  # Incorrect Routing
    "E7": "E7",  # Out-of-Domain Query -> Out-of-Domain / Unsupported
}
"""The prompt's RCOF codes -> the canonical codes (Section 4.3 / Appendix B)."""

DIALOG_HEADER = "dialog_id: {dialog_id}"
"""The first line of ``question``. Field: dialog_id (a JSON string literal)."""

TURN_TEMPLATE = "Turn {turn_number}\nUser: {user_msg}\nAssistant: {response}\nSources: {sources}"
"""How one turn is shown. Fields: turn_number, user_msg, response, sources (the retrieved
sources' names and snippets as a JSON list, or "none"). The texts are JSON string literals
(``appendix_d.quoted``), so no message can open a fake ``Turn`` line or end the dialogue."""

CONTEXT_TURN_NOTE = "(Turn {turn_number} is shown for context only; it was judged before.)"
"""Added when a long dialogue is judged in windows (see ``nodes.goal_success.judges.appendix_d``).
Field: turn_number."""
