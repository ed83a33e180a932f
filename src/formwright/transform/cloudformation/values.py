"""Rendering resolved TOSCA values as CloudFormation expressions.

Inputs become `Ref`s to parameters, addresses become `Fn::GetAtt` of the instance, the RDS endpoint
or the Beanstalk environment's host, `concat` becomes `Fn::Join`. On the instance that runs an
operation, its own address is a placeholder the run wrapper fills in (a resource cannot refer to
itself), and so is the output of an operation run earlier on the same host; an output made on another
host arrives through a WaitCondition (`outputs`).
"""

from __future__ import annotations

from typing import Any

from formwright.errors import InputError
from formwright.tosca.functions import AttributeRef, Concat, Context, InputRef, OperationOutputRef, Token
from formwright.tosca.model import Location, Node
from formwright.transform.cloudformation import kinds, outputs
from formwright.transform.cloudformation.context import Build
from formwright.transform.cloudformation.prepare import app_port

PRIVATE_IP = "@@FW_PRIVATE_IP@@"
PUBLIC_IP = "@@FW_PUBLIC_IP@@"
ADDRESS_ATTRIBUTES = {"private_address": "PrivateIp", "public_address": "PublicIp", "ip_address": "PrivateIp"}


def cname_prefix(app: str) -> str:
    """The `Fn::Sub` text of the CNAME prefix of the Beanstalk environment of Java application `app`."""
    return "${AWS::StackName}-" + "".join(c if c.isalnum() else "-" for c in app.lower())


def beanstalk_host(build: Build, app: str) -> dict:
    """The host name of the Beanstalk environment of Java application `app` (from its CNAME prefix)."""
    return {"Fn::Sub": cname_prefix(app) + ".${AWS::Region}.elasticbeanstalk.com"}


