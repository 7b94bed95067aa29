"""Return episodes: explicit replacement, implicit change and propagated wrong state.

A team of N active agents (sweep 4, 8, 16, 32) works while the returner is away.
The returner's task is an open obligation whose required dependency the right
answer supports (the task adapter's part, TRACE §3.4).

- ``explicit`` (old state stale): a teammate replaces the departure fact under the
  same key and the others confirm the new value.
- ``implicit`` (old state stale): the returning agent's plan names a place that a
  teammate withdraws and replaces; nothing links the plan to it but the name. The
  agent's private memory of the plan goes stale with it.
- ``propagated`` (old state valid): every teammate repeats a false claim they only
  heard (no source), the ManBench "Mandela effect" shape.

- ``crowded`` (old state valid, nothing stale): teammates' chatter about the task
  crowds a four-item view; only obligation-aware selection keeps the fact.

The view budget is four items, so N repeated claims crowd out older state for
retrieval by recency; ``explicit`` and ``propagated`` are the balanced pair
(one stale, one valid departure state).
"""

import random

from readmit.bench.episode import Episode, Probe
from readmit.bench.history import History

CONDITIONS = ("explicit", "implicit", "propagated", "crowded")
TEAM_SIZES = (4, 8, 16, 32)
PROJECTS = ["Atlas", "Beacon", "Cobalt", "Delta", "Ember", "Falcon", "Garnet", "Helix"]
OFFICES = ["Harbor", "Lakeside", "Summit", "Riverside", "Granite", "Meadow"]
DATES = ["14 May", "21 May", "4 June", "11 June", "2 July"]
NOISE = [
    "The CI cache was cleared.",
    "Lunch is at noon on Fridays.",
    "The style guide moved to the wiki.",
    "Two interns start next month.",
]


def _team(h_agents: int) -> list[tuple[str, str, str]]:
    return [
        ("A0", "acme", "planner"),
        *((f"T{n}", "acme", "member") for n in range(1, h_agents + 1)),
    ]


def _task(h: History, dependency: str, question: str) -> None:
    h.add(
        "obligation",
        author="A0",
        obligation={
            "id": "task",
            "text": f"Answer: {question}",
            "role": "planner",
            "requires": [dependency],
            "critical": [dependency],
            "frontier": {"id": "task-frontier", "text": "Not answered yet."},
        },
    )


def _noise(h: History, team: int, rng: random.Random) -> None:
    for n in range(1, team + 1):
        h.item(f"T{n}", f"noise-{n}", f"{rng.choice(NOISE)} (note {n})")


def explicit(seed: int, team: int) -> Episode:
    """The departure fact is replaced under its key; teammates confirm the new value."""
    rng = random.Random(f"explicit/{seed}/{team}")
    project = rng.choice(PROJECTS)
    old, new = rng.sample(DATES, 2)
    h = History(f"explicit-{seed}", _team(team), {"max_items": 4, "max_chars": 4096})
    _task(h, "d_launch", f"When is the {project} launch date?")
    h.item(
        "A0", "fact-0", f"The {project} launch date is {old}.", key="launch", supports=["d_launch"]
    )
    h.add("depart", agent="A0")
    values = {"fact-0": ("launch", old)}
    for n in range(1, team + 1):
        text = (
            f"The {project} launch date is now {new}."
            if n == 1
            else f"Confirmed: the {project} launch date is {new}."
        )
        h.item(f"T{n}", f"fact-{n}", text, key="launch", supports=["d_launch"])
        values[f"fact-{n}"] = ("launch", new)
    _noise(h, team, rng)
    probe = Probe(
        id="launch",
        question=f"When is the {project} launch date?",
        answer=new,
        options=tuple(DATES[:3]) if new in DATES[:3] else (old, new, DATES[4]),
        key="launch",
        stale_answer=old,
    )
    return Episode(
        id=f"returns/explicit/{team}/{seed}",
        suite="returns",
        condition="explicit",
        scenario=h.scenario(),
        returner="A0",
        valid=frozenset({f"fact-{team}"}),
        invalid=frozenset({"fact-0"}),
        probes=(probe,),
        values=values,
        team_size=team,
        seed=seed,
    )


