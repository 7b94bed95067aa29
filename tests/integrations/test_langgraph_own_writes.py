"""LangGraph: the agent's own writes after its return are shown, unless a return would not
hold them: resting on what fell, or for others' eyes only (probes: both were shown)."""

from langgraph.store.memory import InMemoryStore

from readmit.integrations.langgraph import ReadmitStore, notice
from readmit.integrations.langgraph.keys import identity, parse
from readmit.integrations.team import Member

FLIGHT = ("plans", "x")


def test_a_write_on_a_teammates_note_whose_premise_fell_is_not_read(
    three: dict[str, Member],
) -> None:
    """a notes a pickup for c resting on its flight plan, b replaces the plan, then c books
    a taxi on the pickup: c never read the pickup, whose premise fell before the taxi."""
    inner = InMemoryStore()
    a, b, c = (ReadmitStore(inner, three[x]) for x in "abc")
    three["c"].depart()
    three["c"].return_()
    a.put(FLIGHT, "flight", {"text": "Meeting in Room 101 of Sunrise Hotel."})
    for_c = {"readers": {"principals": ["other"]}}
    on_flight = {"depends_on": [{"path": [*FLIGHT, "flight"]}], **for_c}
    a.put(("notes",), "pickup", {"text": "Taxi from Harbor Inn.", "_readmit": on_flight})
    b.put(FLIGHT, "flight", {"text": "Meeting in Room 101 of Grand Plaza.", "_readmit": for_c})

    on_pickup = {"depends_on": [{"path": ["notes", "pickup"]}]}
    c.put(("trip",), "taxi", {"text": "Car to the taxi stand.", "_readmit": on_pickup})

    assert inner.get(("trip",), "taxi") is not None
    assert c.get(("trip",), "taxi") is None
    assert c.search(("trip",)) == []
    three["c"].depart()
    left = {e["key"]: e["reason"] for e in notice(three["c"].return_())["left_out"]}
    assert left["taxi"] == "premise_invalidated"


def test_a_write_for_other_eyes_only_is_not_read_back(three: dict[str, Member]) -> None:
    """c writes a note only the team may read: a return does not hold it (Mem0 and the
    Agents SDK remove such a statement as ``unauthorized``)."""
    inner = InMemoryStore()
    c = ReadmitStore(inner, three["c"])
    three["c"].depart()
    three["c"].return_()

    for_team = {"readers": {"principals": ["team"]}}
    c.put(("notes",), "dinner", {"text": "Pickup at 10:30.", "_readmit": for_team})
    c.put(("notes",), "lunch", {"text": "Lunch at noon."})

    assert c.get(("notes",), "dinner") is None
    assert [i.key for i in c.search(("notes",))] == ["lunch"]
    three["c"].depart()
    decided = three["c"].return_()
    assert "dinner" not in {e["key"] for e in notice(decided)["left_out"]}
    assert [i.text for i in decided.context.items] == ['"notes/lunch" = {"text": "Lunch at noon."}']


def test_a_write_on_a_teammates_note_resting_on_another_principals_stale_note_is_not_read(
    three: dict[str, Member],
) -> None:
    """a's dinner note (the team's alone) was found stale by a's return before c's: no item
    of c's return. b's pickup for c rests on it, and c's taxi on the pickup: both fell
    before they were written (a differential fuzz: the taxi was shown)."""
    inner = InMemoryStore()
    a, b, c = (ReadmitStore(inner, three[x]) for x in "abc")
    a.put(("trip",), "hotel", {"text": "Sunrise Hotel is booked, refundable."})
    a.put(("notes",), "dinner", {"text": "Dinner at Sunrise Hotel at eight."})
    three["a"].depart()
    [booked] = [i.id for i in three["a"].visible() if parse(i.key) == identity(("trip",), "hotel")]
    three["a"].revoke([booked], "Sunrise cancelled")
    three["a"].return_()  # finds the dinner stale
    three["c"].depart()
    three["c"].return_()
    for_c = {"readers": {"principals": ["other"]}}
    on_dinner = {"depends_on": [{"path": ["notes", "dinner"]}], **for_c}
    b.put(("notes",), "pickup", {"text": "Pickup after the dinner.", "_readmit": on_dinner})

    on_pickup = {"depends_on": [{"path": ["notes", "pickup"]}]}
    c.put(("notes",), "taxi", {"text": "Taxi to the pickup.", "_readmit": on_pickup})

    assert c.get(("notes",), "taxi") is None
    three["c"].depart()
    left = {e["key"]: e["reason"] for e in notice(three["c"].return_())["left_out"]}
    assert left == {"pickup": "premise_invalidated", "taxi": "premise_invalidated"}


def test_a_write_on_what_rests_on_an_item_of_c_the_return_excluded_falls_with_it(
    three: dict[str, Member],
) -> None:
    """a's pickup (the team's alone) rests on b's dinner: c's return holds it, excluded as
    another principal's. b then revokes the dinner, and states a taxi for everyone on the
    pickup; c's car on the taxi falls with the dinner, as a return says."""
    inner = InMemoryStore()
    a, b, c = (ReadmitStore(inner, three[x]) for x in "abc")
    three["c"].depart()
    b.put(("trip",), "dinner", {"text": "Dinner at eight.", "_readmit": {"readers": "*"}})
    on_dinner = {"depends_on": [{"path": ["trip", "dinner"]}]}
    a.put(("notes",), "pickup", {"text": "Pickup at 7:30.", "_readmit": on_dinner})
    three["c"].return_()
    [dinner] = [i.id for i in three["b"].visible() if parse(i.key) == identity(("trip",), "dinner")]
    three["b"].revoke([dinner], "cancelled")
    on_pickup = {"depends_on": [{"path": ["notes", "pickup"]}], "readers": "*"}
    b.put(("trip",), "taxi", {"text": "Taxi to the pickup.", "_readmit": on_pickup})

    on_taxi = {"depends_on": [{"path": ["trip", "taxi"]}]}
    c.put(("trip",), "car", {"text": "A car after the taxi.", "_readmit": on_taxi})

    assert c.get(("trip",), "car") is None
    three["c"].depart()
    left = {e["key"]: e["reason"] for e in notice(three["c"].return_())["left_out"]}
    assert left["car"] == "premise_invalidated"
