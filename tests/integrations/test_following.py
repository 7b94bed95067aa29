"""`readmit.integrations.following`: what teammates withdrew after a return (store rules)."""

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from builders import KEY
from readmit.admission.invalidation.implicit import Pair, Verdict
from readmit.ahead import judge_ahead
from readmit.errors import InvalidInput, VerifierUnavailable
from readmit.events import Assert, ItemDraft, Supersede
from readmit.integrations.following import REPLACED_BY_TEAMMATE, Following
from readmit.integrations.judging import judge
from readmit.integrations.team import Member, Removal, removals
from readmit.model import Agent
from readmit.policy import Policy
from readmit.signing import HmacSha256Signer
from readmit.store import SqlStore, open_store
from readmit.testing import FunctionVerifier
from readmit.verifiers.builtin import TermVerifier


@pytest.fixture
def members(tmp_path: Path) -> Iterator[dict[str, Member]]:
    """a1 and a2 of the family, x1 of the agency."""
    store: SqlStore = open_store(f"sqlite:///{tmp_path}/r.db")
    agents = [("a1", "family"), ("a2", "family"), ("x1", "agency")]
    store.create_workspace("trip", [Agent(id=a, principal=p, role="planner") for a, p in agents])
    signer = HmacSha256Signer(KEY)
    yield {a: Member(store, "trip", a, signer) for a, _ in agents}
    store.close()


def _state(member: Member, n: int, text: str, **fields: object) -> None:
    item = ItemDraft(id=f"{member.agent}-{n}", text=text, key="hotel", **fields)  # type: ignore[arg-type]
    member.record(
        [Assert(id=f"e-{member.agent}-{n}", at=member.clock(), author=member.agent, item=item)]
    )


def test_a_keyed_statement_withdraws_only_what_its_author_may_read(
    members: dict[str, Member],
) -> None:
    """The agency's newer hotel cannot replace the family's (the writer's rule); a2's
    replaces both, as the store does."""
    a1 = members["a1"]
    _state(a1, 1, "The hotel is the Hilton.")
    a1.depart()
    following = Following(a1.return_())

    _state(members["x1"], 1, "The hotel is the Marriott.", principals=frozenset({"*"}))
    assert following.withdrawn(a1) == []
    assert [i.id for i in a1.visible() if i.key == "hotel"] == ["a1-1", "x1-1"]

    _state(members["a2"], 1, "The hotel is the Ritz.")
    assert [(r.item, r.reason) for r in following.withdrawn(a1)] == [
        ("a1-1", "stale_or_superseded"),
        ("x1-1", "stale_or_superseded"),
    ]
    assert [i.id for i in a1.visible() if i.key == "hotel"] == ["a2-1"]


def test_an_item_of_c_goes_with_the_keyed_statement_that_replaces_it_not_the_first(
    members: dict[str, Member],
) -> None:
    """x1 may not read a1's hotel: its statement under the key replaces nothing of C;
    a2's replaces both, and names both (the store's record says which went)."""
    a1 = members["a1"]
    _draft(a1, "a1-1", "The hotel is the Hilton.", key="hotel")
    a1.depart()
    following = Following(a1.return_())
    following.withdrawn(a1)
    everyone = {"principals": frozenset({"*"})}
    _draft(members["x1"], "x1-1", "The hotel is the Marriott.", key="hotel", **everyone)
    _draft(members["a2"], "a2-1", "The hotel is the Ritz.", key="hotel")

    assert [(r.item, r.reason, r.detail) for r in following.withdrawn(a1)] == [
        ("a1-1", "stale_or_superseded", REPLACED_BY_TEAMMATE),
        ("x1-1", "stale_or_superseded", REPLACED_BY_TEAMMATE),
    ]


def test_the_agents_own_item_only_another_principal_reads_is_withdrawn_from_it(
    members: dict[str, Member],
) -> None:
    """As a return holds it (the agent may not read it): a process that followed the log
    served it, one restarted after a return hid it (a probe)."""
    a1 = members["a1"]
    a1.depart()
    following = Following(a1.return_())

    theirs = ItemDraft(id="a1-9", text="The agency's fee is 5%.", principals=frozenset({"agency"}))
    a1.record([Assert(id="e-a1-9", at=a1.clock(), author="a1", item=theirs)])

    assert following.withdrawn(a1) == [Removal("a1-9", "unauthorized", "")]
    assert "a1-9" not in {i.id for i in a1.visible()}


