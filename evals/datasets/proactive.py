"""ProactiveEval environments (paper 003) in the release layout, read leniently.

The release stores ``dataset/<domain>/{eval,fair,hard}.json``, each a JSON list of items
``{environment: {user_information, trigger_factor}, target, sub_target[], topic}``. Any of these
loads: the release root (with or without its ``dataset/`` folder), one domain folder, or one
JSON file. A domain's name comes from its folder (or the item's ``domain``) in todeval's
spelling, so Listing 1's ``ambigious_instruction`` and ``long-term_follow_up`` load as
``ambiguous_instruction`` and ``long_term_follow_up``; a folder todeval does not know keeps its
name. The tier is the file's stem.

Keys are matched without case, ``-``, ``_`` or spaces, so ``sub_target``, ``sub-target``,
``Sub-targets``, ``subtargets`` all read; ``Target`` and ``target`` too (Listing 4 answers with
``Target`` and ``sub-target``). A bad item becomes a :class:`~evals.schema.RecordError` naming
the file, the 1-based item index, the item id and the field in the file's own spelling
(``sub-target.2``), and the others load. An item without ``id`` is named
``<domain>/<tier>/<n>``; an id seen before in the dataset is an error for the later item.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from todeval.evals.datasets.errors import WHOLE_RECORD, DatasetFormatError, FieldError, duplicate_id
from todeval.evals.datasets.jsonio import iter_records
from todeval.evals.proactive_schema import (
    DOMAINS,
    TIERS,
    Environment,
    ProactiveItem,
    canonical_domain,
)
from todeval.evals.schema import RecordError

#: Item keys as matched (lower-case, no ``-``/``_``/spaces) -> the contract's field.
_ITEM_KEYS = {
    "id": "id",
    "itemid": "id",
    "envid": "id",
    "environmentid": "id",
    "environment": "environment",
    "env": "environment",
    "target": "target",
    "referencetarget": "target",
    "subtarget": "sub_target",
    "subtargets": "sub_target",
    "referencesubtarget": "sub_target",
    "referencesubtargets": "sub_target",
    "topic": "topic",
    "subtopic": "topic",
    "domain": "domain",
    # Some dumps flatten the environment into the item.
    "userinformation": "user_information",
    "userinfo": "user_information",
    "triggerfactor": "trigger_factor",
    "trigger": "trigger_factor",
    "triggerfactors": "trigger_factor",
}
_ENVIRONMENT_KEYS = {
    "userinformation": "user_information",
    "userinfo": "user_information",
    "triggerfactor": "trigger_factor",
    "trigger": "trigger_factor",
    "triggerfactors": "trigger_factor",
}
#: A top-level object may wrap the list under one of these keys.
_WRAPPERS = ("data", "items", "environments", "dataset")


def load_proactive(path: str | Path) -> Iterator[ProactiveItem | RecordError]:
    """Stream the environments under ``path``: items and record errors, in file order.

    Raises:
        DatasetFormatError: Nothing readable there; raised before any item is read.
    """
    files = release_files(Path(path))
    return _load_all(files)


def release_files(source: Path) -> list[tuple[Path, str | None]]:
    """The JSON files of a release (``(file, domain from its folder)``), in load order.

    Tiers come in the release's order (eval, fair, hard), then other stems alphabetically.

    Raises:
        DatasetFormatError: The path is missing or holds no ``.json`` file.
    """
    if source.is_file():
        return [(source, None)]
    if not source.is_dir():
        raise DatasetFormatError(f"{source}: no such file or folder")
    root = source / "dataset" if (source / "dataset").is_dir() else source
    own = _tier_files(root)
    if own:  # a domain folder
        return [(file, canonical_domain(root.name)) for file in own]
    found: list[tuple[Path, str | None]] = [
        (file, canonical_domain(folder.name))
        for folder in sorted(p for p in root.iterdir() if p.is_dir())
        for file in _tier_files(folder)
    ]
    if not found:
        raise DatasetFormatError(
            f"{source}: no environments found; expected dataset/<domain>/{{eval,fair,hard}}.json, "
            "a domain folder or a .json file"
        )
    return found


def _tier_files(folder: Path) -> list[Path]:
    files = [p for p in folder.glob("*.json") if p.is_file()]
    order = {tier: i for i, tier in enumerate(TIERS)}
    return sorted(files, key=lambda p: (order.get(p.stem.lower(), len(order)), p.stem))


def _load_all(files: list[tuple[Path, str | None]]) -> Iterator[ProactiveItem | RecordError]:
    seen: dict[str, str] = {}
    for file, domain in files:
        for item in _load_file(file, domain):
            if isinstance(item, ProactiveItem):
                # Repeats inside one file are caught by _load_file; this catches the others.
                earlier = seen.setdefault(item.eval_id, str(file))
                if earlier != str(file):
                    yield duplicate_id(str(file), None, item.eval_id, f"in {earlier}")
                    continue
            yield item


def _load_file(file: Path, domain: str | None) -> Iterator[ProactiveItem | RecordError]:
    tier = file.stem.lower()
    seen: set[str] = set()
    for position, raw in _items(file):
        if isinstance(raw, RecordError):
            yield raw
            continue
        item_domain = domain or _domain_of(raw, file)
        fallback = f"{item_domain}/{tier}/{position}"
        try:
            item = proactive_item(raw, domain=item_domain, tier=tier, fallback_id=fallback)
        except FieldError as error:
            yield RecordError(
                file=str(file),
                line=position,
                dialogue_id=_raw_id(raw) or fallback,
                field=error.field,
                message=error.message,
            )
            continue
        if item.eval_id in seen:
            yield duplicate_id(str(file), position, item.eval_id, "earlier in this file")
            continue
        seen.add(item.eval_id)
        yield item


def _items(file: Path) -> Iterator[tuple[int, Any]]:
    """``(1-based index, raw item)`` of a file holding a list, a wrapped list or an id map."""
    for record in iter_records(file, "json"):
        if record.error is not None:
            yield (
                record.position,
                RecordError(
                    file=str(file), line=record.position, field=record.field, message=record.error
                ),
            )
            continue
        value = record.value
        if record.position == 1 and isinstance(value, Mapping) and not _looks_like_item(value):
            yield from enumerate(_unwrap(value, file), start=1)
            return
        yield record.position, value


def _unwrap(value: Mapping[str, Any], file: Path) -> list[Any]:
    for key in _WRAPPERS:
        if isinstance(value.get(key), list):
            return list(value[key])
    if value and all(isinstance(item, Mapping) for item in value.values()):
        # {"<id>": item, ...}: the key is the id unless the item has its own.
        return [{"id": key, **item} for key, item in value.items()]
    raise DatasetFormatError(f"{file}: expected a list of environments")


def _looks_like_item(value: Mapping[str, Any]) -> bool:
    keys = {_ITEM_KEYS.get(_flat(key)) for key in value}
    return bool(keys & {"environment", "target", "sub_target", "user_information"})


def proactive_item(
    raw: Any, *, domain: str, tier: str, fallback_id: str | None = None
) -> ProactiveItem:
    """Validate one release item, whatever its key spellings.

    Raises:
        FieldError: Naming the first bad field in the item's own spelling.
    """
    if not isinstance(raw, Mapping):
        raise FieldError(WHOLE_RECORD, f"expected an object, got {type(raw).__name__}")
    fields = _canonical(raw, _ITEM_KEYS, prefix="")
    environment = _environment(raw, fields)
    target = _text(raw, fields, "target")
    sub_target = _sub_targets(raw, fields)
    raw_id = _raw_id(raw)
    topic_key = fields.get("topic")
    topic = raw[topic_key] if topic_key is not None else None
    if topic is not None and not isinstance(topic, str):
        raise FieldError(topic_key or "topic", f"expected text, got {type(topic).__name__}")
    eval_id = raw_id or fallback_id
    if not eval_id:
        raise FieldError("id", "the item has no id")
    return ProactiveItem(
        eval_id=eval_id,
        domain=domain,
        tier=tier,
        environment=environment,
        target=target,
        sub_target=sub_target,
        topic=topic.strip() if isinstance(topic, str) and topic.strip() else None,
    )


def _canonical(raw: Mapping[str, Any], keys: Mapping[str, str], *, prefix: str) -> dict[str, str]:
    """Contract field -> the item's own key; two spellings of one field are an error."""
    found: dict[str, str] = {}
    for key in raw:
        name = keys.get(_flat(str(key)))
        if name is None:
            continue
        if name in found:
            raise FieldError(
                f"{prefix}{key}", f"both {found[name]!r} and {key!r} give {name}: keep one"
            )
        found[name] = str(key)
    return found


