from dataclasses import dataclass, replace
from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from builders import NOW, context, item
from readmit.admission import gates
from readmit.admission.context import History
from readmit.admission.gate_details import gate_detail
from readmit.admission.gates import DEFAULT_GATES, apply_gates, max_chars
from readmit.model import ANY, Item, Kind, Receipt, Scope, Validity
from readmit.reasons import Reason

HOTEL = item("h1", "Riverside Hotel is booked.", supports=("d_h",))
RECEIPT = HOTEL.receipt
assert RECEIPT is not None
CTX = context((HOTEL,), evidence=frozenset({"src"}))


@dataclass(frozen=True)
class Case:
    id: str
    item: Item
    expected: Reason | None


CASES = [
    Case("passes", HOTEL, None),
    Case(
        "other principal",
        replace(HOTEL, scope=Scope(principals=frozenset({"agency"}))),
        Reason.UNAUTHORIZED,
    ),
    Case(
        "other role", replace(HOTEL, scope=Scope(roles=frozenset({"booking"}))), Reason.UNAUTHORIZED
    ),
    Case("anyone may read", replace(HOTEL, scope=Scope(principals=frozenset({ANY}))), None),
    Case(
        "expired",
        replace(HOTEL, validity=Validity(valid_from=NOW - timedelta(days=2), valid_to=NOW)),
        Reason.EXPIRED,
    ),
    Case(
        "not yet valid",
        replace(HOTEL, validity=Validity(valid_from=NOW + timedelta(hours=1))),
        Reason.NOT_YET_VALID,
    ),
    Case(
        "valid now",
        replace(
            HOTEL,
            validity=Validity(valid_from=NOW - timedelta(days=1), valid_to=NOW + timedelta(days=1)),
        ),
        None,
    ),
    Case("epoch beyond the context", replace(HOTEL, epoch=CTX.epoch + 1), Reason.NOT_YET_VALID),
    Case(
        "other task",
        replace(HOTEL, scope=Scope(principals=frozenset({"family"}), task="payroll")),
        Reason.NOT_APPLICABLE,
    ),
    Case(
        "other purpose",
        replace(
            HOTEL, scope=Scope(principals=frozenset({"family"}), purposes=frozenset({"billing"}))
        ),
        Reason.NOT_APPLICABLE,
    ),
    Case(
        "obligation of another role",
        replace(HOTEL, kind=Kind.OBLIGATION, for_role="booking"),
        Reason.NOT_APPLICABLE,
    ),
    Case("no receipt", replace(HOTEL, receipt=None), Reason.MISSING_RECEIPT),
    Case(
        "receipt for other text",
        replace(HOTEL, text="Riverside Hotel is booked!"),
        Reason.MISSING_RECEIPT,
    ),
    Case(
        "receipt from another author",
        replace(HOTEL, receipt=replace(RECEIPT, author="X9")),
        Reason.MISSING_RECEIPT,
    ),
    Case(
        "cites missing evidence",
        replace(HOTEL, cites=frozenset({"nowhere"})),
        Reason.MISSING_RECEIPT,
    ),
    Case("cites recorded evidence", replace(HOTEL, cites=frozenset({"src"})), None),
    Case(
        "unauthorized wins over missing receipt",
        replace(HOTEL, receipt=None, scope=Scope(principals=frozenset({"agency"}))),
        Reason.UNAUTHORIZED,
    ),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_first_failing_gate_decides_the_reason(case: Case) -> None:
    kept, excluded = apply_gates([case.item], CTX)

    assert [e.reason for e in excluded] == ([] if case.expected is None else [case.expected])
    assert kept == ([case.item] if case.expected is None else [])


DETAILS = {
    "other principal": "",  # its scope is not the returner's to see
    "expired": "valid until 2026-05-03T08:00:00Z",
    "not yet valid": "valid from 2026-05-03T09:00:00Z",
    "epoch beyond the context": "recorded after the state this return reads",
    "other task": "for task 'payroll'; this return is to 'trip'",
    "other purpose": "for purposes 'billing'; this return is for 'itinerary'",
    "obligation of another role": ("for role 'booking'; the returning agent's is 'itinerary'"),
    "no receipt": "no receipt: recorded as unconfirmed",
    "receipt for other text": ("its receipt does not bind its text to the event that recorded it"),
    "cites missing evidence": "cites evidence not on record: nowhere",
}


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES if c.id in DETAILS])
def test_a_gates_exclusion_says_which_of_the_items_settings_failed(case: Case) -> None:
    _, excluded = apply_gates([case.item], CTX)

    assert [e.detail for e in excluded] == [DETAILS[case.id]]