def _draft(member: Member, item_id: str, text: str, **fields: object) -> None:
    item = ItemDraft(id=item_id, text=text, **fields)  # type: ignore[arg-type]
    member.record([Assert(id=f"e-{item_id}", at=member.clock(), author=member.agent, item=item)])


def test_what_rests_on_an_item_the_agent_itself_supersedes_falls(
    members: dict[str, Member],
) -> None:
    """The agent's own supersession (a Mem0 update, or one over HTTP) withdrew its premise,
    and the layer served what rests on it until the next return excluded it (a probe);
    over HTTP the layer held the superseded text too, and served it (a probe). A Mem0
    layer shows its own newer version over the removal (`own`)."""
    a1, a2 = members["a1"], members["a2"]
    _draft(a2, "hotel", "The team hotel is the Hilton.")
    _draft(a2, "pickup", "Pickup at 8:00 from the Hilton.", depends_on=frozenset({"hotel"}))
    a1.depart()
    following = Following(a1.return_())

    new = ItemDraft(id="hotel-2", text="The team hotel is the Ritz.")
    a1.record([Supersede(id="s", at=a1.clock(), author="a1", target="hotel", item=new)])

    assert [(r.item, r.reason, r.detail) for r in following.withdrawn(a1)] == [
        ("hotel", "stale_or_superseded", "superseded by your later statement"),
        ("pickup", "premise_invalidated", "depends on hotel, which was withdrawn"),
    ]
    assert following.own == {"hotel-2"}


def test_what_rests_on_a_premise_it_never_read_falls_when_its_key_is_stated_again(
    members: dict[str, Member],
) -> None:
    """The agency's own hotel, which a1 may not read, carries a pickup a1 may read; the
    agency states its hotel again under the key. The return outside C's items held the
    premise without its key, and the layer served the pickup on (a probe)."""
    a1, x1 = members["a1"], members["x1"]
    _draft(x1, "x-hotel", "The hotel is the Hilton.", key="agency-hotel")
    pickup = {"principals": frozenset({"*"}), "depends_on": frozenset({"x-hotel"})}
    _draft(x1, "x-pickup", "Pickup at 8:00 from the Hilton.", **pickup)
    a1.depart()
    following = Following(a1.return_())
    assert "x-pickup" in {i.id for i in following.decided.context.items}

    _draft(x1, "x-hotel-2", "The hotel is the Ritz.", key="agency-hotel")

    assert [(r.item, r.reason) for r in following.withdrawn(a1)] == [
        ("x-pickup", "premise_invalidated"),  # the agency's hotels, which it may not read,
        ("x-hotel-2", "unauthorized"),  # the old one never named, the new one kept from it
    ]


def test_what_rests_on_a_premise_known_only_from_the_stores_chains_falls_with_its_key(
    members: dict[str, Member],
) -> None:
    """x1 states a pickup on the agency's contract (a1 may not read it; no item of a1's
    return) after a1 returned; the layer asked the store for the contract's chain. x1
    states the contract again under its key: the store withdraws it and the next return
    excludes the pickup. The layer knew the contract without its key, and served the
    pickup on (a probe)."""
    a1, x1 = members["a1"], members["x1"]
    _draft(x1, "q", "Agency contract Q is signed.", key="agency-q")
    a1.depart()
    following = Following(a1.return_())
    following.withdrawn(a1)
    everyone = {"principals": frozenset({"*"}), "depends_on": frozenset({"q"})}
    _draft(x1, "d", "Pickup at 8:00 from the hotel.", **everyone)
    assert following.withdrawn(a1) == []

    _draft(x1, "q2", "Agency contract Q is cancelled.", key="agency-q")

    assert [(r.item, r.reason) for r in following.withdrawn(a1)] == [
        ("q2", "unauthorized"),
        ("d", "premise_invalidated"),  # the contracts, which it may not read, never named
    ]
    a1.depart()
    assert removals(a1.return_())["d"].reason == "premise_invalidated"


