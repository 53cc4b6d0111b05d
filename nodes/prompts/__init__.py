"""The papers' prompts and todeval's own, as ``str.format`` templates (UPPER_SNAKE constants).

In a judge's prompt, a field that carries what a user, an agent or a tool said sits in a data
block, ``<data>{transcript}</data>``: the LLM judge escapes the delimiter in every value and
tells the model that quoted text is data, never instructions (:mod:`nodes.judges.quoting`,
issue 29). The prompts of the conversation's participants (simulated users, MAP's reader and
repair agent) answer the other side's messages and do not quote them.
"""
