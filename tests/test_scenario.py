"""Scenario files: every valid file replays, bad ones are rejected by event before anything runs."""

import ast
import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import readmit.scenario
from readmit.errors import InvalidEvent, InvalidInput
from readmit.replay import check_references, replay
from readmit.scenario import Scenario, load_scenario, read_scenario, unknown_readers
from readmit.signing import HmacSha256Signer
from readmit.store.sqlite import SQLiteStore

Mutation = Callable[[dict[str, Any]], None]


def validated(data: object) -> Scenario:
    """Load ``data`` and check its references, as `replay` does before it writes."""
    scenario = load_scenario(data)
    check_references(scenario)
    return scenario


def event(index: int) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda s: s["events"][index]


@dataclass(frozen=True)
class Case:
    id: str
    mutate: Mutation
    names: str
    """The event (or field) the message must name."""
    problem: str


def _set(index: int, **values: Any) -> Mutation:
    return lambda s: s["events"][index].update(values)


def _item(index: int, **values: Any) -> Mutation:
    return lambda s: s["events"][index]["item"].update(values)


def _same_ids(s: dict[str, Any]) -> None:
    for e in s["events"][1:3]:
        e["id"] = "same"


def _named_like_a_position(s: dict[str, Any]) -> None:
    s["events"][0]["id"] = "e3"
    s["events"][3].pop("id", None)


CASES = [
    Case("unknown op", _set(2, op="explode"), "e2", "unknown op 'explode'"),
    Case("missing op", lambda s: s["events"][2].pop("op"), "e2", "unknown op None"),
    Case("unknown field", _set(2, colour="red"), "e2", "colour: unknown field"),
    Case("unknown item field", _item(2, colour="red"), "e2", "item.colour: unknown field"),
    Case(
        "misspelled item field",
        _item(2, support=["d_h"]),
        "e2",
        "item.support: unknown field (did you mean 'supports'?)",
    ),
    Case(
        "misspelled premise field",
        _item(3, depends=["h1"]),
        "e3",
        "item.depends: unknown field (did you mean 'depends_on'?)",
    ),
    Case("unknown kind", _item(2, kind="rumour"), "e2", "item.kind"),
    Case("empty text", _item(2, text=""), "e2", "item.text"),
    Case("blank text", _item(2, text=" \n "), "e2", "the text is blank"),
    Case("invisible text", _item(2, text="\u202e\u200b "), "e2", "item.text: must say something"),
    Case(
        "blank frontier",
        lambda s: s["events"][4]["obligation"]["frontier"].update(text=" "),
        "e4",
        "the text is blank",
    ),
    Case("naive time", _set(2, at="2026-05-01T08:10:00"), "e2", "at"),
    Case(
        "time going backwards",
        _set(3, at="2026-04-01T00:00:00Z"),
        "e3",
        "time goes backwards (2026-04-01T00:00:00Z is before 2026-05-01T",
    ),
    Case("unknown author", _set(2, author="A9"), "e2", "unknown author 'A9'"),
    Case("unknown agent departs", _set(8, agent="A9"), "e8", "unknown agent 'A9'"),
    Case("unknown target", _set(9, target="h9"), "e9", "unknown target item 'h9'"),
    Case(
        "missing evidence",
        _item(17, cites=["src_none"]),
        "e17",
        "cites missing evidence 'src_none'",
    ),
    Case("dangling premise", _item(3, depends_on=["zz"]), "e3", "unknown item 'zz'"),
    Case("duplicate item id", _item(3, id="h0"), "e3", "'h0' is already used"),
    Case(
        "duplicate event id",
        _same_ids,
        "same",
        "duplicate event id: events[1] and events[2]",
    ),
    Case(
        "an id that another event is given by its position",
        _named_like_a_position,
        "e3",
        "duplicate event id: events[0] and events[3] (an event given no id is named e<its",
    ),
    Case(
        "experience with unknown source",
        lambda s: s["events"][5]["experience"].update(source="nope"),
        "e5",
        "no known item",
    ),
    Case(
        "return before any departure",
        lambda s: s["events"].insert(
            0,
            {
                "at": "2026-05-01T07:00:00Z",
                "op": "return",
                "agent": "A1",
                "task": "t",
                "purpose": "p",
            },
        ),
        "e0",
        "has not departed",
    ),
    Case(
        "critical not in requires",
        lambda s: s["events"][4]["obligation"].update(critical=["d_zz"]),
        "e4",
        "subset",
    ),
    Case("bad policy override", _set(15, policy={"gamma": 2}), "e15", "gamma"),
    Case("unknown policy override", _set(15, policy={"speed": 2}), "e15", "speed"),
    Case(
        "revoke twice",
        lambda s: s["events"].insert(10, copy.deepcopy(s["events"][9])),
        "e10",
        "no longer active",
    ),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_bad_scenarios_name_the_event_and_the_problem(case: Case, travel: dict[str, Any]) -> None:
    case.mutate(travel)

    with pytest.raises(InvalidEvent) as raised:
        validated(travel)

    assert raised.value.event_id == case.names
    assert case.problem in raised.value.problem


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda s: s.update(format="readmit.scenario/2"), "format"),
        (lambda s: s.pop("workspace"), "workspace"),
        (lambda s: s.update(extra=1), "extra: unknown field"),
        (lambda s: s.update(polcy={}), r"polcy: unknown field \(did you mean 'policy'\?\)"),
        (
            lambda s: s.update(agent=s.pop("agents")),
            r"agent: unknown field \(did you mean 'agents'\?\)",
        ),
        (
            lambda s: s["agents"][0].update(rol=s["agents"][0].pop("role")),
            r"agents\.0\.rol: unknown field \(did you mean 'role'\?\)",
        ),
        (lambda s: s["agents"].append(dict(s["agents"][0])), "duplicate agent"),
        (lambda s: s.update(agents=[]), "agents: List should have at least 1 item"),
        (lambda s: s["policy"].update(on_incomplete="shrug"), "on_incomplete"),
        (lambda s: s.update(events="nope"), "events"),
    ],
)
def test_bad_scenario_headers_are_rejected(
    mutate: Mutation, message: str, travel: dict[str, Any]
) -> None:
    mutate(travel)

    with pytest.raises(InvalidInput, match=message):
        load_scenario(travel)