@pytest.mark.parametrize("how", ["revoked", "stated again under its key"])
def test_what_rests_on_a_chain_of_premises_outside_c_falls_and_those_are_never_named(
    members: dict[str, Member], how: str
) -> None:
    """d (a1 may read it) rests on p, p on q, both the agency's own. The walk knew only
    d's premises: q withdrawn, d was served on, and q named to a1 (a review)."""
    a1, x1 = members["a1"], members["x1"]
    _draft(x1, "q", "Agency contract Q is signed.", key="agency-q")
    _draft(x1, "p", "The agency booked the hotel under Q.", depends_on=frozenset({"q"}))
    everyone = {"principals": frozenset({"*"}), "depends_on": frozenset({"p"})}
    _draft(x1, "d", "Pickup at 8:00 from the hotel.", **everyone)
    a1.depart()
    following = Following(a1.return_())

    if how == "revoked":
        x1.revoke(["q"], "void")
    else:
        _draft(x1, "q2", "Agency contract Q is cancelled.", key="agency-q")

    assert [(r.item, r.reason) for r in following.withdrawn(a1) if r.item != "q2"] == [
        ("d", "premise_invalidated")
    ]


def test_a_verdict_another_agents_return_stores_after_the_return_is_followed(
    members: dict[str, Member],
) -> None:
    """A verdict binds every later return, any agent's: a2's return finds a1's dinner
    stale after a1 returned, and a1's memory layer served it until a1 returned again."""
    a1, a2 = members["a1"], members["a2"]
    _draft(a2, "h", "Sunrise Hotel is booked.")
    _draft(a1, "d", "Dinner at Sunrise Hotel at eight.")
    a2.depart()
    a1.depart()
    following = Following(a1.return_())
    a2.revoke(["h"], "the booking fell through")
    assert following.withdrawn(a1) == [Removal("h", "revoked", "the booking fell through")]

    assert "d" in {e.item for e in a2.return_().decision.decided}  # a standing verdict
    assert following.withdrawn(a1) == [
        Removal("d", "implicitly_invalidated", "confirmed after your return by builtin")
    ]  # not the verifier's words, which may name what a1 may not read (the next return's do)
    assert following.withdrawn(a1) == []  # named once
    a1.depart()
    assert removals(a1.return_())["d"].reason == "implicitly_invalidated"  # as a return says


def test_a_verdict_decided_before_the_return_and_stored_after_it_is_followed(
    members: dict[str, Member],
) -> None:
    """Judging ahead of a2's return reads its context, a1 (which judges nothing itself)
    returns meanwhile at a later epoch, and the verdict is stored after: decided at an
    epoch before a1's return, it is news to a1's layer (m031 keeps the log's epoch when
    it was stored)."""
    a1, a2 = replace(members["a1"], verifier=None), members["a2"]
    _draft(a2, "h", "Sunrise Hotel is booked.")
    _draft(a1, "d", "Dinner at Sunrise Hotel at eight.")
    a2.depart()
    a2.revoke(["h"], "the booking fell through")
    a1.depart()  # no verdict yet: d is in its checkpoint
    returned: list[Following] = []

    def a1_returns() -> None:
        if not returned:
            _draft(members["x1"], "m", "The museum opens at nine.")
            returned.append(Following(a1.return_()))

    judgment = judge_ahead(
        a2.store, "trip", "a2", task="*", purpose="*", policy=Policy(),
        verifier=TermVerifier(), signer=HmacSha256Signer(KEY), between=a1_returns,
    )  # fmt: skip

    following = returned[0]
    assert [e.item for e in judgment.confirmed] == ["d"]
    assert "d" in {i.id for i in following.decided.context.items}
    assert "d" not in {e.item for e in following.decided.decision.decided}  # admitted
    assert [(r.item, r.reason) for r in following.withdrawn(a1)] == [
        ("d", "implicitly_invalidated")
    ]


