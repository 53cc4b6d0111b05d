"""Every command's parser as data, so ``--help`` and usage errors import no command.

The real parser (:func:`todeval.cli.main.build_parser`) imports every command and, through
them, the graphs, the judges' role declarations and their libraries (about 2 s): ``--help``
shows each judge role's default and each setting's default, which only those declarations
know. ``parser_manifest.json`` holds what argparse needs to answer ``--help`` and a usage error
(each parser's prog and description, its groups, and its actions with their option strings,
defaults, choices, help and type), and :func:`manifest_parser` rebuilds the parsers from it in
a few milliseconds.

While parsing, the rebuilt parser runs the real argument types when their module is light
(:mod:`cli.arguments`, builtins, :mod:`pathlib`); an argument whose check needs a command's own
code (a type of its module, a deprecated alias that warns) raises :class:`NeedsCommand` instead,
and the caller parses again with the real parser. Arguments that parse are always parsed again
by the real parser, which runs the command.

``tests/unit/test_cli_startup.py`` holds the manifest equal to :func:`describe` of the real
parser; after changing a command's options, write it again with
``python -m todeval.cli.manifest`` (``make parser-manifest``).
"""

from __future__ import annotations

import argparse
import importlib
import json
from pathlib import Path, PurePath
from typing import Any

MANIFEST = Path(__file__).with_name("parser_manifest.json")
"""The manifest file, beside this module (package data)."""

LIGHT_MODULES = frozenset({"argparse", "builtins", "pathlib", "todeval.cli.arguments"})
"""Modules whose types and actions the rebuilt parser runs itself (importing them is cheap)."""

_OWN_GROUPS = 2
"""argparse's own groups (positional arguments, options) come first in every parser."""

_PLAIN = (
    "prefix_chars",
    "fromfile_prefix_chars",
    "argument_default",
    "conflict_handler",
    "allow_abbrev",
    "exit_on_error",
)
"""Parser settings the manifest does not hold: every parser keeps argparse's default."""


class NeedsCommand(Exception):
    """An argument only the command's own parser can check: parse with the real parser."""


def describe(parser: argparse.ArgumentParser) -> dict[str, Any]:
    """``parser`` and its subparsers as JSON data (what :func:`manifest_parser` rebuilds).

    Raises:
        TypeError: A value the manifest cannot hold (it names the parser and the value).
        NotImplementedError: A parser feature the rebuild does not support.
    """
    if parser._mutually_exclusive_groups:
        raise NotImplementedError(f"{parser.prog}: mutually exclusive groups")
    plain = argparse.ArgumentParser(add_help=False)
    for setting in _PLAIN:
        if getattr(parser, setting) != getattr(plain, setting):
            raise NotImplementedError(f"{parser.prog}: {setting} {getattr(parser, setting)!r}")
    actions = list(parser._actions)
    add_help = bool(actions) and isinstance(actions[0], argparse._HelpAction)
    if add_help:
        actions = actions[1:]
    if any(isinstance(action, argparse._HelpAction) for action in actions):
        raise NotImplementedError(f"{parser.prog}: a help action of its own")
    return {
        "prog": parser.prog,
        "usage": parser.usage,
        "description": parser.description,
        "epilog": parser.epilog,
        "add_help": add_help,
        "groups": [
            {"title": group.title, "description": group.description}
            for group in parser._action_groups[_OWN_GROUPS:]
        ],
        "actions": [_describe_action(parser, action) for action in actions],
    }


def _describe_action(parser: argparse.ArgumentParser, action: argparse.Action) -> dict[str, Any]:
    group = next(k for k, g in enumerate(parser._action_groups) if action in g._group_actions)
    if group < _OWN_GROUPS and group != bool(action.option_strings):
        raise NotImplementedError(f"{parser.prog}: {action.dest} in another group's place")
    if isinstance(action, argparse._SubParsersAction):
        if group != 0:
            raise NotImplementedError(f"{parser.prog}: subparsers with a title")
        return {"group": group, "subparsers": _describe_subparsers(action)}
    return {
        "group": group,
        "class": _path(type(action)),
        "attributes": {
            name: _described_attribute(name, value)
            for name, value in vars(action).items()
            if name != "container"  # the parser it belongs to
        },
    }


