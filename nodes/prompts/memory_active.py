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
{conversation_history}

Print only this JSON:
{{"intent_description": "The user wants to ..."}}"""
"""Intent capture (§4.2). Fields: intent, conversation_history."""

MISSING_SLOT_QUERY_PROMPT = """Please help me generate questions, based on the provided \
{conversation_history}, that correspond to unanswered attributes in the task goal \
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
{conversation_history}

[MISSING SLOT QUERY]
{missing_query}

[MEMORY UNIT]
Session intent: {intent_description}
Question: {question}
Answer: {answer}

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

GPT4_SCORE_PROMPT = """[Dialogue Context] {conversation_history}
[Task Goal] {task_goal}
[reference_answer] {reference_answer}
[predict_answer] {predict_answer}

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
