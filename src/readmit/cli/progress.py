"""Progress on a terminal's stderr: drawn there, and nothing at all when stderr is no terminal.

click's own bar prints its label once where it cannot draw, a stray line in a log or a
file the output is redirected to.
"""

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import click
from click._termui_impl import ProgressBar

from readmit.admission.invalidation.implicit import Progress


@contextmanager
def progress_bar() -> Iterator[Progress]:
    """A progress callback that draws a bar on a terminal's stderr while the verifier works."""
    stderr = sys.stderr
    bars: list[ProgressBar[int]] = []

    def update(done: int, total: int) -> None:
        if not stderr.isatty():
            return
        if not bars:
            bars.append(click.progressbar(length=total, label="verifying pairs", file=stderr))
        bars[0].update(done - bars[0].pos)

    try:
        yield update
    finally:
        for bar in bars:
            bar.render_finish()


@contextmanager
def steps_bar(length: int, label: str) -> Iterator[Callable[[int], None]]:
    """``advance(n)``: ``n`` more of ``length`` steps done, drawn as ``label``'s bar."""
    if not sys.stderr.isatty():
        yield lambda n: None
        return
    with click.progressbar(length=length, label=label, file=sys.stderr) as bar:
        yield bar.update
