"""A labeled set of (earlier item, later observation) pairs, written by the team.

Six domains; in each, templates filled with three sets of names give five kinds
of pair:

- ``withdrawn_reference`` (invalidates): the later event withdraws or replaces
  state that the earlier item names;
- ``premise_change`` (invalidates): a new fact, withdrawing nothing, changes a
  premise the earlier item relies on (needs world knowledge);
- ``unrelated`` (does not): nothing in common;
- ``same_topic`` (does not): the same subject, compatible with the earlier item;
- ``near_miss`` (does not): a withdrawal of something whose name looks like the
  earlier item's (shared words, different thing).

The first four templates of each domain are split by a stable hash of the pair:
70% ``tune`` (for prompts, thresholds and the built-in verifier's rules) and 30%
``held_out`` (reported, never tuned on; but its templates also fill tune pairs).
The fifth template of each domain was written after the built-in verifier's
rules were set and all its pairs are ``fresh``: situations no tuning has seen,
the honest test of whether a rule generalizes. Fresh templates also vary the
event: some withdraw by revocation with nothing in its place, some replace a
look-alike.
"""

import hashlib
from dataclasses import dataclass

from readmit.admission.invalidation.implicit import Later, Pair
from readmit.verifiers.probes import sourced_item

KINDS = ("withdrawn_reference", "premise_change", "unrelated", "same_topic", "near_miss")
SPLITS = ("tune", "held_out", "fresh")
FRESH_FROM = 4
"""Templates at this index and after were written after tuning: every pair is ``fresh``."""
POSITIVE = frozenset({"withdrawn_reference", "premise_change"})


@dataclass(frozen=True, slots=True)
class Template:
    """One situation; ``{e}`` is the entity, ``{f}`` its replacement, ``{n}`` a look-alike."""

    earlier: str
    withdrawn: str
    replacement: str
    premise: str
    unrelated: str
    same_topic: str
    near_miss: str
    revoked: bool = False
    """The withdrawal is a revocation with nothing in its place (``replacement`` unused)."""
    near_miss_replacement: str | None = None
    """The look-alike is replaced by this rather than revoked."""


@dataclass(frozen=True, slots=True)
class LabeledPair:
    """A pair, its label, kind, domain and split."""

    id: str
    domain: str
    kind: str
    invalidates: bool
    pair: Pair
    split: str


