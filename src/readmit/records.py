"""Frozen values built in bulk, without the per-field cost of a frozen ``__init__``.

Every domain value is a frozen, slotted dataclass. The ``__init__`` that `dataclasses`
writes for one takes keywords and sets each field through ``object.__setattr__`` (a
frozen class refuses plain assignment), and a cold return builds hundreds of thousands
of them: decoding a 100k-item store makes an `Item` and a `Receipt` per row, and the
selection a ``not_selected`` record per item left out. `positional` makes a constructor
that builds the value as an unfrozen twin with the very same slots (plain assignment,
positional arguments), then gives it the frozen class, and runs its ``__post_init__``
checks. The object is the one the class's own constructor makes: same type, fields,
equality and hash, and frozen from then on.
"""

import inspect
from collections.abc import Callable
from dataclasses import fields, is_dataclass, make_dataclass
from typing import Any, TypeVar

T = TypeVar("T")


def positional(cls: type[T], *, checked: bool = True) -> Callable[..., T]:
    """A constructor of the frozen, slotted dataclass ``cls`` taking every field in order.

    Without ``checked``, its ``__post_init__`` is not run: for a caller that has made
    the same checks on what it builds from (`readmit.wire.logged`).

    Raises:
        TypeError: if ``cls`` is not a frozen dataclass with slots, directly on ``object``,
            whose ``__init__`` takes exactly its fields (no ``InitVar``, no field left out
            of ``__init__``). A class that writes its own ``__init__`` must not be given:
            the twin runs the generated one.
    """
    params = getattr(cls, "__dataclass_params__", None)
    if not is_dataclass(cls) or params is None or not params.frozen or "__slots__" not in vars(cls):
        raise TypeError(f"{cls.__name__} is not a frozen dataclass with slots")
    names = [f.name for f in fields(cls)]
    takes = list(inspect.signature(cls).parameters)
    if (
        cls.__bases__ != (object,)
        or takes != names
        or tuple(vars(cls)["__slots__"]) != tuple(names)
    ):
        raise TypeError(
            f"{cls.__name__} cannot be built positionally: its __init__ must take exactly its "
            "fields, which must be its slots, and its only base must be object"
        )
    twin: Any = make_dataclass(cls.__name__, names, slots=True, eq=False)
    check: Callable[[Any], None] | None = getattr(cls, "__post_init__", None) if checked else None

    def make(*values: Any) -> T:
        value = twin(*values)
        value.__class__ = cls
        if check is not None:
            check(value)
        return value  # type: ignore[no-any-return]

    return make
