"""ProactiveEval prompts (paper 003, Appendix Listings 1-13), verbatim, and todeval's own.

Listings 1-13 are copied from the paper as printed (its spelling and typos kept: "arget",
"envioronment", "dialgue", the unclosed ``<Task>`` of Listing 12); they are ``str.format``
templates already (literal braces doubled). Listing 11's ``{DOMAIN_DESCRIPTIONS[domain_name]}``
is filled by passing ``DOMAIN_DESCRIPTIONS={"domain_name": <description>}``.

Fields (``str.format``):
    TOPIC_TREE_PROMPT (L2): n, topic, Examples (sibling sub-topics at the wanted level).
    ENVIRONMENT_PROMPT (L3): description (Listing 1), Examples (environments as JSON).
    TARGET_GENERATION_PROMPT (L4): description, example (targets as JSON), environment (JSON).
    TARGET_ENSEMBLE_PROMPT (L5): description, environment, targets (numbered candidates).
    OBFUSCATE_USER_INFORMATION_PROMPT (L6): Domain_Rule, Examples, user_information.
    OBFUSCATE_TRIGGER_FACTOR_PROMPT (L7): domain_rule, example, trigger_factor, target.
    NOISE_USER_INFORMATION_PROMPT (L8): example, user_information.
    NOISE_TRIGGER_FACTOR_PROMPT (L9): example, trigger_factor, target.
    FINAL_CHECK_PROMPT (L10): description, environment, target, sub_targets.
    TARGET_PLANNING_PROMPT (L11): DOMAIN_DESCRIPTIONS (see above), environment, reference,
        generation (target and sub-targets as JSON), examples.
    GUIDANCE_PROMPT (L12): user_information, trigger_factor, target, sub_target, conversation
        (one ``role: text`` line per message, :data:`CONVERSATION_LINE`).
    TARGET_DENSITY_PROMPT (L13): sub_targets (one per line), message.
    DIFFICULTY_MATCH_PROMPT (todeval's own): reference, predictions (numbered).

The paper prints no prompt for the difficulty check's matching step, the domain rules of the
obfuscation rewrite, or the in-context examples; those below are todeval's own and say so.
"""

# ruff: noqa: E501 - the paper's prompts keep the paper's line breaks, so some lines are long.

from __future__ import annotations

from todeval.evals.proactive_schema import DOMAINS

#: Listing 1, the paper's keys (its spellings ``ambigious_instruction``, ``long-term_follow_up``).
DOMAIN_PROMPTS: dict[str, str] = {
    "persuasion": (
        "The task is the persuasion environment, where the assistant should persuade the user "
        "to change the state based on user’s challenges and assistant’s experience. The "
        "trigger factor is assistant’s knowledge, ability, and experience."
    ),
    "long-term_follow_up": (
        "The task is a long-term environment, where the assistant will receive a past "
        "conversation history that includes the user’s persistent state or ongoing condition. "
        "The assistant needs to proactively follow up or care user’s current state, and give "
        "some advice or remind to the user. The trigger factor is the past conversation "
        "history."
    ),
    "system_operation": (
        "The task is the system operation environment, where the user operate a computer and "
        "assistant observe it. The assistant needs to identify user’s challenges and give "
        "proactive operation assistance. The trigger factor is the specific sequence of "
        "operation behaviors currently captured by the user, reflecting the challenges and "
        "problems the user faces."
    ),
    "ambigious_instruction": (
        "The task is the ambiguous instruction environment, where the assistant will receive "
        "an instruction including the unclear and vague elements. The assistant needs to "
        "proactively clarify or ask the element rather than respond reactively. The trigger "
        "factor is the user’s vague instruction."
    ),
    "glasses_assistant": (
        "The task is the smart glass environment, where the user wear the smart glasses and "
        "interact in the world. The assistant is in the smart glasses. trigger factor is the "
        "either an external event the user perceives (e.g., sights, sounds) or the user’s own "
        "state/behavior at that moment, which prompts the assistant to proactively initiate a "
        "conversation."
    ),
    "recommendation": (
        "The task is the product recommendation environment, where the assistant and the user "
        "have some habits and perferences. The trigger factor is assistant’s self habits, "
        "preferences. The assistant should identify the common interest and recommend "
        "something to the user."
    ),
}

