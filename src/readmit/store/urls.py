"""Store URLs as they may be shown: never with a password."""

import re
from urllib.parse import parse_qsl, unquote, urlsplit

from readmit.errors import ConfigError

_USERINFO = re.compile(r"(//[^/?#:@]*:)[^/?#]*@")
"""``//user:password@`` up to the authority's last ``@`` (a raw ``@`` in a password too)."""
_QUERY = re.compile(r"([?&]password=)[^&#]*", re.IGNORECASE)


def redacted(url: str) -> str:
    """``url`` with its password (``user:PASSWORD@``, ``?password=``) shown as ``***``."""
    return _QUERY.sub(r"\1***", _USERINFO.sub(r"\1***@", url))


def passwords(url: str) -> list[str]:
    """Every form of ``url``'s password(s) a message could quote: as written and decoded."""
    found = [m[0][m[0].index(":") + 1 : -1] for m in _USERINFO.finditer(url)]
    query = urlsplit(url).query if "?" in url else ""
    found += [v for k, v in parse_qsl(query, keep_blank_values=True) if k.lower() == "password"]
    found += [m[0].split("=", 1)[1] for m in _QUERY.finditer(url)]
    return [p for text in found for p in {text, unquote(text)} if p]


def one_at(url: str) -> None:
    """Refuse a URL whose user or password holds a raw ``@``.

    libpq would take the rest of the password for the host, and quote it in its error.

    Raises:
        ConfigError: saying to write it ``%40``.
    """
    authority = url.split("//", 1)[-1].split("/", 1)[0].split("?", 1)[0]
    if authority.count("@") > 1:
        raise ConfigError(
            f"{redacted(url)!r}: write an @ in a user or password as %40 (only the last "
            "@ may end them)"
        )
