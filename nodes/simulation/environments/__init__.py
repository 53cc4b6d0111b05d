"""What every tool domain shares: the environment protocol, the toolkit and fidelity."""