# Listing 2.
TOPIC_TREE_PROMPT = """\
<Task>
Generate {n} sub-topics for the parent topic ({topic}). Each sub-topic should represent an area where an AI assistant needs to proactively initiate a dialogue to guide a user towards a specific target.
</Task>

<Rule>
1. Each sub-topic must be a noun or a noun phrase.
2. Each sub-topic must need proactive dialogue from the assistant to help the user achieve a target.
3. Sub-topics must be the immediate next level down from {topic}. They should not be too specific or too broad.
4. Each sub-topic must be suitable to act as a parent topic for a further, more detailed breakdown.
5. The sub-topics should be concrete, specific instances or examples that are similar in type and level to the provided examples.
6. The content of the sub-topic should be diverse, not use repeated words.
</Rule>

<Example>
Here are some examples of the sub-topics in this topic. The sub-topics should be at the same level as the examples provided.
{Examples}
</Example>

<Format>
Just return a JSON object with the following structure:
{{"parent_topic": "topic", "topics": ["sub_topic_1", "sub_topic_2", ...]}}
</Format>
"""

# Listing 3.
ENVIRONMENT_PROMPT = """\
<Task>
You are tasked with generating realistic scenarios that needs AI to proactively initaite conversation to help user.
</Task>
<Description>
{description}
</Description>
<Rule>
1. Try to generate diverse details in user information (e.g., job, age, hobbies in daily lives) and trigger factor about the scene.
2. Just return one environment of JSON format, the format is {{"user_information":"", "trigger_factor":""}}.
</Rule>
<Example>
Here are some examples of the environment generation:
{Examples}
</Example>
"""

# Listing 4.
TARGET_GENERATION_PROMPT = """\
<Task>
Your task is to generate target and sub_target based on the provided environment. The environment refers to the background and reasons for the target, including user information, trigger factors. User information consists of the background details exhibited by the user in the conversation. trigger factor is the cause that motivates the assistants to talk. The target should be the action that the assistant will proactively take to achieve a specific goal. The sub-targets decompose target, showing the process of the conversation AI guide the target to the user.
</Task>
<Description>
{description}
</Description>
<Rule>
1. The target should be less than 10 words.
2. Each sub_target should be concise and less than 10 words.
3. Consider the process of dialgue, the number of sub_targets should in 2 - 4.
</Rule>
<Example>
Here are some examples of target and sub_targets for the refered environment.
{example}
</Example>
<Environment>
{environment}
</Environment>
<Format>
Just return Target, and sub-targets as **JSON** Format. The format is {{"Target":"","sub-target":[""]}}.
</Format>
"""

# Listing 5.
TARGET_ENSEMBLE_PROMPT = """\
<Task>
You are a dialogue expert who is good at proactive dialgue. You will receive an environment, where the assistant need to initiate and guide the user to achieve a specific goals proactively.
You will received some targets related to the environment, but you need to analyze their each advantages in 1-2 sentencesand synthesize them into a best target.
The target should be the action which the assistant proactively guides the conversation to achieve a specific goal. The sub-targets decompose target, showing the process of the conversation AI guide the target to the user.
</Task>
<Description>
{description}
</Description>
<Rule>
For each targets and sub-targets, you should consider three aspects:
1. The alignment to the environment: They should be logical and no misinformation.
2. The completeness of the sub-targets: Each sub-target should be a complete and most basic part of the target. They should fully decompose the target.
3. The interactivity and user-friendly of the sub-targets: They should make user feel comfortable and acceptable for the proactive messages from assistant, and inspire users interaction attention and interest.
4. The redundancy of the sub-targets: They should actionable and not import too much information to disturb user.
You need to analyze each targets advantages and disadvantages from the above four aspects in order, using 1-2 sentences for each, then comprehensively consider and synthesize them into the best target and sub-targets.
5. The target should not be too vegue, general or short. And the target should be specific enough but less than 10 words. And each sub-target should be concise and less than 10 words.
The number of sub-targets should in 2 - 4.
</Rule>
<Input>
The environment: {environment}
The targets:
{targets}
</Input>
<Format>
Just return Your analyze process, target, and sub-targets as **JSON** Format. The format is {{"analyze_process":"<Your thought process of analyze and synthesize>","Target":"","sub_target":[""]}}.
</Format>
"""

