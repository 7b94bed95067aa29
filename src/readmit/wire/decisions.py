"""What the store refuses in a decision or an agent key a library caller records.

`readmit.store.records` and `readmit.store.agent_keys` write them: the audit log must
hold only what readmit itself would have logged, and `readmit.report` reads records
back with `record_problem`.
"""

import re
from collections.abc import Container, Mapping
from typing import Any

from readmit.errors import InvalidInput
from readmit.wire.domain import dated, strings

OUTCOMES = ("issued", "blocked", "reset")
"""A decision's outcomes (`readmit.admission.decision`)."""
_KEY_HASH = re.compile(r"sha256:[0-9a-f]{64}")
"""The stored form of an agent key (`readmit.service.keys.key_hash`)."""


def checked_decision(
    agents: Container[str],
    workspace: str,
    agent: str,
    at: object,
    epoch: object,
    outcome: object,
    record: object,
) -> None:
    """Refuse a decision the audit log would keep wrong (``agents``: ``workspace``'s).

    Raises:
        InvalidInput: naming the field at fault (an unknown agent or workspace too).
        InvalidEvent: if ``at`` has no time zone.
    """
    strings(("agent", agent))
    if agent not in agents:
        raise InvalidInput(f"decision of {agent!r}: no such agent in the workspace")
    dated(at, f"decision of {agent}")
    if type(epoch) is not int or not 0 <= epoch < 2**63:
        raise InvalidInput(f"decision epoch must be an integer, 0 or more, not {epoch!r}")
    if outcome not in OUTCOMES:
        raise InvalidInput(
            f"decision outcome must be one of {', '.join(OUTCOMES)}, not {outcome!r}"
        )
    if not isinstance(record, dict):
        raise InvalidInput(f"decision record must be a dict, not {type(record).__name__}")
    problem = record_problem(record)
    if problem is not None:
        raise InvalidInput(f"decision record is not in the shape readmit logs: {problem}")
    if (record["workspace"], record["agent"]) != (workspace, agent):
        raise InvalidInput(
            f"decision record names {record['agent']!r} in {record['workspace']!r}, "
            f"not {agent!r} in {workspace!r}"
        )


_LOGGED: dict[str, type | tuple[type, ...]] = {
    "workspace": str,
    "cycle": str,
    "agent": str,
    "at": str,
    "epoch": int,
    "departure_epoch": int,
    "outcome": str,
    "coverage": dict,
    "items": list,
    "selected": list,
    "excluded": list,
    "readmitted": list,
    "withheld": list,
    "view": (dict, type(None)),
}
"""What every readmit has logged of a decision, with its JSON type (the keys logged since,
``hidden`` among them, are `readmit.report.upgrade_record`'s to restore or leave out)."""


def record_problem(record: Mapping[str, Any]) -> str | None:
    """What keeps ``record`` from being read as a logged decision record, if anything.

    The keys every readmit has logged, with their types: `readmit.report` reads them
    without asking (a record a library caller made up got an internal ``KeyError``).
    """
    for key, kind in _LOGGED.items():
        if key not in record:
            return f"it has no {key!r}"
        value = record[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            return f"its {key!r} is {type(value).__name__}"
    return None


def checked_key(key_hash: object, at: object) -> None:
    """Refuse an agent key's stored form that no key hashes to, or a time without a zone.

    Raises:
        InvalidInput: for a ``key_hash`` not made by `readmit.service.keys.key_hash`.
        InvalidEvent: if ``at`` has no time zone.
    """
    if not (isinstance(key_hash, str) and _KEY_HASH.fullmatch(key_hash)):
        raise InvalidInput("key_hash must be readmit.service.keys.key_hash(key), not a raw key")
    dated(at, "agent key")
