"""Controlled hidden-regime drift with full reversal (cf. TEPA's controlled drift).

A hidden regime — which site is primary — decides where every service deploys.
Before departure the returning agent records each service's site under regime 0,
half of them citing the regime item as a premise (``depends_on``) and half only
naming the primary site in their text. During the absence a teammate replaces the
regime item (full reversal: every answer changes) and teammates re-observe a
fraction of the services. At return each method's context answers "where does
service X deploy?" for every service.

Append-only and last-write-wins memory keep stale answers for the services
nobody re-observed, and so fall below no memory (a guess among the sites);
explicit premise repair recovers half of them; TRACE, which also confirms the
implicit references, withholds every stale answer and derives the rest from the
new regime. Condition ``stable`` is the control with no reversal.
"""

import random

from readmit.bench.episode import Episode, Probe
from readmit.bench.history import History

SITES = [("Frankfurt", "eu-central"), ("Singapore", "ap-southeast"), ("Ohio", "us-east")]
CONDITIONS = ("full_reversal", "stable")


def episode(
    seed: int,
    condition: str = "full_reversal",
    *,
    services: int = 12,
    refresh: float = 0.25,
    team: int = 4,
) -> Episode:
    """One drift episode, deterministic for ``seed``."""
    rng = random.Random(f"drift/{seed}/{condition}")
    old, new = rng.sample(range(len(SITES)), 2)
    if condition == "stable":
        new = old
    names = [f"svc-{rng.randrange(100, 999)}-{n}" for n in range(services)]
    agents = [("A0", "ops", "sre"), *((f"T{n}", "ops", "sre") for n in range(1, team + 1))]
    h = History(f"drift-{seed}", agents, {"max_items": 32, "max_chars": 8192})
    values: dict[str, tuple[str, str]] = {}
    site, region = SITES[old]
    h.item("A0", "regime-0", f"Regime: {site} is the primary site.", key="regime")
    derive = {"regime-0": dict.fromkeys(names, region)}
    for n, name in enumerate(names):
        text = f"{name} deploys to {region} because {site} is the primary site."
        extra = {"depends_on": ["regime-0"]} if n % 2 == 0 else {}
        h.item("A0", f"{name}@0", text, key=f"{name}:region", **extra)
        values[f"{name}@0"] = (name, region)
    h.add("depart", agent="A0")
    new_site, new_region = SITES[new]
    if condition == "full_reversal":
        h.add(
            "supersede",
            author="T1",
            target="regime-0",
            item={
                "id": "regime-1",
                "text": f"Regime: {new_site} is the primary site.",
                "key": "regime",
            },
        )
        derive["regime-1"] = dict.fromkeys(names, new_region)
    refreshed = rng.sample(names, max(1, round(refresh * services)))
    for n, name in enumerate(refreshed):
        author = f"T{1 + n % team}"
        h.item(author, f"{name}@1", f"{name} deploys to {new_region} now.", key=f"{name}:region")
        values[f"{name}@1"] = (name, new_region)
    options = tuple(r for _, r in SITES)
    probes = tuple(
        Probe(
            id=name,
            question=f"Which region does {name} deploy to?",
            answer=new_region,
            options=options,
            key=name,
            stale_answer=region,
        )
        for name in names
    )
    fresh = {f"{n}@1" for n in refreshed}
    if condition == "full_reversal":
        valid = {"regime-1", *fresh}
        invalid = {"regime-0", *(f"{n}@0" for n in names)}
    else:  # the latest record of every service is still right
        valid = {"regime-0", *fresh, *(f"{n}@0" for n in names if n not in refreshed)}
        invalid = set()
    return Episode(
        id=f"drift/{condition}/{seed}",
        suite="drift",
        condition=condition,
        scenario=h.scenario(),
        returner="A0",
        task="ops",
        purpose="ops",
        valid=frozenset(valid),
        invalid=frozenset(invalid),
        probes=probes,
        values=values,
        derive=derive,
        team_size=team,
        seed=seed,
    )


def episodes(seeds: int = 50, team: int = 4) -> list[Episode]:
    """Both conditions over ``seeds`` seeds."""
    return [episode(s, c, team=team) for c in CONDITIONS for s in range(seeds)]
