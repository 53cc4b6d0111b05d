"""What a tool domain declares: its environment, its data files, its user words, its runs.

A :class:`Domain` is data: the environment class (its tools as :class:`ToolSpec` s and a method
per tool over its database), where its policy and tasks live under ``$TODEVAL_DATA_DIR``, the
goal words the local user simulator needs, and the recorded runs its fidelity is measured on.
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

    Attributes:
        tools: Goal label -> the tools whose successful call serves it (a label not listed is
            matched by shared words with the tool name).
        requests: Goal label -> how the local user asks for it (else "I need help with ...").
    """

    tools: Mapping[str, frozenset[str]] = field(default_factory=dict)
    requests: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class RecordedRun:
    """A recorded tau2 run whose tool results the domain's environment should reproduce.

    Attributes:
        path: The results file, relative to ``$TODEVAL_DATA_DIR``.
        label: Which database the replay uses (printed by the fidelity bench).
        environment: A fresh environment for a task of the run; None: the domain's own.
        explain: The documented reason of a difference, None when it is not a known one.
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

    Attributes:
        name: The domain's one name (``--domain``, results files, task files' ``domain``).
        environment: The environment class: ``environment(task)`` is a fresh trial of the task,
            and its ``tools`` are what the agent is given.
        folder: The folder of ``policy.md`` and the task file, relative to ``$TODEVAL_DATA_DIR``
            (an absolute path is used as it is).
        tasks_file: The task file (a JSON list of tau2 tasks) in ``folder``.
        goal_words: The local user simulator's words for the domain's goal labels.
        recorded_runs: Runs the fidelity bench replays through the environment.
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
