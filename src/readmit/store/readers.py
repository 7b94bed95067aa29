"""Who may read what a verdict's restoration states: every reader of the invalidated item."""

from readmit.events import Assert, ItemDraft, Recorded, Supersede
from readmit.model import Scope
from readmit.store.connection import Connection
from readmit.store.restoring import item_at


def scope_of(db: Connection, workspace: str, item: str) -> Scope | None:
    """Who may read stored ``item`` (``None``: no such item)."""
    found = item_at(db, workspace, item)
    return None if found is None else found.scope


def seen_by_all(
    db: Connection, workspace: str, restoring: Recorded, scope: Scope | None, said: Scope | None
) -> bool:
    """Whether every reader of ``scope`` and the author of ``said`` may read what it states.

    That is, all readers of the invalidated item (of ``scope``) may read the item
    ``restoring`` states, and its author the statement it states again (of ``said``).
    Readers are compared as sets of principals and roles (``*`` reads for everyone); an
    item whose scope is unknown is restored by nothing (fail closed), nor is a statement
    whose readers are.
    """
    event = restoring.event
    if scope is None or not isinstance(event, Assert | Supersede):
        return False
    return scope.read_within(*draft_readers(db, workspace, event.author, event.item)) and knew(
        db, workspace, event.author, said
    )


def knew(db: Connection, workspace: str, author: str, said: Scope | None) -> bool:
    """Whether ``author`` may read a statement of scope ``said`` (so may state it again)."""
    row = db.execute(
        "SELECT principal, role FROM agents WHERE workspace = ? AND id = ?", (workspace, author)
    ).fetchone()
    return said is not None and row is not None and said.readable_by(row[0], row[1])


def readers_of(db: Connection, workspace: str, stating: Recorded) -> tuple[frozenset[str], ...]:
    """Who may read the item ``stating`` (an assert or a supersession) states: none else."""
    event = stating.event
    if not isinstance(event, Assert | Supersede):
        return frozenset(), frozenset()
    return draft_readers(db, workspace, event.author, event.item)


def draft_readers(
    db: Connection, workspace: str, author: str, draft: ItemDraft
) -> tuple[frozenset[str], frozenset[str]]:
    """Who may read ``draft``, written by ``author``: its own readers, or its principal's."""
    if draft.principals is not None:
        return draft.readers(None)
    row = db.execute(
        "SELECT principal FROM agents WHERE workspace = ? AND id = ?", (workspace, author)
    ).fetchone()
    return draft.readers(None if row is None else row[0])


def item_readers(db: Connection, workspace: str, event: Assert | Supersede) -> Scope | None:
    """Who may read the item ``event`` states (``None``: nobody known)."""
    principals, roles = draft_readers(db, workspace, event.author, event.item)
    return Scope(principals=principals, roles=roles) if principals else None


def may_replace(db: Connection, workspace: str, author: str, scope: Scope) -> bool:
    """Whether ``author`` may read an item of ``scope`` (so its keyed item replaces it)."""
    row = db.execute(
        "SELECT principal, role FROM agents WHERE workspace = ? AND id = ?", (workspace, author)
    ).fetchone()
    return row is not None and scope.readable_by(row[0], row[1])
