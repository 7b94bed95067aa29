"""Every shape that crosses readmit's edges, each defined once.

- `readmit.wire.fields`: the field types all edges share (`Name`, `Text`, `Instant`).
- `readmit.wire.inbound` and `readmit.wire.edge`: untrusted events in (the scenario
  format), validated and turned into domain values, every problem named by field
  and by position in its batch (`readmit.errors.InvalidEventAt`, re-exported here); a
  misspelled field is named with the closest known one (`unknown_field`).
- `readmit.wire.codec`: the store's trusted codec for events, items and obligations.
- `readmit.wire.outbound`: what goes out (items, memories, exclusions, decision
  records, the agent's copy of a decision, signed views) as closed TypedDicts.

Times are written one way: RFC 3339 in UTC with a ``Z``.
"""

from readmit.errors import InvalidEventAt
from readmit.wire.codec import (
    draft_to_wire,
    event_from_json,
    event_to_wire,
    item_from_json,
    item_to_json,
    obligation_from_json,
    obligation_to_json,
)
from readmit.wire.edge import at_position, parse_event, parse_step, unknown_field
from readmit.wire.fields import (
    Instant,
    Name,
    Text,
    Wild,
    check_name,
    check_returning,
    check_text,
)
from readmit.wire.inbound import OPS, Op

__all__ = [
    "OPS",
    "Instant",
    "InvalidEventAt",
    "Name",
    "Op",
    "Text",
    "Wild",
    "at_position",
    "check_name",
    "check_returning",
    "check_text",
    "draft_to_wire",
    "event_from_json",
    "event_to_wire",
    "item_from_json",
    "item_to_json",
    "obligation_from_json",
    "obligation_to_json",
    "parse_event",
    "parse_step",
    "unknown_field",
]