def _described_attribute(name: str, value: Any) -> Any:
    if name == "type":
        return None if value is None else _path(value)
    if name == "choices":
        return _encoded_choices(value)
    return _encoded(value)


def _describe_subparsers(action: argparse._SubParsersAction[Any]) -> dict[str, Any]:
    helps = {choice.dest: choice.help for choice in action._choices_actions}
    commands: list[dict[str, Any]] = []
    seen: dict[int, dict[str, Any]] = {}
    for name, sub in action.choices.items():
        if id(sub) in seen:  # an alias of a command added before
            seen[id(sub)]["aliases"].append(name)
            continue
        command: dict[str, Any] = {"name": name, "aliases": [], "parser": describe(sub)}
        if name in helps:
            command["help"] = helps[name]
        seen[id(sub)] = command
        commands.append(command)
    return {
        "dest": action.dest,
        "metavar": _encoded(action.metavar),
        "required": action.required,
        "help": action.help,
        "prog": action._prog_prefix,
        "commands": commands,
    }


def manifest_parser(
    parser_class: type[argparse.ArgumentParser],
    manifest: dict[str, Any] | None = None,
    *,
    command: str | None = None,
) -> argparse.ArgumentParser:
    """The parser ``manifest`` (default: the manifest file) describes, as ``parser_class``.

    Args:
        parser_class: The class of every parser (``todeval``'s own, as the real ones).
        manifest: The description (default: read from the manifest file).
        command: A command's name or alias: the parser has that command only, in full, which
            answers any arguments that name it. None or an unknown name: every command's name
            and help only, parsing nothing, which answers ``todeval``, ``todeval --help`` and
            an unknown command.

    Raises:
        OSError, ValueError, LookupError: The manifest file cannot be read (or is not one).
    """
    if manifest is None:
        manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    parser = _parser(parser_class, manifest)
    groups = [*parser._action_groups, *_groups(parser, manifest)]
    for entry in manifest["actions"]:
        if "subparsers" not in entry:
            _add_action(parser, groups, entry)
            continue
        commands = entry["subparsers"]["commands"]
        wanted = [c for c in commands if command in (c["name"], *c["aliases"])]
        subparsers = _add_subparsers(parser, entry["subparsers"])
        for described in wanted or commands:
            sub = _add_command(subparsers, described, names_only=not wanted)
            if wanted:
                _fill(sub, described["parser"])
    return parser


def _parser(
    parser_class: type[argparse.ArgumentParser], described: dict[str, Any]
) -> argparse.ArgumentParser:
    return parser_class(
        prog=described["prog"],
        usage=described["usage"],
        description=described["description"],
        epilog=described["epilog"],
        add_help=described["add_help"],
    )


def _groups(parser: argparse.ArgumentParser, described: dict[str, Any]) -> list[Any]:
    return [parser.add_argument_group(g["title"], g["description"]) for g in described["groups"]]


def _fill(parser: argparse.ArgumentParser, described: dict[str, Any]) -> None:
    """Add every group, action and subcommand ``described`` has to ``parser`` (made by it)."""
    groups = [*parser._action_groups, *_groups(parser, described)]
    for entry in described["actions"]:
        if "subparsers" not in entry:
            _add_action(parser, groups, entry)
            continue
        subparsers = _add_subparsers(parser, entry["subparsers"])
        for command in entry["subparsers"]["commands"]:
            _fill(_add_command(subparsers, command), command["parser"])


def _add_action(parser: argparse.ArgumentParser, groups: list[Any], entry: dict[str, Any]) -> None:
    action = _action(entry)
    if entry["group"] < _OWN_GROUPS:
        parser._add_action(action)  # argparse's own groups: it picks one by the option strings
    else:
        groups[entry["group"]]._add_action(action)


def _add_subparsers(parser: argparse.ArgumentParser, entry: dict[str, Any]) -> Any:
    return parser.add_subparsers(
        dest=entry["dest"],
        metavar=_decoded(entry["metavar"]),
        required=entry["required"],
        help=entry["help"],
        prog=entry["prog"],
    )


