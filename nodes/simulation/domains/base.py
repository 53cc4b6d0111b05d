"""What a tool domain declares: its environment, its data files, its user words, its runs.

Nothing here reads a file at import; paths resolve when asked.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from todeval.nodes.simulation.environments.base import ToolEnvironment
from todeval.nodes.simulation.environments.fidelity import ToolDifference
from todeval.nodes.simulation.environments.toolkit import ToolEnvironmentBase
from todeval.stores.paths import data_dir


@dataclass(frozen=True, kw_only=True)
class GoalWords:
    """The goal labels of a domain's tasks in the local user simulator's words and tools.

    A label not in ``tools`` is matched by shared words with the tool name; one not in
    ``requests`` is asked for as "I need help with ...".
    """

    tools: Mapping[str, frozenset[str]] = field(default_factory=dict)
    requests: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class RecordedRun:
    """A recorded tau2 run whose tool results the domain's environment should reproduce.

    ``path`` is relative to ``$TODEVAL_DATA_DIR``; ``environment`` None means the domain's own;
    ``explain`` gives a known difference's documented reason, else None.
    """

    path: str
    label: str = "as shipped"
    environment: Callable[[Mapping[str, Any]], ToolEnvironment] | None = None
    explain: Callable[[ToolDifference], str | None] = lambda difference: None

    def file(self) -> Path:
        """The results file under ``$TODEVAL_DATA_DIR``."""
        return data_dir() / self.path


@dataclass(frozen=True, kw_only=True)
class Domain:
    """One tool domain (see :mod:`nodes.simulation.domains` for the recipe).

    ``environment(task)`` is a fresh trial of the task; ``folder`` (of ``policy.md`` and the
    task file) is relative to ``$TODEVAL_DATA_DIR`` unless absolute.
    """

    name: str
    environment: type[ToolEnvironmentBase]
    folder: str
    tasks_file: str = "tasks.json"
    goal_words: GoalWords = field(default_factory=GoalWords)
    recorded_runs: tuple[RecordedRun, ...] = ()

    def policy(self) -> str:
        """The agent's policy (``policy.md``), its system prompt."""
        return (data_dir() / self.folder / "policy.md").read_text(encoding="utf-8")

    def tasks_path(self) -> Path:
        """The task file under ``$TODEVAL_DATA_DIR``."""
        return data_dir() / self.folder / self.tasks_file

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The tools as OpenAI function schemas (no database is loaded)."""
        return [spec.schema() for spec in self.environment.tools]
