"""Agents' JSON bodies may not repeat a key.

FastAPI reads a body with ``json.loads``, which keeps the last of a repeated key: an
event sent as ``{"author": "A2", "author": "A1"}`` was recorded as A1's, and a gateway
or audit tool that reads the first would see another event than the one stored. Every
route with a JSON body checks it first (`StrictJsonRoute`): a repeated key is a 422
``invalid_input`` naming it. ``/v1/verify`` reads its body itself, strictly
(`readmit.strict_json`), so it is left alone here.
"""

import json
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute

from readmit.errors import InvalidRequest, RepeatedKey
from readmit.strict_json import MAX_DEPTH, unique_keys

Handler = Callable[[Request], Coroutine[Any, Any, Response]]


class StrictJsonRoute(APIRoute):
    """A route that refuses a JSON body with a repeated object key before FastAPI reads it."""

    def get_route_handler(self) -> Handler:
        handler = super().get_route_handler()
        if self.body_field is None:  # no body to parse (or one the route reads itself)
            return handler

        async def strict(request: Request) -> Response:
            if json_type(request.headers.get("content-type", "")):
                body = await request.body()  # kept by the request: FastAPI reads it again free
                try:
                    json.loads(body, object_pairs_hook=unique_keys)
                except RepeatedKey:
                    raise  # invalid_input; a ValueError too, so passed on before the next clause
                except ValueError as exc:
                    if "integer string conversion" in str(exc):  # valid JSON Python will not read
                        raise InvalidRequest(  # as a body nested too deep to read is
                            f"the body has a number of more than {sys.get_int_max_str_digits()} "
                            "digits: send it as a string"
                        ) from None
                except RecursionError:  # FastAPI would say "send UTF-8 JSON" of UTF-8 JSON
                    raise InvalidRequest(
                        f"the body nests deeper than JSON is read here (at most {MAX_DEPTH} "
                        "levels are ever needed)"
                    ) from None
            return await handler(request)

        return strict


def json_type(content_type: str) -> bool:
    """Whether a ``Content-Type`` names JSON (``application/json``, ``…+json``)."""
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )
