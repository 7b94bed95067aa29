"""Warnings for an item its own writer may not read: the sign of a misspelled reader.

An item's ``readers`` are not checked against the workspace's agents: that would tell a
writer which principals and roles the workspace holds. So a misspelled principal or role
is stored as given, and the agents it was meant for may not read the item. When the
writer itself is left out (the usual sign: it meant itself among the readers), the answer
says so (`warnings`), from the writer's own principal and role alone: it tells nothing of
anyone else. The events are recorded all the same: writing for others only is allowed,
though the writer then cannot revoke or supersede what it wrote.
"""

from collections.abc import Sequence

from readmit.events import Assert, Event, ItemDraft, Supersede
from readmit.model import ANY, Agent
from readmit.service.schemas import WarningOut


def left_out(writer: Agent, events: Sequence[Event]) -> list[WarningOut]:
    """A warning for each item in ``events`` whose readers leave out ``writer`` itself."""
    warnings: list[WarningOut] = []
    for index, event in enumerate(events):
        if isinstance(event, Assert | Supersede):
            for field, problem in _left_out(writer, event.item):
                message = (
                    f"you may not read item {event.item.id!r} yourself: {problem}. It is "
                    "recorded as sent (readers are not checked against the workspace's "
                    "agents, so a misspelled name is kept), and only an agent that may "
                    "read it can revoke or supersede it"
                )
                warnings.append(
                    {"index": index, "id": event.id, "field": field, "message": message}
                )
    return warnings


def _left_out(writer: Agent, draft: ItemDraft) -> list[tuple[str, str]]:
    said = []
    principals = draft.principals
    if principals is not None and ANY not in principals and writer.principal not in principals:
        named = ", ".join(map(repr, sorted(principals)))
        said.append(
            (
                "item.readers.principals",
                f"its principals ({named}) leave out yours ({writer.principal!r})",
            )
        )
    if ANY not in draft.roles and writer.role not in draft.roles:
        named = ", ".join(map(repr, sorted(draft.roles)))
        said.append(
            ("item.readers.roles", f"its roles ({named}) leave out yours ({writer.role!r})")
        )
    return said
