"""Helpers every subcommand shares: progress bars, usage errors, input paths, corpus arguments."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from tqdm import tqdm

from todeval.cli.arguments import (
    UsageError,
    count,
    input_path,
    positive,
    thresholds,
    unit_interval,
    writable_file,
    writable_folder,
)
from todeval.graphs.api import (
    EVALUATE_DEFAULTS,
    SUITES,
    CheckpointerError,
    ClusterError,
    ConfigError,
    Context,
    DatasetFormatError,
    Format,
    JudgeConfigError,
    JudgeSpecError,
    RunReadError,
    Suite,
    build_context,
    check_roles,
    detect_format,
    fmt_figure,
    gate_failures,
    is_setting,
    llm_specs,
    old_role_names,
    read_prices,
    role_defaults,
    suite_named,
    warn_renamed,
)
from todeval.graphs.review import ReviewError

T = TypeVar("T")

__all__ = [
    "GATE_FAILED",
    "count",
    "positive",
    "unit_interval",
    "writable_file",
    "writable_folder",
    "usage_errors",
    "UsageError",
    "add_gate_arguments",
    "gate",
    "add_corpus_arguments",
    "add_llm_arguments",
    "command_context",
    "fmt_figure",
    "input_path",
    "parse_suites",
    "progress",
    "resolved_format",
    "with_llm_settings",
]


def usage_errors() -> tuple[type[Exception], ...]:
    """What the user can fix (a bad spec, a missing key, an unreadable input): exit 2, no trace."""
    return (
        UsageError,
        ConfigError,
        DatasetFormatError,
        JudgeSpecError,
        JudgeConfigError,
        RunReadError,
        ReviewError,
        CheckpointerError,
        ClusterError,
    )


def progress(
    items: Iterable[T],
    description: str,
    unit: str = "dialogue",
    *,
    total: int | None = None,
    worker_of: Callable[[T], str | None] | None = None,
) -> Iterator[T]:
    """Progress bars on stderr: the run's (with an ETA when the total is known), one per worker.

    A worker's bar counts the records its process ran and its rate (``--workers``,
    ``--cluster``), with an ETA for its even share of the records left when the total is known.
    Hidden when stderr is not a terminal, unless TODEVAL_PROGRESS=1.
    """
    disable = not (sys.stderr.isatty() or os.environ.get("TODEVAL_PROGRESS") == "1")
    bars: dict[str, Any] = {}
    with tqdm(total=total, desc=description, unit=unit, disable=disable, dynamic_ncols=True) as run:
        try:
            for item in items:
                run.update()
                worker = worker_of(item) if worker_of is not None else None
                if worker is not None:
                    if worker not in bars:
                        bars[worker] = tqdm(
                            desc=f"  {worker}",
                            unit=unit,
                            position=len(bars) + 1,
                            leave=False,
                            disable=disable,
                            dynamic_ncols=True,
                        )
                    bars[worker].update()
                    if total is not None:  # each worker's ETA: its even share of what is left
                        left = max(0, total - run.n)
                        for bar in bars.values():
                            bar.total = bar.n + -(-left // len(bars))
                            bar.refresh()
                yield item
        finally:
            for bar in bars.values():
                bar.close()


def resolved_format(source: Path, fmt: str) -> Format:
    """``--format``, with ``auto`` decided from the file (a UsageError when it cannot be)."""
    if fmt != "auto":
        return "sgd" if fmt == "sgd" else "mtg"
    try:
        return detect_format(source)
    except ValueError as error:
        raise UsageError(str(error)) from error


FORMAT_HELP = {
    "auto": "decide from the file",
    "mtg": "Mind the Goal dialog JSON",
    "sgd": "SGD (compact or original release)",
    "atod": "ATOD-annotated dialogues",
}


def add_corpus_arguments(
    parser: argparse.ArgumentParser,
    *,
    formats: tuple[str, ...] = ("auto", "mtg", "sgd"),
    input_help: str = "a .json/.jsonl(.gz) file or an SGD folder",
    checkpoints_note: str = "",
) -> None:
    """The arguments every corpus command takes: input, --format, --out, --checkpoints, --limit."""
    parser.add_argument("input", help=input_help)
    parser.add_argument(
        "--format",
        choices=list(formats),
        default="auto",
        help="input format: " + "; ".join(f"{f} = {FORMAT_HELP[f]}" for f in formats),
    )
    parser.add_argument("--out", required=True, type=writable_folder, help="output folder")
    parser.add_argument(
        "--checkpoints",
        default=None,
        help="SQLite file or postgresql://user@host:port/db (shared by workers; the cluster "
        "extra) for the checkpoints (default .todeval/checkpoints.sqlite; ':memory:' for none"
        + checkpoints_note
        + ")",
    )
    parser.add_argument("--limit", type=count, default=None, help="only the first N records")
    add_llm_arguments(parser, dry_run=False)


LLM_FLAGS = {
    "llm_timeout": "llm_timeout_s",
    "llm_concurrency": "llm_max_concurrency",
    "requests_per_minute": "llm_requests_per_minute",
    "max_llm_calls": "llm_max_calls",
    "budget": "llm_budget_usd",
}
"""``--flag`` (as argparse names it) -> the Context field it sets."""


def add_llm_arguments(parser: argparse.ArgumentParser, *, dry_run: bool = True) -> None:
    """How LLM judges are called: timeout, limits, budget, prices (and ``--dry-run``)."""
    group = parser.add_argument_group(
        "LLM calls", "limits for LLM judges (local judges make no calls; defaults in --config)"
    )
    group.add_argument(
        "--llm-timeout", type=positive, metavar="S", help="seconds one call may take (default 60)"
    )
    group.add_argument(
        "--llm-concurrency",
        type=count,
        metavar="N",
        help="calls in flight per provider endpoint (default 4)",
    )
    group.add_argument(
        "--requests-per-minute", type=positive, metavar="N", help="per provider endpoint"
    )
    group.add_argument(
        "--max-llm-calls",
        type=count,
        metavar="N",
        help="stop calling after N calls: the remaining labels are null with the reason, and a "
        "re-run with a larger limit asks only those",
    )
    group.add_argument(
        "--budget",
        type=positive,
        metavar="USD",
        help="stop calling once the priced cost reaches this (needs --prices)",
    )
    group.add_argument(
        "--prices",
        metavar="FILE",
        help='JSON or TOML: {"provider:model": [USD per 1k prompt tokens, USD per 1k '
        "completion tokens]}",
    )
    if not dry_run:
        return
    group.add_argument(
        "--dry-run",
        action="store_true",
        help="send no LLM request: print per role the calls and prompt tokens the run would "
        "make (and their cost with --prices); writes nothing to --out",
    )


def add_sample_arguments(parser: argparse.ArgumentParser) -> None:
    """``--sample N --seed S``: paper 004's sampling step (``Context.gsr_sample``)."""
    parser.add_argument(
        "--sample",
        type=count,
        default=None,
        metavar="N",
        help="goal success on a sample of N dialogues, long sessions oversampled (paper 004, "
        "§6); summary.json lists the sampled dialogues (default: every dialogue)",
    )
    parser.add_argument(
        "--seed", type=int, default=None, help="seed of the --sample draw (default: 0)"
    )


