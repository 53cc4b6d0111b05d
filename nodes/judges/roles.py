"""A judge role is one declaration: its name, what it decides, its local judges and its prompt.

Each subsystem declares its roles in ``nodes/<subsystem>/roles.py``::

    RESPONSE_QUALITY = JudgeRole(
        name="response_quality",
        decides="G-Eval relevance and coherence of the system's turns (ATOD §6.3)",
        local={"default": abstaining("response quality needs an LLM judge: ...")},
        prompt=RESPONSE_QUALITY_PROMPT,
        output_model=ResponseQualityOutput,
        llm=LLMResponseQuality,   # a PromptJudge subclass; omit it for a bare PromptJudge
    )

    judge = RESPONSE_QUALITY.judge("openai:gpt-4o-mini")

The declared name is the role's key everywhere: ``--judge ROLE=SPEC``, the config file, the
summary's ``judges`` and the validity cards. ``local`` maps each ``local:<variant>`` to a
zero-argument factory (the first is the default; models load when it is first called, never at
import). The LLM judge is :class:`PromptJudge` over ``prompt`` and ``output_model`` unless the role
needs more (windows, batches) and names its own class in ``llm``, usually a
:class:`PromptJudge` subclass that turns the role's inputs into the prompt's fields and the
answer into the role's result.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Literal, TypeVar

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel

from todeval.nodes.context import ROLE_DEFAULTS, Context
from todeval.nodes.judges.llm import LLMJudge
from todeval.nodes.judges.local import get_local_judge, register_local_judge, resolve_local_variant
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.judges.spec import JudgeConfigError, JudgeSpec, JudgeSpecError, parse_spec
from todeval.stores.llm_cache import LLMCache

OutT = TypeVar("OutT", bound=BaseModel)
J = TypeVar("J")

ROLES: dict[str, JudgeRole[Any]] = {}
"""Every declared role by name (filled as the subsystems' ``roles`` modules are imported)."""
_lock = threading.Lock()


@dataclass(eq=False)
class JudgeRole(Generic[J]):
    """One judge role.

    Attributes:
        name: The role's one name (spec key, config key, summary key, validity card).
        default: The spec a run gives the role when it names none (a list for a panel).
        decides: What the role decides, in the paper's words (shown in ``--help``).
        local: ``local:<variant>`` -> zero-argument factory; the first variant is the default.
        prompt: The paper's prompt (``str.format`` fields), for the LLM judge.
        output_model: The pydantic model the prompt's JSON answer is read into.
        system: An optional system prompt.
        decoding_schema: A stricter JSON schema for constrained decoding (small models).
        llm: Builds the LLM judge from ``(role, spec, max_retries=..., **llm_kwargs)`` (the
            role is this declaration: its prompt and output model); None: a
            :class:`PromptJudge` over ``prompt`` and ``output_model``.
    """

    name: str
    decides: str
    default: str | list[str] = "local"
    local: Mapping[str, Callable[[], J]] = field(default_factory=dict)
    prompt: str | None = None
    output_model: type[BaseModel] | None = None
    system: str | None = None
    decoding_schema: dict[str, Any] | None = None
    llm: Callable[..., J] | None = None
    _built: dict[tuple[Any, ...], J] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        with _lock:
            previous = ROLES.get(self.name)
            if previous is not None and previous.decides != self.decides:
                raise ValueError(f"judge role {self.name!r} is declared twice")
            ROLES[self.name] = self
            ROLE_DEFAULTS[self.name] = self.default
        for k, (variant, factory) in enumerate(self.local.items()):
            register_local_judge(self.name, variant, default=k == 0)(factory)

    def judge(self, spec: str = "local", max_retries: int = 3, **llm_settings: Any) -> J:
        """The judge ``spec`` names, built once per (spec, retries, settings) in this process.

        Args:
            spec: ``local``, ``local:<variant>`` or an LLM spec.
            max_retries: The LLM judge's retries after a failed or malformed answer.
            **llm_settings: Settings only the role's LLM judge reads (a sampling
                ``temperature``...); local judges ignore them.

        Raises:
            JudgeSpecError: If the spec is malformed or names an unknown local variant.
            JudgeConfigError: If the LLM judge cannot be built here (package, key).
        """
        key = (spec, max_retries, *sorted(llm_settings.items()))
        found = self._built.get(key)
        if found is None:
            found = self._build(parse_spec(spec), max_retries, llm_settings)
            self._built.setdefault(key, found)
        return self._built[key]

    def cache_clear(self) -> None:
        """Forget the judges built so far (tests that script a new chat model per test)."""
        self._built.clear()

    def llm_judge(self, spec: JudgeSpec | str, **llm_kwargs: Any) -> J:
        """A new LLM judge for ``spec`` (tests pass ``chat_model=``; nothing is cached)."""
        if self.llm is not None:
            return self.llm(self, spec, **llm_kwargs)
        if self.prompt is None or self.output_model is None:
            raise JudgeSpecError(f"role {self.name!r} has no LLM judge; use a local spec")
        judge: J = PromptJudge(self, spec, **llm_kwargs)  # type: ignore[assignment]
        return judge

    def _build(self, parsed: JudgeSpec, max_retries: int, llm_settings: dict[str, Any]) -> J:
        if parsed.is_local:
            local: J = get_local_judge(self.name, parsed.variant)
            return local
        return self.llm_judge(parsed, max_retries=max_retries, **llm_settings)


class PromptJudge(Generic[OutT]):
    """A role's LLM judge when one prompt answers it: fill the prompt, read the JSON answer.

    A role whose nodes call ``judge``/``score``/``respond``... rather than :meth:`ask` declares
    a subclass as its ``llm``: the subclass turns the role's inputs into the prompt's fields
    (``self.ask(**fields)``) and the answer into the role's result.

    Args:
        role: The declaration (its prompt, output model, system prompt, decoding schema).
        spec: An LLM spec.
        chat_model: A ready chat model (tests); else built from the spec.
        cache: The LLM response cache (see :class:`LLMJudge`).
        max_retries: Retries after a failed or malformed answer.
        **llm_kwargs: Any other :class:`LLMJudge` setting (over :attr:`llm_settings`).
    """

    llm_settings: ClassVar[Mapping[str, Any]] = {}
    """A subclass's own :class:`LLMJudge` settings (e.g. ``max_output_tokens`` for long answers)."""

    def __init__(
        self,
        role: JudgeRole[Any],
        spec: JudgeSpec | str,
        *,
        chat_model: BaseChatModel | None = None,
        cache: LLMCache | None | Literal["default"] = "default",
        max_retries: int = 3,
        **llm_kwargs: Any,
    ) -> None:
        if role.prompt is None or role.output_model is None:
            raise JudgeSpecError(f"role {role.name!r} declares no prompt")
        self.llm: LLMJudge[Any] = LLMJudge(
            role=role.name, spec=spec, prompt=role.prompt, system=role.system,
            output_model=role.output_model, chat_model=chat_model, cache=cache,
            max_retries=max_retries, decoding_schema=role.decoding_schema,
            **{**self.llm_settings, **llm_kwargs},
        )  # fmt: skip
        self.name = self.llm.spec.raw

    def ask(self, **fields: Any) -> JudgeResult[Any]:
        """The prompt filled with ``fields``; the parsed answer, or None with the reason."""
        result = self.llm.invoke(fields)
        return JudgeResult(result.value, self.name, result.reason)

    async def aask(self, **fields: Any) -> JudgeResult[Any]:
        """Async twin of :meth:`ask`."""
        result = await self.llm.ainvoke(fields)
        return JudgeResult(result.value, self.name, result.reason)


class AbstainingJudge:
    """A local judge for a role that only an LLM can answer: every call is None with the reason.

    Whatever method a node calls (``score``, ``judge``, ``write``...) answers
    ``JudgeResult(None, "local", reason)``, so no role needs a module that only abstains.
    """

    name = "local"

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __getattr__(self, method: str) -> Callable[..., JudgeResult[Any]]:
        if method.startswith("_"):
            raise AttributeError(method)
        return self._abstain

    def _abstain(self, *args: Any, **kwargs: Any) -> JudgeResult[Any]:
        return JudgeResult(None, self.name, self.reason)


def abstaining(reason: str) -> Callable[[], Any]:
    """The factory of an :class:`AbstainingJudge` that says ``reason``."""
    return lambda: AbstainingJudge(reason)


def role_named(name: str) -> JudgeRole[Any]:
    """The declared role ``name``.

    Raises:
        JudgeSpecError: If no subsystem declares it (the message lists the roles).
    """
    found = ROLES.get(name)
    if found is None:
        raise JudgeSpecError(f"no judge role {name!r}; roles: {', '.join(sorted(ROLES))}")
    return found


SPECIAL_SPECS = frozenset({"none", "human"})
"""Specs that name no judge (a role switched off, a person): their subsystem checks them."""


def check_roles(context: Context, names: Iterable[str]) -> None:
    """Build the LLM judge of each role in ``names`` the context gives an LLM spec.

    A missing provider package or API key then fails before any record, for every role a run
    uses, not once per record; local specs are only validated (their models load on first use).

    Raises:
        JudgeSpecError: A spec is malformed or names an unknown local variant.
        JudgeConfigError: An LLM judge cannot be built here (its package or key is missing).
    """
    for name in names:
        role = role_named(name)
        for spec in context.specs(name):
            if spec.strip().lower() in SPECIAL_SPECS:
                continue
            parsed = parse_spec(spec)
            if parsed.is_local:
                resolve_local_variant(name, parsed.variant)
            else:
                try:
                    role.judge(spec, context.llm.max_retries)
                except JudgeConfigError as error:
                    raise JudgeConfigError(f"judge role {name}: {error}") from error
