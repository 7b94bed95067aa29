"""Every write is checked against what its author may read (issue 11, items 2 to 4).

An agent of one principal cannot replace, resolve or burden what only another
principal may read, and no error tells it apart an id it may not read from one
that does not exist.
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

import pytest

from builders import T0
from readmit.admission.invalidation.explicit import resolve_explicit
from readmit.errors import InvalidEvent, ReadmitError
from readmit.events import (
    Assert,
    Close,
    Event,
    Evidence,
    ItemDraft,
    ObligationDraft,
    OpenObligation,
    RecordExperience,
    Resolve,
    ReturnRequest,
    Revoke,
    Supersede,
)
from readmit.model import Agent
from readmit.store import WorkStateStore

AGENTS = [
    Agent(id="A1", principal="family", role="itinerary"),
    Agent(id="A2", principal="family", role="booking"),
    Agent(id="X1", principal="agency", role="partner"),
    Agent(id="X2", principal="agency", role="itinerary"),
]
LATER = T0 + timedelta(hours=1)


@pytest.fixture
def ws(store: WorkStateStore) -> WorkStateStore:
    store.create_workspace("ws", AGENTS)
    return store


def _assert(
    event_id: str,
    item_id: str,
    *,
    author: str = "A2",
    key: str | None = None,
    principals: frozenset[str] | None = None,
    depends_on: frozenset[str] = frozenset(),
    cites: frozenset[str] = frozenset(),
) -> Assert:
    draft = ItemDraft(
        id=item_id,
        text=f"Statement {item_id}.",
        key=key,
        principals=principals,
        depends_on=depends_on,
        cites=cites,
    )
    return Assert(id=event_id, at=T0, author=author, item=draft)


def _obligation(event_id: str, obligation_id: str, role: str, author: str) -> OpenObligation:
    draft = ObligationDraft(
        id=obligation_id,
        text=f"Continue {obligation_id}.",
        role=role,
        requires=frozenset({"d"}),
        critical=frozenset({"d"}),
        frontier_id=f"f_{obligation_id}",
        frontier_text="Nothing done yet.",
    )
    return OpenObligation(id=event_id, at=T0, author=author, obligation=draft)


def _return(agent: str) -> ReturnRequest:
    return ReturnRequest(
        id="r", at=LATER + timedelta(hours=1), agent=agent, task="trip", purpose="itinerary"
    )


def _ids(store: WorkStateStore, agent: str) -> list[str]:
    return [i.id for i in store.visible_state("ws", agent)]


# Same-key replacement (item 2)


def test_a_same_key_assert_leaves_an_item_its_author_may_not_read_in_place(
    ws: WorkStateStore,
) -> None:
    ws.append("ws", [_assert("e1", "family-hotel", key="hotel")])

    ws.append("ws", [_assert("e2", "agency-hotel", author="X1", key="hotel")])

    assert _ids(ws, "A1") == ["family-hotel"]
    assert _ids(ws, "X1") == ["agency-hotel"]


def test_a_same_key_assert_replaces_an_item_its_author_may_read(ws: WorkStateStore) -> None:
    ws.append("ws", [_assert("e1", "shared-hotel", key="hotel", principals=frozenset({"*"}))])

    ws.append("ws", [_assert("e2", "agency-hotel", author="X1", key="hotel")])

    assert _ids(ws, "A1") == []
    assert _ids(ws, "X1") == ["agency-hotel"]


def test_a_same_key_item_of_another_principal_does_not_retire_it_at_return(
    ws: WorkStateStore,
) -> None:
    ws.append("ws", [_assert("e1", "family-hotel", key="hotel")])
    ws.depart("ws", "A1", T0)
    ws.append("ws", [_assert("e2", "agency-hotel", author="X1", key="hotel")])

    ctx = ws.return_context("ws", _return("A1"))
    kept, excluded = resolve_explicit(list(ctx.items), ctx)

    assert "family-hotel" in {i.id for i in kept}
    assert all("agency-hotel" not in e.evidence for e in excluded)


# Obligations (item 3)


def test_an_agent_cannot_resolve_an_obligation_of_another_principal(ws: WorkStateStore) -> None:
    ws.append("ws", [_obligation("e1", "o-family", "itinerary", author="A2")])
    ws.depart("ws", "A1", T0)

    with pytest.raises(InvalidEvent) as hidden:
        ws.append("ws", [Resolve(id="p", at=LATER, author="X1", target="o-family")])
    with pytest.raises(InvalidEvent) as absent:
        ws.append("ws", [Resolve(id="p", at=LATER, author="X1", target="o-nothing")])

    assert _same(hidden.value, absent.value, "o-family", "o-nothing")
    assert [o.id for o in ws.return_context("ws", _return("A1")).obligations] == ["o-family"]


def test_an_agent_of_the_principal_resolves_its_obligation(ws: WorkStateStore) -> None:
    ws.append("ws", [_obligation("e1", "o-family", "itinerary", author="A2")])
    ws.depart("ws", "A1", T0)

    ws.append("ws", [Resolve(id="e2", at=LATER, author="A1", target="o-family")])

    assert ws.return_context("ws", _return("A1")).obligations == ()


def test_an_obligation_for_a_role_only_another_principal_holds_is_refused_like_no_role(
    ws: WorkStateStore,
) -> None:
    with pytest.raises(InvalidEvent) as theirs:
        ws.append("ws", [_obligation("p", "o", "booking", author="X1")])
    with pytest.raises(InvalidEvent) as nobody:
        ws.append("ws", [_obligation("p", "o", "astronaut", author="X1")])

    assert _same(theirs.value, nobody.value, "booking", "astronaut")
    assert ws.events("ws") == []


def test_a_return_counts_only_obligations_the_returner_may_read(ws: WorkStateStore) -> None:
    """Both principals have an itinerary role; each one's obligation binds only its own agents,
    so a hidden obligation can neither block a return nor show in its coverage figures."""
    ws.append(
        "ws",
        [
            _obligation("e1", "o-family", "itinerary", author="A2"),
            _obligation("e2", "o-agency", "itinerary", author="X1"),
        ],
    )
    ws.depart("ws", "A1", T0)
    ws.depart("ws", "X2", T0)

    family = ws.return_context("ws", _return("A1"))
    agency = ws.return_context("ws", _return("X2"))

    assert [o.id for o in family.role_obligations] == ["o-family"]
    assert [o.id for o in agency.role_obligations] == ["o-agency"]


# Uniform not-found (item 4)


@dataclass(frozen=True)
class Probe:
    id: str
    write: Callable[[WorkStateStore, str], object]
    """Writes as X1 (agency), naming the given id."""


def _append(event: Callable[[str], Event]) -> Callable[[WorkStateStore, str], object]:
    return lambda store, name: store.append("ws", [event(name)])


PROBES = [
    Probe("revoke", _append(lambda n: Revoke(id="p", at=LATER, author="X1", target=n, why="x"))),
    Probe("close", _append(lambda n: Close(id="p", at=LATER, author="X1", target=n))),
    Probe(
        "supersede",
        _append(
            lambda n: Supersede(
                id="p", at=LATER, author="X1", target=n, item=ItemDraft(id="new", text="t")
            )
        ),
    ),
    Probe(
        "depends_on", _append(lambda n: _assert("p", "new", author="X1", depends_on=frozenset({n})))
    ),
    Probe("cites", _append(lambda n: _assert("p", "new", author="X1", cites=frozenset({n})))),
    Probe("resolve", _append(lambda n: Resolve(id="p", at=LATER, author="X1", target=n))),
    Probe(
        "experience source",
        lambda store, n: store.record_experience(
            "ws",
            RecordExperience(id="p", at=LATER, agent="X1", experience_id="m", text="t", source=n),
        ),
    ),
]
HIDDEN = {
    "revoke": "family-fact",
    "close": "family-fact",
    "supersede": "family-fact",
    "depends_on": "family-fact",
    "cites": "family-source",
    "resolve": "o-family",
    "experience source": "family-fact",
}


@pytest.mark.parametrize("probe", [pytest.param(p, id=p.id) for p in PROBES])
def test_an_id_the_author_may_not_read_is_answered_like_an_absent_one(
    ws: WorkStateStore, probe: Probe
) -> None:
    ws.append(
        "ws",
        [
            Evidence(id="e1", at=T0, author="A2", source_id="family-source", text="raw"),
            _assert("e2", "family-fact", cites=frozenset({"family-source"})),
            _obligation("e3", "o-family", "itinerary", author="A2"),
        ],
    )
    hidden = HIDDEN[probe.id]

    with pytest.raises(ReadmitError) as on_hidden:
        probe.write(ws, hidden)
    with pytest.raises(ReadmitError) as on_absent:
        probe.write(ws, "nothing-here")

    assert _same(on_hidden.value, on_absent.value, hidden, "nothing-here")
    assert len(ws.events("ws")) == 3


def test_a_taken_id_is_refused_alike_whether_or_not_the_author_may_read_its_holder(
    ws: WorkStateStore,
) -> None:
    ws.append("ws", [_assert("e1", "family-fact"), _assert("e2", "agency-fact", author="X1")])

    with pytest.raises(InvalidEvent) as hidden:
        ws.append("ws", [_assert("p", "family-fact", author="X1")])
    with pytest.raises(InvalidEvent) as readable:
        ws.append("ws", [_assert("p", "agency-fact", author="X1")])
    with pytest.raises(InvalidEvent) as hidden_event:
        ws.append("ws", [_assert("e1", "fresh", author="X1")])
    with pytest.raises(InvalidEvent) as own_event:
        ws.append("ws", [_assert("e2", "fresh", author="X1")])

    assert _same(hidden.value, readable.value, "family-fact", "agency-fact")
    assert _same(hidden_event.value, own_event.value, "e1", "e2")


def _same(one: BaseException, other: BaseException, one_id: str, other_id: str) -> bool:
    """The two errors are of one class and code and say the same but for the id named."""
    assert isinstance(one, ReadmitError)
    assert isinstance(other, ReadmitError)
    assert (type(one), one.code) == (type(other), other.code)
    assert str(one).replace(repr(one_id), "ID") == str(other).replace(repr(other_id), "ID")
    return True
