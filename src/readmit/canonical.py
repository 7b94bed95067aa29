"""Canonical JSON and tagged digests.

Every receipt, item and view digest is ``sha256:<hex>`` of the canonical JSON
of its content. Digests are tagged with the algorithm that produced them so a
future change of algorithm is detectable rather than silently mismatched.

`canonical_json` serializes any value. Code that writes many documents of one fixed
shape (the store's event log, the benchmark's raw INSERT) joins them from the pieces
below instead, each string encoded once; the bytes are the same (`json_string`,
`json_strings`, `digest_text`).
"""

import hashlib
import json
import re
from functools import lru_cache
from json.encoder import encode_basestring
from typing import Any

DIGEST_PREFIX = "sha256:"

UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")
"""A character no store holds: a NUL (PostgreSQL) or a lone surrogate (no UTF-8 form)."""

json_string = encode_basestring
"""A string as canonical JSON writes it (quoted, non-ASCII kept as is)."""


def canonical_json(value: Any) -> str:
    """Serialize ``value`` deterministically: sorted keys, no whitespace, UTF-8 text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@lru_cache(maxsize=4096)
def json_strings(values: frozenset[str]) -> str:
    """A set of strings as canonical JSON writes it sorted: ``canonical_json(sorted(values))``.

    Cached: sets repeat across documents (readers, purposes, most often none at all).
    """
    return "[" + ",".join(map(encode_basestring, sorted(values))) + "]"


def digest_text(text: str) -> str:
    """The tagged SHA-256 digest of ``text``, canonical JSON already serialized."""
    return DIGEST_PREFIX + hashlib.sha256(text.encode("utf-8")).hexdigest()


def digest(value: Any) -> str:
    """Return the tagged SHA-256 digest of the canonical JSON of ``value``."""
    return digest_text(canonical_json(value))
