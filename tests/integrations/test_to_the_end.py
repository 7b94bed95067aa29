"""A write marked `to_the_end` finishes whatever cancels its caller; the cancellation follows."""

import asyncio

import pytest

from readmit.integrations.to_the_end import Turn, run_to_end, to_the_end


class Writer:
    """Writes in two steps, the second after the test lets it (as Mem0, then readmit)."""

    def __init__(self) -> None:
        self.steps: list[str] = []
        self.started = asyncio.Event()
        self.go_on = asyncio.Event()

    @to_the_end
    async def write(self, text: str, fail: bool = False) -> str:
        self.steps.append("mem0")
        self.started.set()
        await self.go_on.wait()
        if fail:
            raise OSError("the store went away")
        self.steps.append("readmit")
        return text.upper()


def test_an_uncancelled_write_returns_its_result() -> None:
    async def scenario() -> str:
        writer = Writer()
        writer.go_on.set()
        return await writer.write("done")

    assert asyncio.run(scenario()) == "DONE"


@pytest.mark.parametrize("cancellations", [1, 3])
def test_a_cancelled_write_finishes_then_raises_the_cancellation(cancellations: int) -> None:
    async def scenario() -> list[str]:
        writer = Writer()
        running = asyncio.ensure_future(writer.write("done"))
        await writer.started.wait()
        for _ in range(cancellations):
            running.cancel()
            await asyncio.sleep(0)  # let it see each one
        assert not running.done()
        writer.go_on.set()
        with pytest.raises(asyncio.CancelledError):
            await running
        return writer.steps

    assert asyncio.run(scenario()) == ["mem0", "readmit"]


def test_a_cancelled_write_that_fails_raises_its_own_error() -> None:
    async def scenario() -> None:
        writer = Writer()
        running = asyncio.ensure_future(writer.write("done", fail=True))
        await writer.started.wait()
        running.cancel()
        await asyncio.sleep(0)
        writer.go_on.set()
        with pytest.raises(OSError, match="went away"):
            await running

    asyncio.run(scenario())


def test_work_cancelled_itself_raises_the_cancellation() -> None:
    async def scenario() -> None:
        async def cancelled() -> None:
            raise asyncio.CancelledError

        with pytest.raises(asyncio.CancelledError):
            await run_to_end(cancelled())

    asyncio.run(scenario())


def test_a_turn_is_one_lock_in_a_loop_and_a_new_one_in_the_next() -> None:
    """Calls in one loop queue on the same lock; a later loop's get a lock of their own."""
    turn = Turn()

    async def locks() -> tuple[asyncio.Lock, asyncio.Lock]:
        return turn(), turn()

    first, again = asyncio.run(locks())
    later, _ = asyncio.run(locks())

    assert first is again
    assert later is not first
