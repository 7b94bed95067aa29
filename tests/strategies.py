"""Hypothesis strategies for return contexts: built directly (items, revocations,
obligations), or recorded by a real store from histories of every op; and budgets."""

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from hypothesis import strategies as st

from builders import context, item, obligation, revoke
from readmit.admission.context import ReturnContext
from readmit.clock import format_time
from readmit.errors import InvalidEvent
from readmit.events import (
    Assert,
    Close,
    Depart,
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
from readmit.model import ANY, Agent, Item, Kind, Scope, Validity
from readmit.policy import Policy
from readmit.store.sql import SqlStore
from readmit.store.sqlite import SQLiteStore
from readmit.wire import parse_step

DEPS = ["d1", "d2", "d3", "d4"]
WORDS = ["Sunrise Hotel", "the train", "9:00", "pickup", "Riverside", "INC-42", "quiet", "budget"]


@st.composite
def items(draw: st.DrawFn, n_max: int = 10) -> tuple[Item, ...]:
    n = draw(st.integers(0, n_max))
    made: list[Item] = []
    for i in range(n):
        words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3))
        earlier = [m.id for m in made]
        made.append(
            item(
                f"i{i}",
                f"Note {i}: " + ", ".join(words) + ".",
                epoch=draw(st.integers(1, 5)),
                supports=tuple(draw(st.lists(st.sampled_from(DEPS), max_size=2, unique=True))),
                key=draw(st.sampled_from([None, None, "k1", "k2"])),
                scope=Scope(
                    principals=frozenset({draw(st.sampled_from(["family", "family", "agency"]))})
                ),
                receipt=draw(st.booleans()) or draw(st.booleans()),
                depends_on=tuple(draw(st.lists(st.sampled_from(earlier), max_size=1)))
                if earlier
                else (),
            )
        )
    return tuple(made)


@st.composite
def contexts(draw: st.DrawFn) -> ReturnContext:
    pool = draw(items())
    revoked = (
        draw(st.lists(st.sampled_from([i.id for i in pool]), unique=True, max_size=3))
        if pool
        else []
    )
    delta = tuple(revoke(target, 6 + n, why="withdrawn") for n, target in enumerate(revoked))
    obligations = tuple(
        obligation(f"o{n}", requires=tuple(req), critical=tuple(req[:1]))
        for n, req in enumerate(
            draw(
                st.lists(
                    st.lists(st.sampled_from(DEPS), min_size=1, max_size=2, unique=True), max_size=2
                )
            )
        )
    )
    return context(pool, delta=delta, obligations=obligations, departure_epoch=5)


policies = st.builds(
    lambda n, c, g: Policy(max_items=n, max_chars=c, gamma=g, rho=g),
    st.integers(1, 10),
    st.integers(20, 400),
    st.sampled_from([0.0, 0.5, 1.0]),
)


# Whole histories: every op, recorded by a real store, which refuses what it would refuse
# anyone (a drawn op it refuses is left out, as a rejected request stores nothing).

TEAM = [
    Agent(id="A1", principal="family", role="itinerary"),
    Agent(id="A2", principal="family", role="booking"),
    Agent(id="X1", principal="agency", role="booking"),
]
OPS = ["assert"] * 4 + ["supersede", "revoke", "close", "evidence", "obligation", "resolve"]
AUTHORS = ["A2", "A2", "A1", "X1"]
START = datetime(2026, 5, 1, 8, 0, tzinfo=UTC)


PRINCIPALS = {a.id: a.principal for a in TEAM}