def _add_command(subparsers: Any, command: dict[str, Any], *, names_only: bool = False) -> Any:
    """The parser of ``command`` (empty: its actions are added by :func:`_fill`).

    ``names_only``: a parser that takes nothing, for the command table of ``todeval --help``.
    """
    described = command["parser"]
    kwargs: dict[str, Any] = {"aliases": command["aliases"], "prog": described["prog"]}
    if "help" in command:
        kwargs["help"] = command["help"]
    if names_only:
        return subparsers.add_parser(command["name"], add_help=False, **kwargs)
    return subparsers.add_parser(
        command["name"],
        usage=described["usage"],
        description=described["description"],
        epilog=described["epilog"],
        add_help=described["add_help"],
        **kwargs,
    )


def _action(entry: dict[str, Any]) -> argparse.Action:
    """The action ``entry`` describes: its attributes set as they were, no constructor run.

    (A constructor may rewrite what it is given: ``BooleanOptionalAction`` adds ``--no-``
    options and a default to the help, which the description holds already.)
    """
    found = _resolved(entry["class"])
    cls: type[argparse.Action] = (
        found if isinstance(found, type) and issubclass(found, argparse.Action) else _CommandAction
    )
    action = cls.__new__(cls)
    attributes = {name: _decoded(value) for name, value in entry["attributes"].items()}
    attributes["type"] = _type(entry["attributes"]["type"], attributes["default"])
    vars(action).update(attributes)
    return action


class _CommandAction(argparse.Action):
    """A command's own action (a deprecated alias that warns): only its parser runs it."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        raise NeedsCommand(option_string or self.dest)


def _type(path: str | None, default: Any) -> Any:
    """The argument's type: itself when its module is light, else a stand-in.

    The stand-in passes the default through (argparse converts a string default when the
    option is not given) and hands any given value to the command's parser.
    """
    if path is None:
        return None
    found = _resolved(path)
    if found is not None:
        return found

    def command_type(raw: str) -> Any:
        if raw == default:
            return raw
        raise NeedsCommand(path)

    return command_type


def _resolved(path: str) -> Any:
    """What ``module:qualname`` names when its module is light, else None."""
    module, _, qualname = path.partition(":")
    if module not in LIGHT_MODULES or "<" in qualname:
        return None
    found: Any = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


def _path(value: Any) -> str:
    module = getattr(value, "__module__", None)
    qualname = getattr(value, "__qualname__", None)
    if not (module and qualname):
        raise TypeError(f"cannot name {value!r} in the parser manifest")
    return f"{module}:{qualname}"


def _encoded(value: Any) -> Any:
    """A default, const, choices, nargs or metavar as JSON (tuples, dicts and paths tagged)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list):
        return [_encoded(item) for item in value]
    if isinstance(value, tuple):
        return {"tuple": [_encoded(item) for item in value]}
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        return {"dict": {key: _encoded(item) for key, item in value.items()}}
    if isinstance(value, PurePath):
        return {"path": str(value)}
    raise TypeError(f"cannot hold {value!r} in the parser manifest")


def _encoded_choices(choices: Any) -> Any:
    """Choices as JSON: argparse reads a mapping's keys only (``--domain``: the domains)."""
    if isinstance(choices, dict) and all(isinstance(key, str) for key in choices):
        return {"keys": list(choices)}
    return _encoded(choices)


def _decoded(value: Any) -> Any:
    if isinstance(value, list):
        return [_decoded(item) for item in value]
    if not isinstance(value, dict):
        return value
    (tag, inner), *_ = value.items()
    if tag == "tuple":
        return tuple(_decoded(item) for item in inner)
    if tag == "dict":
        return {key: _decoded(item) for key, item in inner.items()}
    if tag == "keys":
        return dict.fromkeys(inner)
    return Path(inner)


def write_manifest() -> Path:
    """Write the manifest of the real parser (imports every command)."""
    from todeval.cli.main import build_parser

    MANIFEST.write_text(
        json.dumps(describe(build_parser()), indent=1, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    return MANIFEST


if __name__ == "__main__":
    print(f"wrote {write_manifest()}")
