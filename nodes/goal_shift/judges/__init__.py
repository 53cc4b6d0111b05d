"""The goal-shift subsystem's judges (paper 002); the roles are declared in ``goal_shift.roles``."""
