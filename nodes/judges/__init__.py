"""Judges: every decision the papers give to an LLM, answered locally or by an LLM.

A role is configured by a spec string (see :mod:`nodes.judges.spec`). Resolve specs when a run
starts, so a bad one fails before any dialogue is processed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from todeval.nodes.judges.accounting import ACCOUNTING, JudgeAccounting, RoleUsage
from todeval.nodes.judges.llm import LLMJudge, load_chat_model
from todeval.nodes.judges.local import (
    get_local_judge,
    local_variants,
    register_local_judge,
    resolve_local_variant,
)
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.judges.spec import JudgeConfigError, JudgeSpec, JudgeSpecError, parse_spec

J = TypeVar("J")

__all__ = [
    "ACCOUNTING",
    "JudgeAccounting",
    "JudgeConfigError",
    "JudgeResult",
    "JudgeSpec",
    "JudgeSpecError",
    "LLMJudge",
    "RoleUsage",
    "check_spec",
    "get_local_judge",
    "load_chat_model",
    "local_variants",
    "parse_spec",
    "register_local_judge",
    "resolve_judge",
    "resolve_local_variant",
]


def resolve_judge(role: str, spec: str, build_llm: Callable[[JudgeSpec], J]) -> J | Any:
    """Return the judge that ``spec`` names for ``role``.

    ``build_llm`` builds the role's LLM judge from a parsed LLM spec; a local judge is built once
    per process.

    Raises:
        JudgeSpecError: If the spec is malformed or names an unknown local variant.
        JudgeConfigError: If ``build_llm`` cannot build the model here.
    """
    parsed = parse_spec(spec)
    if parsed.is_local:
        return get_local_judge(role, parsed.variant)
    return build_llm(parsed)


def check_spec(role: str, spec: str) -> JudgeSpec:
    """Validate ``spec`` for ``role`` without building anything (packages and keys are not checked).

    Raises:
        JudgeSpecError: If the spec is malformed or names an unknown local variant.
    """
    parsed = parse_spec(spec)
    if parsed.is_local:
        resolve_local_variant(role, parsed.variant)
    return parsed
