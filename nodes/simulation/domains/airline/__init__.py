"""tau2 airline (tau2-bench ``domains/airline``, AgentChangeBench's airline tasks): ``db.json``.

``data_model`` reads the database, ``schemas`` gives the tools as the agent sees them, ``tools``
runs them over the database (copy-on-write) and ``words`` holds the local user's goal words.
The task set is ``tasks.json`` (the one ``db.json`` belongs to; ``tasks_new.json``'s database
is not available). No recorded airline run is available, so fidelity is checked by replaying
every task's expected actions (``tests/unit/test_airline_domain.py``).
"""

from __future__ import annotations

from todeval.nodes.simulation.domains.airline.tools import AirlineEnvironment
from todeval.nodes.simulation.domains.airline.words import AIRLINE_WORDS
from todeval.nodes.simulation.domains.base import Domain

DOMAIN = Domain(
    name="airline",
    environment=AirlineEnvironment,
    folder="agentchangebench/domains/airline",
    goal_words=AIRLINE_WORDS,
)
