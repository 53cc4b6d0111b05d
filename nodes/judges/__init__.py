"""Judges: every decision the papers give to an LLM, answered locally or by an LLM.

A role (``"segmentation"``, ``"turn_quality"``...) is configured by a spec string, ``local``,
``local:<variant>`` or ``<provider>:<model>[@<base_url>]`` (see :mod:`nodes.judges.spec`).
Resolve specs when a run starts, so a bad one fails before any dialogue is processed.
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

    Args:
        role: The judge role.
        spec: A judge spec string.
        build_llm: Builds the role's LLM judge from a parsed LLM spec (typically an
            ``LLMJudge`` with the role's prompt and output model).

    Returns:
        The local judge (built once per process) or whatever ``build_llm`` returns.

    Raises:
        JudgeSpecError: If the spec is malformed or names an unknown local variant.
        JudgeConfigError: If ``build_llm`` cannot build the model here.
    """
    parsed = parse_spec(spec)
    if parsed.is_local:
        return get_local_judge(role, parsed.variant)
    return build_llm(parsed)


def check_spec(role: str, spec: str) -> JudgeSpec:
    """Validate ``spec`` for ``role`` without building anything (for config validation).

    A local spec must name a registered variant; an LLM spec a known provider. Neither
    packages nor keys are checked: that happens when the LLM judge is built.

    Raises:
        JudgeSpecError: If the spec is malformed or names an unknown local variant.
    """
    parsed = parse_spec(spec)
    if parsed.is_local:
        resolve_local_variant(role, parsed.variant)
    return parsed
