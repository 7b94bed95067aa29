import copy
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from builders import KEY, NOW, context, item, obligation, returner, revoke, supersede
from readmit.admission import admit
from readmit.admission.decision import Issued
from readmit.admission.entries import entry_digest
from readmit.admission.hidden import hidden_ids, redact, seen_by_agent
from readmit.admission.view import (
    VIEW_FIELDS,
    VerifiedView,
    exclusion_json,
    expose,
    sign_view,
    verify_view,
)
from readmit.canonical import canonical_json
from readmit.clock import format_time
from readmit.errors import InvalidInput, ViewRejected
from readmit.model import Scope, Validity
from readmit.policy import Policy
from readmit.reasons import Exclusion, Reason, Stage
from readmit.signing import HmacSha256Signer
from readmit.wire.outbound import SignedViewOut

OBL = obligation("o", requires=("d_c",), critical=("d_c",))
C = item("c", "Quiet hotel near the station.", supports=("d_c",))
SIGNER = HmacSha256Signer(KEY)


def issued() -> dict[str, Any]:
    decision = admit(
        context((C,), obligations=(OBL,)), policy=Policy(), verifier=None, signer=SIGNER
    )
    assert isinstance(decision, Issued)
    return decision.signed


def test_an_untouched_view_verifies() -> None:
    verified = verify_view(issued(), SIGNER, NOW)

    assert verified.item_ids == ("o", "f_o", "c")


def _set_text(v: dict[str, Any]) -> None:
    v["items"][2]["text"] = "Noisy hotel."


def _set_text_and_digest(v: dict[str, Any]) -> None:
    from readmit.canonical import digest

    v["items"][2]["text"] = "Noisy hotel."
    v["items"][2]["digest"] = digest({k: x for k, x in v["items"][2].items() if k != "digest"})


TAMPERINGS: dict[str, Callable[[dict[str, Any]], object]] = {
    "item text": _set_text,
    "item text with a recomputed digest": _set_text_and_digest,
    "item removed": lambda v: v["items"].pop(),
    "coverage": lambda v: v["coverage"].update(critical=0.5),
    "expiry extended": lambda v: v.update(expires_at="2099-01-01T00:00:00Z"),
    "agent": lambda v: v.update(agent="A2"),
    "exclusion hidden": lambda v: v["excluded"].append({"item": "x"}),
    "signature": lambda v: v["signature"].update(value="0" * 64),
    "signature removed": lambda v: v.pop("signature"),
    "key added to the signature block": lambda v: v["signature"].update(note="trust me"),
    "format": lambda v: v.update(format="readmit.view/0"),
}


@given(st.sampled_from(sorted(TAMPERINGS)))
def test_a_view_verifies_only_if_untouched(name: str) -> None:
    view = copy.deepcopy(issued())
    TAMPERINGS[name](view)

    with pytest.raises(ViewRejected):
        verify_view(view, SIGNER, NOW)


def test_another_key_rejects_the_view() -> None:
    with pytest.raises(ViewRejected, match="signature"):
        verify_view(issued(), HmacSha256Signer(b"another-key-0123456789"), NOW)


def test_an_expired_view_is_rejected() -> None:
    with pytest.raises(ViewRejected, match="not valid at"):
        verify_view(issued(), SIGNER, NOW + Policy().view_ttl)


def test_a_view_expires_when_the_first_of_its_items_stops_being_valid() -> None:
    """It was valid for the policy's whole TTL, signed over an item that had expired."""
    ends = NOW + timedelta(minutes=20)
    brief = item("c", "Quiet hotel near the station.", supports=("d_c",),
                 validity=Validity(valid_to=ends))  # fmt: skip
    decision = admit(
        context((brief,), obligations=(OBL,)), policy=Policy(), verifier=None, signer=SIGNER
    )
    assert isinstance(decision, Issued)

    assert decision.signed["expires_at"] == format_time(ends)
    verify_view(decision.signed, SIGNER, ends - timedelta(seconds=1))
    with pytest.raises(ViewRejected, match="not valid at"):
        verify_view(decision.signed, SIGNER, ends)


def test_a_view_is_not_valid_before_it_was_issued() -> None:
    with pytest.raises(ViewRejected):
        verify_view(issued(), SIGNER, NOW - timedelta(seconds=1))


def test_a_binding_mismatch_is_rejected() -> None:
    with pytest.raises(ViewRejected, match="role"):
        verify_view(issued(), SIGNER, NOW, expect={"role": "booking"})


