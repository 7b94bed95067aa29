"""``readmit demo``: the travel case (docs/concepts.md, worked example), both returns, offline."""

from pathlib import Path

import click

from readmit.cli.replay import HTML_OPTION, run
from readmit.examples.travel import travel_scenario
from readmit.scenario import load_scenario

_INTRO = """\
A1 (itinerary) saw the Sunrise Hotel booking, the 9:00 train and an 8:00 pickup
from Sunrise, then went offline. Meanwhile the team cancelled Sunrise, booked
Riverside, moved the train to 9:30 and left "update the pickup" open.
A1 comes back twice on 3 May: at 12:00, when only hearsay says where the pickup is,
and at 14:00, after A4 recorded a pickup the driver confirmed (p1, with a receipt).
"""


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the decisions as JSON.")
@click.option(
    "--verifier",
    "verifier_spec",
    default="builtin",
    show_default=True,
    help="Implicit-invalidation verifier.",
)
@HTML_OPTION
def demo(as_json: bool, verifier_spec: str, html_dir: Path | None) -> None:
    """Replay the travel case on an in-memory store and print both decisions.

    docs/concepts.md walks through it item by item and defines every term.
    """
    run(
        load_scenario(travel_scenario()),
        "sqlite://:memory:",
        verifier_spec,
        as_json=as_json,
        html_dir=html_dir,
        intro=None if as_json else _INTRO,
    )
