"""AgentChangeBench banking (paper 002): ``db.toml``, 20 tools, goal-shift tasks.

``data_model`` reads the database, ``schemas`` gives the tools as the agent sees them, ``tools``
runs them over the database, ``words`` holds the local user's goal words and ``fidelity`` the
recorded run the tools are checked against.
"""

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