# Listing 6.
OBFUSCATE_USER_INFORMATION_PROMPT = """\
<Task>
You are a writing assistant tasked with rewriting a general input description into a specific and detailed output. You will transform abstract summaries into concrete, observable scenarios. Follow all rules and examples precisely.
</Task>
<Rules>
General Rules (Apply to all domains):
1. Convert Abstract to Concrete: Transform general descriptions (e.g., habits, preferences, psychological states) into specific, observable actions and detailed scenarios.
2. Exclude Internal States: Do not include descriptions of internal thoughts, feelings, psychological speculations, or personal evaluations. Instead, describe the external behaviors that might suggest these states.
3. The rewrite output should not include any subjective words (e.g., try, however, notice, etc.). It should use objective words to describe the user information.
4. Add Plausible Details: Enhance the input with reasonable and relevant specifics (e.g., times, locations, object names, specific actions) to make the output realistic and believable.
5. Specific Rule for this Domain: {Domain_Rule}
</Rules>
<Examples>
{Examples}
</Examples>
<Format>
Just return a string starting with "Output: ".
</Format>
Now, rewrite the following sentence from input to Output:
Input: {user_information}
"""

# Listing 7.
OBFUSCATE_TRIGGER_FACTOR_PROMPT = """\
<Task>
You are an AI assistant tasked with rewriting a trigger factor description. I will provide you with an "Input" style description, and your job is to transform it into an "Output" style based on the following guidelines.
</Task>
<Rules>
1. Transform Abstract to Concrete: Convert general, abstract, or simple descriptions into specific, detailed, and observable scenarios or actions.
2. Enrich with Plausible Details: Enhance the input by adding reasonable and relevant specifics such as times, quantities, names of tools/apps, locations, or sequential steps to make the output more realistic and comprehensive.
3. Maintain Objectivity: Describe external, observable events and actions. Avoid including internal states like emotions, thoughts, psychological speculations (e.g., feel’, consider’, notice’, think’), or summary judgments (e.g., good’, successful’), and some connective words (e.g., however, but, finally, etc.), and some adjectives (e.g., good, bad, successful, unsuccessful, problem, issues, etc.).
4. Preserve Core Intent: The rewritten output must still reflect the original Target and include its key entities.
5. Domain-Specific Rule: {domain_rule}
</Rules>
<Examples>
{example}
</Examples>
<Format>
Just return a string starting with "Output: ".
</Format>
Now, rewrite the following sentence from Input to Output:
Input: {trigger_factor}
Target: {target}
"""

# Listing 8.
NOISE_USER_INFORMATION_PROMPT = """\
<Task>
You are an AI assistant tasked with adding contextual "noise" to an Input text. Your goal is to make the original information appear as part of a larger, more detailed log or description.
</Task>

<Guidelines>
1. Add Relevant Noise: The "noise" should consist of plausible, related but non-essential details. It may attract attention but actually not important. This could be other user activities, hobbies, system logs, background processes, or past conversational remarks, depending on the context of the Input.
2. Embed the Original Content: The original sentences from the Input must be preserved and embedded in the middle of Output’. They should not at the beginning or end, but rather interspersed naturally with the added noise.
3. Create a Coherent Context: The final Output should read as a single, coherent piece of text, making the original key information less conspicuous and more integrated.
4. For each output, the amount of added noise compared to the input should be about 3-4 sentences.
</Guidelines>

<Example>
Here are some examples:
{example}
</Example>

<Format>
Just return a string starting with "Output: ".
</Format>

Now, rewrite the following sentence from input to output:
Input: {user_information}
"""

