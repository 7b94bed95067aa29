import subprocess
import sys

import pytest

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


@pytest.mark.parametrize(
    ("module", "needs", "extra"),
    [
        ("readmit.integrations.langgraph", "langgraph", "langgraph"),
        ("readmit.integrations.agents_sdk", "agents", "agents"),
    ],
)
def test_an_integration_without_its_extra_says_which_to_install(
    module: str, needs: str, extra: str
) -> None:
    """Run in a child: a library made unimportable (as if not installed) stays so."""
    code = (
        f"import sys; sys.modules[{needs!r}] = None\n"
        f"try:\n    import {module}\nexcept ImportError as exc:\n    print(exc)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)

    assert f"pip install '.[{extra}]'" in done.stdout
