"""Standing verdicts exclude what they cover, and show their evidence only where C holds it;
a split is remembered per pool, verdicts, Δ and C, and never serves a return that differs."""

from dataclasses import replace

from builders import context, item, revoke
from readmit.admission.context import Standing
from readmit.admission.invalidation.standing import apply_standing
from readmit.reasons import Reason

A, B, C = item("a"), item("b"), item("c")
CTX = context((A, B, C), delta=(revoke("x", 3),))


def verdict(on: str, evidence: str) -> Standing:
    return Standing(
        item=on,
        evidence=(evidence,),
        verifier="builtin",
        confidence=1.0,
        detail="builtin: it names what was withdrawn",
        decided_epoch=3,
    )


def test_each_return_is_split_by_its_own_verdicts() -> None:
    first = replace(CTX, standing={"a": verdict("a", "rv-x")})
    apply_standing([A, B, C], first)

    kept, excluded = apply_standing([A, B, C], replace(CTX, standing={"b": verdict("b", "ev-b")}))

    assert kept == [A, C]
    assert [(e.item, e.reason, e.evidence) for e in excluded] == [
        ("b", Reason.IMPLICITLY_INVALIDATED, ("ev-b",))
    ]


def test_evidence_c_does_not_hold_is_left_out() -> None:
    """``ev-c`` is the receipt of c: shown while C holds c, not once it does not."""
    standing = {"a": verdict("a", "ev-c")}
    apply_standing([A, B, C], replace(CTX, standing=standing))

    _, excluded = apply_standing([A, B, C], replace(CTX, items=(A, B), standing=standing))

    assert [(e.item, e.evidence) for e in excluded] == [("a", ())]  # c's receipt is not in C


def test_evidence_delta_no_longer_holds_is_left_out() -> None:
    standing = {"a": verdict("a", "rv-x")}
    apply_standing([A, B, C], replace(CTX, standing=standing))

    _, excluded = apply_standing([A, B, C], replace(CTX, delta=(), standing=standing))

    assert [(e.item, e.evidence) for e in excluded] == [("a", ())]


def test_a_split_made_for_one_reader_never_serves_another() -> None:
    """A mutation review: the memo's inputs without the reader handed the split made for
    the reader who confirmed a verdict (its wording) to one of another principal."""
    mine = (CTX.returner.principal, CTX.returner.role)
    private = replace(verdict("a", "rv-x"), detail="builtin: it quotes a private note", reader=mine)
    first = replace(CTX, standing={"a": private})
    other = replace(first, returner=replace(first.returner, principal="neighbours"))

    [own] = apply_standing([A, B, C], first)[1]
    [theirs] = apply_standing([A, B, C], other)[1]

    assert own.detail == "confirmed at epoch 3 by builtin: it quotes a private note"
    assert theirs.detail == "confirmed earlier by builtin: the events given invalidated it"
