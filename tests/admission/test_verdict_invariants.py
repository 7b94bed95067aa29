"""Implicit-invalidation verdicts over random multi-agent histories on a real store.

"A confirmed implicit invalidation is stored with its evidence and applies at every later
return, to every agent, until something restores the premise. Departure checkpoints
capture only state that was valid when taken. Departing again and returning with no new
events never admits anything the previous decision excluded as stale."

Histories of the trip's agents (the family's itinerary and booking roles, a neighbour):
items of three topics with keys, premises and readers of every shape, asserted,
superseded, revoked and closed by any of them, restated in the same words, and raw
evidence; departures and returns in random order (with ``timed``, items that start
later or end, hearsay, and items and returns for one purpose). The verifier is a plain
function of the texts it is shown: a withdrawal of a statement on the topic of an item or
of its premises, or news or evidence that the topic is closed, invalidates the item.

Checked: what a return excludes as stale no later return admits, to any agent, while
nothing new happens, nor does a departure keep it; each return admits what the same return
judging afresh admits (no earlier return's verdicts or screenings kept); a fresh store
handle, PostgreSQL and judging ahead change no decision; an agent's copy is the same in two
worlds that differ in what it may not read; a tiny judgment budget withholds what it did
not screen, and a return with budget left finishes the work.
"""

import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import fresh_postgres_schema, postgres_url
from readmit.admission.invalidation.implicit import Pair, Verdict
from readmit.ahead import judge_ahead
from readmit.clock import parse_time
from readmit.decide import decide
from readmit.errors import InvalidEvent
from readmit.events import Depart, RecordExperience, ReturnRequest
from readmit.model import Agent
from readmit.policy import Policy
from readmit.report import agent_copy
from readmit.store import WorkStateStore, open_store
from readmit.testing import FunctionVerifier
from readmit.wire import parse_step
from trip import AGENTS, SIGNER, at

STALE = {"revoked", "stale_or_superseded", "expired", "implicitly_invalidated"}
STALE |= {"premise_invalidated"}
TOPICS = ("pool", "hotel", "train")
PRINCIPAL = {a["id"]: a["principal"] for a in AGENTS}
ROLE = {a["id"]: a["role"] for a in AGENTS}
RETURNERS = ("A1", "A2", "A3", "B1")
AUTHORS = ("A1", "A2", "B1")
READERS: tuple[Any, ...] = (
    None,  # the author's principal
    None,
    "*",
    "*",
    {"principals": ["family"], "roles": ["itinerary"]},
    {"principals": ["family", "neighbours"]},
    {"roles": ["booking"]},
)
POLICY = Policy(max_items=32)
FUZZ = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))


def may_read(readers: Any, author: str, agent: str) -> bool:
    """Whether ``agent`` may read an item ``author`` gave ``readers`` (as the store reads it)."""
    if readers == "*":
        return True
    if readers is None:
        return PRINCIPAL[agent] == PRINCIPAL[author]
    principals = readers.get("principals", [PRINCIPAL[author]])
    roles = readers.get("roles", ["*"])
    return PRINCIPAL[agent] in principals and (ROLE[agent] in roles or "*" in roles)


def topic(text: str | None) -> str | None:
    return next((t for t in TOPICS if t in (text or "")), None)


def _topics(pair: Pair) -> Verdict:
    """A withdrawal of a statement on a topic of an item or of its premises (those the
    returning reader may read), or news or evidence that such a topic is closed."""
    later, earlier = pair.later, pair.earlier
    on = {topic(text) for text in (earlier.text, *pair.premises)} - {None}
    withdrawn = later.withdrawn_text is not None and topic(later.withdrawn_text) in on
    said = later.text if later.op == "evidence" else later.replacement_text
    news = "closed" in (said or "") and topic(said) in on
    hit = "closed" not in earlier.text and (withdrawn or news)
    # The reason quotes what the verifier was shown, as a model's often does.
    given = "; ".join(pair.premises)
    return Verdict(invalidates=hit, confidence=0.9, reason=f"because {later.text} ({given})")


