"""What every tool domain shares: the environment protocol, the toolkit and fidelity.

:mod:`~nodes.simulation.environments.base` says what an environment is (event-sourced, fresh
per trial), :mod:`~nodes.simulation.environments.toolkit` gives tool specs, argument checks,
dispatch and replay, and :mod:`~nodes.simulation.environments.fidelity` replays a recorded run
against an environment. The domains themselves (banking, retail, ...) are folders of
:mod:`nodes.simulation.domains`, each declared there with one registry line.
"""
