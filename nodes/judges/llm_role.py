"""A judge role answered by one fixed prompt through :class:`~nodes.judges.llm.LLMJudge`."""

from __future__ import annotations

from typing import Any, Generic, Literal, TypeVar

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel

from todeval.nodes.judges.llm import LLMJudge
from todeval.nodes.judges.spec import JudgeSpec
from todeval.stores.llm_cache import LLMCache

OutT = TypeVar("OutT", bound=BaseModel)


class LLMRole(Generic[OutT]):
    """A judge role answered by one prompt through :class:`LLMJudge`, built once.

    Subclasses set ``role``, ``prompt``, ``output_model`` and optionally ``system`` and
    ``decoding_schema``; ``llm_kwargs`` go to :class:`LLMJudge`.
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