def verifier() -> FunctionVerifier:
    return FunctionVerifier(_topics, name="topics")


# Histories, drawn as data and rendered to scenario events, so the same history can be
# written in two worlds (`render`'s ``word``).


@dataclass(frozen=True)
class Spec:
    """An item a history asserts."""

    id: str
    author: str
    text: str
    readers: Any = None
    key: str | None = None
    depends_on: tuple[str, ...] = ()
    until: int | None = None
    """The minute its validity ends (none: it holds for good)."""
    since: int | None = None
    """The minute its validity starts (none: when it is asserted)."""
    hearsay: bool = False
    purposes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Step:
    """One step: ``op`` is assert, supersede, revoke, close, evidence, depart, return or
    ahead (judge an away agent's return ahead)."""

    n: int
    op: str
    author: str = ""
    item: Spec | None = None
    target: str = ""
    purpose: str = "itinerary"
    source: str = ""
    """An evidence event's text (its source's id: ``s`` and its step)."""


@dataclass
class Drawn:
    steps: list[Step] = field(default_factory=list)
    specs: dict[str, Spec] = field(default_factory=dict)
    live: list[str] = field(default_factory=list)
    away: set[str] = field(default_factory=set)
    texts: list[str] = field(default_factory=list)

    def add(self, op: str, **fields: Any) -> None:
        self.steps.append(Step(n=len(self.steps), op=op, **fields))


def _spec(draw: st.DrawFn, drawn: Drawn, author: str, timed: bool = False) -> Spec:
    n = len(drawn.specs)
    on = draw(st.sampled_from(TOPICS))
    form = draw(st.sampled_from(["plan", "plan", "closed", "again"]))
    if form == "again" and drawn.texts:
        text = draw(st.sampled_from(drawn.texts))  # stated again, in the very words
    elif form == "closed":
        text = f"The {on} is closed."
    else:
        text = f"Use the {on}: plan {n}."
    readable = [i for i in drawn.live if _reads(drawn.specs[i], author)]
    premises = draw(st.lists(st.sampled_from(readable), max_size=1)) if readable else []
    spec = Spec(
        id=f"i{n}",
        author=author,
        text=text,
        readers=draw(st.sampled_from(READERS)),
        key=draw(st.sampled_from([None, None, "k-pool", "k-hotel", "k-train"])),
        depends_on=tuple(premises),
    )
    if timed:  # bounded in time, hearsay, for fewer purposes
        ends = draw(st.sampled_from([None, None, None, 2, 6, 12]))
        starts = draw(st.sampled_from([None, None, None, None, 3]))
        spec = replace(
            spec,
            until=None if ends is None or ends <= (starts or 0) else len(drawn.steps) + ends,
            since=None if starts is None else len(drawn.steps) + starts,
            hearsay=draw(st.integers(0, 5)) == 0,
            purposes=draw(st.sampled_from([(), (), (), ("itinerary",), ("booking",)])),
        )
    drawn.specs[spec.id] = spec
    drawn.live.append(spec.id)
    drawn.texts.append(text)
    return spec


def _reads(spec: Spec, agent: str) -> bool:
    return may_read(spec.readers, spec.author, agent)