def sample_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The Context fields ``--sample``/``--seed`` set (None: not given, the config decides)."""
    return {
        "gsr_sample": getattr(args, "sample", None),
        "gsr_sample_seed": getattr(args, "seed", None),
    }


def llm_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The Context fields the LLM flags set (flags not given are left out)."""
    settings = {
        field: getattr(args, flag)
        for flag, field in LLM_FLAGS.items()
        if getattr(args, flag, None) is not None
    }
    if getattr(args, "prices", None):
        settings["llm_prices"] = read_prices(args.prices)
    if getattr(args, "dry_run", False):
        settings["llm_dry_run"] = True
    if "llm_budget_usd" in settings and "llm_prices" not in settings:
        raise UsageError("--budget needs --prices (the cost of a call is known only from them)")
    return settings


def with_llm_settings(context: Context, args: argparse.Namespace) -> Context:
    """``context`` with the LLM flags applied, every LLM judge of the command built.

    Building them here makes a missing provider package or API key fail before any record, for
    every role the command runs (its declared roles and any ``--judge`` names).

    Raises:
        JudgeSpecError, JudgeConfigError: A spec is malformed or its judge cannot be built here.
    """
    context = context.with_flat(llm_settings(args))
    check_roles(context, dict.fromkeys([*getattr(args, "judge_roles", ()), *context.judges]))
    return context


def uses_llm(context: Context) -> bool:
    """Whether any role of the run is an LLM judge."""
    return bool(llm_specs(context))