def implicit(seed: int, team: int) -> Episode:
    """The plan names an office that a teammate withdraws and replaces."""
    rng = random.Random(f"implicit/{seed}/{team}")
    old, new = rng.sample(OFFICES, 2)
    h = History(f"implicit-{seed}", _team(team), {"max_items": 4, "max_chars": 4096})
    _task(h, "d_meeting", "Where is the client meeting?")
    h.item(
        "T1",
        "office-0",
        f"The client team works from the {old} Office.",
        key="office",
        supports=["d_meeting"],
    )
    h.item(
        "A0",
        "plan-0",
        f"Plan: client at {old} Office, 10:00.",
        supports=["d_meeting"],
    )
    h.add(
        "experience",
        agent="A0",
        experience={
            "id": "memory-0",
            "text": f"Bring the visitor badge for the {old} Office.",
            "source": "plan-0",
        },
    )
    h.add("depart", agent="A0")
    h.add("revoke", author="T1", target="office-0", why=f"The {old} Office closed for renovation.")
    h.item(
        "T1",
        "office-1",
        f"The client team has moved to the {new} Office as of this week.",
        key="office",
        supports=["d_meeting"],
    )
    _noise(h, team, rng)
    values = {
        "plan-0": ("meeting", old),
        "memory-0": ("meeting", old),
        "office-0": ("meeting", old),
        "office-1": ("meeting", new),
    }
    probe = Probe(
        id="meeting",
        question="Where is the client meeting?",
        answer=new,
        options=(old, new, next(o for o in OFFICES if o not in (old, new))),
        key="meeting",
        stale_answer=old,
    )
    return Episode(
        id=f"returns/implicit/{team}/{seed}",
        suite="returns",
        condition="implicit",
        scenario=h.scenario(),
        returner="A0",
        valid=frozenset({"office-1"}),
        invalid=frozenset({"office-0", "plan-0", "memory-0"}),
        probes=(probe,),
        values=values,
        team_size=team,
        seed=seed,
    )


def propagated(seed: int, team: int) -> Episode:
    """Every teammate repeats a false claim they only heard."""
    rng = random.Random(f"propagated/{seed}/{team}")
    project = rng.choice(PROJECTS)
    right, wrong = rng.sample(DATES, 2)
    h = History(f"propagated-{seed}", _team(team), {"max_items": 4, "max_chars": 4096})
    _task(h, "d_launch", f"When is the {project} launch date?")
    h.add(
        "evidence",
        author="A0",
        source={"id": "memo", "text": f"Board memo: {project} launches {right}."},
    )
    h.item(
        "A0",
        "fact-0",
        f"The {project} launch date is {right}.",
        key="launch",
        cites=["memo"],
        supports=["d_launch"],
    )
    h.add(
        "experience",
        agent="A0",
        experience={
            "id": "memory-0",
            "text": f"Marketing assets are booked for {right}.",
            "source": "fact-0",
        },
    )
    h.add("depart", agent="A0")
    values = {"fact-0": ("launch", right), "memory-0": ("launch", right)}
    for n in range(1, team + 1):
        h.item(
            f"T{n}",
            f"claim-{n}",
            f"I heard the {project} launch date is {wrong}.",
            unconfirmed=True,
            supports=["d_launch"],
        )
        values[f"claim-{n}"] = ("launch", wrong)
    probe = Probe(
        id="launch",
        question=f"When is the {project} launch date?",
        answer=right,
        options=(right, wrong, next(d for d in DATES if d not in (right, wrong))),
        key="launch",
        stale_answer=right,
    )
    return Episode(
        id=f"returns/propagated/{team}/{seed}",
        suite="returns",
        condition="propagated",
        scenario=h.scenario(),
        returner="A0",
        valid=frozenset({"fact-0", "memory-0"}),
        invalid=frozenset(f"claim-{n}" for n in range(1, team + 1)),
        probes=(probe,),
        values=values,
        team_size=team,
        seed=seed,
    )


def crowded(seed: int, team: int) -> Episode:
    """The needed fact is older than the teammates' chatter about the same subject.

    Nothing is stale; the budget is the test. Chatter shares the task's words but
    supports no required dependency, so relevance ranking fills the view with it
    while obligation-aware selection keeps the fact (the OAS ablation).
    """
    rng = random.Random(f"crowded/{seed}/{team}")
    project = rng.choice(PROJECTS)
    date = rng.choice(DATES)
    h = History(f"crowded-{seed}", _team(team), {"max_items": 4, "max_chars": 4096})
    _task(h, "d_launch", f"When is the {project} launch date?")
    h.item(
        "A0", "fact-0", f"The {project} launch date is {date}.", key="launch", supports=["d_launch"]
    )
    h.add("depart", agent="A0")
    for n in range(1, team + 1):
        h.item(
            f"T{n}",
            f"chatter-{n}",
            f"Answer the {project} launch question when the launch date is asked (note {n}).",
        )
    probe = Probe(
        id="launch",
        question=f"When is the {project} launch date?",
        answer=date,
        options=tuple(DATES[:3]) if date in DATES[:3] else (date, *DATES[:2]),
        key="launch",
        stale_answer=date,
    )
    return Episode(
        id=f"returns/crowded/{team}/{seed}",
        suite="returns",
        condition="crowded",
        scenario=h.scenario(),
        returner="A0",
        valid=frozenset({"fact-0"}),
        probes=(probe,),
        values={"fact-0": ("launch", date)},
        team_size=team,
        seed=seed,
    )


BUILDERS = {
    "explicit": explicit,
    "implicit": implicit,
    "propagated": propagated,
    "crowded": crowded,
}


def episodes(seeds: int = 20, teams: tuple[int, ...] = (4,)) -> list[Episode]:
    """Every condition, team size and seed."""
    return [BUILDERS[c](s, t) for c in CONDITIONS for t in teams for s in range(seeds)]
