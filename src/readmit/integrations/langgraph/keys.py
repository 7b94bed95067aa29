"""Which readmit item a LangGraph (namespace, key) is: its identity and its readmit ``key``.

Every version a LangGraph store holds for one (namespace, key) is a readmit item with
the same readmit ``key``, so an overwrite is a same-key replacement of the version
before it and a returning agent sees the old one excluded as ``stale_or_superseded``.
The mapping is injective: long keys (`identity`) are named by their SHA-256, in a shape
no short key can take, so no key can be chosen to collide with another's.
"""

import dataclasses
import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from enum import Enum
from typing import Any

from langgraph.store.base import PutOp

from readmit.errors import InvalidInput
from readmit.integrations.annotations import ANNOTATIONS
from readmit.wire.domain import KEY_BYTES

PREFIX = "langgraph:"
"""Readmit keys of LangGraph items start with this; other items are not LangGraph's."""

LONG_KEY = 512
"""Keys longer than this are named by their digest (a readmit key stays indexable)."""

Identity = tuple[tuple[str, ...], str, bool]
"""(namespace, key or its SHA-256 hex digest, whether it is the digest)."""


def identity(namespace: tuple[str, ...], key: str) -> Identity:
    """The identity of the item at ``namespace``/``key``.

    The key itself, unless it is longer than `LONG_KEY` characters or would make a readmit
    key longer than the store takes (`KEY_BYTES`; JSON writes a character outside ASCII in
    six, so 512 of them were refused): then its digest.
    """
    plain = (namespace, key, False)
    if len(key) <= LONG_KEY:  # most are short: JSON writes a character in 12 bytes at most
        if 12 * (len(key) + sum(map(len, namespace))) + 3 * len(namespace) + 17 <= KEY_BYTES:
            return plain
        if len(item_key(plain)) <= KEY_BYTES:
            return plain
    return (namespace, hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest(), True)


def item_key(ident: Identity) -> str:
    """The readmit ``key`` every version of ``ident`` carries."""
    namespace, name, hashed = ident
    shown: str | dict[str, str] = {"sha256": name} if hashed else name
    return PREFIX + json.dumps([list(namespace), shown], separators=(",", ":"))


def parse(key: str | None) -> Identity | None:
    """The identity a readmit key names, or None if it is not a LangGraph item's key."""
    if key is None or not key.startswith(PREFIX):
        return None
    try:
        namespace, shown = json.loads(key.removeprefix(PREFIX))
    except (ValueError, TypeError):
        return None
    if not isinstance(namespace, list) or not all(isinstance(n, str) for n in namespace):
        return None
    if isinstance(shown, str):
        return (tuple(namespace), shown, False)
    if isinstance(shown, dict) and isinstance(shown.get("sha256"), str):
        return (tuple(namespace), shown["sha256"], True)
    return None


def render(namespace: tuple[str, ...], key: str, value: Mapping[str, Any]) -> str:
    """The item text readmit judges: the path and the value, each as JSON.

    The value's readmit annotations (its ``"_readmit"`` key) are not part of the
    statement and are left out. ASCII-escaped, so control characters and lone
    surrogates never reach the store; values JSON cannot encode are shown as the stores
    that keep JSON write them (`_as_stored`, `_finite`), else by their ``str``.
    """
    return _rendered(namespace, key, value, _BODY)


def _rendered(
    namespace: tuple[str, ...], key: str, value: Mapping[str, Any], body: json.JSONEncoder
) -> str:
    """The path and ``value`` as JSON, the value (less its annotations) by ``body``."""
    if ANNOTATIONS in value:
        value = {k: v for k, v in value.items() if k != ANNOTATIONS}
    try:
        try:
            text = body.encode(value)
        except ValueError:  # NaN or an infinity, which JSON has not (or a value holding itself)
            if body is not _BODY:
                raise
            text = _FINITE.encode(_finite(value, set()))
    except RecursionError:  # nested past what the interpreter walks: no text says it
        raise ValueError("the value is nested too deeply to render") from None
    return f"{json.dumps('/'.join((*namespace, key)))} = {text}"


