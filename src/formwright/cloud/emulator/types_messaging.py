"""Message brokers as CloudFormation makes them: Amazon MQ Broker, through moto's MQ backend (DescribeBroker,
ListUsers and ListTags answer what the stack made).

AWS::AmazonMQ::Broker (AWS CloudFormation Template Reference): `Ref` the broker's id; `Arn`,
`ConfigurationId`, `ConfigurationRevision`, `IpAddresses`, `ConsoleURLs` and the endpoint lists by protocol
(`AmqpEndpoints`, `OpenWireEndpoints`, ...). BrokerName, EngineType, DeploymentMode, SubnetIds, StorageType,
AuthenticationStrategy, EncryptionOptions and PubliclyAccessible are create-only; the rest goes through
UpdateBroker, and `Users` through CreateUser / UpdateUser / DeleteUser.
"""

from __future__ import annotations

from typing import Any

from formwright.cloud.emulator.own import Model, backend, register

UPDATABLE = (
    "AutoMinorVersionUpgrade",
    "Configuration",
    "EngineVersion",
    "HostInstanceType",
    "LdapServerMetadata",
    "Logs",
    "MaintenanceWindowStartTime",
    "SecurityGroups",
)
# GetAtt endpoint list -> the scheme its endpoints start with
ENDPOINTS = {
    "AmqpEndpoints": "amqp",
    "OpenWireEndpoints": "ssl",
    "StompEndpoints": "stomp",
    "MqttEndpoints": "mqtt",
    "WssEndpoints": "wss",
}


def _flag(value: Any) -> bool:
    return str(value).lower() == "true"


@register
class Broker(Model):
    """AWS::AmazonMQ::Broker (ActiveMQ or RabbitMQ)."""

    kind = "AWS::AmazonMQ::Broker"
    in_place = frozenset({*UPDATABLE, "Users"})
    taggable = True

    def _mq(self) -> Any:
        return backend("mq", self.account_id, self.region_name)

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        _, broker_id = self._mq().create_broker(
            authentication_strategy=props.get("AuthenticationStrategy") or "SIMPLE",
            auto_minor_version_upgrade=_flag(props.get("AutoMinorVersionUpgrade", False)),
            broker_name=props["BrokerName"],
            configuration=props.get("Configuration"),
            deployment_mode=props["DeploymentMode"],
            encryption_options=props.get("EncryptionOptions"),
            engine_type=props["EngineType"],
            engine_version=props.get("EngineVersion"),
            host_instance_type=props["HostInstanceType"],
            ldap_server_metadata=props.get("LdapServerMetadata"),
            logs=props.get("Logs") or {},
            maintenance_window_start_time=props.get("MaintenanceWindowStartTime"),
            publicly_accessible=_flag(props["PubliclyAccessible"]),
            security_groups=props.get("SecurityGroups"),
            storage_type=props.get("StorageType"),
            subnet_ids=props.get("SubnetIds") or [],
            tags={},
            users=props.get("Users") or [],
        )
        self.physical_resource_id = broker_id
        # AWS's broker ARN names the broker (`broker:{name}:{id}`), which DescribeBroker then answers too
        broker = self._broker()
        broker.arn = f"arn:aws:mq:{self.region_name}:{self.account_id}:broker:{broker.name}:{broker.id}"

    def _broker(self) -> Any:
        return self._mq().brokers.get(self.physical_resource_id)

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        broker = self._broker()
        for name in sorted(names & set(UPDATABLE)):
            value = props.get(name)
            if name == "AutoMinorVersionUpgrade":
                value = _flag(value)
            if name == "Configuration" and value:
                broker.configurations["history"].append(broker.configurations["current"])
                broker.configurations["current"] = value
            else:
                setattr(broker, {"Logs": "logs"}.get(name, _snake(name)), value)
        if "Users" in names:
            wanted = {u["Username"]: u for u in props.get("Users") or []}
            for username in list(broker._users):
                if username not in wanted:
                    broker.delete_user(username)
            for username, user in wanted.items():
                groups, console = user.get("Groups") or [], _flag(user.get("ConsoleAccess", False))
                if username in broker._users:
                    broker._users[username].groups, broker._users[username].console_access = groups, console
                else:
                    broker.create_user(username=username, console_access=console, groups=groups)

    def remove(self) -> None:
        broker = self._broker()
        if broker is not None:
            self._mq().tagger.delete_all_tags_for_resource(broker.arn)
            self._mq().delete_broker(self.physical_resource_id)

    def read(self) -> dict[str, Any] | None:
        broker = self._broker()
        if broker is None:
            return None
        return {
            "BrokerName": broker.name,
            "EngineType": broker.engine_type,
            "EngineVersion": broker.engine_version,
            "HostInstanceType": broker.host_instance_type,
            "DeploymentMode": broker.deployment_mode,
            "PubliclyAccessible": broker.publicly_accessible,
            "AutoMinorVersionUpgrade": broker.auto_minor_version_upgrade,
            "SecurityGroups": broker.security_groups,
            "Logs": broker.logs or None,
            "Users": [
                {"Username": u.username, "ConsoleAccess": u.console_access, "Groups": u.groups}
                for u in broker._users.values()
            ],
        }

    def attribute(self, name: str) -> Any:
        broker = self._broker()
        configuration = broker.configurations["current"] or {}
        if name in ENDPOINTS:
            return [e for i in broker.instances for e in i["endpoints"] if e.startswith(ENDPOINTS[name])]
        values = {
            "Arn": broker.arn,
            "Id": broker.id,
            "ConfigurationId": configuration.get("Id"),
            "ConfigurationRevision": str(configuration.get("Revision")),
            "IpAddresses": [i["ipAddress"] for i in broker.instances],
            "ConsoleURLs": [i["consoleURL"] for i in broker.instances],
            "EngineVersionCurrent": broker.engine_version,
        }
        return values[name]

    def live_tags(self) -> dict[str, str]:
        return dict(self._mq().tagger.get_tag_dict_for_resource(self._broker().arn))

    def write_tags(self, tags: dict[str, str]) -> None:
        tagger, arn = self._mq().tagger, self._broker().arn
        tagger.delete_all_tags_for_resource(arn)
        tagger.tag_resource(arn, tagger.convert_dict_to_tags_input(tags))