# Listing 9.
NOISE_TRIGGER_FACTOR_PROMPT = """\
<Task>
You are an AI assistant tasked with adding contextual "noise" to an Input text to make the original key information less conspicuous. Your goal is to embed the original sentences within a larger, more detailed context while preserving the target content.
</Task>

<Guidelines>
1. Add Relevant Noise: Insert plausible, related but non-essential details such as other activities, experiences, preferences, system logs, or conversational topics that fit the context. It may attract attention but actually not important.
2. Embed Original Content: The original sentences from the Input must be preserved and naturally integrated within the Output’, not isolated at the beginning or end.
3. Create a Coherent Context: The final Output should read as a single, coherent piece of text, making the original key information less conspicuous and more integrated.
4. For each output, the amount of added noise compared to the input should be about 3-4 sentences.
5. Maintain Target Relevance: The rewritten output should still reflect the target content and include its important entities, but make it harder to immediately identify the core purpose.
</Guidelines>

<Example>
Here are some examples:
{example}
</Example>

<Format>
Just return a string starting with "Output: ".
</Format>

Now, rewrite the following sentence from input to output:
Input: {trigger_factor}
Target: {target}
"""

# Listing 10.
FINAL_CHECK_PROMPT = """\
<Task>
You will receive an environment. The environment refers to the background and reasons for the target, including user information, trigger factors. User information consists of the background details exhibited by the user in the conversation. trigger factor is the cause that motivates the assistants to talk. The target should be the action that the assistant will proactively take to achieve a specific goal. The sub-targets decompose target, showing the process of the conversation AI guide the target to the user. You need to consider whether this proactive dialogue target is the **best target** for the current scenario. Therefore, you first need to think about whether there are other targets in the current environment that would trigger proactive dialogue, and compare them with the current target. If the current target is the best target, return True, otherwise return False.
In this case, {description}
</Task>

<Input>
environment: {environment}
target: {target}
sub_targets: {sub_targets}
</Input>

<Format>
Just return a JSON with the format {{"reason": "", "judge": "True"/"False"}}. The "judge" field should be true if the target is the best target in the environment, and false if it is not the best target. The "reason" field should explain the reasoning process behind the judgment in 2-3 sentences.
</Format>
"""

# Listing 11.
TARGET_PLANNING_PROMPT = """\
<Task>
You are a helpful assistant. You will receive an envioronment, which includes user information and trigger factor. User information consists of the background details exhibited by the user. trigger factor is the cause that motivates the assistants to proactively initiate conversation. The target should be the action that the assistant will proactively take to achieve a specific goal. The sub-targets decompose target, showing the process of the conversation AI guide the target to the user. You need to evaluate the quality of the generated target, based on the reference target. Your generated score to the generated target should be 1-10. The higher the score, the better the target and sub-targets.
task description: {DOMAIN_DESCRIPTIONS[domain_name]}
</Task>

<Rule>
1. IMPORTANT: You should pay attention to the task description and the reference target to give your score.
2. If you think the generated target is better than the reference target, return 10.
3. If you think the generated target is worse than the reference target, return 1-9.
4. You should analyze the difference in action, specific entities, limited conditions between the generated target and the reference target, and give a reason for your score. And the reason should be 3-4 sentences.
</Rule>

<Received Information>
environment:{environment}
</Received Information>

<Generation>
reference target: {reference}
generated target: <data>{generation}</data>
</Generation>

<Example>
{examples}
</Example>

<Format>
Just return a JSON Format as {{"reason":"(your compare process)", "score":(your score)}}
</Format>
"""