def test_a_file_that_is_not_json_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text("{not json", encoding="utf-8")

    with pytest.raises(InvalidInput, match="not JSON"):
        read_scenario(path)


@pytest.mark.parametrize("data", [[], "scenario", None])
def test_a_file_that_holds_no_object_is_told_what_a_scenario_is(data: object) -> None:
    with pytest.raises(
        InvalidInput, match=r"^a scenario is one JSON object, \{\"format\""
    ) as refused:
        load_scenario(data)

    assert "_ScenarioIn" not in str(refused.value)


def test_the_spec_example_is_a_valid_scenario(tmp_path: Path) -> None:
    spec_example = {
        "format": "readmit.scenario/1",
        "workspace": "family-trip",
        "agents": [
            {"id": "A1", "principal": "family", "role": "itinerary"},
            {"id": "A2", "principal": "family", "role": "booking"},
        ],
        "policy": {
            "max_items": 8,
            "max_chars": 4096,
            "gamma": 1.0,
            "rho": 1.0,
            "threshold": 0.65,
            "on_incomplete": "block",
        },
        "events": [
            {
                "at": "2026-05-01T08:00:00Z",
                "author": "A2",
                "op": "assert",
                "item": {
                    "id": "h0",
                    "text": "Sunrise Hotel is booked, refundable, $268 in total.",
                    "kind": "fact",
                    "key": "hotel-booking",
                    "supports": ["d_h"],
                },
            },
            {"at": "2026-05-01T09:00:00Z", "op": "depart", "agent": "A1"},
            {
                "at": "2026-05-02T10:00:00Z",
                "author": "A2",
                "op": "revoke",
                "target": "h0",
                "why": "Sunrise cancelled the reservation for maintenance.",
            },
            {
                "at": "2026-05-03T12:00:00Z",
                "op": "return",
                "agent": "A1",
                "task": "trip",
                "purpose": "itinerary",
            },
        ],
    }
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec_example), encoding="utf-8")

    scenario = read_scenario(path)

    assert [s.op for s in scenario.steps] == ["assert", "depart", "revoke", "return"]


REFERENCE_CASES = {"unknown author", "unknown agent departs", "unknown target", "missing evidence"}
REFERENCE_CASES |= {"dangling premise", "duplicate item id", "experience with unknown source"}
REFERENCE_CASES |= {"return before any departure", "revoke twice"}


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=c.id) for c in CASES if c.id in REFERENCE_CASES]
)
def test_references_are_the_stores_to_judge_and_replay_judges_them_before_writing(
    case: Case, travel: dict[str, Any]
) -> None:
    case.mutate(travel)
    scenario = load_scenario(travel)  # parsing alone needs no store
    store = SQLiteStore(":memory:")

    with pytest.raises(InvalidEvent) as raised:
        replay(scenario, store, verifier=None, signer=HmacSha256Signer(b"k" * 32))

    assert raised.value.event_id == case.names
    assert case.problem in raised.value.problem
    assert store.agents(travel["workspace"]) == {}  # not even the workspace was written
    store.close()


def test_scenario_parsing_imports_no_store_and_no_replay() -> None:
    tree = ast.parse(Path(readmit.scenario.__file__).read_text(encoding="utf-8"))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}

    assert not {m for m in imported if m and m.startswith(("readmit.store", "readmit.replay"))}


def _evidence(s: dict[str, Any]) -> dict[str, Any]:
    return s["events"][16]["source"]  # type: ignore[no-any-return]


NAMESPACED = [
    ("an event id", lambda s: s["events"][2].update(id="A1/e2"), "A1/e2", "A1/e2"),
    ("an item id", _item(2, id="A2/h9"), "e2", "A2/h9"),
    ("an evidence id", lambda s: _evidence(s).update(id="A3/src"), "e16", "A3/src"),
    ("an obligation id", lambda s: s["events"][4]["obligation"].update(id="X1/o"), "e4", "X1/o"),
    (
        "a frontier id",
        lambda s: s["events"][4]["obligation"]["frontier"].update(id="A1/f"),
        "e4",
        "A1/f",
    ),
    ("a memory id", lambda s: s["events"][5]["experience"].update(id="A1/m"), "e5", "A1/m"),
]


@pytest.mark.parametrize(
    ("mutate", "names", "given"), [pytest.param(m, n, g, id=i) for i, m, n, g in NAMESPACED]
)
def test_an_id_in_an_agents_namespace_is_refused_naming_the_event(
    mutate: Mutation, names: str, given: str, travel: dict[str, Any]
) -> None:
    mutate(travel)

    with pytest.raises(InvalidEvent) as raised:
        load_scenario(travel)

    assert raised.value.code == "invalid_event"
    assert raised.value.event_id == names
    assert f"id {given!r} is in agent {given.split('/')[0]!r}'s namespace" in raised.value.problem


def test_a_slash_outside_any_agents_namespace_is_still_an_id(travel: dict[str, Any]) -> None:
    travel["events"][2]["item"]["id"] = "Z9/h9"

    scenario = load_scenario(travel)

    assert scenario.steps[2].item.id == "Z9/h9"  # type: ignore[union-attr]


def test_a_scenario_file_may_be_named_by_a_path_or_a_string(
    tmp_path: Path, travel: dict[str, Any]
) -> None:
    path = tmp_path / "trip.json"
    path.write_text(json.dumps(travel), encoding="utf-8")

    assert read_scenario(str(path)) == read_scenario(path)


def test_every_unknown_reader_of_every_item_is_named_after_other_steps_too(
    travel: dict[str, Any],
) -> None:
    """Past the departure, of a supersession too, and each name unknown, with or without a
    close agent's to suggest."""
    events = travel["events"]
    assert events[8]["op"] == "depart"
    assert events[11]["op"] == "supersede"
    events[10]["item"]["readers"] = {"principals": ["famliy", "zzqx"]}
    events[11]["item"]["readers"] = {"roles": ["trasport"]}

    said = unknown_readers(load_scenario(travel))

    assert said == [
        "event 'e10': item 'h1': readers.principals names 'famliy', which no agent of the "
        "scenario has (did you mean 'family'?)",
        "event 'e10': item 'h1': readers.principals names 'zzqx', which no agent of the "
        "scenario has",
        "event 'e11': item 't1': readers.roles names 'trasport', which no agent of the "
        "scenario has (did you mean 'transport'?)",
    ]


_HIDDEN = (
    "(the scenario has it, from event 'e{}', but its readers leave this event's agent out: "
    "check them)"
)


@pytest.mark.parametrize(
    ("mutate", "refused", "said"),
    [
        (
            _item(0, readers={"principals": ["famly"]}),
            "e5",
            "experience source 'c' is no known item " + _HIDDEN.format(0),
        ),
        (
            _item(2, readers={"roles": ["trasport"]}),
            "e11",
            "unknown target item 't0' " + _HIDDEN.format(2),
        ),
        (
            _item(3, depends_on=["h1"]),
            "e3",
            "(the scenario makes it later, in event 'e10': refer only to earlier items)",
        ),
    ],
)
def test_an_item_the_store_calls_unknown_is_named_as_the_scenarios_own(
    travel: dict[str, Any], mutate: Mutation, refused: str, said: str
) -> None:
    """The store's "no known item" sent the operator looking for a missing item (a newcomer)."""
    mutate(travel)

    with pytest.raises(InvalidEvent) as caught:
        validated(travel)

    assert caught.value.event_id == refused
    assert caught.value.problem.endswith(said)


def _resolve_an_item(s: dict[str, Any]) -> None:
    s["events"].insert(
        13, {"at": "2026-05-02T11:45:00Z", "op": "resolve", "author": "A1", "target": "c"}
    )


@pytest.mark.parametrize(
    ("mutate", "refused", "said"),
    [
        (
            _resolve_an_item,
            "e13",
            "no open obligation 'c' (it is an item, from event 'e0', not an obligation: resolve "
            "closes one opened by an 'obligation' event; 'revoke' or 'close' withdraws an item)",
        ),
        (
            _item(3, depends_on=["p0"]),
            "e3",
            "depends_on names unknown item 'p0' (it is the item this event makes: an item "
            "cannot depend on itself)",
        ),
        (
            _item(3, cites=["c"]),
            "e3",
            "cites missing evidence 'c' (it is an item, from event 'e0': cites names "
            "'evidence' events)",
        ),
        (
            lambda s: s["events"][11].update(target="t1"),
            "e11",
            "unknown target item 't1' (it is the item this event makes: refer only to "
            "earlier items)",
        ),
    ],
)
def test_an_unknown_item_whose_readers_include_the_agent_is_not_blamed_on_its_readers(
    travel: dict[str, Any], mutate: Mutation, refused: str, said: str
) -> None:
    """Each was told "its readers leave this event's agent out: check them", though they
    include it (every item here is the family's, every author one of its agents)."""
    mutate(travel)

    with pytest.raises(InvalidEvent) as caught:
        validated(travel)

    assert caught.value.event_id == refused
    assert caught.value.problem == said