@st.composite
def histories(
    draw: st.DrawFn,
    min_steps: int = 4,
    max_steps: int = 16,
    timed: bool = False,
    ahead: bool = False,
) -> list[Step]:
    """Steps of a history; every agent that departs returns at the end, then departs and
    returns once more with nothing new in between. ``timed``: some items end, some are
    hearsay, some serve one purpose, and returns are for either purpose. ``ahead``: an
    away agent's return is judged ahead, now and then."""
    drawn = Drawn()
    for _ in range(draw(st.integers(2, 5))):  # what the agents leave behind
        author = draw(st.sampled_from(AUTHORS))
        drawn.add("assert", author=author, item=_spec(draw, drawn, author, timed))
    for agent in draw(st.lists(st.sampled_from(RETURNERS), min_size=1, unique=True)):
        drawn.away.add(agent)
        drawn.add("depart", author=agent)
    ops = ["assert"] * 3 + ["supersede", "revoke", "close", "evidence"]
    ops += ["depart", "return", "return"]
    ops += ["ahead"] if ahead else []
    for _ in range(draw(st.integers(min_steps, max_steps))):
        op = draw(st.sampled_from(ops))
        if op in ("depart", "return", "ahead"):
            _away(draw, drawn, op, timed)
        else:
            _shared(draw, drawn, op, timed)
    ended = sorted(drawn.away)
    for agent in ended:
        drawn.add("return", author=agent)
    for agent in draw(st.permutations(ended)):
        drawn.add("depart", author=agent)
        drawn.add("return", author=agent)
    return drawn.steps


def _shared(draw: st.DrawFn, drawn: Drawn, op: str, timed: bool) -> None:
    """A shared-state event of ``op``: an assert where its author may read no target."""
    author = draw(st.sampled_from(AUTHORS))
    if op == "evidence":  # a raw source: read by its author's principal alone
        source = f"Notice {len(drawn.steps)}: the {draw(st.sampled_from(TOPICS))} is closed."
        drawn.add("evidence", author=author, source=source)
        return
    targets = [i for i in drawn.live if _reads(drawn.specs[i], author)]
    if op == "assert" or not targets:
        drawn.add("assert", author=author, item=_spec(draw, drawn, author, timed))
        return
    target = draw(st.sampled_from(targets))
    drawn.live.remove(target)
    new = _spec(draw, drawn, author, timed) if op == "supersede" else None
    drawn.add(op, author=author, target=target, item=new)


def _away(draw: st.DrawFn, drawn: Drawn, op: str, timed: bool) -> None:
    """A departure of an agent present, or a return of (or judging ahead for) one away."""
    if op == "depart":
        present = [a for a in RETURNERS if a not in drawn.away]
        if present:
            agent = draw(st.sampled_from(present))
            drawn.away.add(agent)
            drawn.add("depart", author=agent)
        return
    if not drawn.away:
        return
    agent = draw(st.sampled_from(sorted(drawn.away)))
    purpose = "itinerary"
    if timed or op == "ahead":
        purpose = draw(st.sampled_from(["itinerary", "booking"]))
    if op == "return":
        drawn.away.discard(agent)
    drawn.add(op, author=agent, purpose=purpose)


