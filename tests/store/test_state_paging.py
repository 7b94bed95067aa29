"""What a reader may read is remembered per reader: workspace, principal, role and epoch.

`readmit.store.state.State.visible_state` cuts each page from a list it remembers for the
reader at the workspace's epoch; two readers that differ in any one of these at the same
epoch must never be handed each other's list (it would show one another's items).
"""

from builders import T0
from readmit.events import Assert, ItemDraft
from readmit.model import Agent
from readmit.store import SqlStore


def _stated(store: SqlStore, workspace: str, author: str, ids: list[str]) -> None:
    """``author`` asserts one item per id, which only its own principal may read."""
    store.append(
        workspace,
        [
            Assert(id=f"e-{i}", at=T0, author=author, item=ItemDraft(id=i, text=f"Note {i}."))
            for i in ids
        ],
    )


def _ids(store: SqlStore, workspace: str, agent: str) -> list[str]:
    return [i.id for i in store.visible_state(workspace, agent)]


def test_readers_of_two_principals_at_one_epoch_see_their_own_items(
    store: SqlStore,
) -> None:
    """a (principal p) reads first; b (principal q, the same role) then reads at the same
    epoch, and is shown q's items, not the list remembered for a."""
    store.create_workspace(
        "w", [Agent(id="a", principal="p", role="r"), Agent(id="b", principal="q", role="r")]
    )
    _stated(store, "w", "a", ["p1", "p2"])
    _stated(store, "w", "b", ["q1"])  # one event an epoch: a and b read at epoch 3

    assert _ids(store, "w", "a") == ["p1", "p2"]
    assert _ids(store, "w", "b") == ["q1"]
    items, following = store.page("w", "b", None, 1)
    assert ([i.id for i in items], following) == (["q1"], None)


def test_readers_of_two_workspaces_at_one_epoch_see_their_own_items(
    store: SqlStore,
) -> None:
    """The same principal and role in two workspaces, each at the same epoch: each is
    shown its own workspace's items."""
    for workspace, ids in (("w1", ["i1", "i2"]), ("w2", ["j1", "j2"])):  # both at epoch 2
        store.create_workspace(workspace, [Agent(id="a", principal="p", role="r")])
        _stated(store, workspace, "a", ids)

    assert _ids(store, "w1", "a") == ["i1", "i2"]
    assert _ids(store, "w2", "a") == ["j1", "j2"]
    items, following = store.page("w2", "a", None, 1)
    assert ([i.id for i in items], following) == (["j1"], "j1")
