"""Labeled (earlier item, later observation) pairs, read from JSON files, each row validated.

One loader for every pair file: the known pairs that ``readmit verifiers check``
probes a verifier with (shipped as package data, ``data/check_pairs.json``) and the
team's labeled set that ``bench/verifiers.py`` scores verifiers on
(``bench/data/labeled_pairs.json``, evaluation material kept out of the package).

A file is ``{"about": TEXT, "pairs": [ROW, ...]}``. A row names its pair's earlier
item (``id``, ``text``; an item of epoch 1 by agent ``A`` with a receipt that binds
its text) and later observation (``event_id``, ``op``, ``text``, and what it
withdrew or put in its place; always epoch 9), the pair's ``kind`` and whether the
later observation ``invalidates`` the earlier item (true exactly for the kinds in
`POSITIVE`), its ``domain``, and, in the labeled set, its ``split``. The ids, the
``event_id`` and the ``domain`` are names (`Name`) and every text is `Said`: a row
no item or event could hold is refused here, named, not later by the model.
"""

from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Literal, Self, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError, model_validator

from readmit import strict_json
from readmit.admission.invalidation.implicit import Later, Pair
from readmit.errors import ConfigError, InvalidInput
from readmit.events import text_digest
from readmit.model import Item, Receipt
from readmit.wire.fields import Name, Text, plain, says_nothing

Kind = Literal["withdrawn_reference", "premise_change", "unrelated", "same_topic", "near_miss"]
"""``withdrawn_reference``: the later event withdraws or replaces state the earlier item
names; ``premise_change``: a new fact, withdrawing nothing, changes a premise the earlier
item relies on; ``unrelated``: nothing in common; ``same_topic``: the same subject,
compatible; ``near_miss``: a withdrawal of something whose name looks like the earlier
item's (shared words, a different thing)."""
Split = Literal["tune", "held_out", "fresh"]
"""``tune`` (for prompts, thresholds and rules), ``held_out`` (reported, never tuned on),
``fresh`` (situations written after tuning)."""
KINDS: tuple[Kind, ...] = get_args(Kind)
SPLITS: tuple[Split, ...] = get_args(Split)
POSITIVE = frozenset({"withdrawn_reference", "premise_change"})
"""The kinds whose later observation invalidates the earlier item."""
EARLIER_EPOCH, LATER_EPOCH = 1, 9


@dataclass(frozen=True, slots=True)
class LabeledPair:
    """A pair, whether it invalidates, its kind, domain and (in the labeled set) split."""

    id: str
    domain: str
    kind: Kind
    invalidates: bool
    pair: Pair
    split: Split | None


def sourced_item(item_id: str, text: str) -> Item:
    """An item of epoch 1 with a receipt that binds its text (a judged pair's earlier side)."""
    receipt = Receipt(
        event_id=f"ev-{item_id}",
        author="A",
        epoch=EARLIER_EPOCH,
        digest=text_digest(item_id, text),
    )
    return Item(id=item_id, text=text, epoch=EARLIER_EPOCH, author="A", receipt=receipt)


def _says_something(value: str) -> str:
    if says_nothing(value):
        raise ValueError("must say something (it is empty, blank or invisible)")
    return value


Said = Annotated[Text, AfterValidator(_says_something)]
"""A pair's text: what an item or an event may carry (`Text`) that shows something."""


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class EarlierRow(_Row):
    """The earlier item of a pair."""

    id: Name
    text: Said


