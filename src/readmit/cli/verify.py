"""``readmit verify VIEW.json``: check a signed Return View."""

import os
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from readmit.admission.hidden import RULE, redact
from readmit.admission.view import verify_view
from readmit.cli.inputs import read_json
from readmit.cli.words import counted
from readmit.clock import now, parse_time
from readmit.config import verifier_from_env
from readmit.errors import InvalidInput, ViewRejected
from readmit.scenario import FORMAT as SCENARIO_FORMAT


@click.command()
@click.argument("view_file", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--at", "at_text", default=None, help="Check expiry at this RFC 3339 time instead of now."
)
@click.option(
    "--decision",
    "number",
    type=click.IntRange(1),
    default=None,
    help="In `replay --json` output, verify the view of decision N (counting from 1).",
)
def verify(view_file: Path, at_text: str | None, number: int | None) -> None:
    """Exit 0 only if VIEW_FILE's signature, item digests and expiry hold.

    VIEW_FILE holds a view, a decision with a "view" field, or the whole output of
    `replay --json` with --decision N. A blocked or reset decision has no view and is
    refused as such; so is a decision whose own fields (items, texts, exclusions) say
    other than the signed view it holds, and a view holding another under "view". A
    decision's private memories are in no view: nothing vouches for them. The key comes
    from READMIT_VERIFY_KEY (an Ed25519 public key) or READMIT_SIGNING_KEY.
    """
    view, record, what = _load(view_file, number)
    at: datetime = now() if at_text is None else _time(at_text)
    try:
        verified = verify_view(view, verifier_from_env(os.environ), at)
    except ViewRejected as exc:
        if at_text is None and exc.problem.startswith("not valid at"):
            raise ViewRejected(
                f"{exc.problem}: give --at TIME to check it at another time"
            ) from None
        if exc.problem == "signature does not match":  # most often another shell's key
            raise ViewRejected(f"{exc.problem}: {_WHICH_KEY}") from None
        raise
    if record is not None:
        _agrees(record, view, what)
    click.echo(
        f"ok: view {view.get('cycle')} verified: {counted(len(verified.item_ids), 'item')}, "
        f"expires {view.get('expires_at')}"
    )
    if record is not None and record.get("readmitted"):
        click.echo(f"note: {UNSIGNED_MEMORIES}", err=True)


_WHICH_KEY = (
    "was it signed with another key? The key is READMIT_VERIFY_KEY (an Ed25519 public key) "
    "or else READMIT_SIGNING_KEY, which must be the one the signer (the server, the replay) "
    "used; a view altered since it was signed does not match either"
)


def _time(text: str) -> datetime:
    try:
        return parse_time(text)
    except ValueError as exc:
        raise InvalidInput(
            f"--at: {exc} (write an RFC 3339 time, e.g. 2026-05-03T14:30:00Z)"
        ) from exc


def _load(path: Path, number: int | None) -> tuple[dict[str, Any], dict[str, Any] | None, str]:
    """The view to verify, the decision that holds it (if one does), and what to call it."""
    data = read_json(path)
    listed = isinstance(data, dict) and isinstance(data.get("decisions"), list)
    if listed:
        decisions = data["decisions"]
        if number is None:
            raise InvalidInput(
                f"{path} holds {len(decisions)} decisions (replay output); "
                "pick one with --decision N"
            )
        if number > len(decisions):
            raise InvalidInput(f"{path} has no decision {number} (it holds {len(decisions)})")
        data = decisions[number - 1]
    elif isinstance(data, dict) and data.get("format") == SCENARIO_FORMAT:
        raise InvalidInput(
            f"{path} is a scenario, not a view: replay it first "
            f"('readmit replay {path} --json > decisions.json'), then verify that output "
            "with --decision N"
        )
    elif number is not None:
        raise InvalidInput(f'--decision: {path} is not replay output (no "decisions" list)')
    what = f"decision {number}" if listed else str(path)
    view = _view_of(data, what)
    return view, (data if view is not data else None), what


