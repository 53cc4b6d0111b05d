"""ProactiveEval (paper 003) metrics: guidance rubric arithmetic, target density, tallies."""
