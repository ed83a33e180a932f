"""Says hello to the name in the event."""

import os


def handler(event, context):
    name = (event or {}).get("name", "world")
    return {"message": f"{os.environ.get('GREETING', 'Hello')}, {name}!"}