@dataclass
class Drawn:
    """What a history has named so far, for later ops to refer to (items by their readers'
    principal, so most references are ones the author may make)."""

    items: dict[str, list[str]] = field(default_factory=lambda: {"family": [], "agency": []})
    sources: list[str] = field(default_factory=list)
    obligations: list[str] = field(default_factory=list)
    count: int = 0

    def new(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"


def _text(draw: st.DrawFn, lead: str) -> str:
    return lead + ": " + ", ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)))


def _item(draw: st.DrawFn, seen: Drawn, author: str) -> dict[str, Any]:
    readable = seen.items[PRINCIPALS[author]]
    body: dict[str, Any] = {"id": seen.new("i"), "text": _text(draw, "Note")}
    body["supports"] = draw(st.lists(st.sampled_from(DEPS), max_size=2, unique=True))
    if key := draw(st.sampled_from([None, None, "k1", "k2"])):
        body["key"] = key
    if draw(st.booleans()) and readable:
        body["depends_on"] = [draw(st.sampled_from(readable))]
    if draw(st.booleans()) and seen.sources:
        body["cites"] = [draw(st.sampled_from(seen.sources))]
    if draw(st.integers(0, 4)) == 0:
        body["readers"] = {"principals": [draw(st.sampled_from(["family", "agency"]))]}
    return body


def _event(draw: st.DrawFn, seen: Drawn, op: str, author: str) -> dict[str, Any] | None:
    """One event of ``op`` by ``author`` (``None`` when there is nothing to refer to)."""
    event: dict[str, Any] = {"op": op, "author": author}
    if op == "assert":
        event["item"] = _item(draw, seen, author)
    elif op == "evidence":
        event["source"] = {"id": seen.new("s"), "text": _text(draw, "Receipt")}
    elif op == "obligation":
        requires = draw(st.lists(st.sampled_from(DEPS), min_size=1, max_size=2, unique=True))
        name = seen.new("o")
        event["obligation"] = {
            "id": name,
            "text": _text(draw, "Plan"),
            "role": draw(st.sampled_from(["itinerary", "booking"])),
            "requires": requires,
            "critical": requires[: draw(st.integers(0, len(requires)))],
            "frontier": {"id": f"f{name}", "text": _text(draw, "Next")},
        }
    elif op == "resolve" and seen.obligations:
        event["target"] = draw(st.sampled_from(seen.obligations))
    elif op in ("supersede", "revoke", "close") and seen.items[PRINCIPALS[author]]:
        event["target"] = draw(st.sampled_from(seen.items[PRINCIPALS[author]]))
        if op == "supersede":
            event["item"] = _item(draw, seen, author)
        if op == "revoke":
            event["why"] = _text(draw, "No longer valid")
    else:
        return None
    return event


def record_op(
    draw: st.DrawFn, store: SqlStore, seen: Drawn, op: str, index: int, at: datetime
) -> None:
    """Draw an event of ``op`` (one of `OPS`) by a drawn author; record it if the store takes it."""
    event = _event(draw, seen, op, draw(st.sampled_from(AUTHORS)))
    if event is not None:
        _record(store, seen, {"id": f"e{index}.0", "at": format_time(at), **event}, index)


def _record(store: SqlStore, seen: Drawn, raw: dict[str, Any], index: int) -> None:
    """Record ``raw`` if the store accepts it, and remember the ids it named."""
    step = parse_step(raw, index)
    try:
        if isinstance(step, RecordExperience):
            store.record_experience("ws", step)
        elif isinstance(step, Depart):
            store.depart("ws", step.agent, step.at)
        elif not isinstance(step, ReturnRequest):
            store.append("ws", [step])
    except InvalidEvent:
        return
    if "item" in raw:
        readers = raw["item"].get("readers", {}).get("principals", [PRINCIPALS[raw["author"]]])
        for principal in readers:
            seen.items[principal].append(raw["item"]["id"])
    if "source" in raw:
        seen.sources.append(raw["source"]["id"])
    if "obligation" in raw:
        seen.obligations.append(raw["obligation"]["id"])


@st.composite
def stored_contexts(draw: st.DrawFn) -> ReturnContext:
    """C for A1's return after a drawn history of every op, recorded by a real SQLite store.

    Before A1 departs: shared events of every kind and A1's private memories; while it is
    away (Δ): more of every kind, by any agent, possibly a departure and return of another.
    """
    store = SQLiteStore(":memory:")
    try:
        store.create_workspace("ws", TEAM)
        seen, at = Drawn(), START
        plan = [*draw(st.lists(st.sampled_from(OPS), min_size=3, max_size=10)), "memories"]
        plan += ["depart"]
        plan += [*draw(st.lists(st.sampled_from([*OPS, "away"]), max_size=8)), "return"]
        for index, op in enumerate(plan):
            at += timedelta(minutes=10)
            raws: list[dict[str, Any]] = []
            if op == "memories":
                known = seen.items["family"]
                for _ in range(draw(st.integers(0, 2)) if known else 0):
                    memory = {"id": seen.new("m"), "text": _text(draw, "Recall")}
                    memory["source"] = draw(st.sampled_from(known))
                    raws.append({"op": "experience", "agent": "A1", "experience": memory})
            elif op == "depart":
                raws.append({"op": "depart", "agent": "A1"})
            elif op == "away":
                raws.append({"op": "depart", "agent": draw(st.sampled_from(["A2", "X1"]))})
            elif op != "return":
                record_op(draw, store, seen, op, index, at)
            for n, raw in enumerate(raws):
                _record(store, seen, {"id": f"e{index}.{n}", "at": format_time(at), **raw}, index)
        request = ReturnRequest(id="back", at=at, agent="A1", task="trip", purpose="itinerary")
        made = store.return_context("ws", request)  # the store closes: nothing may ask it
        return made.detached()
    finally:
        store.close()


# Events: with ``texts`` any author could state them (any text, some the edge refuses);
# with ``names``, only what the edge accepts.
texts = st.text(st.characters(codec="utf-8"), min_size=1, max_size=20).filter(
    lambda s: s.strip() != ""
)
names = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zs", "Zl", "Zp")),
    min_size=1,
    max_size=20,
)
_offsets = st.sampled_from(
    [UTC, timezone(timedelta(hours=5, minutes=30)), timezone(-timedelta(hours=8))]
)
times = st.builds(
    lambda at, tz: at.replace(tzinfo=UTC).astimezone(tz),
    st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)),  # noqa: DTZ001
    _offsets,
)