def test_an_item_for_another_task_and_purpose_names_both() -> None:
    scope = Scope(principals=frozenset({"family"}), task="payroll", purposes=frozenset({"a", "b"}))

    _, excluded = apply_gates([replace(HOTEL, scope=scope)], CTX)

    assert excluded[0].detail == (
        "for task 'payroll'; this return is to 'trip'; "
        "for purposes 'a', 'b'; this return is for 'itinerary'"
    )


def test_the_size_budget_rejects_long_items() -> None:
    long = item("long", "x" * 101)

    kept, excluded = apply_gates([long, HOTEL], CTX, (*DEFAULT_GATES, max_chars(100)))

    assert kept == [HOTEL]
    assert [(e.item, e.reason) for e in excluded] == [("long", Reason.OVER_ITEM_BUDGET)]
    assert excluded[0].detail == "101 characters, over the item budget"


@given(st.integers(-5, 5), st.integers(1, 5))
def test_an_item_outside_its_validity_is_never_kept(start: int, length: int) -> None:
    valid_from = NOW + timedelta(hours=start)
    candidate = replace(
        HOTEL,
        validity=Validity(valid_from=valid_from, valid_to=valid_from + timedelta(hours=length)),
    )

    kept, _ = apply_gates([candidate], CTX)

    assert (kept == [candidate]) == candidate.validity.covers(NOW)


def test_receipt_epoch_must_match_item_epoch() -> None:
    assert HOTEL.receipt is not None
    moved = replace(
        HOTEL, receipt=Receipt(event_id="x", author="A2", epoch=2, digest=HOTEL.receipt.digest)
    )

    _, excluded = apply_gates([moved], CTX)

    assert [e.reason for e in excluded] == [Reason.MISSING_RECEIPT]


def test_a_remembered_receipt_check_binds_the_very_item_it_was_made_for() -> None:
    """Gate P's part that depends on the item alone is remembered per item: a second
    return gets the same answer, and another item with the same id and receipt but
    another text is checked on its own."""
    rewritten = replace(HOTEL, text="Riverside Hotel is cancelled.")

    for _ in range(2):
        kept, excluded = apply_gates([HOTEL, rewritten], CTX)

        assert kept == [HOTEL]
        assert [(e.item, e.reason) for e in excluded] == [("h1", Reason.MISSING_RECEIPT)]

    # A new context's items are new objects; their digests are remembered by id and text.
    again, forged = replace(HOTEL), replace(rewritten)
    kept, excluded = apply_gates([again, forged], CTX)

    assert kept == [again]
    assert kept[0] is again
    assert [(e.item, e.reason) for e in excluded] == [("h1", Reason.MISSING_RECEIPT)]


def test_the_memo_of_sound_items_keeps_to_its_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """One split that finds more sound items than the memo holds starts it over and keeps
    the first of them; every item is still kept."""
    memo = gates._Remembered(3)
    memo.items[id(HOTEL)] = HOTEL
    monkeypatch.setattr(gates, "_OWN", memo)
    pool = [item(f"m{i}", f"Fact {i}.") for i in range(5)]

    kept, excluded = apply_gates(pool, context(tuple(pool)))

    assert (kept, excluded) == (pool, [])
    assert list(memo.items.values()) == pool[:3]