def _finite(value: object, seen: set[int]) -> object:
    """``value`` with NaN and infinities as ``None``: as the stores that keep JSON write them.

    ``SqliteStore`` and ``PostgresStore`` (orjson) hand them back as ``null``: rendered
    as Python's ``json`` writes them (``NaN``), the text read back said otherwise than the
    admitted one, and a value its view admitted was never shown (a probe).

    Raises:
        ValueError: for a value that holds itself, as `json` does.
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if not isinstance(value, dict | list | tuple):
        return value
    if id(value) in seen:
        raise ValueError("Circular reference detected")
    seen.add(id(value))
    if isinstance(value, dict):
        found: object = {k: _finite(v, seen) for k, v in value.items()}
    else:
        found = [_finite(v, seen) for v in value]
    seen.discard(id(value))
    return found


def _as_stored(value: object) -> object:
    """``value`` as ``SqliteStore`` (orjson) writes what JSON has no type for.

    A time in ISO 8601 (an offset to the nearest minute), an enum as its value, a dataclass
    as its fields but those named with a leading ``_``; anything else by its ``str``. What
    such a store hands back renders to the same text, so a lens can tell the value its view
    admitted from another (`Lens.fits`; a review found the agent's own such values hidden);
    ``str`` of a time has a space for a T.
    """
    if isinstance(value, datetime):
        return _in_minutes(value)
    if isinstance(value, date | time):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.fields(value)
        return {f.name: getattr(value, f.name) for f in fields if not f.name.startswith("_")}
    return str(value)


def _in_minutes(value: datetime) -> str:
    """``value`` in ISO 8601, as orjson writes it: its UTC offset's minutes rounded, half up.

    Its fraction of a second dropped first (toward the past), and the minutes not carried
    into the hour: orjson writes an offset of 12:59:33 as ``+12:60``.
    """
    offset = value.utcoffset()
    if offset is None or offset % timedelta(minutes=1) == timedelta(0):
        return value.isoformat()
    seconds = offset // timedelta(seconds=1)
    hours, rest = divmod(abs(seconds), 3600)
    sign = "-" if seconds < 0 else "+"
    return f"{value.replace(tzinfo=None).isoformat()}{sign}{hours:02}:{(rest + 30) // 60:02}"


_BODY = json.JSONEncoder(
    sort_keys=True, default=_as_stored, separators=(", ", ": "), allow_nan=False
)
_FINITE = json.JSONEncoder(
    sort_keys=True, default=lambda v: _finite(_as_stored(v), set()), separators=(", ", ": ")
)
"""`render`'s encoder of a value, made once: `json.dumps` makes one a call when given
options, which was half of a render (a lens renders what it reads, `Lens.fits`)."""


_TIME = re.compile(r'"(\d{4}-\d\d-\d\d) (\d\d:\d\d)')


def same_times(read: str, admitted: str) -> bool:
    """Whether ``read`` and ``admitted`` differ only in how times are written.

    An item written before `_as_stored` rendered a time by its ``str`` (a space where
    ISO 8601 has a T): a store that keeps JSON hands it back in ISO 8601.
    """
    return _TIME.sub(r'"\1T\2', admitted) == read


def older_render(namespace: tuple[str, ...], key: str, value: Mapping[str, Any]) -> str:
    """`render` as readmit rendered before `_as_stored`: what JSON has no type for by ``str``.

    A store that keeps the value's objects (``InMemoryStore``) still says an enum's
    older text; one that keeps JSON hands back the enum's value, which says it no longer:
    such a value is hidden until it is written again (README, "Upgrading").
    """
    return _rendered(namespace, key, value, _OLDER)


_OLDER = json.JSONEncoder(sort_keys=True, default=str, separators=(", ", ": "))


def says(
    namespace: tuple[str, ...], key: str, value: Mapping[str, Any], texts: Sequence[str]
) -> bool:
    """Whether ``value`` at ``namespace``/``key`` says one of ``texts`` (the likeliest last).

    Rendered as it, or as an older readmit rendered it (`same_times`, `older_render`), or
    with numbers as a store that keeps JSON hands them back (`_alike`); no, for one nothing
    renders (written around readmit). Rendered once: a value the agent wrote eight times
    was rendered eight times at every read (a review).
    """
    if not texts:
        return False
    try:
        read = render(namespace, key, value)
        if read in texts or any(same_times(read, text) for text in texts):
            return True
        if older_render(namespace, key, value) in texts:
            return True
        return any(_same_json(read, text) for text in reversed(texts))
    except (TypeError, ValueError, RecursionError):
        return False


_PATH = json.JSONDecoder()


def _same_json(read: str, text: str) -> bool:
    """Whether two rendered texts name one path and say values `_alike`."""
    (at, found), (path, said) = _body(read), _body(text)
    return at == path and _alike(found, said)


def _body(text: str) -> tuple[object, object]:
    """The path and the value a rendered text says, parsed (`render`: JSON ``=`` JSON).

    Raises:
        ValueError: if ``text`` is not so rendered.
    """
    path, end = _PATH.raw_decode(text)
    if not text.startswith(" = ", end):
        raise ValueError("not a rendered value")
    return path, json.loads(text[end + 3 :])


def _alike(a: object, b: object) -> bool:
    """Whether two JSON values are the same, a number as a store that keeps JSON hands it back.

    ``PostgresStore`` keeps a number as ``jsonb`` does, in decimal: ``1e16`` comes back as
    the integer ``10000000000000000`` and ``-0.0`` as ``0.0``, which render otherwise. An
    integer and a float are the same if their decimals are (``1e16`` is not
    ``10000000000000001``, though the two are one float); ``true`` is still not ``1``.
    """
    if type(a) is not type(b):
        return type(a) in _NUMBERS and type(b) in _NUMBERS and Decimal(repr(a)) == Decimal(repr(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_alike(v, b[k]) for k, v in a.items())
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_alike, a, b))
    return a == b


_NUMBERS = (int, float)


def well_formed(op: PutOp) -> None:
    """Refuse a write whose path is not a tuple of strings and a string, or is too long.

    ``BaseStore.put`` checks each label of a namespace, so a string passed as one went
    through as its characters: readmit recorded ``("n", "s")`` where the inner store
    wrote ``"ns"`` (a probe).

    Raises:
        InvalidInput: naming the write and what was given.
    """
    namespace: object = op.namespace  # typed as a tuple, passed as anything
    if not isinstance(namespace, tuple) or not all(isinstance(n, str) for n in namespace):
        raise InvalidInput(
            f"write of key {op.key!r}: the namespace must be a tuple of strings, such as "
            f"('trip',), not {namespace!r}"
        )
    if not isinstance(op.key, str):
        raise InvalidInput(f"write in {namespace!r}: the key must be a string, not {op.key!r}")
    size = len(item_key(identity(op.namespace, op.key)))  # ASCII: its JSON escapes the rest
    if op.value is not None and size > KEY_BYTES:  # the store refuses it less plainly
        raise InvalidInput(
            f"write of key {op.key[:60]!r} in {str(namespace)[:100]}: namespace and key make "
            f"a readmit key of {size:,} bytes, at most {KEY_BYTES:,} (a long key is named by "
            "its digest; namespace labels are not)"
        )