def parse_suites(raw: str) -> list[Suite]:
    """``all`` or a comma list of suite names (or their short names)."""
    names = [name.strip() for name in raw.split(",") if name.strip()]
    if names == ["all"]:
        return list(SUITES)
    wanted = {suite_named(name) for name in names}
    if None in wanted or not names:
        raise UsageError(f"--suite {raw!r}: expected all or a comma list of {', '.join(SUITES)}")
    return [suite for suite in SUITES if suite in wanted]


def judge_overrides(pairs: Sequence[str]) -> dict[str, Any]:
    """``ROLE=SPEC`` flags as ``judges.<role>`` settings (a panel role takes a comma list).

    ROLE is a declared role name; an old name (``teachers``, ``reader_judge``, ``reader``...)
    still works and warns with the new form.
    """
    overrides: dict[str, Any] = {}
    defaults = role_defaults()
    for pair in pairs:
        role, sep, spec = pair.partition("=")
        role, spec = role.strip(), spec.strip()
        roles = [role] if role in defaults else old_role_names(role)
        if not sep or not spec or not roles:
            hint = f"; {role} is a setting: put it in --config" if is_setting(role) else ""
            raise UsageError(
                f"--judge {pair!r}: expected ROLE=SPEC with a declared judge role "
                f"({', '.join(sorted(defaults))}){hint}"
            )
        if roles != [role]:
            warn_renamed(f"--judge {role}=", " ".join(f"--judge {new}=" for new in roles))
        panel = [s.strip() for s in spec.split(",") if s.strip()]
        for name in roles:
            overrides[f"judges.{name}"] = panel if isinstance(defaults[name], list) else spec
    return overrides


def add_judge_arguments(
    parser: argparse.ArgumentParser,
    roles: Sequence[str],
    *,
    aliases: Mapping[str, str | tuple[str, ...]] | None = None,
    bare: str | tuple[str, ...] | None = None,
    user: bool = False,
) -> None:
    """``--judge ROLE=SPEC`` (repeatable) for the command's roles, and its deprecated aliases.

    Args:
        parser: The command's parser.
        roles: The declared roles the command runs (``--help`` lists them with their defaults).
        aliases: Old flags (``--segmenter``) -> the role(s) they set; they work and warn.
        bare: The role(s) an old bare ``--judge SPEC`` set (it works and warns).
        user: Add ``--user SPEC``: the simulated user is who the agent talks to, named beside
            ``--agent`` rather than as a judge (the same as ``--judge user_simulator=SPEC``).
    """
    if user:
        parser.add_argument(
            "--user",
            dest="simulated_user",
            default=None,
            metavar="SPEC",
            help="the simulated user: local (seeded, follows the task script; default), an LLM "
            "spec such as openai:gpt-4.1, or human (= --judge user_simulator=SPEC)",
        )
    defaults = role_defaults()
    listing = "; ".join(f"{role} (default {_shown(defaults[role])})" for role in roles)
    parser.add_argument(
        "--judge",
        action="append",
        default=[],
        metavar="ROLE=SPEC",
        help=f"a judge role's spec, repeatable; a panel role takes a comma list. Roles: {listing}",
    )
    for flag, targets in (aliases or {}).items():
        names = (targets,) if isinstance(targets, str) else targets
        parser.add_argument(
            flag,
            dest=_alias_dest(flag),
            default=None,
            metavar="SPEC",
            help=f"deprecated: use --judge {names[0]}=SPEC",
        )
    parser.set_defaults(
        judge_roles=tuple(roles),
        judge_aliases={
            flag: (targets,) if isinstance(targets, str) else tuple(targets)
            for flag, targets in (aliases or {}).items()
        },
        judge_bare=(bare,) if isinstance(bare, str) else bare,
    )


def _shown(spec: Any) -> str:
    return ",".join(spec) if isinstance(spec, list) else str(spec)


def _alias_dest(flag: str) -> str:
    return "deprecated_" + flag.lstrip("-").replace("-", "_")


def command_judges(args: argparse.Namespace) -> dict[str, Any]:
    """Every role of the command with its spec: the defaults, old flags, then ``--judge``.

    Raises:
        UsageError: A malformed pair or a role the command does not run (the message lists the
            command's declared roles).
    """
    defaults = role_defaults()
    roles: tuple[str, ...] = getattr(args, "judge_roles", ())
    return {role: defaults[role] for role in roles} | given_judges(args)


