"""API Gateway V2 (HTTP and WebSocket APIs) as CloudFormation makes them: Api (with quick create: Target),
Stage, Integration, Route, through moto's API Gateway V2 backend (GetApi, GetStage, GetIntegration, GetRoute
answer what the stack made).

Return values (AWS CloudFormation Template Reference): Api `Ref` the API id, `ApiEndpoint`
`https://{id}.execute-api.{region}.amazonaws.com` (`wss://` for WebSocket); Stage `Ref` the stage name;
Integration `Ref` the integration id; Route `Ref` the route id.
"""

from __future__ import annotations

from typing import Any, ClassVar

from formwright.cloud.emulator.own import (
    Invalid,
    Model,
    apply_fields,
    backend,
    camel,
    definition,
    pairs,
    read_fields,
    register,
)


def _backend(account: str, region: str) -> Any:
    return backend("apigatewayv2", account, region)


API_FIELDS = {
    "Name": "name",
    "Description": "description",
    "Version": "version",
    "ApiKeySelectionExpression": "api_key_selection_expression",
    "RouteSelectionExpression": "route_selection_expression",
    "DisableExecuteApiEndpoint": "disable_execute_api_endpoint",
    "DisableSchemaValidation": "disable_schema_validation",
}


@register
class Api(Model):
    """AWS::ApiGatewayV2::Api. With `Target` (quick create, HTTP APIs) CloudFormation also makes an
    integration, the route `RouteKey` (default `$default`) and an auto-deployed `$default` stage."""

    kind = "AWS::ApiGatewayV2::Api"
    in_place = frozenset({*API_FIELDS, "CorsConfiguration", "Body", "BodyS3Location"})
    taggable = True

    def _api(self) -> Any:
        return _backend(self.account_id, self.region_name).get_api(self.physical_resource_id)

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        body = definition(props, self.account_id, self.region_name)
        if not props.get("Name") and not body:
            raise Invalid("Name is required when no Body or BodyS3Location is given")
        protocol = props.get("ProtocolType") or "HTTP"
        if protocol == "WEBSOCKET" and not props.get("RouteSelectionExpression"):
            raise Invalid("RouteSelectionExpression is required for a WEBSOCKET API")
        backend = _backend(self.account_id, self.region_name)
        title = ((body or {}).get("info") or {}).get("title")
        api = backend.create_api(
            api_key_selection_expression=props.get("ApiKeySelectionExpression"),
            cors_configuration=camel(props.get("CorsConfiguration")),
            description=props.get("Description"),
            disable_schema_validation=props.get("DisableSchemaValidation"),
            disable_execute_api_endpoint=props.get("DisableExecuteApiEndpoint"),
            name=props.get("Name") or title,
            protocol_type=protocol,
            route_selection_expression=props.get("RouteSelectionExpression"),
            tags={},
            version=props.get("Version"),
        )
        self.physical_resource_id = api.api_id
        if body:
            self._import(body)
        if props.get("Target"):
            self._quick_create(api, props)

    def _import(self, body: dict[str, Any]) -> None:
        import yaml

        text = yaml.safe_dump(body)
        _backend(self.account_id, self.region_name).reimport_api(self.physical_resource_id, text, False)

    def _quick_create(self, api: Any, props: dict[str, Any]) -> None:
        integration = api.create_integration(
            connection_id=None,
            connection_type=None,
            content_handling_strategy=None,
            credentials_arn=props.get("CredentialsArn"),
            description=None,
            integration_method="POST",
            integration_type="AWS_PROXY",
            integration_uri=props["Target"],
            passthrough_behavior=None,
            payload_format_version="2.0",
            integration_subtype=None,
            request_parameters=None,
            request_templates=None,
            response_parameters=None,
            template_selection_expression=None,
            timeout_in_millis=None,
            tls_config=None,
        )
        api.create_route(
            api_key_required=False,
            authorization_scopes=None,
            authorization_type="NONE",
            authorizer_id=None,
            model_selection_expression=None,
            operation_name=None,
            request_models=None,
            request_parameters=None,
            route_key=props.get("RouteKey") or "$default",
            route_response_selection_expression=None,
            target=f"integrations/{integration.id}",
        )
        api.create_stage({"stageName": "$default", "autoDeploy": True})

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        api = self._api()
        apply_fields(api, props, names, API_FIELDS)
        if "DisableExecuteApiEndpoint" in names:
            api.disable_execute_api_endpoint = bool(props.get("DisableExecuteApiEndpoint"))
        if "CorsConfiguration" in names:
            api.cors_configuration = camel(props.get("CorsConfiguration"))
        if names & {"Body", "BodyS3Location"}:
            body = definition(props, self.account_id, self.region_name)
            if body:
                self._import(body)

    def remove(self) -> None:
        backend = _backend(self.account_id, self.region_name)
        api = backend.apis.pop(self.physical_resource_id, None)
        if api is not None:
            backend.tagger.delete_all_tags_for_resource(api.arn)

    def read(self) -> dict[str, Any] | None:
        api = _backend(self.account_id, self.region_name).apis.get(self.physical_resource_id)
        if api is None:
            return None
        return {**read_fields(api, API_FIELDS), "ProtocolType": api.protocol_type}

    def attribute(self, name: str) -> Any:
        if name == "ApiId":
            return self.physical_resource_id
        if name == "ApiEndpoint":
            scheme = "wss" if self._api().protocol_type == "WEBSOCKET" else "https"
            return f"{scheme}://{self.physical_resource_id}.execute-api.{self.region_name}.amazonaws.com"
        raise KeyError(name)

    def live_tags(self) -> dict[str, str]:
        return dict(_backend(self.account_id, self.region_name).get_tags(self._api().arn))

    def write_tags(self, tags: dict[str, str]) -> None:
        backend = _backend(self.account_id, self.region_name)
        arn = self._api().arn
        backend.tagger.delete_all_tags_for_resource(arn)
        backend.tag_resource(arn, tags)


