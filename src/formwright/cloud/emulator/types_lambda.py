"""Lambda aliases and function URLs as CloudFormation makes them, through moto's Lambda backend (GetAlias and
GetFunctionUrlConfig answer what the stack made).

Return values (AWS CloudFormation Template Reference): Alias `Ref` and `AliasArn` the alias's ARN
(`arn:aws:lambda:{region}:{account}:function:{function}:{alias}`); Url `FunctionArn` the function's ARN (the
`Ref`, its primary identifier) and `FunctionUrl` `https://{id}.lambda-url.{region}.on.aws/`.
"""

from __future__ import annotations

from typing import Any

from formwright.cloud.emulator.own import Model, register


def _lambda(account: str, region: str) -> Any:
    from moto.awslambda.models import lambda_backends

    return lambda_backends[account][region]


def _function_name(name_or_arn: Any) -> str:
    """A function's name from its name or (qualified) ARN."""
    text = str(name_or_arn)
    return text.split(":")[6] if text.startswith("arn:") else text


def _version(value: Any) -> str:
    """A version number, also from a version's ARN (the Ref of an AWS::Lambda::Version)."""
    text = str(value)
    return text.rsplit(":", 1)[-1] if text.startswith("arn:") else text


def _routing(config: dict[str, Any] | None) -> dict[str, Any] | None:
    """RoutingConfig in the API's shape: AdditionalVersionWeights as a map of version -> weight."""
    weights = (config or {}).get("AdditionalVersionWeights") or []
    if not weights:
        return None
    return {
        "AdditionalVersionWeights": {
            _version(w["FunctionVersion"]): float(w["FunctionWeight"]) for w in weights
        }
    }


@register
class Alias(Model):
    """AWS::Lambda::Alias."""

    kind = "AWS::Lambda::Alias"
    in_place = frozenset({"FunctionVersion", "Description", "RoutingConfig", "ProvisionedConcurrencyConfig"})

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        self.function, self.name = _function_name(props["FunctionName"]), str(props["Name"])
        alias = _lambda(self.account_id, self.region_name).create_alias(
            self.name,
            self.function,
            _version(props["FunctionVersion"]),
            props.get("Description") or "",
            _routing(props.get("RoutingConfig")),
        )
        self.physical_resource_id = alias.arn
        # kept on the alias: no function runs here, so the concurrency is a setting to read back, no more
        alias.fw_provisioned_concurrency = props.get("ProvisionedConcurrencyConfig")

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        alias = _lambda(self.account_id, self.region_name).update_alias(
            self.name,
            self.function,
            _version(props["FunctionVersion"]),
            props.get("Description") or "",
            _routing(props.get("RoutingConfig")),
        )
        alias.description = props.get("Description") or ""  # moto keeps the old one when given none
        alias.routing_config = _routing(props.get("RoutingConfig"))
        alias.fw_provisioned_concurrency = props.get("ProvisionedConcurrencyConfig")

    def remove(self) -> None:
        try:
            _lambda(self.account_id, self.region_name).delete_alias(self.name, self.function)
        except Exception:  # noqa: BLE001 - moto's not-found error: the alias (or its function) is gone
            return

    def read(self) -> dict[str, Any] | None:
        try:
            alias = _lambda(self.account_id, self.region_name).get_alias(self.name, self.function)
        except Exception:  # noqa: BLE001 - moto's not-found error: the alias is gone
            return None
        weights = (alias.routing_config or {}).get("AdditionalVersionWeights") or {}
        found = {
            "Name": alias.name,
            "FunctionVersion": alias.function_version,
            "Description": alias.description or None,
            "ProvisionedConcurrencyConfig": getattr(alias, "fw_provisioned_concurrency", None),
        }
        if weights:
            found["RoutingConfig"] = {
                "AdditionalVersionWeights": [
                    {"FunctionVersion": v, "FunctionWeight": w} for v, w in weights.items()
                ]
            }
        return found

    def attribute(self, name: str) -> Any:
        if name == "AliasArn":
            return self.physical_resource_id
        raise KeyError(name)


@register
class Url(Model):
    """AWS::Lambda::Url (moto keeps one URL per function: a Qualifier's URL is the function's)."""

    kind = "AWS::Lambda::Url"
    in_place = frozenset({"AuthType", "Cors", "InvokeMode"})

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        self.function = _function_name(props["TargetFunctionArn"])
        backend_ = _lambda(self.account_id, self.region_name)
        config = backend_.create_function_url_config(self.function, self._config(props))
        qualifier = props.get("Qualifier")
        self.physical_resource_id = config.function.function_arn + (f":{qualifier}" if qualifier else "")

    @staticmethod
    def _config(props: dict[str, Any]) -> dict[str, Any]:
        return {
            "AuthType": props["AuthType"],
            "Cors": props.get("Cors"),
            "InvokeMode": props.get("InvokeMode"),
        }

    def _function(self) -> Any:
        """The function's latest version (which holds the URL), or None when it is gone."""
        return (_lambda(self.account_id, self.region_name)._lambdas._functions.get(self.function) or {}).get(
            "latest"
        )

    def _found(self) -> Any:
        return getattr(self._function(), "url_config", None)

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        found = self._found()
        found.config = self._config(props)  # the whole configuration (moto's update keeps what is dropped)

    def remove(self) -> None:
        if self._found() is not None:
            self._function().delete_url_config()

    def read(self) -> dict[str, Any] | None:
        found = self._found()
        if found is None:
            return None
        return {
            "AuthType": found.config.get("AuthType"),
            "Cors": found.config.get("Cors"),
            "InvokeMode": found.config.get("InvokeMode") or "BUFFERED",
        }

    def attribute(self, name: str) -> Any:
        if name == "FunctionArn":
            return self.physical_resource_id
        if name == "FunctionUrl":
            return self._found().url.rstrip("/") + "/"
        raise KeyError(name)
