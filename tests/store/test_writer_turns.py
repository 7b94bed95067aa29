"""Each workspace's writers in a process take turns, giving up only on turns that stand still."""

import threading
import time

from readmit.errors import StoreError
from readmit.store.deadline import Deadline
from readmit.store.turns import WriterTurns


def deadline(seconds: float) -> Deadline:
    return Deadline(lambda: -1, seconds)  # no connection: only its seconds are read here


def queue(
    turns: WriterTurns, writers: int, hold: float, seconds: float, fail: bool = False
) -> list[StoreError]:
    """``writers`` threads each take the turn of one workspace and hold it ``hold`` s (and
    then fail in the store, with ``fail``); the refusals and failures they met."""
    failed: list[StoreError] = []

    def write() -> None:
        try:
            with turns.turn("ws", deadline(seconds)):
                time.sleep(hold)
                if fail:
                    raise StoreError("PostgreSQL did not answer a statement")
        except StoreError as exc:
            failed.append(exc)

    threads = [threading.Thread(target=write) for _ in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    return failed


def test_a_queue_of_quick_writers_longer_than_a_deadline_all_get_their_turn() -> None:
    """The turns move: a queue that takes longer than a deadline on a server that answers
    is no stall (a review: 16 threads writing 200-event batches to one PostgreSQL workspace
    with a 1 s deadline were refused 70 times in 10 s, as if the server did not answer)."""
    assert queue(WriterTurns(), writers=8, hold=0.5, seconds=2.0) == []  # 4 s in all


def test_writers_behind_a_turn_that_does_not_move_give_up() -> None:
    turns = WriterTurns()
    took, release = threading.Event(), threading.Event()

    def stalled() -> None:
        with turns.turn("ws", deadline(0.3)):
            took.set()
            release.wait(120)

    holder = threading.Thread(target=stalled)
    holder.start()
    took.wait(120)
    failed = queue(turns, writers=4, hold=0.0, seconds=0.3)
    release.set()
    holder.join(120)

    assert len(failed) == 4
    assert all("has not finished in 0.3 s: is the database answering?" in str(e) for e in failed)


def test_a_turn_that_failed_in_the_store_is_no_move() -> None:
    """Writers cut by their deadline do not move the turns on: those queued behind give up
    rather than each wait for its turn and be cut in turn."""
    failed = queue(WriterTurns(), writers=6, hold=0.5, seconds=0.3, fail=True)

    assert len(failed) == 6
    assert any("has not finished in 0.3 s" in str(e) for e in failed)


def test_without_a_deadline_writers_wait_for_good_one_at_a_time() -> None:
    turns = WriterTurns()
    order: list[int] = []

    def write(n: int) -> None:
        with turns.turn("ws", None):
            order.append(n)
            time.sleep(0.05)
            order.append(n)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)

    assert len(order) == 10
    assert all(order[i] == order[i + 1] for i in range(0, 10, 2))  # one at a time


def test_other_workspaces_turns_do_not_wait() -> None:
    turns = WriterTurns()
    with turns.turn("a", deadline(0.1)), turns.turn("b", deadline(0.1)):
        pass
