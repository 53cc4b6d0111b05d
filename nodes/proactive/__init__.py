"""ProactiveEval (paper 003): target planning, dialogue guidance and their data synthesis."""
