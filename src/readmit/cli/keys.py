"""``readmit keys``: signing keys for views, and agents' API keys (kept only as hashes)."""

from datetime import datetime

import click

from readmit.cli.inputs import db_given, open_existing_store, workspace_agents
from readmit.cli.serve import DB_OPTION
from readmit.clock import format_time, now
from readmit.errors import NotFound
from readmit.service.keys import PREFIX, key_hash, new_key
from readmit.wire import check_name

_UNSET = (
    "name the store the workspace was made in with --db URL (a server's is the --db or "
    "READMIT_DB it was started with), or export READMIT_DB in this shell too"
)
"""What a keys command says when no store was named and the default is not there."""


@click.group()
def keys() -> None:
    """Manage agent API keys (stored hashed)."""


@keys.command("signing")
def keys_signing() -> None:
    """Print a new Ed25519 key pair for signing views and for checking them.

    READMIT_SIGNING_KEY is for the service; READMIT_VERIFY_KEY for anyone who checks views.
    """
    from readmit.config import new_ed25519_keys

    private, public = new_ed25519_keys()
    click.echo(f"READMIT_SIGNING_KEY={private}")
    click.echo(f"READMIT_VERIFY_KEY={public}")


@keys.command("create")
@click.argument("workspace_name", metavar="WORKSPACE")
@click.argument("agent")
@DB_OPTION
def keys_create(workspace_name: str, agent: str, db: str) -> None:
    """Create an API key for AGENT of WORKSPACE and print it (it is shown only once).

    The store must exist already (made by `readmit workspace create`).
    """
    check_name(workspace_name, "WORKSPACE")
    check_name(agent, "AGENT")
    key = new_key()
    store = open_existing_store(db, db_given(), _UNSET)
    try:
        store.add_agent_key(workspace_name, agent, key_hash(key), now())
    finally:
        store.close()
    click.echo(key)


@keys.command("list")
@click.option("--workspace", "workspace_name", default=None, help="Only this workspace.")
@DB_OPTION
def keys_list(workspace_name: str | None, db: str) -> None:
    """List the stored API keys: workspace, agent, when made, and the key's hash start.

    The hash start names a key to `readmit keys revoke --key`; the key itself is not kept.
    """
    if workspace_name is not None:
        check_name(workspace_name, "--workspace")
    store = open_existing_store(db, db_given(), _UNSET)
    try:
        if workspace_name is not None:
            workspace_agents(store, workspace_name)
        rows = store.agent_keys(workspace_name)
    finally:
        store.close()
    if not rows:
        click.echo("no agent keys stored")
    for row in rows:
        at = format_time(datetime.fromisoformat(row.created_at))
        click.echo(f"{row.workspace}  {row.agent}  {at}  {row.fingerprint}")


@keys.command("revoke")
@click.argument("workspace_name", metavar="WORKSPACE")
@click.argument("agent")
@click.option(
    "--key",
    "fingerprint",
    default=None,
    help="Only the key whose hash starts so (as `readmit keys list` shows it), or the key "
    "itself (rmk_...). Default: every key of AGENT.",
)
@DB_OPTION
def keys_revoke(workspace_name: str, agent: str, fingerprint: str | None, db: str) -> None:
    """Revoke AGENT's API keys in WORKSPACE: every server over the store refuses them at once."""
    check_name(workspace_name, "WORKSPACE")
    check_name(agent, "AGENT")
    which = "key"
    if fingerprint is not None:
        check_name(fingerprint, "--key")
        if fingerprint.startswith(PREFIX):  # the key itself: matched by its hash, not echoed
            fingerprint, which = key_hash(fingerprint), "such key"
        else:
            if not fingerprint.startswith("sha256:"):  # the hex `keys list` shows after it
                fingerprint = f"sha256:{fingerprint}"
            which = f"key starting {fingerprint!r}"
    store = open_existing_store(db, db_given(), _UNSET)
    try:
        workspace_agents(store, workspace_name, [agent])
        revoked = store.revoke_agent_keys(workspace_name, agent, fingerprint)
    finally:
        store.close()
    if not revoked:
        raise NotFound(f"{agent} has no {which} in workspace {workspace_name!r}")
    click.echo(f"revoked {revoked} key(s) of {agent} in {workspace_name}")
