"""The travel case of paper appendix C.6 (spec §3) as a scenario, shared by demo, docs and tests.

A1 (itinerary) departs with a coherent plan. While it is away the team cancels
Sunrise, books Riverside, moves the train to 9:30 and leaves the pickup open.
The first return is blocked (Cov = 1/2, Crit = 3/4); after a source-bound
pickup confirmation p1 the second return issues {o_h, f_h, o_t, f_t, h1, t1, p1, c}.
"""

from typing import Any


def _item(at: str, author: str, item: dict[str, Any], op: str = "assert") -> dict[str, Any]:
    return {"at": at, "author": author, "op": op, "item": item}


def travel_scenario() -> dict[str, Any]:
    """A fresh copy of the travel scenario in the ``readmit.scenario/1`` format."""
    return {
        "format": "readmit.scenario/1",
        "workspace": "family-trip",
        "agents": [
            {"id": "A1", "principal": "family", "role": "itinerary"},
            {"id": "A2", "principal": "family", "role": "booking"},
            {"id": "A3", "principal": "family", "role": "budget"},
            {"id": "A4", "principal": "family", "role": "transport"},
            {"id": "X1", "principal": "agency", "role": "partner"},
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
            _item(
                "2026-05-01T08:00:00Z",
                "A1",
                {
                    "id": "c",
                    "kind": "constraint",
                    "supports": ["d_c"],
                    "text": "Family requirements: a quiet hotel near the station, "
                    "total hotel cost below $300.",
                },
            ),
            _item(
                "2026-05-01T08:05:00Z",
                "A2",
                {
                    "id": "h0",
                    "key": "hotel-booking",
                    "supports": ["d_h"],
                    "text": "Sunrise Hotel is booked, refundable, $268 in total.",
                },
            ),
            _item(
                "2026-05-01T08:10:00Z",
                "A4",
                {
                    "id": "t0",
                    "key": "train",
                    "supports": ["d_t"],
                    "text": "The train departs at 9:00.",
                },
            ),
            _item(
                "2026-05-01T08:15:00Z",
                "A1",
                {
                    "id": "p0",
                    "supports": ["d_p"],
                    "text": "Recommended pickup at 8:00 from Sunrise Hotel.",
                },
            ),
            {
                "at": "2026-05-01T08:20:00Z",
                "op": "obligation",
                "author": "A1",
                "obligation": {
                    "id": "o_h",
                    "role": "itinerary",
                    "text": "Prepare the final hotel details.",
                    "requires": ["d_h", "d_c"],
                    "critical": ["d_h", "d_c"],
                    "frontier": {
                        "id": "f_h",
                        "text": "Hotel: check the booking against the requirements.",
                    },
                },
            },
            {
                "at": "2026-05-01T08:25:00Z",
                "op": "experience",
                "agent": "A1",
                "experience": {
                    "id": "x_quiet",
                    "source": "c",
                    "text": "The family cares most about quiet; near the station is fine if quiet.",
                },
            },
            {
                "at": "2026-05-01T08:26:00Z",
                "op": "experience",
                "agent": "A1",
                "experience": {
                    "id": "x_desk",
                    "source": "h0",
                    "text": "Sunrise's front desk agreed to an early breakfast.",
                },
            },
            {
                "at": "2026-05-01T08:27:00Z",
                "op": "experience",
                "agent": "A1",
                "experience": {
                    "id": "x_door",
                    "source": "p0",
                    "text": "The driver prefers Sunrise's side entrance for the pickup.",
                },
            },
            {"at": "2026-05-01T09:00:00Z", "op": "depart", "agent": "A1"},
            {
                "at": "2026-05-02T10:00:00Z",
                "op": "revoke",
                "author": "A2",
                "target": "h0",
                "why": "Sunrise cancelled the reservation for maintenance.",
            },
            _item(
                "2026-05-02T10:30:00Z",
                "A2",
                {
                    "id": "h1",
                    "key": "hotel-booking",
                    "supports": ["d_h"],
                    "text": "Riverside Hotel is booked as the replacement, $282 in total.",
                },
            ),
            {
                "at": "2026-05-02T11:00:00Z",
                "op": "supersede",
                "author": "A4",
                "target": "t0",
                "item": {
                    "id": "t1",
                    "key": "train",
                    "supports": ["d_t"],
                    "text": "The train now departs at 9:30.",
                },
            },
            {
                "at": "2026-05-02T11:30:00Z",
                "op": "obligation",
                "author": "A4",
                "obligation": {
                    "id": "o_t",
                    "role": "itinerary",
                    "text": "Update the pickup for the train.",
                    "requires": ["d_t", "d_p", "d_c"],
                    "critical": ["d_t", "d_p", "d_c"],
                    "frontier": {
                        "id": "f_t",
                        "text": "Pickup: a new location and time must be confirmed.",
                    },
                },
            },
            _item(
                "2026-05-02T12:00:00Z",
                "A3",
                {
                    "id": "px",
                    "supports": ["d_p"],
                    "unconfirmed": True,
                    "text": "Someone said the pickup might move to 8:15.",
                },
            ),
            _item(
                "2026-05-02T12:10:00Z",
                "X1",
                {
                    "id": "n1",
                    "readers": {"principals": ["agency"]},
                    "text": "Agency note: the Riverside commission is 12%.",
                },
            ),
            {
                "at": "2026-05-03T12:00:00Z",
                "op": "return",
                "agent": "A1",
                "task": "trip",
                "purpose": "itinerary",
            },
            {
                "at": "2026-05-03T13:00:00Z",
                "op": "evidence",
                "author": "A4",
                "source": {
                    "id": "src_p1",
                    "text": "Driver confirmation RV-4471: 8:30 pickup at Riverside Hotel.",
                },
            },
            _item(
                "2026-05-03T13:05:00Z",
                "A4",
                {
                    "id": "p1",
                    "supports": ["d_p"],
                    "cites": ["src_p1"],
                    "text": "Confirmed pickup at 8:30 from Riverside Hotel for the 9:30 train.",
                },
            ),
            {
                "at": "2026-05-03T14:00:00Z",
                "op": "return",
                "agent": "A1",
                "task": "trip",
                "purpose": "itinerary",
            },
        ],
    }
