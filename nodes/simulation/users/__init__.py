"""Simulated users of live evaluation: the ``user_simulator`` role's scenarios and backends.

The role is declared in :mod:`nodes.simulation.roles`; :mod:`~nodes.simulation.users.simulator`
is what harnesses call (:class:`~nodes.simulation.users.simulator.UserSimulator`,
:func:`~nodes.simulation.users.simulator.task_user_reply`). MAP's user is
:mod:`~nodes.simulation.users.map_user`; a tau2 task's user is
:mod:`~nodes.simulation.users.task` (scenario), ``task_local`` (+ ``tones``, ``progress``) and
``task_llm``; ProactiveEval's is :mod:`~nodes.simulation.users.proactive_user`. Conversations
are read by ``chat``, slots and goals rendered by ``words``.
"""
