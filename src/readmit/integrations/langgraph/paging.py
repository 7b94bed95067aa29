"""Reads through a `Lens`, paged so that filtering never starves a page.

A read is a small generator that yields the inner-store ops it needs, is sent their
results, and returns its own result, so one piece of code serves ``batch`` and
``abatch`` (each drives it with its own inner call) and every read of a batch can
share each round trip to the inner store.
"""

import asyncio
import math
from collections.abc import Awaitable, Callable, Generator, Sequence
from typing import Any, TypeVar, cast

from langgraph.store.base import GetOp, Item, ListNamespacesOp, Op, PutOp, Result, SearchOp

from readmit.integrations.langgraph.admitted import Lens
from readmit.integrations.langgraph.keys import identity
from readmit.integrations.team import Member

T = TypeVar("T")

Reader = Generator[list[Op], list[Result], Result]
"""One read: yields the inner ops it needs, is sent their results, returns its own."""

Rounds = Generator[list[Op], list[Result], list[Result]]
"""Every read of a batch, advanced together: one inner batch per round."""


def reader(op: Op, lens: Lens) -> Reader:
    """The read ``op`` (a get, search or namespace listing) through ``lens``."""
    if isinstance(op, GetOp):
        return _get(op, lens)
    return paged(cast(SearchOp | ListNamespacesOp, op), lens)


def _get(op: GetOp, lens: Lens) -> Reader:
    (found,) = yield [op]
    return admit(found, lens)


def admit(found: Result, lens: Lens) -> Result:
    """A got item if the lens shows it, else None."""
    return found if isinstance(found, Item) and lens.shows(found) else None


def refiltered(ops: Sequence[Op], results: list[Result], lens: Lens) -> list[Result]:
    """The results of the reads ``ops`` filtered through ``lens`` again (it followed the log)."""
    return [
        admit(found, lens) if isinstance(op, GetOp) else _shown(cast(list[Any], found), lens, op)
        for op, found in zip(ops, results, strict=True)
    ]


def read_again(
    ops: Sequence[Op],
    results: list[Result],
    lens: Lens,
    member: Member,
    batch: Callable[[list[Op]], list[Result]],
) -> list[Result]:
    """The reads ``ops`` once ``lens`` followed the log past a write made while they ran.

    Gets are filtered again; searches and listings are read again, as filtering what they
    found could leave a page short of its ``limit``. A write recorded while they are read
    again is filtered out (`refiltered`), not read a third time.
    """
    results = run(_again(ops, results, lens), batch)
    return refiltered(ops, results, lens) if lens.since(member) else results


async def aread_again(
    ops: Sequence[Op],
    results: list[Result],
    lens: Lens,
    member: Member,
    abatch: Callable[[list[Op]], Awaitable[list[Result]]],
) -> list[Result]:
    """`read_again` for ``abatch``, the log read in a worker thread (`Lens.catch_up`)."""
    await asyncio.to_thread(lens.catch_up, member)
    results = await arun(_again(ops, results, lens), abatch)
    if lens.watch is not None and lens.watch.moved():
        await asyncio.to_thread(lens.catch_up, member)
        results = refiltered(ops, results, lens)
    return results


def _again(ops: Sequence[Op], results: list[Result], lens: Lens) -> Rounds:
    """Gets' ``results`` filtered through ``lens`` again, and the other reads run again."""
    at = [i for i, op in enumerate(ops) if not isinstance(op, GetOp)]
    found = yield from rounds([reader(ops[i], lens) for i in at])
    out = [
        admit(r, lens) if isinstance(op, GetOp) else r for op, r in zip(ops, results, strict=True)
    ]
    for i, read in zip(at, found, strict=True):
        out[i] = read
    return out


