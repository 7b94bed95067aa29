"""``/v1/verify``'s work on a body: read it strictly, tell what is wrong with it, check the view.

The route needs no key, so it reads its body itself, whatever its ``Content-Type``, with
`readmit.strict_json`: a repeated key, ``NaN``, deep nesting or a huge number never
reaches the verifier. It is refused in the words and with the codes of every route
(`readmit.service.strict_route.refusal`): a repeated key is ``invalid_input``; a body that
is not JSON, or JSON read no further (too deep, a number too long), ``invalid_request``.
"""

from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError

from readmit import strict_json
from readmit.errors import InvalidInput, InvalidRequest
from readmit.service.operations import Service
from readmit.service.schemas import VerifyIn, VerifyOut
from readmit.service.strict_route import refusal


def verified(service: Service, sent: bytes) -> VerifyOut:
    """``/v1/verify``'s work on the body ``sent``: parse it strictly, check the view."""
    try:
        parsed = strict_json.loads(sent)
    except InvalidInput as exc:  # in the words every other route uses
        raise refusal(exc) from None
    if isinstance(parsed, dict) and "view" not in parsed and "signature" in parsed:
        raise InvalidRequest('send {"view": <the view>}: this body is a view itself')
    if isinstance(parsed, dict) and "view" in parsed and "outcome" in parsed:
        raise InvalidRequest('send {"view": <its view>}: this body is a return\'s answer')
    try:
        body = VerifyIn.model_validate(parsed)
    except ValidationError as exc:  # located in the body, as FastAPI's own are
        errors = [{**e, "loc": ("body", *e["loc"])} for e in exc.errors()]
        raise RequestValidationError(errors) from None
    return service.verify(body.view, body.at)