@dataclass(frozen=True)
class World:
    """How a history is written: what ``observer`` may not read is marked with ``word``.

    In its text (a word no other text holds, so any ranking reads it alike), its id and the
    id of an event that touches nothing else (each after a dash: ids sort as without it).
    No observer: nothing is marked.
    """

    specs: dict[str, Spec]
    observer: str | None = None
    word: str = ""

    def secret(self, item_id: str) -> bool:
        return self.observer is not None and not _reads(self.specs[item_id], self.observer)

    def name(self, item_id: str) -> str:
        return f"{item_id}-{self.word}" if self.secret(item_id) else item_id

    def item(self, spec: Spec) -> dict[str, Any]:
        text = f"{spec.text[:-1]} {self.word}." if self.secret(spec.id) else spec.text
        made: dict[str, Any] = {"id": self.name(spec.id), "text": text}
        optional = {
            "readers": spec.readers,
            "key": spec.key,
            "depends_on": [self.name(i) for i in spec.depends_on] or None,
            "valid_to": None if spec.until is None else at(spec.until),
            "valid_from": None if spec.since is None else at(spec.since),
            "unconfirmed": spec.hearsay or None,
            "purposes": list(spec.purposes) or None,
        }
        return made | {k: v for k, v in optional.items() if v is not None}

    def event(self, step: Step) -> dict[str, Any]:
        made: dict[str, Any] = {"id": f"e{step.n}", "at": at(step.n), "op": step.op}
        if step.op == "depart":
            return made | {"agent": step.author}
        if step.op in ("return", "ahead"):
            return made | {"agent": step.author, "task": "trip", "purpose": step.purpose}
        if step.op == "evidence":
            hidden = (
                self.observer is not None and PRINCIPAL[step.author] != PRINCIPAL[self.observer]
            )
            text = f"{step.source[:-1]} {self.word}." if hidden else step.source
            source = {"id": f"s{step.n}-{self.word}" if hidden else f"s{step.n}", "text": text}
            made["id"] = f"e{step.n}-{self.word}" if hidden else made["id"]
            return made | {"author": step.author, "source": source}
        touched = [i for i in (step.target, step.item.id if step.item else "") if i]
        hidden = self.observer is not None and all(map(self.secret, touched))
        made |= {"id": f"e{step.n}-{self.word}" if hidden else made["id"], "author": step.author}
        if step.target:
            made["target"] = self.name(step.target)
        if step.item is not None:
            made["item"] = self.item(step.item)
        if step.op == "revoke":
            made["why"] = f"withdrawn {self.word}" if hidden else "withdrawn"
        return made


def render(steps: list[Step], observer: str | None = None, word: str = "") -> list[dict[str, Any]]:
    """Scenario events of ``steps`` (with ``observer``: in its `World` marked ``word``)."""
    world = World({s.item.id: s.item for s in steps if s.item is not None}, observer, word)
    return [world.event(step) for step in steps]


# Running a history on a store.

SHARED = ("assert", "supersede", "revoke", "close", "evidence")


@dataclass
class Returned:
    step: int
    agent: str
    news: int
    """How many shared-state events the store held when the return read its context."""
    record: dict[str, Any]

    @property
    def admitted(self) -> set[str]:
        return set(self.record["items"]) | set(self.record["selected"])

    @property
    def stale(self) -> set[str]:
        return {e["item"] for e in self.record["excluded"] if e["reason"] in STALE}

    def view(self) -> tuple[Any, ...]:
        return self.agent, self.record["outcome"], self.record["items"], self.record["selected"]

    def shape(self) -> tuple[Any, ...]:
        excluded = sorted((e["item"], e["reason"]) for e in self.record["excluded"])
        return *self.view(), excluded


@dataclass
class Ran:
    returns: list[Returned] = field(default_factory=list)
    checkpoints: list[tuple[int, str, int, tuple[str, ...]]] = field(default_factory=list)
    """(step, agent, shared-state events held, the items it kept) of each departure."""
    refused: list[str] = field(default_factory=list)
    """The ids of the events the store refused."""


Opener = Callable[[], WorkStateStore]


class Runner:
    """Records a history's events on a store, one at a time (what the store refuses is
    left out and noted), deciding each return and judging ahead where it says so.

    ``reopen``: a new store handle for every step. ``policies``: the policy of the n-th
    return. ``beside``: the shared-state events that follow a return are recorded while it
    is decided, after it read its context, before it is recorded.
    """

    def __init__(
        self,
        opener: Opener,
        events: list[dict[str, Any]],
        policies: Callable[[int], Policy],
        reopen: bool,
        beside: bool,
    ) -> None:
        self.opener, self.events, self.policies = opener, events, policies
        self.reopen, self.beside = reopen, beside
        self.ran, self.news, self.next = Ran(), 0, 0
        self.store = opener()

    def __call__(self) -> Ran:
        try:
            self.store.create_workspace("trip", _agents())
            while self.next < len(self.events):
                if self.reopen:
                    self.store.close()
                    self.store = self.opener()
                self.next += 1
                self._step(self.next - 1)
        finally:
            self.store.close()
        return self.ran

    def _step(self, index: int) -> None:
        raw = self.events[index]
        try:
            if raw["op"] == "ahead":
                judge_ahead(
                    self.store,
                    "trip",
                    raw["agent"],
                    task="trip",
                    purpose=raw["purpose"],
                    policy=self.policies(len(self.ran.returns)),
                    verifier=verifier(),
                    signer=SIGNER,
                    at=parse_time(raw["at"]),
                )
                return
            step = parse_step(raw, index)
            if isinstance(step, ReturnRequest):
                self._return(index, step)
            elif isinstance(step, Depart):
                kept = self.store.depart("trip", step.agent, step.at).item_ids
                self.ran.checkpoints.append((index, step.agent, self.news, kept))
            else:
                assert not isinstance(step, RecordExperience)
                self.store.append("trip", [step])
                self.news += 1
        except InvalidEvent:
            self.ran.refused.append(raw["id"])

    def _steps(self, indices: list[int]) -> None:
        for index in indices:
            self._step(index)

    def _return(self, index: int, request: ReturnRequest) -> None:
        meanwhile: list[int] = []
        while self.beside and self.next < len(self.events):
            if self.events[self.next]["op"] not in SHARED:
                break
            meanwhile.append(self.next)
            self.next += 1
        news = self.news
        made = decide(
            self.store,
            "trip",
            request,
            policy=self.policies(len(self.ran.returns)),
            verifier=verifier(),
            signer=SIGNER,
            before_record=lambda: self._steps(meanwhile),
        )
        self.ran.returns.append(Returned(index, request.agent, news, made.record))


def run(
    opener: Opener,
    events: list[dict[str, Any]],
    policy: Policy = POLICY,
    reopen: bool = False,
    policies: Callable[[int], Policy] | None = None,
    beside: bool = False,
) -> Ran:
    """`Runner`'s record of ``events`` (every return under ``policy`` unless ``policies``)."""
    chosen = policies if policies is not None else (lambda _: policy)
    return Runner(opener, events, chosen, reopen, beside)()


def _agents() -> list[Agent]:
    return [Agent(id=a["id"], principal=a["principal"], role=a["role"]) for a in AGENTS]


@contextmanager
def sqlite() -> Iterator[Opener]:
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{folder}/readmit.db"
        yield lambda: open_store(url)


@contextmanager
def postgres() -> Iterator[Opener]:
    with fresh_postgres_schema() as url:
        yield lambda: open_store(url)


def on_sqlite(events: list[dict[str, Any]], **options: Any) -> Ran:
    with sqlite() as opener:
        return run(opener, events, **options)


# The invariants.


def check_stale_stays_out(ran: Ran) -> None:
    """What a return excluded as stale no later return admits, to any agent, while no event
    came; nor does a departure in that time keep it in its checkpoint."""
    for n, first in enumerate(ran.returns):
        for later in ran.returns[n + 1 :]:
            if later.news != first.news:
                break
            back = first.stale & later.admitted
            assert not back, (
                f"{sorted(back)} excluded as stale for {first.agent} at step {first.step} "
                f"admitted to {later.agent} at step {later.step} with no event between"
            )
        for step, agent, news, kept in ran.checkpoints:
            if step > first.step and news == first.news:
                taken = first.stale & set(kept)
                assert not taken, (
                    f"{sorted(taken)} excluded as stale at step {first.step} kept by "
                    f"{agent}'s checkpoint at step {step}"
                )


@FUZZ
@given(histories())
def test_what_a_return_excludes_as_stale_stays_out_until_something_new_happens(
    steps: list[Step],
) -> None:
    check_stale_stays_out(on_sqlite(render(steps)))


