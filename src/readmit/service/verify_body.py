"""``/v1/verify``'s work on a body: read it strictly, tell what is wrong with it, check the view.

The route needs no key, so it reads its body itself, whatever its ``Content-Type``, with
`readmit.strict_json`: a repeated key, ``NaN``, deep nesting or a huge number never
reaches the verifier. A body that is not JSON is ``invalid_request``, as on every route;
a repeated key is ``invalid_input``, as on every route (`readmit.service.strict_route`).
"""

from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError

from readmit import strict_json
from readmit.errors import InvalidInput, InvalidRequest, LongNumber, NotJson, RepeatedKey
from readmit.service.operations import Service
from readmit.service.schemas import VerifyIn, VerifyOut
from readmit.service.strict_route import long_number


def verified(service: Service, sent: bytes) -> VerifyOut:
    """``/v1/verify``'s work on the body ``sent``: parse it strictly, check the view."""
    try:
        parsed = strict_json.loads(sent)
    except RepeatedKey:
        raise  # invalid_input, as on every route
    except LongNumber as exc:  # valid JSON: in the words every other route uses
        raise long_number(exc) from None
    except NotJson as exc:  # in the words every other route uses
        raise InvalidRequest(
            f"the body is not valid JSON: {exc.problem} (at character {exc.at})"
        ) from None
    except InvalidInput as exc:  # JSON it will not read (NaN, too deep): as on every route
        raise InvalidRequest(f"the body is not valid JSON: {exc}") from None
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