# Listing 12.
GUIDANCE_PROMPT = """\
<Task>
You need to evaluate the guidance ability in the conversation. "Guidance" refers to the models capacity to lead the conversation, gradually engage the user in the dialogue, and guide the user to reach the conversations target. You are required to assign a score from 1 to 10 to assess the conversation, with a higher score indicating better guidance ability by the assistant.
<Task>

<Input>
You received user information: {user_information}
You received trigger factor: {trigger_factor}
You received target: {target}
You received sub-target: {sub_target}
You received conversation: <data>{conversation}</data>
</Input>

<Guideline>
You should evaluate the conversation based on the following criteria, and give a int score between 1 and 10.
If there are some criteria not met, you should deduct 2-4 (extremely bad) points each criteria.
1. Multi-turn Interaction and Goal Progression (Effectiveness): You should check the target completion and the turns number. The assistant should initiate the conversation to spark user interest and engage in multiple rounds of interaction, gradually achieving sub-goals to reach the overall target. Deduct points if the assistant fails to achieve the goal, delivers all information in a single message, or limits the interaction to one turn.
2. Personalized Guidance (Personalization): You should check whether the assistants guidance is personalized. The assistants guidance should be tailored to the users specific information and context, rather than offering generic recommendations.
3. Proactive Tone (Tone): You should check the assistants tone. The assistant should adopt an active tone to initiate and drive the conversation, avoiding passive phrases (e.g., "It sounds like...").
4. Concise and Engaging Messages (Engagement): You should check each assistants message length. Messages should suit the conversational context, be clear and concise to avoid overwhelming the user (each message should no more than 2 sentences or 50 words).
5. Natural Online Messaging Format (Naturalness): You should check the assistants message format. Messages should resemble typical online communication, avoiding any leakage of metadata (e.g., "target", "sub-target", "turn n", etc.).
If there are any other issues can be improved, you can also deduct realted points.
</Guideline>

<Format>
Just return a Json {{"thought":"(your compute process within 100 words)", "score": (score between 1 and 10)}}
</Format>
"""

# Listing 13.
TARGET_DENSITY_PROMPT = """\
<Task>
You need to analyze the sub-targets that appear in the messages and count the number of targets that appear.
</Task>
<Sub-targets>
{sub_targets}
</Sub-targets>
<Message>
message: <data>{message}</data>
</Message>
<Rule>
Return only in JSON format: {{"count": (the number of sub-targets appeared in the message)}}
</Rule>
"""


# Listing 1 spells two domains its own way; todeval's domain names map to its keys.
_LISTING_1_KEY = {
    "ambiguous_instruction": "ambigious_instruction",
    "long_term_follow_up": "long-term_follow_up",
}

#: Listing 1's description of each domain, under todeval's domain names.
DOMAIN_DESCRIPTIONS: dict[str, str] = {
    name: DOMAIN_PROMPTS[_LISTING_1_KEY.get(name, name)] for name in DOMAINS
}

#: todeval's own: the description of a domain Listing 1 does not define.
UNKNOWN_DOMAIN_DESCRIPTION = (
    "The task is a proactive dialogue environment, where the assistant should initiate the "
    "conversation and guide the user toward a target suggested by the trigger factor."
)


def domain_description(domain: str) -> str:
    """Listing 1's description of ``domain`` (todeval's generic one for an unknown domain)."""
    return DOMAIN_DESCRIPTIONS.get(domain, UNKNOWN_DOMAIN_DESCRIPTION)


#: One message of Listing 12's ``{conversation}`` (todeval's rendering; the paper gives none).
CONVERSATION_LINE = "{role}: {content}"

#: todeval's own system message for Listings 6-9, whose answer is plain text ("Output: ...").
REWRITE_SYSTEM_PROMPT = (
    'Give your answer as one JSON object {"output": "..."} whose "output" is exactly the string '
    'you would return, starting with "Output: ".'
)

#: todeval's own: the difficulty check's matching step (the paper describes it, prints none).
DIFFICULTY_MATCH_PROMPT = """\
<Task>
You will receive the reference target of a proactive dialogue environment and the targets that other models predicted for the same environment. For each predicted target, decide whether it conveys a similar meaning to the reference target: the same proactive action toward the same specific entity. A predicted target that only shares the topic, or that acts on another entity, does not.
</Task>

<Input>
reference target: {reference}
predicted targets:
{predictions}
</Input>

<Format>
Just return a JSON with the format {{"matches": [true/false, ...]}}, one entry per predicted target, in order.
</Format>
"""

