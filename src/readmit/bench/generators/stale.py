"""A STALE-shaped generator: records in the exact shape of spec §5, offline and seeded.

Each record plants an old belief, a later observation that changes its premise
without negating it (Type I), and 48 sessions of unrelated conversation, so the
STALE path (file → loader → episodes → methods → report) runs without the
real dataset. Its probes need an LLM to answer and judge, as the real ones do.
"""

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from readmit.clock import format_time

CASES = [
    (
        "I'm in bed by 10:30 every night, no exceptions.",
        "I just started an evening shift at a bookstore; closing and the last bus get me home "
        "around 1 a.m.",
        "A late shift makes a 10:30 bedtime impossible on work nights.",
        (
            "Do I still usually go to bed by 10:30?",
            "Plan a wind-down routine that ends at 10:30 every night.",
            "The landlord offers a discount if I lock the gate at 10:15 nightly. Should I sign?",
        ),
    ),
    (
        "I bike to the office every day; it's only ten minutes.",
        "We moved across the river last month; the office is now a 40-minute drive away.",
        "The new home is too far for a daily bike commute.",
        (
            "Do I still bike to work every day?",
            "Suggest bike gear for my daily commute.",
            "Should I cancel my car's parking permit at the office?",
        ),
    ),
    (
        "I cook vegetarian dinners for the whole family every night.",
        "My doctor put me on a high-protein diet with fish twice a week after the surgery.",
        "The diet change alters what the family dinners include.",
        (
            "Are my family dinners still fully vegetarian?",
            "Give me a week of vegetarian-only dinner plans.",
            "Should I buy a second fish pan?",
        ),
    ),
    (
        "I work fully remote and never travel for work.",
        "My new role as regional lead means I visit the Lisbon office every other week.",
        "Regular travel changes availability and packing needs.",
        (
            "Do I still never travel for work?",
            "Plan my weekly schedule assuming I'm home every day.",
            "Is a carry-on suitcase worth buying?",
        ),
    ),
    (
        "My savings go into a conservative bond fund only.",
        "After the promotion I opened a brokerage account and buy index funds monthly.",
        "Investment approach now includes equities.",
        (
            "Is my money still only in bonds?",
            "Recommend only bond products for my new savings.",
            "Should I read up on index fund fees?",
        ),
    ),
]
FILLER = [
    ("Any good podcast recommendations?", "Try a history podcast for your commute."),
    ("What's a quick lunch idea?", "A grain bowl with leftovers works well."),
    ("How do I clean a cast-iron pan?", "Rinse, dry on heat, and oil lightly."),
    ("Tips for a rainy weekend?", "A museum visit or a board game afternoon."),
    ("How long should I steep green tea?", "About two to three minutes."),
]


def record(seed: int) -> dict[str, Any]:
    """One synthetic Type I record."""
    rng = random.Random(f"stale/{seed}")
    old_text, new_text, explanation, queries = CASES[seed % len(CASES)]
    old = rng.randrange(0, 15)
    new = rng.randrange(old + 5, 50)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    sessions = []
    for s in range(50):
        user, assistant = rng.choice(FILLER)
        if s == old:
            user = f"{old_text} Anyway, {user[0].lower()}{user[1:]}"
        elif s == new:
            user = f"Some news: {new_text}"
        sessions.append(
            [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
        )
    return {
        "uid": f"synthetic-{seed}",
        "M_old": old_text,
        "M_new": new_text,
        "explanation": explanation,
        "type": "I",
        "probing_queries": {
            "dim1_query": queries[0],
            "dim2_query": queries[1],
            "dim3_query": queries[2],
        },
        "haystack_session": sessions,
        "relevant_session_index": [old, new],
        "timestamps": [format_time(start + timedelta(days=s)) for s in range(50)],
    }


def write(path: Path, count: int = 20) -> Path:
    """Write ``count`` records to ``path`` (a STALE-format JSON file)."""
    path.write_text(json.dumps([record(s) for s in range(count)], indent=1), encoding="utf-8")
    return path
