"""Agent API keys: random tokens, stored only as their SHA-256 hash."""

import hashlib
import secrets
from collections.abc import Mapping

from readmit.errors import ConfigError

PREFIX = "rmk_"


def new_key() -> str:
    """A fresh API key (shown once; only its hash is stored)."""
    return PREFIX + secrets.token_urlsafe(32)


def key_hash(key: str) -> str:
    """The stored form of a key. Keys are 256-bit random, so a plain hash suffices."""
    return "sha256:" + hashlib.sha256(key.encode("utf-8")).hexdigest()


def require_key(env: Mapping[str, str], name: str) -> str:
    """An agent key from the environment.

    Raises:
        ConfigError: if it is unset.
    """
    key = env.get(name, "").strip()  # a key pasted with its line's end
    if not key:
        raise ConfigError(f"set {name} to the agent's key (create one with `readmit keys create`)")
    return key
