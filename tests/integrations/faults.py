"""Helpers for tests of the memory layers when readmit's own store fails."""

from typing import Any

import pytest
from agents import TResponseInputItem

from integrations.stores import FailingStore
from readmit.admission.decision import Issued
from readmit.decide import Decided
from readmit.errors import StoreError
from readmit.events import Assert, ItemDraft
from readmit.integrations.langgraph import ReadmitStore
from readmit.integrations.team import Member, new_id
from readmit.model import Item
from readmit.store import WorkStateStore


def failing(monkeypatch: pytest.MonkeyPatch, store: WorkStateStore, name: str) -> None:
    """``store.name`` raises, running nothing, until undone."""

    def fail(*args: Any, **kwargs: Any) -> Any:
        raise StoreError("SQLite: database is locked")

    monkeypatch.setattr(store, name, fail)


def once_then(monkeypatch: pytest.MonkeyPatch, target: object, name: str, error: Exception) -> None:
    """``target.name`` runs once, then raises ``error`` until undone."""
    real, calls = getattr(target, name), [0]

    def then_fails(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] > 1:
            raise error
        return real(*args, **kwargs)

    monkeypatch.setattr(target, name, then_fails)


def undo_owed(member: Member, store: ReadmitStore, inner: FailingStore) -> None:
    """``store`` puts the trip's hotel Sunrise, then Riverside while ``inner`` fails and
    ``member``'s state cannot be read: the Riverside put's undo is owed."""
    store.put(("trip",), "hotel", {"text": "Sunrise"})
    inner.failing = True
    with pytest.MonkeyPatch.context() as patch:
        failing(patch, member.store, "visible_state")
        with pytest.raises(StoreError):
            store.put(("trip",), "hotel", {"text": "Riverside"})
    inner.failing = False


def stated(member: Member, text: str) -> Assert:
    """An assert of ``text`` by ``member``, at its clock's time (not recorded)."""
    item = ItemDraft(id=new_id("fact"), text=text)
    return Assert(id=new_id("assert"), at=member.clock(), author=member.agent, item=item)


def active(member: Member) -> list[str]:
    """The texts of the member's live state (`Member.visible`: what is owed, recorded first)."""
    return sorted(i.text for i in member.visible())


def admitted(decided: Decided | None) -> list[Item]:
    """The items an issued decision admitted, by text."""
    assert decided is not None
    assert isinstance(decided.decision, Issued)
    return sorted(decided.decision.items, key=lambda i: i.text)


def said(text: str) -> TResponseInputItem:
    """An assistant's message in an Agents SDK session."""
    return {"role": "assistant", "content": text}