@settings(FUZZ, max_examples=20)
@given(histories(max_steps=12, timed=True), st.booleans())
def test_a_return_decides_as_one_judging_afresh_would(steps: list[Step], beside: bool) -> None:
    """Verdicts and screenings kept by earlier returns (any agent's, some decided while
    the next events were recorded) change no view: each return of the history admits what
    the same return admits after the same events when no return came before it (nothing
    kept, every item judged afresh). Also with items that end, hearsay and purposes."""
    events = render(steps)
    ran = on_sqlite(events, beside=beside)
    for returned in ran.returns:
        alone = [e for e in events[: returned.step] if e["op"] != "return"]
        alone.append(events[returned.step])
        (afresh,) = on_sqlite(alone).returns
        assert returned.view() == afresh.view(), f"step {returned.step}"
        assert not returned.admitted & afresh.stale
        assert not afresh.admitted & returned.stale


@settings(FUZZ, max_examples=20)
@given(histories(max_steps=12, timed=True), st.integers(min_value=1, max_value=30))
def test_a_screening_dated_after_a_return_spares_it_nothing(steps: list[Step], late: int) -> None:
    """Judging ahead for a return's agent, dated ``late`` minutes after the return (news
    may have ended by then, and been passed over), and kept before the return is decided,
    changes nothing the return admits: a reader's screening binds only returns dated at or
    after it (m032)."""
    events = render(steps)
    for index, event in enumerate(events):
        if event["op"] != "return":
            continue
        before = [e for e in events[:index] if e["op"] != "return"]
        (afresh,) = on_sqlite([*before, event]).returns
        ahead = {**event, "id": "ahead", "op": "ahead", "at": at(steps[index].n + late)}
        (spared,) = on_sqlite([*before, ahead, event]).returns
        assert spared.view() == afresh.view(), f"step {index}"


@settings(FUZZ, max_examples=25)
@given(histories(max_steps=12))
def test_a_fresh_store_handle_at_every_step_decides_alike(steps: list[Step]) -> None:
    events = render(steps)
    with sqlite() as opener:
        kept = run(opener, events)
    with sqlite() as opener:
        reopened = run(opener, events, reopen=True)

    assert reopened.refused == kept.refused
    assert [r.shape() for r in reopened.returns] == [r.shape() for r in kept.returns]
    assert [c[1:] for c in reopened.checkpoints] == [c[1:] for c in kept.checkpoints]


@pytest.mark.postgres
@settings(FUZZ, max_examples=10)
@given(histories(max_steps=12, timed=True))
def test_postgresql_decides_as_sqlite_does(steps: list[Step]) -> None:
    postgres_url()
    events = render(steps)
    lite = on_sqlite(events)
    with postgres() as opener:
        pg = run(opener, events)

    assert pg.refused == lite.refused
    assert [r.shape() for r in pg.returns] == [r.shape() for r in lite.returns]
    assert [c[1:] for c in pg.checkpoints] == [c[1:] for c in lite.checkpoints]


_PREMISE = Spec(id="i0", author="A2", text="Use the hotel: plan 0.")
_PUBLIC = Spec(id="i1", author="A2", text="Use the pool: plan 1.", readers="*", depends_on=("i0",))
_EVIDENCE = Spec(id="i2", author="A2", text="Use the pool: plan 2.", readers="*")
BOUND_ELSEWHERE = [
    *(Step(n, "assert", "A2", spec) for n, spec in enumerate([_PREMISE, _PUBLIC, _EVIDENCE])),
    Step(3, "depart", "A1"),
    Step(4, "depart", "B1"),
    Step(5, "revoke", "A2", target="i2"),
    Step(6, "return", "A1"),
    Step(7, "return", "B1"),
]
"""The family's verdict on everyone's pool plan, which rests on the family's hotel plan
(read by the family alone), confirmed at A1's return, binds B1's: its wording quotes the
premise, and is not B1's to read."""