def test_a_misspelled_binding_or_a_naive_time_is_the_callers_mistake_not_the_views() -> None:
    with pytest.raises(InvalidInput, match=r"expect names \['agnet'\], no field of a view"):
        verify_view(issued(), SIGNER, NOW, expect={"agnet": "A1"})
    with pytest.raises(InvalidInput, match="at has no time zone"):
        verify_view(issued(), SIGNER, NOW.replace(tzinfo=None))


def test_what_a_binding_may_name_is_every_field_of_a_signed_view_but_its_signature() -> None:
    assert VIEW_FIELDS | {"signature"} == set(SignedViewOut.__annotations__)


def test_a_verified_view_cannot_be_made_by_hand() -> None:
    with pytest.raises(TypeError):
        VerifiedView({}, (), object())


def test_a_malformed_view_is_rejected_not_crashed() -> None:
    with pytest.raises(ViewRejected):
        verify_view({"format": "readmit.view/1"}, SIGNER, NOW)


EXCLUSION_IDS = ("a", "b", "ev-a", "e1")


@st.composite
def exclusions(draw: st.DrawFn) -> Exclusion:
    return Exclusion(
        item=draw(st.sampled_from(EXCLUSION_IDS)),
        reason=draw(st.sampled_from(list(Reason))),
        stage=Stage.GATES,
        evidence=tuple(draw(st.lists(st.sampled_from(EXCLUSION_IDS), max_size=3))),
        detail=draw(st.sampled_from(["", "names ev-a"])),
        confidence=draw(st.sampled_from([None, 0.9])),
        sighted=tuple(draw(st.lists(st.sampled_from(EXCLUSION_IDS), max_size=2))),
    )


def _redact_reference(
    excluded: list[dict[str, Any]], hidden: frozenset[str]
) -> list[dict[str, Any]]:
    """What the agent may see, spelled out one exclusion at a time.

    Hidden ids are left out of the evidence, the detail and confidence with them (but an
    ``unscreened`` item's detail), except an event `Exclusion.sighted` and the event that
    replaced an item by one the agent may read.
    """
    visible = []
    for e in excluded:
        if e["item"] in hidden or e["reason"] == Reason.NOT_SELECTED:
            continue
        evidence, sighted = e["evidence"], e.get("sighted", [])
        replaced = e["reason"] == Reason.STALE_OR_SUPERSEDED and len(evidence) == 2
        if replaced and evidence[1] not in hidden:
            kept = list(evidence)
        else:
            kept = [x for x in evidence if x not in hidden or x in sighted]
        shown = {k: v for k, v in e.items() if k != "sighted"} | {"evidence": kept}
        if len(kept) < len(evidence) and e["reason"] != Reason.UNSCREENED:
            shown.pop("detail", None)
            shown.pop("confidence", None)
        visible.append(shown)
    return visible


@given(st.lists(exclusions(), max_size=8), st.frozensets(st.sampled_from(EXCLUSION_IDS)))
def test_the_agent_sees_no_hidden_id_and_no_not_selected_item(
    excluded: list[Exclusion], hidden: frozenset[str]
) -> None:
    wire = [exclusion_json(e, hidden) for e in excluded]
    before = copy.deepcopy(wire)

    shown = redact(wire, hidden)

    assert shown == _redact_reference(wire, hidden)
    assert wire == before  # the operator's record is left as it was
    assert all(e["item"] not in hidden and "sighted" not in e for e in shown)
    for e, w in zip(shown, [w for w in wire if seen_by_agent(w, hidden)], strict=True):
        named = hidden.intersection(e["evidence"])  # sighted, or the event that replaced it
        assert named <= set(w.get("sighted", [])) or w["reason"] == Reason.STALE_OR_SUPERSEDED


def test_a_view_lists_the_decided_exclusions_an_agent_may_see() -> None:
    secret = item("s", "Private note.", scope=Scope(principals=frozenset({"agency"})))
    stale = item("t", "Old hotel.", cites=("nowhere",))
    ctx = context((C, secret, stale), obligations=(OBL,))
    decision = admit(ctx, policy=Policy(), verifier=None, signer=SIGNER)
    assert isinstance(decision, Issued)

    hidden = hidden_ids(ctx, decision.exclusions)

    assert hidden == {"s", "ev-s"}
    assert decision.signed["excluded"] == _redact_reference(
        [exclusion_json(e) for e in decision.exclusions], hidden
    )
    assert [e["item"] for e in decision.signed["excluded"]] == ["t"]


