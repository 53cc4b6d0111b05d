"""AgentChangeBench banking (paper 002): ``db.toml``, 20 tools, goal-shift tasks."""

from __future__ import annotations

from todeval.nodes.simulation.domains.banking.fidelity import RECORDED_RUNS
from todeval.nodes.simulation.domains.banking.tools import BankingEnvironment
from todeval.nodes.simulation.domains.banking.words import BANKING_WORDS
from todeval.nodes.simulation.domains.base import Domain

DOMAIN = Domain(
    name="banking",
    environment=BankingEnvironment,
    folder="agentchangebench/domains/banking",
    goal_words=BANKING_WORDS,
    recorded_runs=RECORDED_RUNS,
)