def _flat(key: str) -> str:
    return re.sub(r"[\s_\-]+", "", key.lower())


def _environment(raw: Mapping[str, Any], fields: Mapping[str, str]) -> Environment:
    key = fields.get("environment")
    if key is None:
        if "user_information" in fields or "trigger_factor" in fields:
            return Environment(  # flattened into the item
                user_information=_text(raw, fields, "user_information"),
                trigger_factor=_text(raw, fields, "trigger_factor"),
            )
        raise FieldError("environment", "missing (expected {user_information, trigger_factor})")
    value = raw[key]
    if not isinstance(value, Mapping):
        raise FieldError(key, f"expected an object, got {type(value).__name__}")
    inner = _canonical(value, _ENVIRONMENT_KEYS, prefix=f"{key}.")
    return Environment(
        user_information=_text(value, inner, "user_information", prefix=f"{key}."),
        trigger_factor=_text(value, inner, "trigger_factor", prefix=f"{key}."),
    )


def _text(raw: Mapping[str, Any], fields: Mapping[str, str], name: str, prefix: str = "") -> str:
    key = fields.get(name)
    if key is None:
        raise FieldError(f"{prefix}{name}", "missing")
    value = raw[key]
    if not isinstance(value, str):
        raise FieldError(f"{prefix}{key}", f"expected text, got {type(value).__name__}")
    if not value.strip():
        raise FieldError(f"{prefix}{key}", "empty")
    return value.strip()