def _snake(name: str) -> str:
    from moto.core.utils import camelcase_to_underscores

    return str(camelcase_to_underscores(name))


# AWS::SNS::Subscription properties set through SetSubscriptionAttributes (the rest are create-only)
SUBSCRIPTION_ATTRIBUTES = ("DeliveryPolicy", "FilterPolicy", "FilterPolicyScope", "RawMessageDelivery",
                           "RedrivePolicy", "SubscriptionRoleArn")


def _attribute_text(value: Any) -> str:
    """A subscription attribute as SetSubscriptionAttributes takes it (a policy object as its JSON text)."""
    if isinstance(value, dict | list):
        import json

        return json.dumps(value)
    return str(value).lower() if isinstance(value, bool) else str(value)


@register
class Subscription(Model):
    """AWS::SNS::Subscription (Subscribe, SetSubscriptionAttributes, Unsubscribe, GetSubscriptionAttributes).
    `Ref` is the subscription's ARN ("Return values"); a SAM function's SNS event makes one, and moto has no
    model of the type (AWS's sample SNS/SNSTopic.yaml and SAM's sns-message apps were refused by name)."""

    kind = "AWS::SNS::Subscription"
    in_place = frozenset(SUBSCRIPTION_ATTRIBUTES)

    def _sns(self) -> Any:
        return backend("sns", self.account_id, self.region_name)

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        made = self._sns().subscribe(props["TopicArn"], props.get("Endpoint"), props["Protocol"])
        self.physical_resource_id = made.arn
        self.update(props, set(props) & set(SUBSCRIPTION_ATTRIBUTES))

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        # the scope first: SNS reads a filter policy by the scope it has
        for name in sorted(names, key=lambda n: n != "FilterPolicyScope"):
            if name in SUBSCRIPTION_ATTRIBUTES:
                value = props.get(name)
                self._sns().set_subscription_attributes(
                    self.physical_resource_id, name, "" if value is None else _attribute_text(value))

    def remove(self) -> None:
        self._sns().unsubscribe(self.physical_resource_id)

    def read(self) -> dict[str, Any] | None:
        import json

        found = self._sns().subscriptions.get(self.physical_resource_id)
        if found is None:
            return None
        attributes = found.attributes

        def document(name: str) -> Any:
            text = attributes.get(name)
            return json.loads(text) if text else None

        return {"TopicArn": found.topic.arn, "Protocol": found.protocol, "Endpoint": found.endpoint,
                "RawMessageDelivery": str(attributes.get("RawMessageDelivery", "false")).lower() == "true",
                "FilterPolicy": document("FilterPolicy"), "RedrivePolicy": document("RedrivePolicy"),
                "DeliveryPolicy": document("DeliveryPolicy"),
                "FilterPolicyScope": attributes.get("FilterPolicyScope") or None,
                "SubscriptionRoleArn": attributes.get("SubscriptionRoleArn") or None}

    def attribute(self, name: str) -> Any:
        return {"Arn": self.physical_resource_id}[name]