class ApiPart(Model):
    """A part of an API kept in one of its collections (`collection`: stages, integrations, routes),
    its properties kept as `fields` (property -> moto attribute) on moto's object, made by the API's
    method `maker`, its id (the `Ref`, and the attribute `id_attribute`) moto's `made_id`."""

    collection = maker = made_id = id_attribute = ""
    fields: ClassVar[dict[str, str]] = {}
    api_id = ""

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        self.api_id = str(props["ApiId"])
        api = _backend(self.account_id, self.region_name).get_api(self.api_id)
        self._check(api, props)
        made = getattr(api, self.maker)(**dict.fromkeys(self.fields.values()))
        self.physical_resource_id = getattr(made, self.made_id)
        self.update(props, set(self.fields))

    def _check(self, api: Any, props: dict[str, Any]) -> None:
        """Refuse what the service refuses."""

    def attribute(self, name: str) -> Any:
        if name == self.id_attribute:
            return self.physical_resource_id
        raise KeyError(name)

    def _found(self) -> Any:
        api = _backend(self.account_id, self.region_name).apis.get(self.api_id)
        return getattr(api, self.collection).get(self.physical_resource_id) if api is not None else None

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        found = self._found()
        if found is None:
            from formwright.cloud.emulator.own import Missing

            raise Missing(f"Invalid {self.collection[:-1]} identifier specified {self.physical_resource_id}")
        apply_fields(found, self._converted(props), names, self.fields)

    def _converted(self, props: dict[str, Any]) -> dict[str, Any]:
        """The properties in moto's shapes (the API's camelCase structures)."""
        return {k: camel(v) if isinstance(v, dict) else v for k, v in props.items()}

    def remove(self) -> None:
        api = _backend(self.account_id, self.region_name).apis.get(self.api_id)
        if api is not None:
            getattr(api, self.collection).pop(self.physical_resource_id, None)

    def read(self) -> dict[str, Any] | None:
        found = self._found()
        if found is None:
            return None
        return {"ApiId": self.api_id, **read_fields(found, self.fields)}


STAGE_FIELDS = {
    "Description": "description",
    "AutoDeploy": "auto_deploy",
    "DeploymentId": "deployment_id",
    "StageVariables": "stage_variables",
    "AccessLogSettings": "access_log_settings",
    "DefaultRouteSettings": "default_route_settings",
    "RouteSettings": "route_settings",
    "ClientCertificateId": "client_certificate_id",
}


