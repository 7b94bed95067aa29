"""``readmit migrate``: bring a store to this readmit's schema, or say what it lacks."""

import time

import click

from readmit.cli.inputs import db_given, open_existing_store
from readmit.cli.serve import DB_OPTION
from readmit.cli.words import counted
from readmit.errors import MigrationError
from readmit.store.deadline import patiently
from readmit.store.migrations import MIGRATIONS, migrate
from readmit.store.upgrade import lacking

_UNSET = "name the store to migrate with --db URL (or READMIT_DB)"
"""What migrate says when no store was named and the default is not there."""


@click.command("migrate")
@DB_OPTION
@click.option(
    "--check",
    is_flag=True,
    help="Only list the migrations the store lacks, applying none: exit 0 if none, 1 if any.",
)
def migrate_command(db: str, check: bool) -> None:
    """Apply the schema migrations the store lacks, each in its own transaction.

    Any command or server that opens the store applies them too; run this first when
    upgrading readmit, so that no server waits on a long migration, and stop the older
    readmit's processes before: once migrated, an older readmit refuses the store. A
    store that a newer readmit migrated is refused (exit 4): upgrade readmit.
    """
    store = open_existing_store(db, db_given(), _UNSET, migrate=False)
    try:
        absent = lacking(store.conn)
        if check:
            _said(absent)
            click.get_current_context().exit(1 if absent else 0)
        if not absent:
            click.echo(f"nothing to apply: the store is at this readmit's schema ({_LAST})")
            return
        new = len(absent) == len(MIGRATIONS)  # an empty database: no older readmit made it
        started = time.perf_counter()
        with patiently(store.conn.deadline):  # a large store's can take minutes: no deadline
            try:
                ran = migrate(store.conn)  # another process may have applied some meanwhile
            except MigrationError as failed:  # those before it stay applied: say which
                done = [name for name in absent if name not in lacking(store.conn)]
                if not done:
                    raise
                raise MigrationError(f"{failed}; applied before it: {', '.join(done)}") from failed
        took = time.perf_counter() - started
    finally:
        store.close()
    for name in ran:
        click.echo(f"applied {name}")
    if not ran:
        click.echo(f"nothing to apply: another process brought the store to this schema ({_LAST})")
        return
    older = "" if new else "; an older readmit no longer opens it"
    click.echo(
        f"the store is at this readmit's schema ({_LAST}): {counted(len(ran), 'migration')} "
        f"applied in {took:.1f} s{older}"
    )


_LAST = MIGRATIONS[-1][0]


def _said(absent: list[str]) -> None:
    """What ``--check`` prints: the migrations the store lacks, or that it lacks none."""
    if not absent:
        click.echo(f"up to date: the store is at this readmit's schema ({_LAST})")
        return
    click.echo(f"the store lacks {counted(len(absent), 'migration')}:")
    for name in absent:
        click.echo(f"  {name}")
    click.echo("'readmit migrate' applies them; an older readmit no longer opens the store after")
