"""Live simulation's judge role: the simulated user, one declaration.

One ``user_simulator`` spec plays every simulated user todeval has: MAP's slot-repair user
(paper 001, §4.3; the role's own judge, :mod:`~nodes.simulation.users.map_user`), an
AgentChangeBench / tau2 task's customer (``task_local``, ``task_llm``, built by
:func:`~nodes.simulation.users.simulator.task_backend`) and ProactiveEval's user by
agreeableness (:mod:`~nodes.simulation.users.proactive_user`). The local variants declared here
are the ones every kind accepts; each kind has its own LLM prompt.
"""

from __future__ import annotations

from todeval.nodes.judges.roles import JudgeRole
from todeval.nodes.prompts.simulation import USER_SIMULATOR_PROMPT, USER_SIMULATOR_SYSTEM_PROMPT
from todeval.nodes.simulation.users.map_user import LLMUser, LLMUserTurn, TemplatedUser
from todeval.nodes.simulation.users.scenario import SimulatorBackend

USER_SIMULATOR: JudgeRole[SimulatorBackend] = JudgeRole(
    name="user_simulator",
    decides="the simulated user's next message (MAP's slot repair, AgentChangeBench and tau2 "
    "tasks, ProactiveEval's guidance)",
    local={"templated": TemplatedUser},
    prompt=USER_SIMULATOR_PROMPT,
    system=USER_SIMULATOR_SYSTEM_PROMPT,
    output_model=LLMUserTurn,
    llm=LLMUser,
)