def _sub_targets(raw: Mapping[str, Any], fields: Mapping[str, str]) -> list[str]:
    key = fields.get("sub_target")
    if key is None:
        raise FieldError("sub_target", "missing (expected a list of sub-targets)")
    value = raw[key]
    if isinstance(value, str):  # one sub-target per line
        value = [line for line in value.splitlines() if line.strip()]
    if not isinstance(value, list):
        raise FieldError(key, f"expected a list of text, got {type(value).__name__}")
    if not value:
        raise FieldError(key, "empty: at least one sub-target is needed to guide a dialogue")
    out = []
    for index, step in enumerate(value):
        if not isinstance(step, str) or not step.strip():
            got = "empty text" if isinstance(step, str) else type(step).__name__
            raise FieldError(f"{key}.{index}", f"expected a sub-target, got {got}")
        out.append(step.strip())
    return out


def _raw_id(raw: Any) -> str | None:
    if not isinstance(raw, Mapping):
        return None
    for key, value in raw.items():
        if _ITEM_KEYS.get(_flat(str(key))) == "id" and isinstance(value, str | int):
            if not isinstance(value, bool) and str(value).strip():
                return str(value).strip()
    return None


def _domain_of(raw: Any, file: Path) -> str:
    if isinstance(raw, Mapping):
        for key, value in raw.items():
            if _flat(str(key)) == "domain" and isinstance(value, str) and value.strip():
                return canonical_domain(value)
    parent = canonical_domain(file.parent.name)
    return parent if parent in DOMAINS else canonical_domain(file.stem)


def write_release(items: Iterable[ProactiveItem], folder: Path) -> list[Path]:
    """Write items as ``folder/<domain>/<tier>.json`` (every domain gets all three tiers)."""
    grouped: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for item in items:
        tiers = grouped.setdefault(item.domain, {tier: [] for tier in TIERS})
        tiers.setdefault(item.tier, []).append(item.release_item())
    written = []
    for domain, tiers in sorted(grouped.items()):
        (folder / domain).mkdir(parents=True, exist_ok=True)
        for tier, rows in tiers.items():
            path = folder / domain / f"{tier}.json"
            path.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", "utf-8")
            written.append(path)
    return written
