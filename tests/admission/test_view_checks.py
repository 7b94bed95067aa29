"""A signed view is checked beyond its signature: its signature block's algorithm, and the
digest of every item entry, even one the right key signed."""

import copy
from dataclasses import replace
from typing import Any

import pytest

from builders import KEY, NOW, context, item, obligation
from readmit.admission import admit
from readmit.admission.decision import Issued
from readmit.admission.entries import entry_digest
from readmit.admission.view import expose, sign_view, verify_view
from readmit.errors import ViewRejected
from readmit.model import Validity
from readmit.policy import Policy
from readmit.signing import HmacSha256Signer

OBL = obligation("o", requires=("d_c",), critical=("d_c",))
C = item("c", "Quiet hotel near the station.", supports=("d_c",))
SIGNER = HmacSha256Signer(KEY)


def issued() -> dict[str, Any]:
    decision = admit(
        context((C,), obligations=(OBL,)), policy=Policy(), verifier=None, signer=SIGNER
    )
    assert isinstance(decision, Issued)
    return decision.signed


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