T = Template
DOMAINS: dict[str, tuple[list[Template], list[tuple[str, str, str]]]] = {
    "travel": (
        [
            T(
                "Pickup at 8:00 from the {e} Hotel lobby.",
                "The {e} Hotel booking is confirmed.",
                "The {f} Hotel booking is confirmed instead.",
                "Our flight was moved to the next day.",
                "The museum shop sells postcards.",
                "The {e} Hotel has a rooftop pool.",
                "The {e} Bakery order for the picnic is confirmed.",
            ),
            T(
                "Dinner reservation near {e} Station at 19:30.",
                "We arrive at {e} Station.",
                "We now arrive at {f} Station.",
                "The rail strike cancels all evening trains.",
                "My cousin bought a new bicycle.",
                "{e} Station has a luggage storage desk.",
                "{e} Road parking permit is approved.",
            ),
            T(
                "Ferry tickets for the {e} crossing are printed.",
                "We take the {e} ferry on Tuesday.",
                "We take the {f} ferry on Tuesday.",
                "A storm warning closes the harbour all week.",
                "The library extended its hours.",
                "The {e} ferry serves coffee on board.",
                "The {e} Bridge toll increased.",
            ),
            T(
                "Car rental pickup at {e} Airport desk 4.",
                "We land at {e} Airport.",
                "We land at {f} Airport instead.",
                "Our driving licences expired last month.",
                "Tomatoes are in season.",
                "{e} Airport has free wifi.",
                "{e} Airport Hotel shuttle timetable changed.",
            ),
            T(
                "Leave the spare key with the {e} Hotel concierge.",
                "We stay at the {e} Hotel on Friday night.",
                "",
                "The trip was called off because of the snowstorm.",
                "The dentist moved my appointment.",
                "The {e} Hotel offers late checkout.",
                "The {e} Marina berth is booked for Friday.",
                revoked=True,
            ),
        ],
        [
            ("Sunrise", "Riverside", "Sunrise Cafe"),
            ("Harbor", "Lakeview", "Harbor Gym"),
            ("Granite", "Meadow", "Granite Books"),
        ],
    ),
    "scheduling": (
        [
            T(
                "Prepare slides for the {e} review on Thursday.",
                "The {e} review is on Thursday.",
                "The {f} review replaces it on Thursday.",
                "The whole team is on leave Thursday.",
                "The cafeteria menu changed.",
                "The {e} review will be recorded.",
                "The {e} Lab review is on Thursday.",
            ),
            T(
                "Book room {e} for the 10:00 standup.",
                "Room {e} is available at 10:00.",
                "Room {f} is available at 10:00 instead.",
                "The building is closed for renovation.",
                "The parking lot was repainted.",
                "Room {e} has a new projector.",
                "Room {e}B is available at 10:00.",
            ),
            T(
                "Send {e} the agenda before Monday.",
                "{e} chairs Monday's planning meeting.",
                "{f} chairs Monday's planning meeting.",
                "Monday's meeting moved to async updates.",
                "The office plants were watered.",
                "{e} likes agendas with timings.",
                "{e} Jr. chairs the intern meeting.",
            ),
            T(
                "Dial in with code {e} for the vendor call.",
                "The vendor call code is {e}.",
                "The vendor call code is now {f}.",
                "The vendor contract was cancelled.",
                "It might rain tomorrow.",
                "The vendor call code {e} works from mobile.",
                "The code {e}9 is for the townhall.",
            ),
            T(
                "Ask {e} to sign off the budget before the offsite.",
                "{e} approves budgets this quarter.",
                "{f} approves budgets this quarter.",
                "The offsite was replaced by a video call.",
                "The elevator is under maintenance.",
                "{e} prefers budget reviews in the morning.",
                "{e} Labs approves hardware budgets.",
            ),
        ],
        [
            ("Atlas", "Beacon", "Atlas Cafe"),
            ("Orion", "Vega", "Orion Gym"),
            ("Delta", "Sigma", "Delta Park"),
        ],
    ),
    "software": (
        [
            T(
                "Rollback plan for {e} is ready to run.",
                "{e} is open: checkout latency above 2s.",
                "{f} is open: checkout latency above 2s.",
                "The checkout service was decommissioned.",
                "The design team updated the logo.",
                "{e} has a postmortem doc.",
                "{e}0 is open: search is slow.",
            ),
            T(
                "Deploy the fix to cluster {e} tonight.",
                "Production runs on cluster {e}.",
                "Production runs on cluster {f} now.",
                "All deploys are frozen until Monday.",
                "The coffee machine was fixed.",
                "Cluster {e} has autoscaling enabled.",
                "Cluster {e}-staging runs the nightly tests.",
            ),
            T(
                "Pin library {e} to 2.3 in the release branch.",
                "The release uses {e} 2.3.",
                "The release uses {f} 4.1.",
                "The release was cancelled by product.",
                "Lunch is at noon.",
                "{e} 2.3 has good docs.",
                "{e}-lite 2.3 is deprecated.",
            ),
            T(
                "Rotate the {e} API key on Friday.",
                "The {e} API key expires Friday.",
                "The {f} API key expires Friday.",
                "We migrated off the {e} API entirely.",
                "The team photo is on the wiki.",
                "The {e} API has a status page.",
                "The {e} Sandbox key expires Friday.",
            ),
            T(
                "Page the on-call engineer if {e} alerts again.",
                "Alerts for {e} route to the on-call pager.",
                "",
                "The pager rotation was handed to a support vendor.",
                "The all-hands moved to Thursday.",
                "{e} alerts are logged in the dashboard.",
                "Alerts for {e}-canary route to the on-call pager.",
                revoked=True,
                near_miss_replacement="Alerts for {e}-canary route to email.",
            ),
        ],
        [
            ("INC-1234", "INC-5678", "INC-1234X"),
            ("api-gw", "edge-gw", "api-gw-test"),
            ("PAY-42", "PAY-77", "PAY-421"),
        ],
    ),
    "preferences": (
        [
            T(
                "Order the {e} blend when restocking coffee.",
                "My favourite coffee is the {e} blend.",
                "My favourite coffee is now the {f} blend.",
                "My doctor told me to stop caffeine.",
                "The neighbours got a dog.",
                "The {e} blend comes in 1kg bags.",
                "The {e} tea blend is my favourite.",
            ),
            T(
                "Book seats in the {e} section for concerts.",
                "I prefer the {e} section.",
                "I prefer the {f} section now.",
                "I can no longer climb stairs after the injury.",
                "The bus schedule changed.",
                "The {e} section has cup holders.",
                "The {e} Lounge is closed for concerts.",
            ),
            T(
                "Recommend {e} novels for my reading list.",
                "I love {e} novels.",
                "I love {f} novels these days.",
                "I lost my sight and now only use audiobooks.",
                "The printer ran out of ink.",
                "{e} wrote a new preface.",
                "{e} Street bookstore is my favourite.",
            ),
            T(
                "Reserve a table at {e} for date night.",
                "{e} is our date-night place.",
                "{f} is our date-night place now.",
                "We split up last month.",
                "The gym opens at six.",
                "{e} has a new dessert menu.",
                "{e} Express is our lunch place.",
            ),
            T(
                "Get {e} tickets if they tour nearby.",
                "My favourite band is {e}.",
                "My favourite band is {f} these days.",
                "I stopped going to live shows after losing my hearing.",
                "The bakery raised its prices.",
                "{e} released a live album.",
                "{e} Brass is my favourite marching band.",
            ),
        ],
        [
            ("Kona", "Sumatra", "Kona Cola"),
            ("Balcony", "Stalls", "Balcony Bar"),
            ("Murakami", "Ishiguro", "Murakami Sushi"),
        ],
    ),
    "health": (
        [
            T(
                "Set a reminder for {e} at 8 am daily.",
                "I take {e} every morning.",
                "I take {f} every morning instead.",
                "My doctor stopped all my medication.",
                "The car needs new tyres.",
                "{e} should be taken with water.",
                "{e} cream is for the rash.",
            ),
            T(
                "Plan runs around the {e} trail on weekends.",
                "I run the {e} trail on weekends.",
                "I run the {f} trail on weekends now.",
                "I broke my ankle and cannot run for months.",
                "The fridge is making noise.",
                "The {e} trail has water fountains.",
                "The {e} Bike trail is closed.",
            ),
            T(
                "I'm asleep by 10:30 every night; keep evenings quiet.",
                "My bedtime rule is 10:30 every night.",
                "My bedtime rule is 23:30 every night now.",
                "I started an evening shift at {e} and get home around 1 a.m.",
                "The cat learned a new trick.",
                "A 10:30 bedtime helps me wake early.",
                "The {e} closes at 10:30.",
            ),
            T(
                "Book physiotherapy with {e} on Mondays.",
                "{e} is my physiotherapist on Mondays.",
                "{f} is my physiotherapist on Mondays now.",
                "The clinic stopped taking my insurance.",
                "The plants need repotting.",
                "{e} recommends stretching daily.",
                "{e} Pilates studio opens Mondays.",
            ),
            T(
                "Refill the {e} prescription before the trip.",
                "My {e} prescription runs until June.",
                "",
                "My doctor switched me to a monthly injection instead of pills.",
                "The kitchen window is stuck.",
                "{e} prescriptions can be renewed online.",
                "My {e} patch prescription runs until June.",
                revoked=True,
            ),
        ],
        [
            ("Lisinopril", "Losartan", "Lisinopril-HCT"),
            ("Ridgeback", "Pinecrest", "Ridgeback Cafe"),
            ("Dr Okafor", "Dr Lindqvist", "Okafor Pharmacy"),
        ],
    ),
    "finance": (
        [
            T(
                "Pay rent to the {e} account on the 1st.",
                "Rent goes to the {e} account.",
                "Rent goes to the {f} account now.",
                "We bought the flat and no longer pay rent.",
                "The printer needs toner.",
                "The {e} account has online banking.",
                "The {e} Savings account is for holidays.",
            ),
            T(
                "Invest the bonus in the {e} fund.",
                "Our pension is in the {e} fund.",
                "Our pension moved to the {f} fund.",
                "The bonus was cancelled this year.",
                "The garden needs weeding.",
                "The {e} fund publishes quarterly reports.",
                "The {e} Growth fund closed to new investors.",
            ),
            T(
                "File the {e} invoice before month end.",
                "Invoice {e} is due at month end.",
                "Invoice {f} replaces it, due at month end.",
                "The client went bankrupt.",
                "Office chairs were delivered.",
                "Invoice {e} includes VAT.",
                "Invoice {e}-B is due at month end.",
            ),
            T(
                "Budget 300 for the {e} subscription.",
                "The {e} subscription costs 300 a year.",
                "The {f} subscription costs 300 a year instead.",
                "The company now pays for all subscriptions.",
                "The river flooded the meadow.",
                "The {e} subscription renews in March.",
                "The {e} Kids subscription costs 300.",
            ),
            T(
                "Transfer the deposit to {e} by Friday.",
                "The deposit is held by {e}.",
                "The deposit is held by {f} now.",
                "The seller withdrew from the sale.",
                "The cat needs a vet visit.",
                "{e} charges no transfer fee.",
                "The garage deposit is held by {e} Escrow.",
                near_miss_replacement="The garage deposit is held by {f} Escrow.",
            ),
        ],
        [
            ("Northbank", "Eastway", "Northbank Travel"),
            ("Evergreen", "Summit", "Evergreen Bonds"),
            ("INV-2031", "INV-2044", "INV-2031R"),
        ],
    ),
}


