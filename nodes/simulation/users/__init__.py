"""Simulated users of live evaluation: the ``user_simulator`` role's scenarios and backends.

Harnesses call :mod:`~nodes.simulation.users.simulator`.
"""