def test_what_the_agent_states_on_an_item_its_return_found_stale_is_withdrawn_with_it(
    members: dict[str, Member],
) -> None:
    """The return excluded the dinner as stale; a taxi a1 then books on it was served, where
    a return excludes it as resting on what fell (a review)."""
    a1, a2 = members["a1"], members["a2"]
    _draft(a2, "h", "Sunrise Hotel is booked.")
    _draft(a1, "d", "Dinner at Sunrise Hotel at eight.")
    a1.depart()
    a2.revoke(["h"], "the booking fell through")
    following = Following(a1.return_())
    assert removals(following.decided)["d"].reason == "implicitly_invalidated"
    assert following.withdrawn(a1) == []  # the return named it

    _draft(a1, "y", "Book a taxi to the dinner.", depends_on=frozenset({"d"}))
    assert [(r.item, r.reason) for r in following.withdrawn(a1)] == [("y", "premise_invalidated")]
    a1.depart()
    assert removals(a1.return_())["y"].reason == "premise_invalidated"


def test_judging_a_present_agent_stores_what_its_layer_then_hides(
    members: dict[str, Member],
) -> None:
    """a2 revokes the hotel while a1 is present: the layer names the hotel, not the dinner
    resting on it in words only, until `judge` judges a1's return again (the return's
    screening spared: only the revocation is judged)."""
    a1, a2 = members["a1"], members["a2"]
    _draft(a2, "h", "Sunrise Hotel is booked.")
    _draft(a1, "d", "Dinner at Sunrise Hotel at eight.")
    a1.depart()
    following = Following(a1.return_())
    a2.revoke(["h"], "the booking fell through")
    assert [r.item for r in following.withdrawn(a1)] == ["h"]

    judgment = judge(a1)

    assert judgment is not None
    assert ([e.item for e in judgment.confirmed], judgment.calls) == (["d"], 1)
    assert following.withdrawn(a1) == [
        Removal("d", "implicitly_invalidated", "confirmed after your return by builtin")
    ]
    assert judge(replace(a1, verifier=None)) is None
    with pytest.raises(InvalidInput, match="'a2' has not returned"):
        judge(a2)


def test_what_a_teammate_states_on_another_principals_stale_item_falls(
    members: dict[str, Member],
) -> None:
    """x1's meeting (the agency's alone) was found stale by x1's return before a1's, and
    is no item of a1's return; the flight x1 then states on it for everyone was served
    (a differential fuzz): the store's rule says the premise fell."""
    a1, a2, x1 = members["a1"], members["a2"], members["x1"]
    everyone = frozenset({"*"})
    _draft(a2, "h", "Sunrise Hotel is booked.", principals=everyone)
    _draft(x1, "m", "Agency meeting at Sunrise Hotel.")
    x1.depart()
    a1.depart()  # its checkpoint does not hold the agency's meeting
    a2.revoke(["h"], "the booking fell through")
    assert "m" in {e.item for e in x1.return_().decision.decided}  # a verdict on it
    following = Following(a1.return_())
    assert "m" not in following.decided.context.by_id
    following.withdrawn(a1)

    _draft(x1, "f", "Flight to the agency meeting.", principals=everyone, depends_on={"m"})

    assert [(r.item, r.reason) for r in following.withdrawn(a1)] == [("f", "premise_invalidated")]
    a1.depart()
    assert removals(a1.return_())["f"].reason == "premise_invalidated"


