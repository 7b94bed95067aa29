"""The ``readmit`` command line: demo, replay, verify, explain, audit, serve, mcp, keys."""

import sys
from typing import Any

import click

from readmit.errors import (
    Forbidden,
    InvalidInput,
    NotFound,
    ReadmitError,
    StoreError,
    Unauthenticated,
    VerifierUnavailable,
    ViewRejected,
)

EXIT_CODES: dict[type[ReadmitError], int] = {
    InvalidInput: 2,
    ViewRejected: 3,
    StoreError: 4,
    VerifierUnavailable: 5,
    Unauthenticated: 6,
    Forbidden: 6,
    NotFound: 4,
}
"""Exit code by error class (the most specific base wins); any other `ReadmitError` exits 1."""


def exit_code(error: ReadmitError) -> int:
    """The process exit code for ``error``."""
    for cls in type(error).__mro__:
        if cls in EXIT_CODES:
            return EXIT_CODES[cls]
    return 1


class _Group(click.Group):
    """Turns every `ReadmitError` into one ``error:`` line and its exit code, never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ReadmitError as error:
            click.echo(f"error [{error.code}]: {error}", err=True)
            sys.exit(exit_code(error))


@click.group(cls=_Group)
@click.version_option(package_name="readmit")
def cli() -> None:
    """Decide which remembered state a returning agent may still act on (TRACE)."""


def main() -> None:
    """Console-script entry point."""
    cli()


def _register() -> None:
    from readmit.cli import audit, bench, demo, replay, serve, verifiers, verify

    cli.add_command(demo.demo)
    cli.add_command(replay.replay_command)
    cli.add_command(verify.verify)
    cli.add_command(audit.explain)
    cli.add_command(audit.audit)
    cli.add_command(serve.serve)
    cli.add_command(serve.mcp_command)
    cli.add_command(serve.workspace)
    cli.add_command(serve.keys)
    cli.add_command(bench.bench)
    cli.add_command(verifiers.verifiers)


_register()
