"""Seeds for the local simulators' wording, stable across processes and resumes."""

from __future__ import annotations

import hashlib
import json


def stable_seed(*parts: object) -> int:
    """A 64-bit seed from JSON-able parts (``hash()`` is salted per process; a digest is not)."""
    key = json.dumps(list(parts))
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")