def paged(op: SearchOp | ListNamespacesOp, lens: Lens) -> Reader:
    """Fetch pages from offset 0 until ``offset + limit`` rows pass the lens.

    The first page asks for exactly ``offset + limit``, so when nothing is filtered
    the inner store does the same work as without readmit. Each later page is at
    least twice the last, and as large as the share shown so far says is needed.
    """
    offset, want = max(op.offset, 0), max(op.offset, 0) + max(op.limit, 0)
    kept: list[Any] = []
    start, size = 0, want
    while len(kept) < want:
        ask = (
            op if (op.offset, op.limit) == (start, size) else op._replace(offset=start, limit=size)
        )
        (page,) = yield [ask]
        rows = cast(list[Any], page)
        shown = _shown(rows, lens, op)
        kept += shown
        if len(rows) < size:
            break
        start += len(rows)
        size = max(2 * size, math.ceil((want - len(kept)) * len(rows) / max(len(shown), 1) * 1.25))
    return kept[offset:want]


def _shown(rows: list[Any], lens: Lens, op: Op) -> list[Any]:
    """The rows (items, or namespaces) of the read ``op`` that the lens shows, in order."""
    if not rows or not isinstance(rows[0], Item):
        return _namespaces(rows, lens, op.max_depth if isinstance(op, ListNamespacesOp) else None)
    # `Lens.shows` inlined, its check of a value seen before too: this runs for every row
    visible, checked, fits = lens.visible, lens.checked, lens.fits
    return [
        r
        for r in rows
        if (ident := identity(r.namespace, r.key)) in visible
        and (checked.get(ident) is r.value or fits(ident, r))
    ]


def _namespaces(rows: list[Any], lens: Lens, depth: int | None) -> list[Any]:
    """The namespaces listed (cut at ``depth``) that hold, or lead to, a value the lens shows.

    One shorter than ``depth`` (or any, without one) is listed because a value is
    stored right there: it is shown only if a shown value is. A prefix of a shown
    value's namespace holding only what the lens hides is not named.
    """
    exact = {namespace for namespace, _, _ in list(lens.visible)}  # a copy: threads add to it
    return [
        ns
        for ns in rows
        if ns in exact or (depth is not None and len(ns) == depth and ns in lens.prefixes)
    ]


def rounds(readers: list[Reader]) -> Rounds:
    """Advance every reader together, one inner batch per round; return their results."""
    results: list[Result] = [None] * len(readers)
    pending = {i: ops for i, r in enumerate(readers) if (ops := _step(r, None, results, i))}
    while pending:
        answers = yield [op for ops in pending.values() for op in ops]
        sent, pos = pending, 0
        pending = {}
        for i, ops in sent.items():
            got, pos = answers[pos : pos + len(ops)], pos + len(ops)
            if step := _step(readers[i], got, results, i):
                pending[i] = step
    return results


def _step(read: Reader, sent: list[Result] | None, results: list[Result], i: int) -> list[Op]:
    """Send ``sent`` to ``read``: the ops it asks for next, or [] once its result is in."""
    try:
        return next(read) if sent is None else read.send(sent)
    except StopIteration as done:
        results[i] = done.value
        return []


def run(gen: Generator[list[Op], list[Result], T], batch: Callable[[list[Op]], list[Result]]) -> T:
    """Drive ``gen`` with a synchronous inner ``batch``."""
    try:
        ops = next(gen)
        while True:
            ops = gen.send(batch(ops))
    except StopIteration as done:
        return cast(T, done.value)


async def arun(
    gen: Generator[list[Op], list[Result], T],
    abatch: Callable[[list[Op]], Awaitable[list[Result]]],
) -> T:
    """Drive ``gen`` with an asynchronous inner ``abatch``."""
    try:
        ops = next(gen)
        while True:
            ops = gen.send(await abatch(ops))
    except StopIteration as done:
        return cast(T, done.value)


def merge(ops: list[Op], reads: list[Result]) -> list[Result]:
    """Results in the order of ``ops``: each read's own, None for each write."""
    answers = iter(reads)
    return [None if isinstance(op, PutOp) else next(answers) for op in ops]