def test_what_is_hidden_is_found_again_only_for_the_same_context() -> None:
    secret = item("s", "Private note.", scope=Scope(principals=frozenset({"agency"})))
    ctx = context((C, secret), obligations=(OBL,))
    decision = admit(ctx, policy=Policy(), verifier=None, signer=SIGNER)
    agency = replace(ctx, returner=returner(principal="agency"))

    assert hidden_ids(ctx, decision.exclusions) == {"s", "ev-s"}
    assert hidden_ids(agency, decision.exclusions) == set()  # the same exclusions
    assert hidden_ids(ctx, list(decision.exclusions)) == {"s", "ev-s"}


def test_an_item_the_agent_may_not_read_stays_hidden_whatever_excluded_it() -> None:
    """Not only the authorization gate: an unreadable item revoked, superseded or fallen
    with its premise is excluded before any gate, and its id, its receipt's event and
    what its exclusion cites must still appear nowhere the agent looks."""
    agency = Scope(principals=frozenset({"agency"}))
    revoked = item("s1", "Agency rate.", scope=agency)
    replaced = item("s2", "Agency desk.", scope=agency)
    newer = item("s3", "Agency desk, new floor.", epoch=3, scope=agency)
    built = item("t", "Family plan on the agency rate.", depends_on=("s1",))
    ctx = context(
        (C, revoked, replaced, built, newer),
        obligations=(OBL,),
        delta=(revoke("s1", 2), supersede("s2", newer)),
    )
    decision = admit(ctx, policy=Policy(), verifier=None, signer=SIGNER)
    assert isinstance(decision, Issued)

    shown = decision.signed["excluded"]
    named = {e["item"] for e in shown} | {x for e in shown for x in e["evidence"]}
    words = " ".join(e.get("detail", "") for e in shown)

    assert [e["item"] for e in shown] == ["t"]  # the readable item that fell with s1
    assert named.isdisjoint({"s1", "s2", "s3", "ev-s1", "ev-s2", "ev-s3", "rv-s1", "ss-s2"})
    assert "s1" not in words
    assert {"s1", "s2", "s3", "ev-s1", "ev-s2"} <= hidden_ids(ctx, decision.exclusions)
    unsigned = {k: v for k, v in decision.signed.items() if k != "signature"}
    assert sign_view(unsigned, SIGNER) == decision.signed  # redacted entries signed as shown


def test_a_view_listing_remembered_exclusions_is_signed_over_its_canonical_json() -> None:
    """The second return gets the same exclusion objects, and their remembered JSON."""
    gone = item("g", "Old pickup point.")
    ctx = context((C, gone), obligations=(OBL,), delta=(revoke("g", 2),))
    first = admit(ctx, policy=Policy(), verifier=None, signer=SIGNER)
    again = admit(ctx, policy=Policy(), verifier=None, signer=SIGNER)
    assert isinstance(first, Issued)
    assert isinstance(again, Issued)

    assert again.exclusions == first.exclusions
    assert all(a is b for a, b in zip(again.exclusions, first.exclusions, strict=True))
    for decision in (first, again):
        unsigned = {k: v for k, v in decision.signed.items() if k != "signature"}
        assert sign_view(unsigned, SIGNER) == decision.signed
        assert [e["item"] for e in decision.signed["excluded"]] == ["g"]


class _OtherKeyVerifies:
    """Signs with one key and verifies with another: a misconfigured signer."""

    alg = SIGNER.alg

    def sign(self, data: bytes) -> str:
        return SIGNER.sign(data)

    def verify(self, data: bytes, signature: str) -> bool:
        return HmacSha256Signer(b"another-key-0123456789abcdef").verify(data, signature)


def test_a_view_its_own_signer_cannot_verify_is_never_issued() -> None:
    with pytest.raises(ViewRejected, match="signature"):
        admit(
            context((C,), obligations=(OBL,)),
            policy=Policy(),
            verifier=None,
            signer=_OtherKeyVerifies(),
        )


def test_an_issued_view_verifies_as_a_view_from_outside_does() -> None:
    signed = issued()

    assert sign_view({k: v for k, v in signed.items() if k != "signature"}, SIGNER) == signed
    assert verify_view(signed, SIGNER, NOW).view == signed


_words = st.text(min_size=1, max_size=12).filter(lambda t: not t.isspace())