def _view_of(data: object, what: str) -> dict[str, Any]:
    """The view ``data`` holds (itself, or a decision's), refusing what holds none.

    Raises:
        ViewRejected: for a view that holds another under "view" (a forgery may wrap a
            genuine view so that a check of the inner one vouches for the outer).
    """
    if isinstance(data, dict) and {"code", "message"} <= data.keys() and "view" not in data:
        raise InvalidInput(  # what curl saved when the service refused the request
            f"{what} holds an error answer, not a view: {data['code']}: {data['message']}"
        )
    if isinstance(data, dict) and "outcome" in data and data.get("view") is None:
        if data["outcome"] == "issued":  # a record that says so yet holds none
            raise InvalidInput(f'{what} says it was issued but holds no "view" to verify')
        raise InvalidInput(
            f"{what} was {data['outcome']}: no view was issued, so there is no view to "
            'verify (its "missing" field says what it lacked)'
        )
    if isinstance(data, dict) and isinstance(data.get("view"), dict):
        if _VIEW_OWN & data.keys():
            raise ViewRejected(
                f'{what} is a view that holds another view under "view": which one it '
                "vouches for is not clear, so neither is taken"
            )
        data = data["view"]
    if not isinstance(data, dict):
        raise InvalidInput(f"{what} holds no view (expected a JSON object)")
    return data


UNSIGNED_MEMORIES = (
    "the decision's readmitted memories are not in its view: the signature does not cover them"
)
"""What ``verify`` of a decision says of its private memories, which no view holds."""
_VIEW_OWN = frozenset({"format", "signature"})
"""Fields a view has and a decision holding one does not."""
_MIRRORED = ("workspace", "agent", "cycle", "epoch", "departure_epoch", "task", "purpose")
"""A decision's fields that repeat its view's, unsigned."""


def _agrees(record: dict[str, Any], view: dict[str, Any], what: str) -> None:
    """Refuse a decision whose own fields say other than the signed view it holds.

    Only the view is signed; a decision's ``items`` or ``texts`` rewritten around a
    genuine view would otherwise verify, and a tool reading them would act on what no one
    signed. The record's exclusions are compared as the view shows them (`redact`, by any
    rule a view was signed under): the view leaves out what the agent may not read
    (``hidden``). Private memories are in no view: nothing here vouches for them.

    Raises:
        ViewRejected: naming the first field that differs.
    """
    items = [i.get("id") for i in view.get("items", []) if isinstance(i, dict)]
    texts = {i.get("id"): i.get("text") for i in view.get("items", []) if isinstance(i, dict)}
    differs = [k for k in _MIRRORED if k in record and record[k] != view.get(k)]
    differs += [k for k in ("items", "selected") if k in record and record[k] != items]
    if record.get("outcome", "issued") != "issued":
        differs.append("outcome")
    if "excluded" in record and not _shown_as(record, view.get("excluded"), items):
        differs.append("excluded")
    told = record.get("texts")
    if isinstance(told, dict) and any(told.get(i, texts[i]) != texts[i] for i in texts):
        differs.append("texts")
    if differs:
        raise ViewRejected(
            f'{what}: its "{differs[0]}" differs from its signed view\'s (only the view is '
            "signed: act on the view's own fields)"
        )


def _shown_as(record: dict[str, Any], shown: object, items: list[Any]) -> bool:
    """Whether ``record``'s exclusions, redacted for its agent, are ``shown``.

    What the redaction leaves out (``not_selected``, what the record says is ``hidden``)
    is unsigned, so none of it may name an item of the view (``items``): a forger could
    otherwise exclude, in the record, what the signed view tells the agent to act on.
    """
    hidden, excluded = record.get("hidden") or [], record.get("excluded")
    if not (isinstance(hidden, list) and all(isinstance(h, str) for h in hidden)):
        return False
    if not (isinstance(excluded, list) and all(isinstance(e, dict) for e in excluded)):
        return False
    named = {e.get("item") for e in excluded if isinstance(e.get("item"), str)}
    if not named.union(hidden).isdisjoint(items):
        return False
    try:  # the record's own shape is unchecked: one the redaction cannot read differs
        return any(redact(excluded, frozenset(hidden), rule) == shown for rule in _RULES)
    except (KeyError, TypeError, AttributeError):
        return False


_RULES = range(RULE, 0, -1)
"""Every rule a view's exclusions were redacted by (`readmit.admission.hidden.RULE`)."""
