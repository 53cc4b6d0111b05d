"""tau2 retail (tau2-bench ``domains/retail``, AgentChangeBench's retail tasks): ``db.json``."""

from __future__ import annotations

from todeval.nodes.simulation.domains.base import Domain
from todeval.nodes.simulation.domains.retail.tools import RetailEnvironment
from todeval.nodes.simulation.domains.retail.words import RETAIL_WORDS

DOMAIN = Domain(
    name="retail",
    environment=RetailEnvironment,
    folder="agentchangebench/domains/retail",
    goal_words=RETAIL_WORDS,
)