def given_judges(args: argparse.Namespace) -> dict[str, Any]:
    """The roles the command line names (old flags, then ``--judge``), by declared name.

    Raises:
        UsageError: As :func:`command_judges`.
    """
    roles: tuple[str, ...] = getattr(args, "judge_roles", ())
    defaults = role_defaults()
    judges: dict[str, Any] = {}
    if getattr(args, "simulated_user", None) is not None:
        judges["user_simulator"] = args.simulated_user
    for flag, targets in getattr(args, "judge_aliases", {}).items():
        value = getattr(args, _alias_dest(flag), None)
        if value is None:
            continue
        warn_renamed(f"{flag} {value}", " ".join(f"--judge {role}={value}" for role in targets))
        for role in targets:
            judges[role] = _split(value) if isinstance(defaults[role], list) else value
    pairs: list[str] = []
    bare: tuple[str, ...] | None = getattr(args, "judge_bare", None)
    for item in args.judge:
        if "=" not in item and bare:
            warn_renamed(f"--judge {item}", " ".join(f"--judge {role}={item}" for role in bare))
            pairs += [f"{role}={item}" for role in bare]
        else:
            pairs.append(item)
    for key, value in judge_overrides(pairs).items():
        role = key.removeprefix("judges.")
        if roles and role not in roles:
            raise UsageError(
                f"--judge {role}=...: this command runs no {role} judge; its roles: "
                + ", ".join(roles)
            )
        judges[role] = value
    return judges


def _split(value: str) -> list[str]:
    return [s.strip() for s in value.split(",") if s.strip()]


def command_context(args: argparse.Namespace) -> Context:
    """The context ``--config``, ``--judge``, ``--schema``, ``--sample`` and the LLM flags give.

    Over the evaluation's defaults (``EVALUATE_DEFAULTS``); flags beat the config file.
    """
    overrides = (
        {f"judges.{role}": spec for role, spec in given_judges(args).items()}
        | {"schema_path": str(input_path(args.schema)) if args.schema else None}
        | llm_settings(args)
        | sample_settings(args)
    )
    return build_context(args.config, overrides, base=EVALUATE_DEFAULTS)


GATE_FAILED = 3
"""Exit code of a run that finished but did not meet its ``--fail-under`` thresholds."""


def add_gate_arguments(parser: argparse.ArgumentParser, *, what: str = "a figure") -> None:
    """``--fail-under FIGURE=VALUE[,...]`` and ``--allow-na``, for gating a release."""
    parser.add_argument(
        "--fail-under",
        type=thresholds,
        default={},
        metavar="FIGURE=VALUE[,...]",
        help=f"exit {GATE_FAILED} when {what} is under its threshold (or n/a), e.g. "
        "gsr=0.4,tsr=0.5; VALUE floor asks the figure to be above its do-nothing floor "
        "(tsr=floor); the message gives the figure, its 95%% interval and the threshold",
    )
    parser.add_argument(
        "--allow-na",
        action="store_true",
        help="with --fail-under: a figure the run cannot compute (n/a) passes instead of failing",
    )


def gate(args: argparse.Namespace, figures: Callable[[], Any], code: int) -> int:
    """``code`` when the run meets its thresholds, else print why and return 3.

    ``figures`` is called only when there are thresholds: an evaluate run's figures are read
    back from its outputs with bootstrap intervals (about half a second on SGD dev).
    """
    thresholds = getattr(args, "fail_under", None)
    if not thresholds:
        return code
    failures = gate_failures(figures(), thresholds, allow_na=getattr(args, "allow_na", False))
    for failure in failures:
        print(f"todeval: gate failed: {failure}", file=sys.stderr)
    return GATE_FAILED if failures else code


def add_renamed_option(parser: argparse.ArgumentParser, old: str, new: str, **kwargs: Any) -> None:
    """``old`` as a deprecated alias of the option ``new`` (added before): it works and warns."""

    class Renamed(argparse.Action):
        def __call__(
            self,
            parser: argparse.ArgumentParser,
            namespace: argparse.Namespace,
            values: Any,
            option_string: str | None = None,
        ) -> None:
            warn_renamed(old, new)
            setattr(namespace, self.dest, values)

    dest = new.removeprefix("--").replace("-", "_")
    parser.add_argument(
        old, dest=kwargs.pop("dest", dest), action=Renamed, default=argparse.SUPPRESS,
        help=f"deprecated: use {new}", **kwargs,
    )  # fmt: skip