def test_items_of_contexts_a_caller_makes_are_kept_alive_only_so_many(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A caller's contexts hold new objects at every return: the memo that keeps them alive
    is bounded apart from the store's, whose items the store keeps alive anyway."""
    monkeypatch.setattr(gates, "_OWN", gates._Remembered(gates._OWN.limit))
    monkeypatch.setattr(gates, "_STORED", gates._Remembered(gates._STORED.limit))
    mine = tuple(item(f"m{i}", f"Fact {i}.") for i in range(5))
    stored = tuple(replace(i) for i in mine)  # what a store reads back: its own objects

    apply_gates(mine, context(mine))
    apply_gates(stored, replace(context(stored), history=_no_history))

    assert set(gates._OWN.items) == set(map(id, mine))
    assert set(gates._STORED.items) == set(map(id, stored))
    assert gates._OWN.limit < gates._STORED.limit


def _no_history(after: int, news: bool = True) -> History:
    return History(events=(), items=())


def test_a_text_no_digest_can_bind_fails_the_receipt_check() -> None:
    """An item built in code may hold a lone surrogate (the edges refuse one): its text has
    no digest, so no receipt binds it, and it is excluded rather than raising."""
    odd = replace(HOTEL, id="odd", text="bad \ud800")

    kept, excluded = apply_gates([HOTEL, odd], CTX)

    assert kept == [HOTEL]
    assert [(e.item, e.reason) for e in excluded] == [("odd", Reason.MISSING_RECEIPT)]


def test_a_receipt_is_checked_only_after_the_gates_before_it() -> None:
    """The gates' order decides: an item for another role is ``not_applicable`` even when
    its text could not even be digested (a lone surrogate)."""
    odd = replace(HOTEL, id="odd", text="bad \ud800", for_role="booking", receipt=RECEIPT)

    kept, excluded = apply_gates([HOTEL, odd], CTX)

    assert kept == [HOTEL]
    assert [(e.item, e.reason) for e in excluded] == [("odd", Reason.NOT_APPLICABLE)]


SCOPES = [
    Scope(principals=frozenset({"family"})),
    Scope(principals=frozenset({"agency"})),
    Scope(roles=frozenset({"booking"})),
    Scope(principals=frozenset({"family"}), task="payroll"),
    Scope(principals=frozenset({"family"}), purposes=frozenset({"billing"})),
]
VALIDITIES = [
    Validity(),
    Validity(valid_from=NOW + timedelta(hours=1)),
    Validity(valid_to=NOW),
    Validity(valid_from=NOW - timedelta(days=1), valid_to=NOW + timedelta(days=1)),
]


@st.composite
def gated_items(draw: st.DrawFn) -> Item:
    n = draw(st.integers(0, 9))
    base = item(f"m{n}", "x" * draw(st.integers(1, 12)), epoch=draw(st.integers(1, CTX.epoch + 1)))
    return replace(
        base,
        # Drawn from a few shared values, as a store's items share theirs.
        scope=draw(st.sampled_from(SCOPES)),
        validity=draw(st.sampled_from(VALIDITIES)),
        receipt=draw(st.sampled_from([base.receipt, None, RECEIPT])),
        cites=draw(st.sampled_from([frozenset(), frozenset({"src"}), frozenset({"nowhere"})])),
        for_role=draw(st.sampled_from([None, "itinerary", "booking"])),
    )


@given(st.lists(gated_items(), max_size=12), st.sampled_from([None, 4, 8]))
def test_the_combined_check_decides_as_the_gates_one_by_one(
    items: list[Item], limit: int | None
) -> None:
    gates = DEFAULT_GATES if limit is None else (*DEFAULT_GATES, max_chars(limit))

    def one_by_one(m: Item) -> Reason | None:
        return next((r for g in gates if (r := g(m, CTX)) is not None), None)

    kept, excluded = apply_gates(items, CTX, gates)
    # A sequence the combined check does not know runs gate by gate: the same answer.
    kept_list, excluded_list = apply_gates(items, CTX, [*gates, lambda m, c: None])

    expected = [(m.id, one_by_one(m)) for m in items]
    assert [m.id for m in kept] == [i for i, r in expected if r is None]
    assert [(e.item, e.reason) for e in excluded] == [(i, r) for i, r in expected if r]
    assert (kept_list, excluded_list) == (kept, excluded)


WHO = CTX.returner
LATER = {
    "nothing": replace(CTX),
    **{
        f"{hours}h later": replace(CTX, returner=replace(WHO, at=WHO.at + timedelta(hours=hours)))
        for hours in (1, 24, 48)
    },
    "principal": replace(CTX, returner=replace(WHO, principal="agency")),
    "role": replace(CTX, returner=replace(WHO, role="booking")),
    "task": replace(CTX, returner=replace(WHO, task="payroll")),
    "purpose": replace(CTX, returner=replace(WHO, purpose="billing")),
    "epoch": replace(CTX, epoch=CTX.epoch + 1),
    "no evidence": replace(CTX, evidence=frozenset()),
    "more evidence": replace(CTX, evidence=frozenset({"src", "nowhere"})),
}
"""Returns after `CTX` that differ from it in one thing the gates read, or in none."""


FLIPPING = [
    item(f"f{n}", **{field: value})  # type: ignore[arg-type]
    for n, (field, value) in enumerate(
        [
            ("cites", ("src",)),
            ("for_role", "booking"),
            ("scope", Scope(roles=frozenset({"booking"}))),
            ("scope", Scope(principals=frozenset({"agency"}))),
            ("scope", Scope(principals=frozenset({"family"}), task="payroll")),
            ("scope", Scope(principals=frozenset({"family"}), purposes=frozenset({"billing"}))),
            ("epoch", CTX.epoch + 1),
            ("validity", Validity(valid_to=NOW + timedelta(hours=2))),
            ("validity", Validity(valid_from=NOW + timedelta(hours=1))),
            (
                "validity",
                Validity(valid_from=NOW + timedelta(hours=1), valid_to=NOW + timedelta(hours=2)),
            ),
        ]
    )
]
"""Items one change of the return can flip (each of them passes or fails at `CTX`)."""


@pytest.mark.parametrize("change", LATER)
@given(st.lists(st.sampled_from(FLIPPING), min_size=1, unique=True), st.lists(gated_items()))
def test_a_later_return_over_the_same_pool_is_split_as_if_for_the_first_time(
    change: str, flipping: list[Item], drawn: list[Item]
) -> None:
    """The fused check remembers a pool's split; a return that reads anything differently
    (time against a validity, principal, role, task, purpose, epoch, evidence) gets its own."""
    later = LATER[change]
    items = [*flipping, *drawn]
    apply_gates(items, CTX)

    kept, excluded = apply_gates(items, later)

    def one_by_one(m: Item) -> Reason | None:
        return next((r for g in DEFAULT_GATES if (r := g(m, later)) is not None), None)

    expected = [(m.id, one_by_one(m)) for m in items]
    assert [m.id for m in kept] == [i for i, r in expected if r is None]
    assert [(e.item, e.reason) for e in excluded] == [(i, r) for i, r in expected if r]


def test_details_remembered_for_shared_settings_are_each_items_own() -> None:
    described = [c.item for c in CASES if c.expected is not None]
    many = [replace(i, id=f"{i.id}-{n}") for n in range(3) for i in described]

    _, excluded = apply_gates(many, CTX)

    found = {e.item: e.detail for e in excluded}
    for i in many:
        reason = next(e.reason for e in excluded if e.item == i.id)
        assert found[i.id] == gate_detail(reason, i, CTX)
