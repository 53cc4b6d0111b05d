"""Memory bank construction prompt: paper 001 (MAP / MS-TOD), Appendix A.2 and B.4.

The paper builds each stored session's intent description and QA memory with GPT-4 (App. B.4:
"an intent description and the corresponding QA memory ... each query is a question about a
task attribute under that intent, and the answer is the slot value corresponding to that task
attribute") but prints only the output (Figure 13), not the prompt. This prompt keeps the
wording of the task slot query prompt (Figure 8, App. A.2: questions that start with
What/When/Why/How/Where, in third person) turned to the attributes the session *answers*, and
asks for Figure 13's JSON. Each pair also names its task attribute (``Slot``) so a unit can be
traced to the slot it answers. Literal braces are doubled for ``str.format``.

Fields of :data:`MEMORY_BANK_PROMPT` (``str.format``):
    conversation_history: the stored session, one utterance per line, ``"user: ..."`` /
        ``"assistant: ..."``.
    intent: the session's intent in words (``"reserve restaurant"``).
    task_goal: the session's task goal, one ``"<slot>: <value>"`` per line (``"none"`` if empty).
"""

MEMORY_BANK_SYSTEM_PROMPT = "You are a memory construction assistant for a dialogue system."

MEMORY_BANK_PROMPT = """Please help me generate an intent description and questions, based on \
the provided conversation history, that correspond to the answered attributes in the task goal.

[INTENT]
{intent}

[CONVERSATION HISTORY]
{conversation_history}

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