def _ids(text: st.SearchStrategy[str]) -> st.SearchStrategy[frozenset[str]]:
    return st.frozensets(text, max_size=3)


def _readers(text: st.SearchStrategy[str]) -> st.SearchStrategy[frozenset[str]]:
    ids = _ids(text)
    return st.one_of(st.just(frozenset({ANY})), ids.filter(bool), ids.map(lambda s: s | {ANY}))


@st.composite
def validities(draw: st.DrawFn) -> Validity:
    start = draw(st.none() | times)
    end = draw(st.none() | times)
    if start is not None and end is not None and not start < end:
        return Validity(valid_from=start)
    return Validity(valid_from=start, valid_to=end)


@st.composite
def obligation_drafts(draw: st.DrawFn, text: st.SearchStrategy[str] = texts) -> ObligationDraft:
    requires = draw(_ids(text).filter(bool))
    return ObligationDraft(
        id=draw(text),
        text=draw(text),
        role=draw(text),
        requires=requires,
        critical=draw(st.sets(st.sampled_from(sorted(requires))).map(frozenset)),
        frontier_id=draw(text),
        frontier_text=draw(text),
    )


@st.composite
def drafts(draw: st.DrawFn, text: st.SearchStrategy[str] = texts) -> ItemDraft:
    item_id = draw(text)
    return ItemDraft(
        id=item_id,
        text=draw(text),
        kind=draw(st.sampled_from([k for k in Kind if k is not Kind.OBLIGATION])),
        key=draw(st.none() | text),
        supports=draw(_ids(text)),
        depends_on=draw(_ids(text).map(lambda s: s - {item_id})),
        cites=draw(_ids(text)),
        principals=draw(st.none() | _readers(text)),
        roles=draw(_readers(text)),
        task=draw(st.just(ANY) | text),
        purposes=draw(_readers(text)),
        validity=draw(validities()),
        unconfirmed=draw(st.booleans()),
    )


def events(text: st.SearchStrategy[str] = texts) -> st.SearchStrategy[Event]:
    """Every shared-state op."""
    t = text
    return st.one_of(
        st.builds(Assert, id=t, at=times, author=t, item=drafts(t)),
        st.builds(Supersede, id=t, at=times, author=t, target=t, item=drafts(t)),
        st.builds(Revoke, id=t, at=times, author=t, target=t, why=t),
        st.builds(Close, id=t, at=times, author=t, target=t),
        st.builds(Evidence, id=t, at=times, author=t, source_id=t, text=t),
        st.builds(Resolve, id=t, at=times, author=t, target=t),
        st.builds(OpenObligation, id=t, at=times, author=t, obligation=obligation_drafts(t)),
    )
