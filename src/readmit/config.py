"""Settings for the CLI (and later the service), built once at the edge from the environment.

The library itself reads no environment. Precedence: command-line flag >
``READMIT_*`` environment variable > default.
"""

import secrets
from collections.abc import Mapping
from dataclasses import dataclass

from readmit.errors import ConfigError
from readmit.signing import HmacSha256Signer

SIGNING_KEY_ENV = "READMIT_SIGNING_KEY"
DB_ENV = "READMIT_DB"


@dataclass(frozen=True, slots=True)
class SignerChoice:
    """The signer to use and whether its key is a throwaway one."""

    signer: HmacSha256Signer
    ephemeral: bool


def signer_from_env(env: Mapping[str, str], *, allow_ephemeral: bool) -> SignerChoice:
    """An HMAC signer keyed by ``READMIT_SIGNING_KEY``, or a random key when allowed.

    Raises:
        ConfigError: if the key is set but too short, or unset and a throwaway key is not allowed.
    """
    key = env.get(SIGNING_KEY_ENV)
    if key:
        return SignerChoice(HmacSha256Signer(key.encode("utf-8")), ephemeral=False)
    if not allow_ephemeral:
        raise ConfigError(f"set {SIGNING_KEY_ENV} to the key the view was signed with")
    return SignerChoice(HmacSha256Signer(secrets.token_bytes(32)), ephemeral=True)
