"""Operation outputs carried from one instance to another at deploy time (get_operation_output across hosts).

CloudFormation carries a value made on an instance at deploy time to another resource through a
WaitCondition: the producing instance sends it with `cfn-signal --id NAME --data VALUE` to the
WaitConditionHandle's URL, and the WaitCondition's `Data` attribute is then the JSON object of every
signal's id and data (AWS CloudFormation User Guide, "Create wait conditions in a CloudFormation
template": "Accessing signal data"). Heat, the system heat-translator targets, does the same with a
SoftwareDeployment's outputs.

Here, per producing operation: a WaitConditionHandle, and a WaitCondition counting one signal per output
read elsewhere. Right after the operation ran, its host runs `formwright-run --publish` (a config of its
own, see `lifecycle.add_publications`), which sends each output (or a failure signal when the script
wrote none, so the stack fails at once rather than at the timeout). A reading instance refers to the
WaitCondition's `Data` (in a file cfn-init writes before the operation runs, /opt/formwright/signals/
<WaitCondition>.json: a file's `content` may be a string or a JSON object, and cfn-lint's schema types
`Data` as an object, which no string property takes), so CloudFormation creates it only once every value
exists; the wrapper puts the value in place of `@@FW_SIGNAL:<WaitCondition>/NAME@@`. The WaitCondition
depends on what the producing instance depends on, so its timeout starts with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from formwright.errors import InputError
from formwright.tosca.functions import OperationOutputRef
from formwright.tosca.model import Location
from formwright.transform.cloudformation.context import Build

# Operations whose outputs can be waited for: `start` runs as a service (see formwright-run), whose
# outputs may come at any time or never.
CARRIED = ("create", "configure")
SIGNALS = "/opt/formwright/signals"


@dataclass
class Published:
    """The outputs of one operation that instances other than its own read."""

    node: str
    operation: str
    host: str                                          # compute whose instance runs the operation
    wait: str                                          # WaitCondition logical id
    handle: str                                        # WaitConditionHandle logical id
    names: list[str] = field(default_factory=list)     # outputs to send, in first-use order
    readers: set[str] = field(default_factory=set)     # computes whose instances read them


def _fail(message: str, where: Location | None, hint: str | None = None) -> None:
    raise InputError(message, file=where.file if where else None, line=where.line if where else None,
                     hint=hint)


def consume(build: Build, ref: OperationOutputRef, reader: str,
            where: Location | None) -> tuple[str, str, dict]:
    """Output `ref` read by an operation on compute `reader` (another host than the producer's).

    Returns the placeholder the wrapper replaces, and the cfn-init file (path, entry) holding the
    WaitCondition's data, to write on the reader before the operation runs.
    """
    plan = build.plan
    host = plan.host_of.get(ref.node)
    operation = build.model.nodes[ref.node].operations[ref.operation]
    if host not in plan.instances:
        _fail(f"get_operation_output: the operations of node '{ref.node}' do not run on an instance", where)
    if ref.operation not in CARRIED or not operation.implementation:
        why = "has no script" if not operation.implementation else "runs as a service"
        _fail(f"get_operation_output: operation '{ref.operation}' of node '{ref.node}' {why}, so no other "
              "host can wait for its outputs", where,
              hint="produce the value in a create or configure script (write it to $OPERATION_OUTPUTS/NAME)")
    assert host is not None
    key = (ref.node, ref.operation)
    published = build.published.get(key)
    if published is None:
        wait = plan.namer.name(ref.node, ref.operation, "outputs")
        published = build.published[key] = Published(ref.node, ref.operation, host, wait,
                                                     plan.namer.name(wait, "handle"))
    if ref.output not in published.names:
        published.names.append(ref.output)
    published.readers.add(reader)
    entry = {"content": {"Fn::GetAtt": [published.wait, "Data"]}, "mode": "000600", "owner": "root",
             "group": "root"}
    return f"@@FW_SIGNAL:{published.wait}/{ref.output}@@", f"{SIGNALS}/{published.wait}.json", entry


def _reaches(template: dict, start: str) -> set[str]:
    """Every resource `start` waits for, directly or not (DependsOn, Ref, Fn::GetAtt, Fn::Sub)."""
    from formwright.cloud.emulator.resolve import reference_sites

    resources = template.get("Resources", {})
    edges: dict[str, set[str]] = {}
    for name, body in resources.items():
        depends = body.get("DependsOn", [])
        targets = {depends} if isinstance(depends, str) else set(depends)
        targets |= {target for target, _ in reference_sites(body) if target in resources}
        edges[name] = targets
    seen: set[str] = set()
    todo = [start]
    while todo:
        for other in edges.get(todo.pop(), ()):
            if other not in seen:
                seen.add(other)
                todo.append(other)
    return seen


def check_order(build: Build, template: dict) -> None:
    """Fail when an instance reading an output is one the producing instance waits for: it would wait
    for the WaitCondition, which waits for a signal from an instance not yet created."""
    for published in build.published.values():
        upstream = _reaches(template, build.plan.instances[published.host])
        for reader in sorted(published.readers):
            if build.plan.instances[reader] in upstream:
                node = build.model.nodes[published.node]
                _fail(f"get_operation_output: host '{reader}' reads an output of '{published.node}."
                      f"{published.operation}' on host '{published.host}', which must wait for '{reader}' "
                      "first", node.location,
                      hint="remove the dependency between the two hosts, or host both nodes on one Compute")