class Renderer:
    """Turns values from the resolver into template values, for one place (an instance, or none)."""

    def __init__(self, build: Build, run_host: str | None = None) -> None:
        self.build = build
        self.run_host = run_host
        self.signal_files: dict[str, dict] = {}  # cfn-init files holding outputs sent by other hosts

    def value(self, raw: Any, ctx: Context) -> Any:
        """Resolve the TOSCA value `raw` in `ctx` and render it."""
        return self.render(self.build.resolver.resolve(raw, ctx), ctx.location)

    def render(self, value: Any, where: Location | None = None) -> Any:
        """Render an already resolved value."""
        if isinstance(value, InputRef):
            replaced = self.build.replaced_inputs.get(value.name)
            return {"Ref": replaced or self.build.input_parameters[value.name]}
        if isinstance(value, Concat):
            parts = [self.text(self.render(p, where)) for p in value.parts]
            return {"Fn::Join": ["", parts]}
        if isinstance(value, Token):
            return self.token(value, where)
        if isinstance(value, AttributeRef):
            return self.attribute(value, where)
        if isinstance(value, OperationOutputRef):
            return self.operation_output(value, where)
        if isinstance(value, dict):
            return {k: self.render(v, where) for k, v in value.items()}
        if isinstance(value, list):
            return [self.render(v, where) for v in value]
        return value

    @staticmethod
    def text(value: Any) -> Any:
        """A rendered value as a string (expressions stay expressions)."""
        if isinstance(value, bool):
            return "true" if value else "false"
        if value is None:
            return ""
        return value if isinstance(value, (dict, str)) else str(value)

    def token(self, value: Token, where: Location | None) -> dict | str:
        """`token` of a deploy-time text: `Fn::Select` of its `Fn::Split` (CloudFormation splits it)."""
        text = self.text(self.render(value.text, where))
        if "@@FW_" in str(text):
            # a placeholder only the instance fills in (its own address, an earlier operation's output)
            self._fail("token of a value only the instance itself knows (its own address or an operation's "
                       "output) is not supported", where)
        if isinstance(text, str):  # known now after all (a port)
            pieces = text.split(value.separator)
            if value.index >= len(pieces):
                self._fail(f"token index {value.index} is out of range", where)
            return pieces[value.index]
        return {"Fn::Select": [str(value.index), {"Fn::Split": [value.separator, text]}]}

    def _fail(self, message: str, where: Location | None) -> None:
        raise InputError(message, file=where.file if where else None, line=where.line if where else None)

    def operation_output(self, ref: OperationOutputRef, where: Location | None) -> str:
        """A placeholder for an operation's output: run earlier on this host, or sent by another one."""
        host = self.build.plan.host_of.get(ref.node)
        if self.run_host is None:
            raise InputError(
                f"get_operation_output of node '{ref.node}' can only be used by operations on instances",
                file=where.file if where else None, line=where.line if where else None,
                hint="pass the value as an input instead")
        if host != self.run_host:
            placeholder, path, entry = outputs.consume(self.build, ref, self.run_host, where)
            self.signal_files[path] = entry
            return placeholder
        return f"@@FW_OUTPUT:{ref.node}/{ref.operation}/{ref.output}@@"

    def rds_address(self, owner: str, attribute: str) -> dict:
        """The RDS endpoint address (or port) of the DB instance of `owner`."""
        db = self.build.plan.rds[owner]
        return {"Fn::GetAtt": [db, "Endpoint.Port" if attribute == "port" else "Endpoint.Address"]}

    def attribute(self, ref: AttributeRef, where: Location | None) -> Any:
        """Render a runtime attribute (addresses and ports of instances, databases, environments)."""
        model, plan = self.build.model, self.build.plan
        node = model.nodes[ref.node]
        attribute = ref.attribute
        if attribute == "volume_id" and node.name in plan.volumes:
            return {"Ref": plan.volumes[node.name]}  # an EBS volume's Ref is its id
        undeclared = attribute not in node.attributes and attribute not in ADDRESS_ATTRIBUTES
        if undeclared and (attribute != "port" or (app_port(node) is None and not kinds.is_mysql(node))):
            return ""  # an attribute the type does not declare: warned about at load, as TOSCAna did
        if attribute not in ADDRESS_ATTRIBUTES and attribute != "port":
            self._fail(f"attribute '{attribute}' of node '{node.name}' is not known at deploy time", where)
        if kinds.is_mysql(node):
            return self.rds_address(plan.rds_of[node.name], attribute)
        if kinds.is_java(node) and node.name in plan.beanstalk_of:
            return beanstalk_host(self.build, plan.beanstalk_of[node.name])
        if attribute == "port" and (port := app_port(node)) is not None:
            return port  # the endpoint's port property (WebApplication/Apache: 80 unless set, as TOSCAna)
        if attribute == "port":
            self._fail(f"attribute 'port' of node '{node.name}' is not known at deploy time", where)
        if not node.is_a(kinds.COMPUTE):
            return self.attribute(
                AttributeRef(model.root_host(node).name, attribute, None, ref.seen_from), where
            )
        database = self._connected_mysql(ref.seen_from, node) if attribute != "public_address" else None
        if database is not None:
            return self.rds_address(plan.rds_of[database.name], attribute)
        if node.name in plan.instances:
            if self.run_host == node.name:
                return PUBLIC_IP if attribute == "public_address" else PRIVATE_IP
            return {"Fn::GetAtt": [plan.instances[node.name], ADDRESS_ATTRIBUTES[attribute]]}
        kind, owner = plan.alias[node.name]
        if kind == "rds":
            return self.rds_address(plan.rds_of[owner], attribute)
        return beanstalk_host(self.build, owner)

    def _connected_mysql(self, source: str | None, compute: Node) -> Node | None:
        """The MySQL database on `compute` that node `source` ConnectsTo, if any."""
        if source is None:
            return None
        for rel in self.build.model.nodes[source].requirements:
            target = self.build.model.nodes[rel.target]
            if rel.is_a(kinds.CONNECTS_TO) and kinds.is_mysql(target) and \
                    self.build.plan.host_of.get(target.name) == compute.name:
                return target
        return None


_FUNCTIONS = {"Ref": "Ref", "Fn::GetAtt": "GetAtt", "Fn::Join": "Join", "Fn::Sub": "Sub",
              "Fn::Select": "Select", "Fn::Split": "Split"}


def expression(value: Any) -> Any:
    """A rendered value as troposphere objects (`{"Ref": x}` → `Ref(x)` …), for typed resource properties."""
    import troposphere

    if isinstance(value, dict) and len(value) == 1 and next(iter(value)) in _FUNCTIONS:
        ((name, args),) = value.items()
        helper = getattr(troposphere, _FUNCTIONS[name])
        if name == "Ref" or name == "Fn::Sub":
            return helper(args)
        if name == "Fn::Join":
            return helper(args[0], [expression(a) for a in args[1]])
        return helper(*[expression(a) for a in args])
    if isinstance(value, dict):
        return {k: expression(v) for k, v in value.items()}
    if isinstance(value, list):
        return [expression(v) for v in value]
    return value