#: todeval's own domain rules for the obfuscation rewrite (Listings 6-7's ``{Domain_Rule}``).
OBFUSCATION_DOMAIN_RULES: dict[str, str] = {
    "recommendation": "Write the assistant's habits as dated activity records (plays, visits, purchases) and keep the recommended item's name in the trigger factor.",
    "persuasion": "Show the user's challenge through logged behaviour (times, counts, amounts) instead of naming the habit or calling it a problem.",
    "ambiguous_instruction": "Keep the user's instruction as a quoted message, unchanged; put the context that makes it ambiguous into calendar, message or file records.",
    "long_term_follow_up": "Keep the past conversation quoted with its date and give the current time; show the user's state since then through records.",
    "system_operation": "Write the trigger factor as a timestamped sequence of operations (applications, clicks, error texts), with no interpretation.",
    "glasses_assistant": "Write the trigger factor as what the glasses' camera, microphone and sensors record, with times and readings.",
}

#: todeval's own examples of sub-topics at the second level of each domain's tree (Listing 2).
TOPIC_EXAMPLES: dict[str, str] = {
    "recommendation": "Board games, Podcasts, Hiking gear",
    "persuasion": "Sleep habits, Saving money, Dental check-ups",
    "ambiguous_instruction": "Trip planning, Office supply orders, Event scheduling",
    "long_term_follow_up": "Exam revision, Physiotherapy exercises, Language learning",
    "system_operation": "Spreadsheet formulas, Disk space, Printer connectivity",
    "glasses_assistant": "Public transport navigation, Kitchen safety, Networking events",
}

#: Paper Table 6's example environment of each domain (Listing 3's ``{Examples}``).
ENVIRONMENT_EXAMPLES: dict[str, str] = {
    "recommendation": '{"user_information": "The user is a 32-year-old woman living in Hangzhou. She works as a graphic designer and enjoys exploring new art exhibitions in her free time. She loves experimental music, particularly electronic avant-garde, and often attends live performances at local venues.", "trigger_factor": "The assistant recently attended a virtual reality music experience at an art gallery, which featured an experimental electronic avant-garde performance."}',
    "persuasion": '{"user_information": "The user is frequently tempted by impulse purchases and often exceeds their budget limits. They find budgeting tedious and restrictive.", "trigger_factor": "The assistant has recently learned effective budgeting techniques that can help the user manage their finances better without feeling constrained."}',
    "ambiguous_instruction": '{"user_information": "The user is a solo traveler planning a two-week trip to Vietnam. She is an adventurous eater and loves exploring local cuisines, especially street food.", "trigger_factor": "Suggest street food options."}',
    "long_term_follow_up": '{"user_information": "The user is a college student studying computer science. He has a part-time job as a barista at a local cafe.", "trigger_factor": "A conversation happened last Wednesday. Now is Monday 10:00 a.m. User: \\"I\'m thinking of quitting video games for a while to focus on my studies.\\" Assistant: \\"Maybe you can set small goals and gradually reduce your game time.\\""}',
    "system_operation": '{"user_information": "The user is playing a strategy game on their PC and has paused the game to look for tips online, using Chrome and YouTube.", "trigger_factor": "The user searched \'best strategies for Civilization VI\' on Google, opened two blog posts, and started a YouTube video but paused it after 10 seconds."}',
    "glasses_assistant": '{"user_information": "The user is a 26-year-old urban planner who is working on a proposal for a new park project and cycles to work.", "trigger_factor": "The user is cycling along a busy street and notices a newly built skyscraper with unique architectural features."}',
}

#: Paper Table 6's reference target of each domain (Listing 4's ``{example}``).
TARGET_EXAMPLES: dict[str, str] = {
    "recommendation": '{"Target": "Recommend experimental virtual reality music experience", "sub-target": ["Ask about the user\'s interest in music technology", "Describe the assistant\'s recent immersive VR music event", "Highlight the fusion of visuals and avant-garde music", "Suggest attending similar VR experiences locally"]}',
    "persuasion": '{"Target": "Encourage effective and enjoyable budgeting techniques", "sub-target": ["Acknowledge the user\'s struggles with impulse purchases", "Introduce flexible and engaging budgeting methods", "Offer simple steps or tools to start budgeting"]}',
    "ambiguous_instruction": '{"Target": "Understand user\'s preferences and trip itinerary for food suggestions", "sub-target": ["Ask about cities the user plans to visit", "Inquire about dietary restrictions for street food", "Clarify the types of street food the user enjoys"]}',
    "long_term_follow_up": '{"Target": "Ask about quitting games and new schedule", "sub-target": ["Ask about quitting video games progress", "Inquire about schedule-setting progress", "Encourage focusing on studies and cooking"]}',
    "system_operation": '{"Target": "Suggest optimal Civilization VI strategy resources", "sub-target": ["Summarize key tactics from blog posts", "Highlight vital points in video analysis", "Recommend further high-rated resources"]}',
    "glasses_assistant": '{"Target": "Draw sustainable inspiration from skyscraper for park", "sub-target": ["Highlight skyscraper\'s notable architecture and features", "Identify sustainable design aspects of the skyscraper", "Relate these aspects to the proposed park project"]}',
}

