"""One visitor per node type; `visitor_for` picks the nearest along the node's type chain."""

from __future__ import annotations

from collections.abc import Callable

from formwright.tosca.model import Node
from formwright.transform.cloudformation import kinds
from formwright.transform.cloudformation.context import Build
from formwright.transform.cloudformation.visitors import java, mysql, software, storage

Visitor = Callable[[Build, Node], None]

VISITORS: dict[str, Visitor] = {
    kinds.APACHE: software.visit_apache,
    kinds.NODEJS: software.visit_nodejs,
    kinds.WEBAPP: software.visit_web_application,
    kinds.WEBSERVER: software.visit_software,
    kinds.SOFTWARE: software.visit_software,
    kinds.DBMS: software.visit_database,
    kinds.DATABASE: software.visit_database,
    kinds.MYSQL_DBMS: mysql.visit,
    kinds.MYSQL_DATABASE: mysql.visit,
    kinds.JAVA_RUNTIME: java.visit_runtime,
    kinds.JAVA_APP: java.visit,
    kinds.BLOCK_STORAGE: storage.visit,
}


def visitor_for(node: Node) -> Visitor | None:
    """The visitor of the nearest supported type of `node` (Compute has none: it is assembled last)."""
    for name in node.types:
        if name in VISITORS:
            return VISITORS[name]
    return None
