"""SGD ``schema.json`` as pydantic models (services, intents, slots) and its loader.

The goal tracker's local extractor matches utterances to the intent descriptions (zero-shot on
unseen services); the SGD -> ATOD converter asks :func:`is_transactional`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from todeval.evals.datasets.errors import DatasetFormatError, dotted
from todeval.evals.datasets.jsonio import open_binary

#: Intent name prefixes read as lookups (non-transactional) when no schema is given.
LOOKUP_PREFIXES = ("Find", "Search", "Get", "Lookup", "Check", "Browse", "List", "Show", "Query")


class SlotSchema(BaseModel):
    """One slot of an SGD service."""

    name: str = Field(description="Slot name, e.g. ``number_of_seats``.")
    description: str = Field(default="", description="What the slot holds.")
    is_categorical: bool = Field(default=False, description="Whether values come from a list.")
    possible_values: list[str] = Field(default_factory=list, description="The allowed values.")


class IntentSchema(BaseModel):
    """One intent of an SGD service."""

    name: str = Field(description="Intent name, e.g. ``ReserveRestaurant``.")
    description: str = Field(default="", description="What the intent does.")
    is_transactional: bool = Field(
        default=False, description="True if it changes the world (a booking), not a search."
    )
    required_slots: list[str] = Field(default_factory=list, description="Slots it needs.")
    optional_slots: dict[str, str] = Field(
        default_factory=dict, description="Slots it may take, with their default values."
    )
    result_slots: list[str] = Field(default_factory=list, description="Slots its results have.")


class ServiceSchema(BaseModel):
    """One service of an SGD ``schema.json``."""

    service_name: str = Field(min_length=1, description="Service name, e.g. ``Restaurants_2``.")
    description: str = Field(default="", description="What the service offers.")
    slots: list[SlotSchema] = Field(default_factory=list, description="The service's slots.")
    intents: list[IntentSchema] = Field(default_factory=list, description="Its intents.")

    def intent(self, name: str) -> IntentSchema | None:
        """The intent called ``name``, if the service has one."""
        return next((intent for intent in self.intents if intent.name == name), None)


def load_sgd_schema(path: str | Path) -> dict[str, ServiceSchema]:
    """Read an SGD ``schema*.json`` (maybe gzipped): service name -> its schema, in file order.

    Raises:
        DatasetFormatError: The file is missing, not JSON, not a list of services, a service
            is malformed (the message names its index and field) or named twice.
    """
    source = Path(path)
    with open_binary(source) as stream:
        try:
            raw = json.load(stream)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise DatasetFormatError(f"{source}: not a JSON file ({exc})") from exc
    if not isinstance(raw, list):
        raise DatasetFormatError(f"{source}: an SGD schema is a JSON list of services")
    services: dict[str, ServiceSchema] = {}
    for index, item in enumerate(raw):
        try:
            service = ServiceSchema.model_validate(item)
        except ValidationError as exc:
            problem = exc.errors(include_url=False)[0]
            where = dotted([index, *problem["loc"]])
            raise DatasetFormatError(f"{source}: service field {where}: {problem['msg']}") from exc
        if service.service_name in services:
            raise DatasetFormatError(f"{source}: service {service.service_name!r} is listed twice")
        services[service.service_name] = service
    return services


def is_transactional(
    service: str, intent: str, schema: Mapping[str, ServiceSchema] | None = None
) -> bool:
    """Whether an intent is a transaction (booking, payment) rather than a lookup.

    The schema's ``is_transactional`` when it knows the intent, else the name: an intent
    starting with one of :data:`LOOKUP_PREFIXES` is a lookup.
    """
    known = schema.get(service) if schema is not None else None
    spec = known.intent(intent) if known is not None else None
    if spec is not None:
        return spec.is_transactional
    return not intent.startswith(LOOKUP_PREFIXES)


def stated_values(service: ServiceSchema, intent: str, text: str) -> dict[str, str]:
    """Categorical slot values of ``intent`` that ``text`` names word for word.

    Only values that cannot be confused with ordinary words or numbers ("True", "1") count.
    """
    spec = service.intent(intent)
    if spec is None:
        return {}
    wanted = {*spec.required_slots, *spec.optional_slots}
    found: dict[str, str] = {}
    lowered = text.lower()
    for slot in service.slots:
        if slot.name not in wanted or not slot.is_categorical:
            continue
        for value in slot.possible_values:
            if len(value) < 3 or value.lower() in {"true", "false", "dontcare"}:
                continue
            if value.replace(".", "").isdigit():
                continue
            if re.search(rf"\b{re.escape(value.lower())}\b", lowered):
                found[slot.name] = value
                break
    return found


def schema_beside(source: Path) -> Path | None:
    """The ``schema.json`` that lies beside SGD data, if any.

    The compact ``sgd_<split>.jsonl(.gz)`` sits beside ``schema_<split>.json``; the original
    release keeps ``schema.json`` in each split folder (``dev/schema.json``).
    """
    folder = source if source.is_dir() else source.parent
    names = []
    match = re.match(r"sgd_(\w+?)\.jsonl", source.name)
    if match:
        names.append(f"schema_{match.group(1)}.json")
    names.append("schema.json")
    for name in names:
        candidate = folder / name
        if candidate.is_file():
            return candidate
    return None
