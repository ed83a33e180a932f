"""String: string functions as a snippet macro (after AWS's published `StringFunctions` example).

    Fn::Transform: {Name: String, Parameters: {InputString: abc, Operation: Upper}}

Operations: Upper, Lower, Capitalize, Title, SwapCase, Strip (Chars), Replace (Old, New),
MaxLength (Length, StripFrom: Left|Right). The fragment returned is the resulting string.
"""

from __future__ import annotations

from typing import Any


def _max_length(text: str, params: dict) -> str:
    length = int(params["Length"])
    if len(text) <= length:
        return text
    return text[len(text) - length:] if params.get("StripFrom", "Right") == "Left" else text[:length]


OPERATIONS = {
    "Upper": lambda text, params: text.upper(),
    "Lower": lambda text, params: text.lower(),
    "Capitalize": lambda text, params: text.capitalize(),
    "Title": lambda text, params: text.title(),
    "SwapCase": lambda text, params: text.swapcase(),
    "Strip": lambda text, params: text.strip(params.get("Chars")),
    "Replace": lambda text, params: text.replace(params["Old"], params["New"]),
    "MaxLength": _max_length,
}


def handler(event: dict, context: Any) -> dict:
    """Apply Parameters.Operation to Parameters.InputString."""
    params = event.get("params") or {}
    operation = OPERATIONS.get(params.get("Operation"))
    text = params.get("InputString")
    if operation is None or not isinstance(text, str):
        return {"requestId": event["requestId"], "status": "failure",
                "errorMessage": f"String needs InputString and an Operation of {', '.join(OPERATIONS)}"}
    try:
        result = operation(text, params)
    except (KeyError, ValueError) as err:
        return {"requestId": event["requestId"], "status": "failure",
                "errorMessage": f"{params['Operation']} needs the parameter {err}"}
    return {"requestId": event["requestId"], "status": "success", "fragment": result}