@given(
    st.lists(
        st.tuples(_words, st.lists(_words, max_size=3), st.integers(1, 9), st.booleans()),
        max_size=5,
    ),
    _words,
)
def test_an_issued_view_is_signed_over_its_canonical_json(
    made: list[tuple[str, list[str], int, bool]], task: str
) -> None:
    """`issue` joins the items' remembered JSON into the signed bytes instead of serializing
    the whole view: the bytes are those `sign_view` makes of it, for any texts, labels,
    epochs and excluded items (an item without a receipt is excluded and listed)."""
    items = tuple(
        item(f"i{n}", text, supports=tuple(labels), epoch=epoch, receipt=receipt)
        for n, (text, labels, epoch, receipt) in enumerate(made)
    )
    ctx = context((C, *items), obligations=(OBL,), who=replace(returner(), task=task))
    decision = admit(ctx, policy=Policy(), verifier=None, signer=SIGNER)
    assert isinstance(decision, Issued)
    signed = decision.signed

    assert sign_view({k: v for k, v in signed.items() if k != "signature"}, SIGNER) == signed
    assert verify_view(signed, SIGNER, NOW).item_ids == decision.view.item_ids


def test_a_remembered_entry_digest_binds_the_very_item_it_was_made_for() -> None:
    """An entry's digest is remembered per item: issuing it again gives the same entry, and
    another item with the same id but another text gets a digest of its own text."""
    rewritten = item("c", "Noisy hotel by the tracks.", supports=("d_c",))
    entries = []
    for chosen in (C, C, rewritten):
        decision = admit(
            context((chosen,), obligations=(OBL,)), policy=Policy(), verifier=None, signer=SIGNER
        )
        assert isinstance(decision, Issued)
        verify_view(decision.signed, SIGNER, NOW)
        entries.append(decision.signed["items"][2])

    assert entries[0] == entries[1]
    assert entries[2]["text"] == rewritten.text
    assert entries[2]["digest"] != entries[0]["digest"]


# A signed view is checked beyond its signature: its signature block's algorithm, and the
# digest of every item entry, even one the right key signed (stop 59, helper-141's mutants).


def _resigned(view: dict[str, Any]) -> dict[str, Any]:
    """``view`` signed again with the right key, as a signer handed a bad view would."""
    return sign_view({k: v for k, v in view.items() if k != "signature"}, SIGNER)


@pytest.mark.parametrize("index", [0, 1, 2])
def test_an_entry_whose_digest_does_not_match_is_rejected_though_the_key_signed_it(
    index: int,
) -> None:
    view = copy.deepcopy(issued())
    assert [e["id"] for e in view["items"]] == ["o", "f_o", "c"]
    view["items"][index]["text"] = "Noisy hotel."
    entry = view["items"][index]["id"]

    with pytest.raises(ViewRejected, match=f"digest of item '{entry}' does not match"):
        verify_view(_resigned(view), SIGNER, NOW)


def test_a_resigned_untouched_view_still_verifies() -> None:
    verified = verify_view(_resigned(copy.deepcopy(issued())), SIGNER, NOW)

    assert verified.item_ids == ("o", "f_o", "c")


def test_a_signature_block_naming_another_algorithm_is_rejected() -> None:
    """The algorithm is not under the signature: a view relabelled as another algorithm's
    is refused, not verified with whatever key the verifier holds."""
    view = copy.deepcopy(issued())
    view["signature"]["alg"] = "ed25519"

    with pytest.raises(ViewRejected, match="signed with 'ed25519'"):
        verify_view(view, SIGNER, NOW)


# `expose`: a freshly signed view is checked against its own return before the agent sees it.

CTX = context((C,), obligations=(OBL,))


def _reentered(view: dict[str, Any], index: int, text: str) -> dict[str, Any]:
    """``view`` with entry ``index`` given ``text`` and a digest that matches it, re-signed."""
    view = copy.deepcopy(view)
    entry = view["items"][index]
    entry["text"] = text
    entry["digest"] = entry_digest({k: v for k, v in entry.items() if k != "digest"})
    return _resigned(view)


def test_exposing_the_view_its_return_issued_passes() -> None:
    assert expose(issued(), CTX, SIGNER, Policy()).item_ids == ("o", "f_o", "c")


def test_a_view_naming_an_item_its_return_does_not_hold_is_not_exposed() -> None:
    view = copy.deepcopy(issued())
    view["items"][2]["id"] = "elsewhere"
    entry = view["items"][2]
    entry["digest"] = entry_digest({k: v for k, v in entry.items() if k != "digest"})

    with pytest.raises(ViewRejected, match="not the one recorded in this return's context"):
        expose(_resigned(view), CTX, SIGNER, Policy())