def _split(pair_id: str, template: int) -> str:
    if template >= FRESH_FROM:
        return "fresh"
    bucket = int(hashlib.sha256(pair_id.encode()).hexdigest(), 16) % 10
    return "held_out" if bucket < 3 else "tune"


def _later(kind: str, t: Template, e: str, f: str, n: str, event_id: str) -> Later:
    fill = {"e": e, "f": f, "n": n}
    withdrawn = t.withdrawn.format(**fill)
    match kind:
        case "withdrawn_reference" if t.revoked:
            return Later(
                event_id=event_id,
                epoch=9,
                op="revoke",
                text=f"No longer valid: {withdrawn}",
                withdrawn_id="w",
                withdrawn_text=withdrawn,
            )
        case "withdrawn_reference":
            replacement = t.replacement.format(**fill)
            return Later(
                event_id=event_id,
                epoch=9,
                op="supersede",
                text=replacement,
                withdrawn_id="w",
                withdrawn_text=withdrawn,
                replacement_id="r",
                replacement_text=replacement,
            )
        case "near_miss" if t.near_miss_replacement:
            gone, instead = t.near_miss.format(**fill), t.near_miss_replacement.format(**fill)
            return Later(
                event_id=event_id,
                epoch=9,
                op="supersede",
                text=instead,
                withdrawn_id="w",
                withdrawn_text=gone,
                replacement_id="r",
                replacement_text=instead,
            )
        case "near_miss":
            gone = t.near_miss.format(**fill)
            return Later(
                event_id=event_id,
                epoch=9,
                op="revoke",
                text=f"No longer valid: {gone}",
                withdrawn_id="w",
                withdrawn_text=gone,
            )
        case _:
            text = {
                "premise_change": t.premise,
                "unrelated": t.unrelated,
                "same_topic": t.same_topic,
            }[kind].format(**fill)
            return Later(event_id=event_id, epoch=9, op="assert", text=text)


def pairs() -> list[LabeledPair]:
    """Every labeled pair, in a stable order."""
    found = []
    for domain, (templates, fills) in DOMAINS.items():
        for t_index, template in enumerate(templates):
            for f_index, (e, f, n) in enumerate(fills):
                earlier = sourced_item(
                    f"{domain}-{t_index}-{f_index}", template.earlier.format(e=e, f=f, n=n)
                )
                for kind in KINDS:
                    pair_id = f"{domain}/{t_index}/{f_index}/{kind}"
                    later = _later(kind, template, e, f, n, f"ev-{pair_id}")
                    found.append(
                        LabeledPair(
                            id=pair_id,
                            domain=domain,
                            kind=kind,
                            invalidates=kind in POSITIVE,
                            pair=Pair(later=later, earlier=earlier),
                            split=_split(pair_id, t_index),
                        )
                    )
    return found
