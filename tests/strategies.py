"""Hypothesis strategies for return contexts: items, revocations, obligations, budgets."""

from hypothesis import strategies as st

from builders import context, item, obligation, revoke
from readmit.admission.context import ReturnContext
from readmit.model import Item, Scope
from readmit.policy import Policy

DEPS = ["d1", "d2", "d3", "d4"]
WORDS = ["Sunrise Hotel", "the train", "9:00", "pickup", "Riverside", "INC-42", "quiet", "budget"]


@st.composite
def items(draw: st.DrawFn, n_max: int = 10) -> tuple[Item, ...]:
    n = draw(st.integers(0, n_max))
    made: list[Item] = []
    for i in range(n):
        words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3))
        earlier = [m.id for m in made]
        made.append(
            item(
                f"i{i}",
                f"Note {i}: " + ", ".join(words) + ".",
                epoch=draw(st.integers(1, 5)),
                supports=tuple(draw(st.lists(st.sampled_from(DEPS), max_size=2, unique=True))),
                key=draw(st.sampled_from([None, None, "k1", "k2"])),
                scope=Scope(
                    principals=frozenset({draw(st.sampled_from(["family", "family", "agency"]))})
                ),
                receipt=draw(st.booleans()) or draw(st.booleans()),
                depends_on=tuple(draw(st.lists(st.sampled_from(earlier), max_size=1)))
                if earlier
                else (),
            )
        )
    return tuple(made)


@st.composite
def contexts(draw: st.DrawFn) -> ReturnContext:
    pool = draw(items())
    revoked = (
        draw(st.lists(st.sampled_from([i.id for i in pool]), unique=True, max_size=3))
        if pool
        else []
    )
    delta = tuple(revoke(target, 6 + n, why="withdrawn") for n, target in enumerate(revoked))
    obligations = tuple(
        obligation(f"o{n}", requires=tuple(req), critical=tuple(req[:1]))
        for n, req in enumerate(
            draw(
                st.lists(
                    st.lists(st.sampled_from(DEPS), min_size=1, max_size=2, unique=True), max_size=2
                )
            )
        )
    )
    return context(pool, delta=delta, obligations=obligations, departure_epoch=5)


policies = st.builds(
    lambda n, c, g: Policy(max_items=n, max_chars=c, gamma=g, rho=g),
    st.integers(1, 10),
    st.integers(20, 400),
    st.sampled_from([0.0, 0.5, 1.0]),
)
