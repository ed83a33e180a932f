"""Running tosca-parser quietly on an already loaded service template.

tosca-parser validates the topology against the types (required properties, constraints, capabilities,
relationships). Its log lines and prints are swallowed; its exceptions become one `InputError`.
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
from typing import Any

from formwright.errors import InputError
from formwright.template import line_of, plain
from formwright.tosca.documents import Documents
from formwright.tosca.types import profile_node_types

_QUOTED = re.compile(r'"([^"]+)"')


def _first_error(message: str) -> tuple[str, int]:
    errors = [line.strip() for line in message.splitlines()
              if line.startswith("\t") and not line.startswith("\t\t") and line.strip()]
    if not errors:
        errors = [line.strip() for line in message.splitlines() if line.strip()] or ["unknown error"]
    return errors[0], len(errors) - 1


def _line_for(message: str, documents: Documents) -> int | None:
    """The line of the first node template the message names by quotes, if any."""
    topology = documents.entry.data.get("topology_template") or {}
    nodes = topology.get("node_templates") or {}
    for name in _QUOTED.findall(message):
        if name in nodes:
            return line_of(nodes, name)
    return None


def run_tosca_parser(documents: Documents, params: dict[str, Any]) -> Any:
    """Validate the entry template (with its imports and formwright's profile); return the ToscaTemplate."""
    from toscaparser.tosca_template import ToscaTemplate

    tpl = plain(documents.entry.data)  # tosca-parser rewrites values in place
    tpl["imports"] = [str(p) for p in documents.entry_imports]
    if not tpl["imports"]:
        del tpl["imports"]
    # formwright's profile, parsed once per process, joins the template's own types (which win).
    tpl["node_types"] = {**profile_node_types(), **(tpl.get("node_types") or {})}
    logger = logging.getLogger("tosca")
    previous = logger.level, logger.propagate
    logger.setLevel(logging.CRITICAL + 1)
    logger.propagate = False
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            return ToscaTemplate(yaml_dict_tpl=tpl, parsed_params=params or None, a_file=False)
    except Exception as err:  # noqa: BLE001 - tosca-parser raises its own and Python's exception types
        text = getattr(err, "message", None) or str(err) or type(err).__name__
        first, more = _first_error(str(text))
        message = f"TOSCA validation failed: {first}" + (f" (and {more} more)" if more else "")
        raise InputError(message, file=documents.entry.shown, line=_line_for(first, documents)) from None
    finally:
        logger.setLevel(previous[0])
        logger.propagate = previous[1]