#: todeval's own seed example for the obfuscation rewrite of user_information (Listing 6).
OBFUSCATION_USER_EXAMPLE = (
    "Input: The user is a 41-year-old nurse who feels exhausted after night shifts and wants to sleep better.\n"
    "Output: The user is a 41-year-old nurse. Her rota app lists four night shifts ending at 07:30 this week; her phone shows screen activity between 09:10 and 11:40 on each of those mornings, and her sleep tracker logs an average of 4 h 20 min."
)

#: todeval's own seed example for the obfuscation rewrite of trigger_factor (Listing 7).
OBFUSCATION_TRIGGER_EXAMPLE = (
    "Input: The user struggles to find a formula error in a budget spreadsheet.\nTarget: Help fix the VLOOKUP range in the budget sheet\n"
    "Output: At 14:02 the user opened 'Budget_Q3.xlsx'. Column F shows #N/A in 14 cells. Between 14:03 and 14:11 the user edited the VLOOKUP in F2 three times and searched 'vlookup returns N/A' in the browser."
)

#: todeval's own seed example for noise injection into user_information (Listing 8).
NOISE_USER_EXAMPLE = (
    "Input: The user is 35 and runs an online shop selling ceramic mugs.\n"
    "Output: The user's calendar shows a dentist appointment on Thursday at 16:00. The user is 35 and runs an online shop selling ceramic mugs. Her phone's step counter logged 6,200 steps yesterday, and she renewed a library book on Monday."
)

#: todeval's own seed example for noise injection into trigger_factor (Listing 9).
NOISE_TRIGGER_EXAMPLE = (
    "Input: At 09:12 the user's laptop shows 'Disk almost full: 1.2 GB free' while exporting a video.\nTarget: Help free disk space for the video export\n"
    "Output: At 09:05 a music app started a playlist and a weather widget refreshed. At 09:12 the user's laptop shows 'Disk almost full: 1.2 GB free' while exporting a video. A calendar reminder for a 10:30 call appeared at 09:14, and a browser tab with a recipe stayed open."
)

#: todeval's own in-context shots for target planning evaluation (Listing 11's ``{examples}``).
TARGET_PLANNING_EXAMPLES = (
    'reference target: {"target": "Recommend the Harbour Lights reissue at Sunday\'s fair", "sub_target": ["Ask about her recent vinyl finds", "Share listening to the reissue", "Suggest the stall at Sunday\'s fair"]}\n'
    'generated target: {"target": "Recommend a jazz record", "sub_target": ["Ask about her music taste", "Suggest buying a record"]}\n'
    '{"reason": "Both recommend music, but the generated target loses the specific reissue and the Sunday fair, the entity and the condition that make the reference actionable. Its sub-targets are generic and do not use the environment.", "score": 4}\n\n'
    'reference target: {"target": "Suggest a 10-minute stretch break before the 15:00 call", "sub_target": ["Point out three hours without standing", "Propose a short stretch", "Offer a reminder before the call"]}\n'
    'generated target: {"target": "Suggest a stretch break before the 15:00 call", "sub_target": ["Note the long sitting streak", "Offer a two-minute desk stretch", "Set a reminder for 14:45"]}\n'
    '{"reason": "Same action, entity and timing as the reference, with a lower barrier (two minutes at the desk) and a concrete reminder time, which suits a user about to join a call. It keeps every limiting condition of the reference.", "score": 10}'
)
