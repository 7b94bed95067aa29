"""A LangGraph value's TTL as the end of its item's validity.

A store whose ``supports_ttl`` is true (``SqliteStore``, ``PostgresStore``) keeps a
value put with ``ttl`` (minutes; a ``put`` without one takes ``ttl_config``'s
``default_ttl``) until it expires, then may sweep it. readmit admitted the value's item for
good, so a view held, and counted towards its coverage, a value the application no longer
had. The item's validity now ends when the inner store may first sweep the value (or
earlier, at the annotations' own ``valid_to``): the put's time, to the whole second below,
plus its TTL. A return after that leaves the item out as ``expired``, and a view that
admits it expires then. An explicit ``ttl=None`` never ends, and neither does a value put
in a store without TTL support (``InMemoryStore`` ignores a `PutOp`'s ``ttl``). Every put
asserts a new version with its own end, so one that changes only the TTL moves the end.

A read may refresh the TTL (``refresh_ttl``, ``ttl_config``'s ``refresh_on_read``): the
inner store then keeps the value longer, but its item still ends where its put said. The
refreshed end is known only to the inner store (a LangGraph `Item` does not carry it), and
readmit could record it only as a new version of the item, written by whoever read it:
what rests on the value would fall (``premise_invalidated``), the old version would be
left out as ``stale_or_superseded``, and teammates would stop seeing the path until their
next return, all for a read. The end a put records is the earliest the inner store may
sweep the value, whatever reads it since (fail closed: a value kept alive by reads is left
out at returns after its put's TTL, though the store still holds it, and between returns
the lens stops showing it then, the agent's own too: `readmit.integrations.ends`); a value
that should stay admitted is put again.

``PostgresStore`` keeps a TTL in whole minutes and refreshes with that: for it the end is
taken with the TTL rounded as Postgres rounds it, where that is shorter. SQLite refreshes
from a time cut to the second, hence the second below.
"""

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from langgraph.store.base import BaseStore, PutOp

from readmit.errors import InvalidInput
from readmit.events import ItemDraft
from readmit.integrations.annotations import kept_until


@dataclass(frozen=True, slots=True)
class Expiry:
    """How an inner store expires the values put in it."""

    supported: bool = False
    """Whether it expires them at all (its ``supports_ttl``)."""
    whole_minutes: bool = False
    """Whether a read refreshes a TTL rounded to whole minutes (``PostgresStore``)."""

    @classmethod
    def of(cls, inner: BaseStore) -> "Expiry":
        """How ``inner`` expires values."""
        postgres = any(
            c.__module__.startswith("langgraph.store.postgres") for c in type(inner).mro()
        )
        return cls(supported=bool(inner.supports_ttl), whole_minutes=postgres)

    def end(self, op: PutOp, at: datetime) -> datetime | None:
        """When the inner store may first sweep the value ``op`` puts at ``at`` (None: never).

        Raises:
            InvalidInput: if the TTL is not a number.
        """
        if not self.supported or op.value is None or op.ttl is None:
            return None
        try:
            minutes = float(op.ttl)
        except (TypeError, ValueError):
            minutes = math.nan
        if math.isnan(minutes):
            path = "/".join((*op.namespace, op.key))
            raise InvalidInput(f"put {path!r}: ttl must be a number of minutes, not {op.ttl!r}")
        if self.whole_minutes and math.isfinite(minutes):
            minutes = min(minutes, round(minutes))  # Postgres rounds half to even, as round
        try:  # the second below: SQLite refreshes from a time cut to the second
            return at.replace(microsecond=0) + timedelta(minutes=minutes)
        except OverflowError:  # past any time readmit holds: never; before any: now
            return None if minutes > 0 else at.replace(microsecond=0)


def ending(draft: ItemDraft, end: datetime | None, where: str) -> ItemDraft:
    """``draft``, valid no longer than the inner store keeps its value (until ``end``).

    Raises:
        InvalidInput: if the annotations' ``valid_from`` is not before ``end``.
    """
    return kept_until(
        draft,
        end,
        lambda at: f"{where}: the value's ttl ends (the store may sweep it from {at.isoformat()})",
    )