@register
class Stage(ApiPart):
    """AWS::ApiGatewayV2::Stage."""

    kind = "AWS::ApiGatewayV2::Stage"
    collection = "stages"
    fields = STAGE_FIELDS
    in_place = frozenset(STAGE_FIELDS)
    taggable = True

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        self.api_id = str(props["ApiId"])
        name = str(props["StageName"])
        api = _backend(self.account_id, self.region_name).get_api(self.api_id)
        if name in api.stages:
            from moto.apigatewayv2.exceptions import BadRequestException

            raise BadRequestException(f"Stage {name} already exists")
        api.create_stage({"stageName": name})
        self.physical_resource_id = name
        self.update(props, set(STAGE_FIELDS))

    def _converted(self, props: dict[str, Any]) -> dict[str, Any]:
        converted = super()._converted(props)
        converted["StageVariables"] = dict(props.get("StageVariables") or {})
        converted["RouteSettings"] = camel(props.get("RouteSettings") or {})
        if props.get("DefaultRouteSettings") is None:
            converted["DefaultRouteSettings"] = {"detailedMetricsEnabled": False}
        return converted

    def read(self) -> dict[str, Any] | None:
        found = super().read()
        if found is not None:  # read back in the template's spelling
            for name in ("AccessLogSettings", "DefaultRouteSettings"):
                value = found[name] or {}
                found[name] = {k[:1].upper() + k[1:]: v for k, v in value.items()} or None
        return found

    def live_tags(self) -> dict[str, str]:
        return dict(self._found().tags or {})

    def write_tags(self, tags: dict[str, str]) -> None:
        self._found().tags = pairs(tags)


INTEGRATION_FIELDS = {
    "ConnectionId": "connection_id",
    "ConnectionType": "connection_type",
    "ContentHandlingStrategy": "content_handling_strategy",
    "CredentialsArn": "credentials_arn",
    "Description": "description",
    "IntegrationMethod": "integration_method",
    "IntegrationSubtype": "integration_subtype",
    "IntegrationType": "integration_type",
    "IntegrationUri": "integration_uri",
    "PassthroughBehavior": "passthrough_behavior",
    "PayloadFormatVersion": "payload_format_version",
    "RequestParameters": "request_parameters",
    "RequestTemplates": "request_templates",
    "ResponseParameters": "response_parameters",
    "TemplateSelectionExpression": "template_selection_expression",
    "TimeoutInMillis": "timeout_in_millis",
    "TlsConfig": "tls_config",
}


@register
class Integration(ApiPart):
    """AWS::ApiGatewayV2::Integration."""

    kind = "AWS::ApiGatewayV2::Integration"
    collection, maker, made_id, id_attribute = "integrations", "create_integration", "id", "IntegrationId"
    fields = INTEGRATION_FIELDS
    in_place = frozenset(INTEGRATION_FIELDS)

    def _check(self, api: Any, props: dict[str, Any]) -> None:
        kind = str(props["IntegrationType"])
        if kind != "MOCK" and not props.get("IntegrationUri"):
            raise Invalid(f"IntegrationUri is required for an integration of type {kind}")
        if api.protocol_type == "HTTP" and kind == "AWS_PROXY" and not props.get("PayloadFormatVersion"):
            raise Invalid("PayloadFormatVersion is required for an AWS_PROXY integration of an HTTP API")

    def _converted(self, props: dict[str, Any]) -> dict[str, Any]:
        converted = super()._converted(props)
        timeout = props.get("TimeoutInMillis")
        converted["TimeoutInMillis"] = int(timeout) if timeout is not None else None
        for name in ("RequestParameters", "RequestTemplates", "ResponseParameters"):
            converted[name] = props.get(name)  # maps of the user's own keys: kept as written
        return converted


ROUTE_FIELDS = {
    "RouteKey": "route_key",
    "Target": "target",
    "ApiKeyRequired": "api_key_required",
    "AuthorizationScopes": "authorization_scopes",
    "AuthorizationType": "authorization_type",
    "AuthorizerId": "authorizer_id",
    "ModelSelectionExpression": "model_selection_expression",
    "OperationName": "operation_name",
    "RequestModels": "request_models",
    "RequestParameters": "request_parameters",
    "RouteResponseSelectionExpression": "route_response_selection_expression",
}


@register
class Route(ApiPart):
    """AWS::ApiGatewayV2::Route."""

    kind = "AWS::ApiGatewayV2::Route"
    collection, maker, made_id, id_attribute = "routes", "create_route", "route_id", "RouteId"
    fields = ROUTE_FIELDS
    in_place = frozenset(ROUTE_FIELDS)

    def _check(self, api: Any, props: dict[str, Any]) -> None:
        key = str(props["RouteKey"])
        if any(r.route_key == key for r in api.routes.values()):
            from moto.apigatewayv2.exceptions import BadRequestException

            raise BadRequestException(f"Route with key {key} already exists for this API")

    def _converted(self, props: dict[str, Any]) -> dict[str, Any]:
        return {
            **props,
            "AuthorizationType": props.get("AuthorizationType") or "NONE",
            "ApiKeyRequired": bool(props.get("ApiKeyRequired")),
        }
