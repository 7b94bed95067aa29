"""Helpers for tests of the memory layers when readmit's own store fails."""

from typing import Any

import pytest
from agents import TResponseInputItem

from readmit.admission.decision import Issued
from readmit.decide import Decided
from readmit.errors import StoreError
from readmit.events import Assert, ItemDraft
from readmit.integrations.team import Member, new_id
from readmit.model import Item
from readmit.store import WorkStateStore


def failing(monkeypatch: pytest.MonkeyPatch, store: WorkStateStore, name: str) -> None:
    """``store.name`` raises, running nothing, until undone."""

    def fail(*args: Any, **kwargs: Any) -> Any:
        raise StoreError("SQLite: database is locked")

    monkeypatch.setattr(store, name, fail)


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