class LaterRow(_Row):
    """The later observation of a pair: an assertion, or a withdrawal (and replacement)."""

    event_id: Name
    op: Literal["assert", "revoke", "close", "supersede"]
    text: Said
    withdrawn_text: Said | None = None
    replacement_text: Said | None = None

    @model_validator(mode="after")
    def _fits_its_op(self) -> Self:
        withdraws = self.op != "assert"
        replaces = self.op == "supersede"
        if (self.withdrawn_text is not None) != withdraws:
            raise ValueError(f"withdrawn_text is {'required' if withdraws else 'not allowed'}")
        if (self.replacement_text is not None) != replaces:
            raise ValueError(f"replacement_text is {'required' if replaces else 'not allowed'}")
        return self

    def later(self) -> Later:
        """As the verifier sees it."""
        return Later(
            event_id=self.event_id,
            epoch=LATER_EPOCH,
            op=self.op,
            text=self.text,
            withdrawn_id="w" if self.withdrawn_text is not None else None,
            withdrawn_text=self.withdrawn_text,
            replacement_id="r" if self.replacement_text is not None else None,
            replacement_text=self.replacement_text,
        )


class PairRow(_Row):
    """One labeled pair as written in a file."""

    id: Name
    kind: Kind
    invalidates: bool
    earlier: EarlierRow
    later: LaterRow
    domain: Name
    split: Split | None = None
    """Only in the labeled set."""

    @model_validator(mode="after")
    def _label_fits_kind(self) -> Self:
        if self.invalidates != (self.kind in POSITIVE):
            expected = "true" if self.kind in POSITIVE else "false"
            raise ValueError(f"a {self.kind} pair must have invalidates={expected}")
        return self

    def labeled(self) -> LabeledPair:
        """The row as a judged pair."""
        earlier = sourced_item(self.earlier.id, self.earlier.text)
        pair = Pair(later=self.later.later(), earlier=earlier)
        return LabeledPair(self.id, self.domain, self.kind, self.invalidates, pair, self.split)


class PairFile(_Row):
    """A pair file: what it is, and its rows (ids unique)."""

    about: str
    pairs: list[PairRow]

    @model_validator(mode="after")
    def _ids_are_unique(self) -> Self:
        seen: set[str] = set()
        for row in self.pairs:
            if row.id in seen:
                raise ValueError(f"pair id {row.id!r} repeats")
            seen.add(row.id)
        return self


def load_pairs(path: Path | str) -> tuple[LabeledPair, ...]:
    """Every pair of the file at ``path``, in file order.

    Raises:
        ConfigError: naming the file, if it is missing, not JSON, or a row is invalid.
    """
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror or exc}") from exc
    return _parse(data, str(path))


@cache
def packaged_pairs(name: str) -> tuple[LabeledPair, ...]:
    """The pairs of a file shipped in ``readmit/verifiers/data`` (e.g. ``check_pairs.json``)."""
    text = resources.files("readmit.verifiers").joinpath("data", name).read_text("utf-8")
    return _parse(text, name)


def _parse(text: str | bytes, where: str) -> tuple[LabeledPair, ...]:
    try:
        data = strict_json.loads(text)
        rows = PairFile.model_validate(data)
    except InvalidInput as exc:  # not UTF-8, not JSON, a repeated key, ...
        raise ConfigError(f"{where}: {exc}") from exc
    except ValidationError as exc:
        raise ConfigError(f"{where}: {_problems(exc)}; {SHAPE}") from None
    return tuple(row.labeled() for row in rows.pairs)


SHAPE = (
    'a pair file is {"about": TEXT, "pairs": [{"id", "kind", "invalidates", "domain", '
    '"earlier": {"id", "text"}, "later": {"event_id", "op", "text", ...}}, ...]} '
    '(docs/implicit-invalidation.md, "Calibrating a model\'s cut-off")'
)
"""What a refusal of a pair file ends with."""
_SHOWN = 5
"""Problems named in full; the rest are counted."""


def _problems(error: ValidationError) -> str:
    """Each problem as ``pairs[3].kind: message``, the first `_SHOWN` of them."""
    said = []
    for e in error.errors(include_url=False)[:_SHOWN]:
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e["loc"])
        said.append(f"{where.removeprefix('.') or 'the file'}: {plain(e['msg'])}")
    more = error.error_count() - len(said)
    return "; ".join(said) + (f"; and {more} more" if more > 0 else "")
