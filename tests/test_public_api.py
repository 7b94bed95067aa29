import readmit


def test_all_matches_what_is_exported() -> None:
    public = {name for name in dir(readmit) if not name.startswith("_")}
    modules = {name for name in public if type(getattr(readmit, name)).__name__ == "module"}

    assert set(readmit.__all__) == public - modules


def test_all_is_sorted() -> None:
    assert readmit.__all__ == sorted(readmit.__all__)


def test_a_decided_return_is_public() -> None:
    """What every decide() caller gets back (integrations hand it to applications)."""
    from readmit.decide import Decided

    assert readmit.Decided is Decided
    assert "Decided" in readmit.__all__
