"""API Gateway REST APIs as CloudFormation makes them: RestApi (Body, BodyS3Location, no Name), Deployment,
Stage, Authorizer, through moto's API Gateway backend (GetRestApi, GetStage, GetDeployment and
GetAuthorizer answer what the stack made).

Return values follow the AWS CloudFormation Template Reference pages of each type: RestApi `Ref` is the API
id, `RootResourceId` the id of `/`; Deployment `Ref` the deployment id; Stage `Ref` the stage name;
Authorizer `Ref` the authorizer id.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from formwright.cloud.emulator.own import (
    Invalid,
    Missing,
    Model,
    apply_fields,
    backend,
    definition,
    generated_name,
    pairs,
    read_fields,
    register,
)

# the methods an OpenAPI path item may hold; its other keys (parameters, summary, ...) are not methods
HTTP_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "x-amazon-apigateway-any-method"}


def _backend(account: str, region: str) -> Any:
    return backend("apigateway", account, region)


def patch_moto() -> None:
    """An integration may run with the caller's own identity: "To require that the caller's identity be
    passed through from the request, specify the string arn:aws:iam::*:user/*" (API Gateway API reference,
    PutIntegration, credentials). SAM writes it for an API whose DefaultAuthorizer is AWS_IAM; moto's
    PutIntegration took it for another account's role and refused it ("Cross-account pass role is not
    allowed"). Idempotent."""
    import re

    from moto.apigateway.models import APIGatewayBackend

    if getattr(APIGatewayBackend.put_integration, "_formwright_patched", False):
        return
    caller = re.compile(r"^arn:aws[a-z-]*:iam::\*:user/\*$")
    original = APIGatewayBackend.put_integration

    def put_integration(self: Any, *args: Any, **kwargs: Any) -> Any:
        credentials = kwargs.get("credentials")
        if not (isinstance(credentials, str) and caller.match(credentials)):
            return original(self, *args, **kwargs)
        integration = original(self, *args, **{**kwargs, "credentials": None})
        integration.credentials = credentials
        return integration

    put_integration._formwright_patched = True  # type: ignore[attr-defined]
    APIGatewayBackend.put_integration = put_integration  # type: ignore[method-assign]  # moto has no hook


def _importable(doc: dict[str, Any]) -> dict[str, Any]:
    """The document as moto's importer reads it: OpenAPI 3 or Swagger 2 alike (API Gateway imports both;
    moto's importer refuses the `swagger` key but reads only `paths`), methods only in each path item."""
    paths = {}
    for path, item in (doc.get("paths") or {}).items():
        methods = {
            ("ANY" if m.startswith("x-") else m): copy.deepcopy(v)
            for m, v in (item or {}).items()
            if m.lower() in HTTP_METHODS and isinstance(v, dict)
        }
        for method in methods.values():
            integration = method.get("x-amazon-apigateway-integration")
            if isinstance(integration, dict):  # a MOCK integration has neither (moto's importer needs both)
                integration.setdefault("uri", "")
                integration.setdefault("httpMethod", "POST")
        paths[path] = methods
    return {"openapi": "3.0.1", "info": doc.get("info") or {}, "paths": paths}


@register
class RestApi(Model):
    """AWS::ApiGateway::RestApi."""

    kind = "AWS::ApiGateway::RestApi"
    in_place = frozenset(
        {
            "Name",
            "Description",
            "Body",
            "BodyS3Location",
            "BinaryMediaTypes",
            "MinimumCompressionSize",
            "Policy",
            "DisableExecuteApiEndpoint",
            "ApiKeySourceType",
            "EndpointConfiguration",
            "Mode",
            "FailOnWarnings",
            "Parameters",
        }
    )
    taggable = True

    def _api(self) -> Any:
        return _backend(self.account_id, self.region_name).get_rest_api(self.physical_resource_id)

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        doc = definition(props, self.account_id, self.region_name)
        info = (doc or {}).get("info") or {}
        # "Name: ... Required: Conditional. If you don't specify a name using OpenAPI, you must specify
        # a name" (Template Reference): the Body's info.title names it otherwise
        name = props.get("Name") or info.get("title")
        if not name:
            raise Invalid("Invalid API name specified: a RestApi needs a Name or a Body with info.title")
        api = _backend(self.account_id, self.region_name).create_rest_api(
            name=str(name), description=props.get("Description") or info.get("description") or ""
        )
        self.physical_resource_id = api.id
        self._apply(props, set(props), doc)

    def _apply(self, props: dict[str, Any], names: set[str], doc: dict[str, Any] | None) -> None:
        api = self._api()
        if names & {"Body", "BodyS3Location"} and doc is not None:
            mode = "overwrite" if props.get("Mode") == "overwrite" else "merge"
            _backend(self.account_id, self.region_name).put_rest_api(
                api.id, _importable(doc), fail_on_warnings=False, mode=mode
            )
            media = doc.get("x-amazon-apigateway-binary-media-types")
            if media and "BinaryMediaTypes" not in props:
                api.binaryMediaTypes = list(media)
        info = (doc or {}).get("info") or {}
        if "Name" in names and (props.get("Name") or info.get("title")):
            api.name = props.get("Name") or info.get("title")
        if "Description" in names:
            api.description = props.get("Description") or info.get("description") or ""
        if "BinaryMediaTypes" in names:
            api.binaryMediaTypes = list(props.get("BinaryMediaTypes") or [])
        if "MinimumCompressionSize" in names:
            size = props.get("MinimumCompressionSize")
            api.minimum_compression_size = int(size) if size is not None else None
        if "Policy" in names:
            policy = props.get("Policy")
            api.policy = json.dumps(policy) if isinstance(policy, dict) else policy
        if "DisableExecuteApiEndpoint" in names:
            api.disableExecuteApiEndpoint = str(props.get("DisableExecuteApiEndpoint")).lower() == "true"
        if "ApiKeySourceType" in names:
            api.api_key_source = props.get("ApiKeySourceType") or "HEADER"
        if "EndpointConfiguration" in names:
            config = props.get("EndpointConfiguration") or {}
            api.endpoint_configuration = {"types": list(config.get("Types") or ["EDGE"])}
            if config.get("VpcEndpointIds"):
                api.endpoint_configuration["vpcEndpointIds"] = list(config["VpcEndpointIds"])

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        doc = (
            definition(props, self.account_id, self.region_name)
            if names & {"Body", "BodyS3Location"}
            else None
        )
        self._apply(props, names, doc)

    def remove(self) -> None:
        _backend(self.account_id, self.region_name).apis.pop(self.physical_resource_id, None)

    def read(self) -> dict[str, Any] | None:
        api = _backend(self.account_id, self.region_name).apis.get(self.physical_resource_id)
        if api is None:
            return None
        found = {
            "Name": api.name,
            "Description": api.description or None,
            "BinaryMediaTypes": list(api.binaryMediaTypes or []) or None,
            "MinimumCompressionSize": api.minimum_compression_size,
            "DisableExecuteApiEndpoint": bool(api.disableExecuteApiEndpoint),
            "ApiKeySourceType": api.api_key_source,
            "EndpointConfiguration": {"Types": list(api.endpoint_configuration.get("types") or [])},
        }
        if api.policy:
            found["Policy"] = json.loads(api.policy) if str(api.policy).startswith("{") else api.policy
        return found

    def attribute(self, name: str) -> Any:
        if name == "RestApiId":
            return self.physical_resource_id
        if name == "RootResourceId":
            return self._api().get_resource_for_path("/").id
        raise KeyError(name)

    def live_tags(self) -> dict[str, str]:
        return dict(self._api().tags or {})

    def write_tags(self, tags: dict[str, str]) -> None:
        self._api().tags = dict(tags)


class ApiPart(Model):
    """A part of a REST API kept in one of its collections (`collection`: deployments, stages, ...)."""

    collection = ""
    api_id = ""

    def _found(self) -> Any:
        """The live part, or None when it (or its API) is gone."""
        api = _backend(self.account_id, self.region_name).apis.get(self.api_id)
        return getattr(api, self.collection).get(self.physical_resource_id) if api is not None else None

    def remove(self) -> None:
        api = _backend(self.account_id, self.region_name).apis.get(self.api_id)
        if api is not None:
            getattr(api, self.collection).pop(self.physical_resource_id, None)


@register
class Deployment(ApiPart):
    """AWS::ApiGateway::Deployment: a snapshot of the API; with `StageName`, also that stage."""

    kind = "AWS::ApiGateway::Deployment"
    collection = "deployments"
    in_place = frozenset({"Description", "StageName", "StageDescription"})

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        self.api_id = str(props["RestApiId"])
        stage = props.get("StageName")
        made = _backend(self.account_id, self.region_name).create_deployment(
            self.api_id, stage, props.get("Description") or ""
        )
        self.physical_resource_id = made.id
        self.stage = stage
        if stage:
            self._stage_description(props)

    def _stage_description(self, props: dict[str, Any]) -> None:
        """StageDescription: the stage the deployment makes, set as a Stage's properties would set it."""
        described = props.get("StageDescription") or {}
        stage = _backend(self.account_id, self.region_name).get_stage(self.api_id, self.stage)
        stage.description = described.get("Description") or ""
        stage.variables = dict(described.get("Variables") or {})
        stage.tracing_enabled = _flag(described.get("TracingEnabled"))
        stage.cache_cluster_enabled = bool(_flag(described.get("CacheClusterEnabled")))
        stage.cache_cluster_size = described.get("CacheClusterSize")
        stage.tags = pairs(described.get("Tags")) or None

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        backend = _backend(self.account_id, self.region_name)
        deployment = backend.get_deployment(self.api_id, self.physical_resource_id)
        if "Description" in names:
            deployment.description = props.get("Description") or ""
        if "StageName" in names:
            # the stage now points at this deployment (made when missing); the old one is left to its
            # own resource, as CloudFormation leaves a stage the deployment no longer names
            stage = props.get("StageName")
            if stage and stage not in backend.get_rest_api(self.api_id).stages:
                backend.create_stage(self.api_id, stage, self.physical_resource_id)
            elif stage:
                backend.get_stage(self.api_id, stage).deployment_id = self.physical_resource_id
            self.stage = stage
            deployment.stage_name = stage
        if self.stage and names & {"StageName", "StageDescription"}:
            self._stage_description(props)

    def remove(self) -> None:
        api = _backend(self.account_id, self.region_name).apis.get(self.api_id)
        if api is None:
            return
        stage = api.stages.get(self.stage) if self.stage else None
        if stage is not None and stage.deployment_id == self.physical_resource_id:
            api.stages.pop(self.stage)
        super().remove()

    def read(self) -> dict[str, Any] | None:
        deployment = self._found()
        if deployment is None:
            return None
        return {"RestApiId": self.api_id, "Description": deployment.description or None}

    def attribute(self, name: str) -> Any:
        if name == "DeploymentId":
            return self.physical_resource_id
        raise KeyError(name)


def _flag(value: Any) -> bool | None:
    return None if value is None else str(value).lower() == "true"


# Stage property -> (moto Stage attribute, how the template's value is kept)
STAGE_FIELDS: dict[str, tuple[str, Any]] = {
    "DeploymentId": ("deployment_id", str),
    "Description": ("description", lambda v: v or ""),
    "Variables": ("variables", lambda v: dict(v or {})),
    "TracingEnabled": ("tracing_enabled", _flag),
    "CacheClusterEnabled": ("cache_cluster_enabled", lambda v: bool(_flag(v))),
    "CacheClusterSize": ("cache_cluster_size", lambda v: None if v is None else str(v)),
    "MethodSettings": ("fw_method_settings", lambda v: list(v or [])),
    "AccessLogSetting": (
        "access_log_settings",
        lambda v: (
            {{"DestinationArn": "destinationArn", "Format": "format"}.get(k, k): x for k, x in v.items()}
            if v
            else None
        ),
    ),
    "CanarySetting": ("fw_canary_setting", lambda v: v),
    "ClientCertificateId": ("fw_client_certificate_id", lambda v: v),
    "DocumentationVersion": ("fw_documentation_version", lambda v: v),
}


@register
class Stage(ApiPart):
    """AWS::ApiGateway::Stage."""

    kind = "AWS::ApiGateway::Stage"
    collection = "stages"
    in_place = frozenset(STAGE_FIELDS)
    taggable = True

    def _stage(self) -> Any:
        return _backend(self.account_id, self.region_name).get_stage(self.api_id, self.physical_resource_id)

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        backend = _backend(self.account_id, self.region_name)
        self.api_id = str(props["RestApiId"])
        name = str(props.get("StageName") or generated_name(self.kind, stack_name, self.logical_resource_id))
        deployment = props.get("DeploymentId")
        if deployment and deployment not in backend.get_rest_api(self.api_id).deployments:
            raise Missing(f"Invalid deployment identifier specified: {deployment}")
        if name in backend.get_rest_api(self.api_id).stages:
            from moto.apigateway.exceptions import ConflictException

            raise ConflictException("Stage already exists")
        backend.create_stage(self.api_id, name, deployment)
        self.physical_resource_id = name
        self.update(props, set(STAGE_FIELDS))

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        stage = self._stage()
        for name in names & set(STAGE_FIELDS):
            attribute, convert = STAGE_FIELDS[name]
            setattr(stage, attribute, convert(props.get(name)))
        if "CacheClusterEnabled" in names:
            stage.cache_cluster_status = "AVAILABLE" if stage.cache_cluster_enabled else None

    def read(self) -> dict[str, Any] | None:
        stage = self._found()
        if stage is None:
            return None
        return {
            "RestApiId": self.api_id,
            "StageName": stage.name,
            "DeploymentId": stage.deployment_id,
            "Description": stage.description or None,
            "Variables": dict(stage.variables or {}),
            "TracingEnabled": stage.tracing_enabled,
            "CacheClusterEnabled": stage.cache_cluster_enabled,
            "CacheClusterSize": stage.cache_cluster_size,
        }

    def live_tags(self) -> dict[str, str]:
        return dict(self._stage().tags or {})

    def write_tags(self, tags: dict[str, str]) -> None:
        self._stage().tags = dict(tags) or None


# Authorizer property -> moto Authorizer attribute
AUTHORIZER_FIELDS = {
    "Name": "name",
    "Type": "type",
    "AuthType": "auth_type",
    "AuthorizerUri": "authorizer_uri",
    "AuthorizerCredentials": "authorizer_credentials",
    "IdentitySource": "identity_source",
    "IdentityValidationExpression": "identity_validation_expression",
    "AuthorizerResultTtlInSeconds": "authorizer_result_ttl",
    "ProviderARNs": "provider_arns",
}


@register
class Authorizer(ApiPart):
    """AWS::ApiGateway::Authorizer (TOKEN, REQUEST or COGNITO_USER_POOLS)."""

    kind = "AWS::ApiGateway::Authorizer"
    collection = "authorizers"
    in_place = frozenset(set(AUTHORIZER_FIELDS) - {"RestApiId"})

    def _authorizer(self) -> Any:
        backend = _backend(self.account_id, self.region_name)
        return backend.get_authorizer(self.api_id, self.physical_resource_id)

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        self.api_id = str(props["RestApiId"])
        kind = str(props["Type"])
        if kind in ("TOKEN", "REQUEST") and not props.get("AuthorizerUri"):
            raise Invalid(f"Authorizer URI is required for a {kind} authorizer")
        if kind == "COGNITO_USER_POOLS" and not props.get("ProviderARNs"):
            raise Invalid("ProviderARNs need to be specified for a COGNITO_USER_POOLS authorizer")
        backend = _backend(self.account_id, self.region_name)
        made = backend.create_authorizer(self.api_id, str(props["Name"]), kind)
        self.physical_resource_id = made.id
        self.update(props, set(AUTHORIZER_FIELDS))

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        ttl = props.get("AuthorizerResultTtlInSeconds")
        # API Gateway's default TTL is 300 seconds
        given = {**props, "AuthorizerResultTtlInSeconds": 300 if ttl is None else int(ttl)}
        apply_fields(self._authorizer(), given, names, AUTHORIZER_FIELDS)

    def read(self) -> dict[str, Any] | None:
        found = self._found()
        if found is None:
            return None
        return {"RestApiId": self.api_id, **read_fields(found, AUTHORIZER_FIELDS)}

    def attribute(self, name: str) -> Any:
        if name == "AuthorizerId":
            return self.physical_resource_id
        raise KeyError(name)


def _schema_text(schema: Any) -> Any:
    """A model's Schema as the JSON text API Gateway keeps (a template may give the object)."""
    return schema if isinstance(schema, str) or schema is None else json.dumps(schema)


@register
class RequestModel(ApiPart):
    """AWS::ApiGateway::Model: a REST API's data model (CreateModel; Ref its name). Without a Name
    CloudFormation generates one of letters and digits; Schema is kept as the JSON text GetModel answers."""

    kind = "AWS::ApiGateway::Model"
    collection = "models"
    in_place = frozenset({"Description", "Schema"})

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        import secrets

        self.api_id = str(props["RestApiId"])
        name = str(props.get("Name") or f"{self.logical_resource_id}{secrets.token_hex(4)}")
        _backend(self.account_id, self.region_name).create_model(
            self.api_id, name, str(props.get("ContentType") or "application/json"),
            props.get("Description"), _schema_text(props.get("Schema")))
        self.physical_resource_id = name

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        found = self._found()
        if "Description" in names:
            found.description = props.get("Description")
        if "Schema" in names:
            found.schema = _schema_text(props.get("Schema"))

    def read(self) -> dict[str, Any] | None:
        found = self._found()
        if found is None:
            return None
        try:
            schema = json.loads(found.schema) if found.schema else None
        except ValueError:
            schema = found.schema
        return {"RestApiId": self.api_id, "Name": found.name, "Description": found.description,
                "ContentType": found.content_type, "Schema": schema}