def test_what_is_stated_on_a_stale_item_first_met_on_a_chain_falls(
    members: dict[str, Member],
) -> None:
    """x1's meeting (the agency's alone) was found stale before a1's return, and the
    agency's note rests on it; neither is an item of a1's return. A taxi stated on the
    note made the layer ask for the note's chain, which holds the meeting; a flight then
    stated on the meeting was served (a differential fuzz): the store named only the note
    as fallen, and the layer asked nothing more of the meeting, which it now knew."""
    a1, a2, x1 = members["a1"], members["a2"], members["x1"]
    everyone = frozenset({"*"})
    _draft(a2, "h", "Sunrise Hotel is booked.", principals=everyone)
    _draft(x1, "m", "Agency meeting at Sunrise Hotel.")
    _draft(x1, "n", "Agency note on the meeting.", depends_on={"m"})
    x1.depart()
    a1.depart()
    a2.revoke(["h"], "the booking fell through")
    assert "m" in {e.item for e in x1.return_().decision.decided}  # a verdict on it
    following = Following(a1.return_())
    context = following.decided.context
    assert not {"m", "n"} & (context.by_id.keys() | context.outside.keys())
    following.withdrawn(a1)
    _draft(x1, "t", "Taxi for the agency note.", principals=everyone, depends_on={"n"})
    assert [(r.item, r.reason) for r in following.withdrawn(a1)] == [("t", "premise_invalidated")]

    _draft(x1, "f", "Flight to the agency meeting.", principals=everyone, depends_on={"m"})

    assert [(r.item, r.reason) for r in following.withdrawn(a1)] == [("f", "premise_invalidated")]
    a1.depart()
    assert removals(a1.return_())["f"].reason == "premise_invalidated"


def test_what_a_teammate_states_on_an_unreadable_item_resting_on_a_stale_one_falls(
    members: dict[str, Member],
) -> None:
    """The agency's note rests on a1's dinner; a1's return excludes the note (a1 may not
    read it) and finds the dinner stale. A taxi x1 states on the note after it was served:
    the note fell with the dinner (a differential fuzz)."""
    a1, a2, x1 = members["a1"], members["a2"], members["x1"]
    everyone = frozenset({"*"})
    _draft(a2, "h", "Sunrise Hotel is booked.", principals=everyone)
    _draft(a1, "d", "Dinner at Sunrise Hotel at eight.", principals=everyone)
    a1.depart()
    _draft(x1, "n", "The agency pays for the dinner.", depends_on={"d"})
    a2.revoke(["h"], "the booking fell through")
    following = Following(a1.return_())
    assert removals(following.decided)["n"].reason == "unauthorized"
    assert removals(following.decided)["d"].reason == "implicitly_invalidated"
    following.withdrawn(a1)

    _draft(x1, "t", "Taxi after the dinner.", principals=everyone, depends_on={"n"})

    assert [(r.item, r.reason) for r in following.withdrawn(a1)] == [("t", "premise_invalidated")]
    a1.depart()
    assert removals(a1.return_())["t"].reason == "premise_invalidated"


def _down(pair: Pair) -> Verdict:
    raise VerifierUnavailable("down")


def test_what_the_agent_states_on_an_item_it_could_not_judge_is_served(
    members: dict[str, Member],
) -> None:
    """The verifier was down at the return: the dinner is withheld as unjudged, not found
    stale, and a taxi stated on it since is no more fallen than it is (a review: the layer
    withdrew it, where a return that judges admits both)."""
    a1, a2 = replace(members["a1"], verifier=FunctionVerifier(_down)), members["a2"]
    _draft(a2, "h", "Sunrise Hotel is booked.")
    _draft(a1, "d", "Dinner at Sunrise Hotel at eight.")
    a1.depart()
    _draft(a2, "h2", "Sunrise Hotel booking moved to the terrace.")
    following = Following(a1.return_())
    assert removals(following.decided)["d"].reason == "verifier_unavailable"
    following.withdrawn(a1)

    _draft(a1, "z", "Book a taxi to the dinner.", depends_on={"d"})

    assert following.withdrawn(a1) == []
    judging = replace(a1, verifier=TermVerifier())
    judging.depart()
    assert {"d", "z"} <= {i.id for i in judging.return_().decision.items}  # type: ignore[union-attr]


def test_a_copy_of_a_walk_goes_on_apart_from_it(members: dict[str, Member]) -> None:
    """A LangGraph lens whose view expired goes on with a copy of its walk: what either
    reads after is not taken from the other."""
    a1, a2 = members["a1"], members["a2"]
    _draft(a2, "h", "Sunrise Hotel is booked.", principals=frozenset({"*"}))
    a1.depart()
    following = Following(a1.return_())
    copied = following.copy()

    a2.revoke(["h"], "the booking fell through")

    assert [r.item for r in copied.withdrawn(a1)] == ["h"]
    assert following.gone == []
    assert [r.item for r in following.withdrawn(a1)] == ["h"]
