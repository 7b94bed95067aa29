"""Signers for Return Views: HMAC-SHA256 with a configured key."""

import hashlib
import hmac
from dataclasses import dataclass, field
from typing import Protocol

from readmit.errors import ConfigError

MIN_KEY_BYTES = 16


class Signer(Protocol):
    """Signs and verifies the canonical bytes of a Return View."""

    @property
    def alg(self) -> str:
        """Algorithm name written into the view's signature block."""
        ...

    def sign(self, data: bytes) -> str:
        """Return the signature of ``data`` as text."""
        ...

    def verify(self, data: bytes, signature: str) -> bool:
        """Whether ``signature`` is this signer's signature of ``data``."""
        ...


@dataclass(frozen=True, slots=True)
class HmacSha256Signer:
    """HMAC-SHA256 over the view's canonical JSON; the key never appears in ``repr``."""

    key: bytes = field(repr=False)

    def __post_init__(self) -> None:
        if len(self.key) < MIN_KEY_BYTES:
            raise ConfigError(f"the signing key must be at least {MIN_KEY_BYTES} bytes long")

    @property
    def alg(self) -> str:
        return "hmac-sha256"

    def sign(self, data: bytes) -> str:
        return hmac.new(self.key, data, hashlib.sha256).hexdigest()

    def verify(self, data: bytes, signature: str) -> bool:
        return hmac.compare_digest(self.sign(data), signature)