@FUZZ
@example(steps=BOUND_ELSEWHERE, observer="B1")
@given(histories(timed=True), st.sampled_from(RETURNERS))
def test_what_an_agent_may_not_read_changes_nothing_it_is_shown(
    steps: list[Step], observer: str
) -> None:
    """Two worlds alike but for the words and ids of what ``observer`` may not read: its
    copy of every decision is the same in both (a verdict another reader confirmed
    included), and names neither world's secret."""
    alpha = on_sqlite(render(steps, observer, "alpha"))
    bravo = on_sqlite(render(steps, observer, "bravo"))

    assert [i.split("-")[0] for i in alpha.refused] == [i.split("-")[0] for i in bravo.refused]
    seen = [(r.step, agent_copy(r.record)) for r in alpha.returns if r.agent == observer]
    other = [(r.step, agent_copy(r.record)) for r in bravo.returns if r.agent == observer]
    for (step, copy), (_, twin) in zip(seen, other, strict=True):
        assert "alpha" not in repr(copy), f"step {step}: {copy}"
        assert _without_signature(copy) == _without_signature(twin), f"step {step}"


def _without_signature(copy: dict[str, Any]) -> dict[str, Any]:
    view = copy["view"]
    if view is None:
        return copy
    return {**copy, "view": {k: v for k, v in view.items() if k != "signature"}}


@FUZZ
@given(histories(timed=True, ahead=True))
def test_judging_ahead_changes_no_view(steps: list[Step]) -> None:
    """Returns judged ahead admit what those that were not admit. What they leave out may
    differ: a departure after a verdict judged ahead keeps no item it invalidated, where
    one before it kept it for the return to exclude; and an item with two faults is told
    the one its stage finds first, a standing verdict (and the premises it takes down)
    before the gates (hearsay resting on an invalidated premise is ``premise_invalidated``
    then, ``missing_receipt`` if it is judged after)."""
    events = render(steps)
    judged = on_sqlite(events)
    plain = on_sqlite([e for e in events if e["op"] != "ahead"])

    assert judged.refused == plain.refused
    assert [r.view() for r in judged.returns] == [r.view() for r in plain.returns]


# Budgets: what a return cannot pay to screen is withheld, and a later one finishes it.

TINY = Policy(max_items=32, max_judgments=1)


@FUZZ
@given(histories(), st.sampled_from([1, 2]))
def test_a_tiny_judgment_budget_withholds_what_it_did_not_screen(
    steps: list[Step], calls: int
) -> None:
    events = render(steps)
    full = on_sqlite(events)
    tiny = on_sqlite(events, policy=Policy(max_items=32, max_judgments=calls))

    assert tiny.refused == full.refused
    known: set[str] = set()  # stale at a return with the whole budget, and no event since
    for n, (small, whole) in enumerate(zip(tiny.returns, full.returns, strict=True)):
        if n and whole.news != full.returns[n - 1].news:
            known = set()
        known |= whole.stale
        wrong = small.admitted & known
        assert not wrong, f"{sorted(wrong)} admitted unscreened at step {small.step}"
    check_stale_stays_out(tiny)


@FUZZ
@given(histories())
def test_a_return_with_budget_left_finishes_what_a_tiny_budget_left(steps: list[Step]) -> None:
    """The history's last returns (each agent departs and returns with nothing new) have
    the default budget: they admit what returns that never ran short admit."""
    events = render(steps)
    full = on_sqlite(events)
    last = len(full.returns) - _closing(steps)
    tiny = on_sqlite(events, policies=lambda n: POLICY if n >= last else TINY)

    for small, whole in list(zip(tiny.returns, full.returns, strict=True))[last:]:
        assert small.record["judgment"]["unscreened"] == 0
        assert small.admitted == whole.admitted, f"step {small.step}"


def _closing(steps: list[Step]) -> int:
    """How many departure-and-return pairs of one agent end ``steps``."""
    n = 0
    while len(steps) >= 2 * n + 2:
        depart, back = steps[-2 * n - 2], steps[-2 * n - 1]
        if (depart.op, back.op) != ("depart", "return") or depart.author != back.author:
            break
        n += 1
    return n
