"""``readmit verify VIEW.json``: check a signed Return View."""

import os
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from readmit.admission.view import verify_view
from readmit.cli.inputs import read_json
from readmit.clock import now, parse_time
from readmit.config import verifier_from_env
from readmit.errors import InvalidInput


@click.command()
@click.argument("view_file", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--at", "at_text", default=None, help="Check expiry at this RFC 3339 time instead of now."
)
def verify(view_file: Path, at_text: str | None) -> None:
    """Exit 0 only if VIEW_FILE's signature, item digests and expiry hold.

    VIEW_FILE holds a view, or a decision with a "view" field, as `replay --json`
    prints them. The key comes from READMIT_VERIFY_KEY (an Ed25519 public key) or
    READMIT_SIGNING_KEY.
    """
    view = _load(view_file)
    at: datetime = now() if at_text is None else _time(at_text)
    verified = verify_view(view, verifier_from_env(os.environ), at)
    click.echo(
        f"ok: view {view.get('cycle')} verified: {len(verified.item_ids)} items, "
        f"expires {view.get('expires_at')}"
    )


def _time(text: str) -> datetime:
    try:
        return parse_time(text)
    except ValueError as exc:
        raise InvalidInput(f"--at: {exc}") from exc


def _load(path: Path) -> dict[str, Any]:
    data = read_json(path)
    if isinstance(data, dict) and isinstance(data.get("view"), dict):
        data = data["view"]
    if not isinstance(data, dict):
        raise InvalidInput(f"{path} holds no view (expected a JSON object)")
    return data
