"""Which standing verdict's event is named to a later reader (`Exclusion.sighted`).

A standing verdict names its event to a returning agent only where the event is in its Δ
and brought an item it may read, or withdrew one it may read and brought none, or is
evidence it may read (`readmit.admission.invalidation.standing._sighted`). Each test
here is one event that the redaction hides from the agent (`hidden_ids`): naming it where
the rule does not told the agent an event it may not be told of, and hiding it where the
rule names it told that the event was also about what the agent may not read.
"""

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from builders import T0, context, item, supersede
from readmit.admission.context import ReturnContext, Standing, Told
from readmit.admission.hidden import hidden_ids, redact
from readmit.admission.invalidation.standing import apply_standing
from readmit.admission.view import exclusion_json
from readmit.events import Assert, Evidence, ItemDraft, Recorded
from readmit.model import Agent, Item, Scope
from readmit.reasons import Exclusion

AGENCY = Scope(principals=frozenset({"agency"}))
PROBE = item("probe", "Probe about Riverside Hotel.", scope=Scope())
AGENTS = {
    "A2": Agent(id="A2", principal="family", role="itinerary"),
    "B1": Agent(id="B1", principal="agency", role="itinerary"),
}


def _verdict(evidence: str) -> Standing:
    """A verdict on the probe that another reader (the agency's) confirmed."""
    return Standing(
        item="probe",
        evidence=(evidence,),
        verifier="v",
        confidence=0.9,
        detail="v: it read the agency's note",
        decided_epoch=3,
        reader=("agency", "itinerary"),
    )


def _standing(ctx: ReturnContext, evidence: str) -> tuple[Exclusion, list[dict[str, Any]]]:
    """The verdict's exclusion of the probe, and what the family's agent is shown of it."""
    ctx = replace(ctx, standing={"probe": _verdict(evidence)})
    _, [made] = apply_standing(list(ctx.items), ctx)
    hidden = hidden_ids(ctx, [made])
    return made, redact([exclusion_json(made, hidden)], hidden)


def _asserted(new: Item, author: str = "A2") -> Recorded:
    draft = ItemDraft(id=new.id, text=new.text, key=new.key)
    return Recorded(
        epoch=new.epoch, event=Assert(id=f"ev-{new.id}", at=T0, author=author, item=draft)
    )


def test_a_supersession_that_brought_an_item_the_reader_may_read_is_named() -> None:
    """The event withdrew the agency's note, which the family may not read, and brought a
    shared item: it is hidden as about the note, and named as in the family's sight."""
    note = item("note", "Suite held.", scope=AGENCY)
    shared = item("shared", "Suite released.", epoch=2, scope=Scope())
    ctx = context((PROBE, note, shared), delta=(supersede("note", shared),))

    made, [shown] = _standing(ctx, "ss-note")

    assert made.sighted == ("ss-note",)
    assert shown["evidence"] == ["ss-note"]
    assert shown["detail"] == "confirmed earlier by v: the events given invalidated it"


def test_a_supersession_that_brought_an_item_the_reader_may_not_read_is_not_named() -> None:
    """The event withdrew a shared item and brought the agency's note: it brought one, and
    one the family may not read, so what it withdrew does not put it in the family's sight."""
    shared = item("shared", "Suite open.", scope=Scope())
    note = item("note", "Suite held for the agency.", epoch=2, scope=AGENCY)
    ctx = context((PROBE, shared, note), delta=(supersede("shared", note),))

    made, [shown] = _standing(ctx, "ss-shared")

    assert made.sighted == ()
    assert shown["evidence"] == []
    assert "detail" not in shown


def test_evidence_another_principal_recorded_is_not_named() -> None:
    """Evidence is read as its author's principal's alone: the agency's is not named to
    the family, though the agency's return confirmed the verdict on it."""
    source = Evidence(id="src", at=T0, author="B1", source_id="mail", text="Suite held.")
    ctx = replace(context((PROBE,), delta=(Recorded(epoch=2, event=source),)), agents=AGENTS)

    made, [shown] = _standing(ctx, "src")

    assert made.sighted == ()
    assert shown["evidence"] == []
    assert "detail" not in shown


def test_an_event_before_the_departure_is_not_named() -> None:
    """The verdict rests on the agency's assert before the family's agent left: C holds
    its note (the event is shown as evidence C holds), but it is in no Δ of this reader's."""
    note = item("note", "Suite held.", scope=AGENCY, epoch=1)
    told = {"ev-note": (_asserted(note, "B1"), (note,))}  # as the store tells it

    def named(ids: Sequence[str]) -> Mapping[str, Told]:
        return {i: told[i] for i in ids if i in told}

    ctx = replace(context((PROBE, note), departure_epoch=2), named=named)

    made, [shown] = _standing(ctx, "ev-note")

    assert made.evidence == ("ev-note",)
    assert made.sighted == ()
    assert shown["evidence"] == []


def test_an_event_whose_item_the_context_does_not_hold_is_not_named() -> None:
    """An item the context does not hold is hidden (fail closed), and so is the event that
    brought it: it is not named either."""
    missing = item("missing", "Suite held.", epoch=2, scope=Scope())
    ctx = context((PROBE,), delta=(_asserted(missing),))

    made, [shown] = _standing(ctx, "ev-missing")

    assert made.sighted == ()
    assert shown["evidence"] == []


def test_an_event_that_brought_an_item_of_another_role_is_not_named() -> None:
    """The family's item for the booking role alone: the family's itinerary agent may not
    read it, so the event that brought it is not in its sight."""
    booking = Scope(principals=frozenset({"family"}), roles=frozenset({"booking"}))
    held = item("held", "Suite held.", epoch=2, scope=booking)
    ctx = context((PROBE, held), delta=(_asserted(held),))

    made, [shown] = _standing(ctx, "ev-held")

    assert made.sighted == ()
    assert shown["evidence"] == []


def test_an_event_that_brought_an_item_of_the_readers_own_role_is_named() -> None:
    """The event brought an item for the itinerary role alone, and its key replaced the
    agency's note: hidden as about the note, it is named to the family's itinerary agent,
    which may read what it brought."""
    note = item("note", "Suite held.", key="room", scope=AGENCY)
    own = Scope(principals=frozenset({"family"}), roles=frozenset({"itinerary"}))
    gone = item("gone", "Suite released.", key="room", epoch=2, scope=own)
    ctx = context((PROBE, note, gone), delta=(_asserted(gone),))

    made, [shown] = _standing(ctx, "ev-gone")

    assert "ev-gone" in hidden_ids(ctx, [made])
    assert made.sighted == ("ev-gone",)
    assert shown["evidence"] == ["ev-gone"]


def test_a_verdict_whose_confirming_reader_is_not_known_is_told_as_another_readers() -> None:
    """A verdict stored before readmit kept who confirmed it (``reader`` ``None``) may word
    what only that reader may read: it is told as another reader's, without its wording,
    its epoch or its confidence (fail closed)."""
    shared = item("shared", "Suite released.", epoch=2, scope=Scope())
    ctx = context((PROBE, shared), delta=(_asserted(shared),))
    unknown = replace(_verdict("ev-shared"), reader=None)

    _, [made] = apply_standing([PROBE], replace(ctx, standing={"probe": unknown}))

    assert made.detail == "confirmed earlier by v: the events given invalidated it"
    assert made.confidence is None
