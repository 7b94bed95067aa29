"""Canonical JSON and tagged digests.

Every receipt, item and view digest is ``sha256:<hex>`` of the canonical JSON
of its content. Digests are tagged with the algorithm that produced them so a
future change of algorithm is detectable rather than silently mismatched.
"""

import hashlib
import json
from typing import Any

DIGEST_PREFIX = "sha256:"


def canonical_json(value: Any) -> str:
    """Serialize ``value`` deterministically: sorted keys, no whitespace, UTF-8 text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest(value: Any) -> str:
    """Return the tagged SHA-256 digest of the canonical JSON of ``value``."""
    data = canonical_json(value).encode("utf-8")
    return DIGEST_PREFIX + hashlib.sha256(data).hexdigest()
