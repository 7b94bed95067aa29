"""The ``readmit`` command line: demo, replay, verify, explain, audit, serve, mcp, keys."""

import contextlib
import os
import select
import signal
import sys
from typing import Any, NoReturn

import click

from readmit.errors import (
    Forbidden,
    Internal,
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


def fail(code: str, message: str, status: int) -> NoReturn:
    """End the command with one ``error [code]: message`` line on stderr and ``status``."""
    click.echo(f"error [{code}]: {_one_line(message)}", err=True)
    sys.exit(status)


def _one_line(message: str) -> str:
    """``message`` on one line, with control characters from the input shown escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)


class _Group(click.Group):
    """Ends every failure in one ``error [code]: message`` line and its exit code, no traceback.

    A `ReadmitError` gives its code; a usage error (bad option or argument) is
    ``invalid_input`` with click's exit code 2, and so is a stdout closed before the
    command starts (`STDOUT_CLOSED`); stdout closed by its reader is no failure and ends
    quietly (`reader_gone`), but only stdout's broken pipe (`_broken_pipe`); anything else
    is a bug, reported as ``internal`` (`readmit.errors.Internal`, as the service answers)
    with exit 1 rather than a traceback over hostile input.
    """

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        if parent is None and sys.stdout is None:  # Python found no file descriptor 1
            fail(InvalidInput.code, STDOUT_CLOSED, 2)
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as error:
            fail(InvalidInput.code, _usage(error), error.exit_code)
        except BrokenPipeError as error:  # --help or --version, to a reader already gone
            _broken_pipe(error)
        except OSError as error:  # --help or --version to a full disk, or read-only stdout
            _internal(error)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ReadmitError as error:
            notes = getattr(error, "__notes__", ())
            told = f"{error} ({'; '.join(notes)})" if notes else str(error)
            fail(error.code, told, exit_code(error))
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as error:
            fail(InvalidInput.code, _usage(error), error.exit_code)
        except KeyboardInterrupt:  # click would say "Aborted!" and exit 1, a bug's status
            fail("interrupted", INTERRUPTED, 128 + signal.SIGINT)
        except (click.exceptions.Exit, click.Abort, click.ClickException):
            raise  # click reports these itself (help, version, an answer a prompt never got)
        except BrokenPipeError as error:  # before click, which would end it with status 1
            _broken_pipe(error)
        except Exception as error:
            _internal(error)


def _internal(error: Exception) -> NoReturn:
    """End with an error nobody anticipated: a bug, ``internal`` with exit 1, no traceback."""
    fail(Internal.code, f"{type(error).__name__}: {error}", 1)


def _broken_pipe(error: BrokenPipeError) -> NoReturn:
    """End quietly if stdout's reader has gone (`reader_gone`), else as `_internal`.

    A `BrokenPipeError` says only that some pipe or socket broke, not which: one from a
    socket (a server that went away) is a failure, not a reader that stopped reading.
    """
    if stdout_reader_gone():
        reader_gone()
    _internal(error)


def stdout_reader_gone() -> bool:
    """Whether stdout is a pipe or socket whose reader has gone (it polls as error or hang-up).

    Asked of the descriptor without writing to it. Where ``poll`` is missing (Windows) it
    cannot be asked, and a broken pipe is taken to be stdout's, as Unix tools take SIGPIPE.
    """
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # no stdout, or not a file's (a test's)
        return False
    if sys.platform == "win32":
        return True
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))


STDOUT_CLOSED = "stdout is closed: send the output to /dev/null to discard it"
"""Why a command started with no stdout (``readmit demo >&-``) does nothing. click writes
to a closed stdout silently, so it would exit 0 with its output (a new key's secret) lost,
and the next file it opened would take descriptor 1, where a child process writes."""


INTERRUPTED = "stopped by an interrupt (Ctrl-C) before it finished"
"""Why a command ended at Ctrl-C, with status 130 (128 + SIGINT), as a shell shows it; what
it had not committed to the store is not stored (every write is one transaction)."""

PIPE_CLOSED = 141
"""The status of a command whose output's reader went away: the one a shell shows for a
command that SIGPIPE ended (128 + 13), as ``yes`` ends in ``yes | head -1``."""


def reader_gone() -> NoReturn:
    """End quietly, as a Unix tool does, when stdout's reader has gone (``| head -1``).

    No traceback and no error line: the reader stopped reading, nothing failed. What is
    still to be written goes to the null device, so the interpreter's last flush does
    not fail in turn; the process exits (its cleanup runs) with `PIPE_CLOSED`.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    with contextlib.suppress(AttributeError, OSError, ValueError):  # no stdout of a file's
        os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    sys.exit(PIPE_CLOSED)


def _usage(error: click.UsageError) -> str:
    command = error.ctx.command_path if error.ctx is not None else "readmit"
    return f"{error.format_message()} (see '{command} --help')"


@click.group(cls=_Group)
@click.version_option(package_name="readmit")
def cli() -> None:
    """Decide which remembered state a returning agent may still act on (TRACE)."""


def main() -> None:
    """Console-script entry point.

    A model server started in this process (``gguf:PATH``) logs to a file, not over the
    command's own output (`readmit.verifiers.gguf.log_to`).
    """
    from readmit.verifiers import gguf

    gguf.log_to(gguf.default_log_path(os.environ))
    cli()


def _register() -> None:
    from readmit.cli import (
        ahead,
        audit,
        bench,
        demo,
        init,
        keys,
        migrate,
        replay,
        serve,
        verifiers,
        verify,
    )

    cli.add_command(demo.demo)
    cli.add_command(init.init)
    cli.add_command(replay.replay_command)
    cli.add_command(verify.verify)
    cli.add_command(audit.explain)
    cli.add_command(audit.audit)
    cli.add_command(serve.serve)
    cli.add_command(serve.mcp_command)
    cli.add_command(ahead.judge_ahead_command)
    cli.add_command(serve.workspace)
    cli.add_command(keys.keys)
    cli.add_command(migrate.migrate_command)
    cli.add_command(bench.bench)
    cli.add_command(verifiers.verifiers)


_register()
