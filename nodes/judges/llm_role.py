"""A judge role answered by one fixed prompt through :class:`~nodes.judges.llm.LLMJudge`.

The LLM side of many roles is the same: one paper prompt (and optionally a system prompt),
one pydantic output model, a spec, and the judge named after that spec. :class:`LLMRole` builds
that :class:`LLMJudge` once; subclasses only declare the class attributes and read ``self.llm``.
The chat model itself is built (or injected) by :class:`LLMJudge`, never here.
"""

from __future__ import annotations

from typing import Any, Generic, Literal, TypeVar

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel

from todeval.nodes.judges.llm import LLMJudge
from todeval.nodes.judges.spec import JudgeSpec
from todeval.stores.llm_cache import LLMCache

OutT = TypeVar("OutT", bound=BaseModel)


class LLMRole(Generic[OutT]):
    """A judge role answered by one prompt through :class:`LLMJudge`.

    Subclasses set ``role``, ``prompt``, ``output_model`` and optionally ``system`` and
    ``decoding_schema`` (a stricter schema for constrained decoding, see :class:`LLMJudge`).

    Args:
        spec: An LLM spec.
        chat_model: A ready chat model (tests); else built from the spec.
        cache: The LLM response cache (see :class:`LLMJudge`).
        max_retries: Retries after a failed or malformed answer.
        **llm_kwargs: Any other :class:`LLMJudge` setting (``backoff_s``, ``accounting``...).
    """

    role: str
    prompt: str
    output_model: type[OutT]
    system: str | None = None
    decoding_schema: dict[str, Any] | None = None

    def __init__(
        self,
        spec: JudgeSpec | str,
        *,
        chat_model: BaseChatModel | None = None,
        cache: LLMCache | None | Literal["default"] = "default",
        max_retries: int = 3,
        **llm_kwargs: Any,
    ) -> None:
        self.llm: LLMJudge[OutT] = LLMJudge(
            role=self.role,
            spec=spec,
            prompt=self.prompt,
            system=self.system,
            output_model=self.output_model,
            chat_model=chat_model,
            cache=cache,
            max_retries=max_retries,
            decoding_schema=self.decoding_schema,
            **llm_kwargs,
        )
        self.name = self.llm.spec.raw