def test_a_view_whose_entry_text_is_not_the_items_is_not_exposed() -> None:
    signed = _reentered(issued(), 2, "Noisy hotel by the motorway.")
    assert verify_view(signed, SIGNER, NOW).item_ids == ("o", "f_o", "c")  # sound as a view

    with pytest.raises(ViewRejected, match="not the one recorded in this return's context"):
        expose(signed, CTX, SIGNER, Policy())


def test_a_view_listing_an_item_that_now_fails_a_gate_is_not_exposed() -> None:
    ended = replace(C, validity=Validity(valid_to=NOW))
    ctx = replace(CTX, items=(ended,))

    with pytest.raises(ViewRejected, match="item 'c' fails the expired check"):
        expose(issued(), ctx, SIGNER, Policy())


def test_a_view_over_its_character_budget_is_not_exposed() -> None:
    chars = sum(len(e["text"]) for e in issued()["items"])

    expose(issued(), CTX, SIGNER, Policy(max_chars=chars))
    with pytest.raises(ViewRejected, match="exceeds its budgets"):
        expose(issued(), CTX, SIGNER, Policy(max_chars=chars - 1))


def test_a_view_over_its_item_budget_is_not_exposed() -> None:
    expose(issued(), CTX, SIGNER, Policy(max_items=3))
    with pytest.raises(ViewRejected, match="exceeds its budgets"):
        expose(issued(), CTX, SIGNER, Policy(max_items=2))


def test_a_view_short_of_the_roles_obligations_is_not_exposed() -> None:
    view = copy.deepcopy(issued())
    del view["items"][2]  # the only supporter of the critical d_c
    signed = _resigned(view)

    with pytest.raises(ViewRejected, match="does not cover the role's obligations"):
        expose(signed, CTX, SIGNER, Policy())
    assert expose(signed, CTX, SIGNER, Policy(complete_view_gate=False)).item_ids == ("o", "f_o")


def _integral_fractions_as_ints(value: Any) -> Any:
    """``value`` as jq 1.6 writes it back: a float with no fraction (``1.0``) as an int."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _integral_fractions_as_ints(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral_fractions_as_ints(v) for v in value]
    return value


def _signed_anew(view: dict[str, Any]) -> dict[str, Any]:
    """``view`` signed over its content as it is now, as `issue` signs."""
    unsigned = {k: v for k, v in view.items() if k != "signature"}
    value = SIGNER.sign(canonical_json(unsigned).encode("utf-8"))
    return {**unsigned, "signature": {"alg": SIGNER.alg, "value": value}}


def test_a_view_whose_fractions_a_json_tool_wrote_without_their_fraction_verifies() -> None:
    view = issued()
    assert view["coverage"] == {"obligations": 1.0, "critical": 1.0}
    with_confidence = copy.deepcopy(view)
    with_confidence["excluded"] = [{"item": "x", "reason": "implicitly_invalidated",
                                    "confidence": 1.0}]  # fmt: skip
    with_confidence = _signed_anew(with_confidence)
    with_zeros = copy.deepcopy(with_confidence)  # 0.0 is written as 0 too
    with_zeros["coverage"]["critical"] = with_zeros["excluded"][0]["confidence"] = 0.0
    with_zeros = _signed_anew(with_zeros)

    for signed in (view, with_confidence, with_zeros):
        rewritten = _integral_fractions_as_ints(copy.deepcopy(signed))
        assert type(rewritten["coverage"]["critical"]) is int

        assert verify_view(rewritten, SIGNER, NOW).item_ids == ("o", "f_o", "c")


@pytest.mark.parametrize(
    "change",
    [
        lambda v: v["coverage"].update(critical=0),
        lambda v: v["coverage"].update(obligations=True),
        lambda v: v.update(epoch=float(v["epoch"])),
        lambda v: v.update(coverage=1),
    ],
    ids=[
        "coverage 1.0 rewritten as 0",
        "coverage as a boolean",
        "an integer as a float",
        "coverage no object",
    ],
)
def test_a_fraction_read_back_as_a_float_makes_no_other_change_verify(
    change: Callable[[dict[str, Any]], object],
) -> None:
    view = _integral_fractions_as_ints(issued())
    change(view)

    with pytest.raises(ViewRejected, match="signature does not match"):
        verify_view(view, SIGNER, NOW)
