"""Delivery and application services as CloudFormation makes them: Kinesis Firehose DeliveryStream, AppSync
GraphQLApi and CodeBuild Project, through moto's Firehose, AppSync and CodeBuild backends
(DescribeDeliveryStream, GetGraphqlApi and BatchGetProjects answer what the stack made).

Return values (AWS CloudFormation Template Reference): DeliveryStream `Ref` its name, `Arn`; GraphQLApi `Ref`
its ARN (`arn:aws:appsync:{region}:{account}:apis/{id}`), `ApiId`, `Arn`, `GraphQLUrl`; Project `Ref` its
name, `Arn`.
"""

from __future__ import annotations

from typing import Any

from formwright.cloud.emulator.own import Invalid, Model, backend, camel, generated_name, pairs, register

# DeliveryStream destination properties -> moto's create_delivery_stream argument
DESTINATIONS = {
    "S3DestinationConfiguration": "s3_destination_configuration",
    "ExtendedS3DestinationConfiguration": "extended_s3_destination_configuration",
    "RedshiftDestinationConfiguration": "redshift_destination_configuration",
    "ElasticsearchDestinationConfiguration": "elasticsearch_destination_configuration",
    "SplunkDestinationConfiguration": "splunk_destination_configuration",
    "HttpEndpointDestinationConfiguration": "http_endpoint_destination_configuration",
    "SnowflakeDestinationConfiguration": "snowflake_destination_configuration",
    "IcebergDestinationConfiguration": "iceberg_destination_configuration",
}
# moto's key of a destination in DescribeDeliveryStream, per destination property
DESCRIBED_AS = {
    "S3DestinationConfiguration": "S3",
    "ExtendedS3DestinationConfiguration": "ExtendedS3",
    "RedshiftDestinationConfiguration": "Redshift",
    "ElasticsearchDestinationConfiguration": "Elasticsearch",
    "SplunkDestinationConfiguration": "Splunk",
    "HttpEndpointDestinationConfiguration": "HttpEndpoint",
    "SnowflakeDestinationConfiguration": "Snowflake",
    "IcebergDestinationConfiguration": "Iceberg",
}


@register
class DeliveryStream(Model):
    """AWS::KinesisFirehose::DeliveryStream. A destination change is UpdateDestination: the stream keeps its
    name, ARN and tags, its destination is replaced as a whole."""

    kind = "AWS::KinesisFirehose::DeliveryStream"
    in_place = frozenset({*DESTINATIONS, "DeliveryStreamEncryptionConfigurationInput"})
    taggable = True

    def _firehose(self) -> Any:
        return backend("firehose", self.account_id, self.region_name)

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        name = str(
            props.get("DeliveryStreamName") or generated_name(self.kind, stack_name, self.logical_resource_id)
        )
        self.physical_resource_id = name
        self._make(props)

    def _make(self, props: dict[str, Any]) -> None:
        """CreateDeliveryStream with the template's properties."""
        given = [n for n in DESTINATIONS if props.get(n)]
        if len(given) != 1:
            raise Invalid("Exactly one destination configuration must be specified")
        self._firehose().create_delivery_stream(
            region=self.region_name,
            delivery_stream_name=self.physical_resource_id,
            delivery_stream_type=props.get("DeliveryStreamType") or "DirectPut",
            kinesis_stream_source_configuration=props.get("KinesisStreamSourceConfiguration"),
            delivery_stream_encryption_configuration_input=props.get(
                "DeliveryStreamEncryptionConfigurationInput"
            ),
            tags=[],
            **{DESTINATIONS[n]: props.get(n) for n in DESTINATIONS},
        )

    def _stream(self) -> Any:
        return self._firehose().delivery_streams.get(self.physical_resource_id)

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        stream = self._stream()
        arn, version = stream.delivery_stream_arn, int(stream.version_id)
        tags = self._firehose().tagger.list_tags_for_resource(arn)["Tags"]
        self._firehose().delivery_streams.pop(self.physical_resource_id)
        self._firehose().tagger.delete_all_tags_for_resource(arn)
        self._make(props)
        self._firehose().tagger.tag_resource(arn, tags)  # as they were (the aws: ones included)
        self._stream().version_id = str(version + 1)  # UpdateDestination's new version

    def remove(self) -> None:
        if self._stream() is not None:
            self._firehose().delete_delivery_stream(self.physical_resource_id)

    def read(self) -> dict[str, Any] | None:
        stream = self._stream()
        if stream is None:
            return None
        destination = stream.destinations[0]
        found: dict[str, Any] = {
            "DeliveryStreamName": stream.delivery_stream_name,
            "DeliveryStreamType": stream.delivery_stream_type,
        }
        for name, key in DESCRIBED_AS.items():
            if key in destination and not (key == "S3" and "ExtendedS3" in destination):
                found[name] = destination[key]
        return found

    def attribute(self, name: str) -> Any:
        if name == "Arn":
            return self._stream().delivery_stream_arn
        raise KeyError(name)

    def live_tags(self) -> dict[str, str]:
        return pairs(
            self._firehose().tagger.list_tags_for_resource(self._stream().delivery_stream_arn)["Tags"]
        )

    def write_tags(self, tags: dict[str, str]) -> None:
        tagger, arn = self._firehose().tagger, self._stream().delivery_stream_arn
        tagger.delete_all_tags_for_resource(arn)
        tagger.tag_resource(arn, [{"Key": k, "Value": v} for k, v in tags.items()])


# GraphQLApi property -> moto GraphqlAPI attribute (the structures kept in the API's camelCase)
GRAPHQL_FIELDS = {
    "Name": "name",
    "AuthenticationType": "authentication_type",
    "LogConfig": "log_config",
    "UserPoolConfig": "user_pool_config",
    "OpenIDConnectConfig": "open_id_connect_config",
    "AdditionalAuthenticationProviders": "additional_authentication_providers",
    "XrayEnabled": "xray_enabled",
    "LambdaAuthorizerConfig": "lambda_authorizer_config",
}


@register
class GraphQLApi(Model):
    """AWS::AppSync::GraphQLApi."""

    kind = "AWS::AppSync::GraphQLApi"
    in_place = frozenset(GRAPHQL_FIELDS)
    taggable = True

    def _appsync(self) -> Any:
        return backend("appsync", self.account_id, self.region_name)

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        made = self._appsync().create_graphql_api(
            name=props["Name"],
            log_config=None,
            authentication_type=props["AuthenticationType"],
            user_pool_config=None,
            open_id_connect_config=None,
            additional_authentication_providers=None,
            xray_enabled=False,
            lambda_authorizer_config=None,
            tags={},
            visibility=props.get("Visibility"),
        )
        self.api_id = made.api_id
        self.physical_resource_id = made.arn
        self.update(props, set(GRAPHQL_FIELDS))

    def _api(self) -> Any:
        return self._appsync().graphql_apis.get(self.api_id)

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        api = self._api()
        for name in names & set(GRAPHQL_FIELDS):
            value = props.get(name)
            setattr(api, GRAPHQL_FIELDS[name], camel(value) if isinstance(value, dict | list) else value)
        api.xray_enabled = str(props.get("XrayEnabled", False)).lower() == "true"

    def remove(self) -> None:
        if self._api() is not None:
            self._appsync().delete_graphql_api(self.api_id)

    def read(self) -> dict[str, Any] | None:
        api = self._api()
        if api is None:
            return None
        return {
            "Name": api.name,
            "AuthenticationType": api.authentication_type,
            "XrayEnabled": api.xray_enabled,
        }

    def attribute(self, name: str) -> Any:
        host = f"{self.api_id}.appsync-api.{self.region_name}.amazonaws.com"
        realtime = f"{self.api_id}.appsync-realtime-api.{self.region_name}.amazonaws.com"
        values = {
            "ApiId": self.api_id,
            "Arn": self.physical_resource_id,
            "GraphQLUrl": f"https://{host}/graphql",
            "GraphQLDns": host,
            "RealtimeUrl": f"wss://{realtime}/graphql",
            "RealtimeDns": realtime,
            "GraphQLEndpointArn": self.physical_resource_id,
        }
        return values[name]

    def live_tags(self) -> dict[str, str]:
        return dict(self._appsync().tagger.get_tag_dict_for_resource(self.physical_resource_id))

    def write_tags(self, tags: dict[str, str]) -> None:
        tagger = self._appsync().tagger
        tagger.delete_all_tags_for_resource(self.physical_resource_id)
        tagger.tag_resource(self.physical_resource_id, tagger.convert_dict_to_tags_input(tags))


def _api_shape(value: Any) -> Any:
    """A CodeBuild structure in the API's camelCase (its `buildspec` is one word)."""
    shaped = camel(value)
    if isinstance(shaped, dict) and "buildSpec" in shaped:
        shaped["buildspec"] = shaped.pop("buildSpec")
    return shaped


# Project property -> CodeBuild API field kept in moto's project_metadata
PROJECT_FIELDS = {
    "Description": "description",
    "Source": "source",
    "Artifacts": "artifacts",
    "Environment": "environment",
    "ServiceRole": "serviceRole",
    "TimeoutInMinutes": "timeoutInMinutes",
    "QueuedTimeoutInMinutes": "queuedTimeoutInMinutes",
    "Cache": "cache",
    "SourceVersion": "sourceVersion",
    "LogsConfig": "logsConfig",
    "VpcConfig": "vpcConfig",
}


@register
class Project(Model):
    """AWS::CodeBuild::Project (CreateProject / UpdateProject; builds are not run here)."""

    kind = "AWS::CodeBuild::Project"
    in_place = frozenset(PROJECT_FIELDS)
    taggable = True

    def _codebuild(self) -> Any:
        return backend("codebuild", self.account_id, self.region_name)

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        self.physical_resource_id = str(
            props.get("Name") or generated_name(self.kind, stack_name, self.logical_resource_id)
        )
        self._put(props, [])

    def _put(self, props: dict[str, Any], tags: list[dict[str, str]]) -> None:
        shaped = {name: _api_shape(props.get(name)) for name in PROJECT_FIELDS}
        self._codebuild().create_project(
            project_name=self.physical_resource_id,
            description=props.get("Description"),
            project_source=shaped["Source"],
            artifacts=shaped["Artifacts"],
            environment=shaped["Environment"],
            service_role=props["ServiceRole"],
            tags=tags,
            cache=shaped["Cache"],
            timeout=int(props.get("TimeoutInMinutes", 60)),
            queued_timeout=int(props.get("QueuedTimeoutInMinutes", 480)),
            source_version=props.get("SourceVersion"),
            logs_config=shaped["LogsConfig"],
            vpc_config=shaped["VpcConfig"],
        )

    def _project(self) -> Any:
        return self._codebuild().codebuild_projects.get(self.physical_resource_id)

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        self._put(props, self._project().tags or [])  # UpdateProject: the same name, ARN and tags

    def remove(self) -> None:
        self._codebuild().codebuild_projects.pop(self.physical_resource_id, None)

    def read(self) -> dict[str, Any] | None:
        project = self._project()
        if project is None:
            return None
        metadata = project.project_metadata
        return {
            "Name": metadata["name"],
            "Description": metadata.get("description"),
            "ServiceRole": metadata.get("serviceRole"),
            "TimeoutInMinutes": metadata.get("timeoutInMinutes"),
            "Environment": _pascal(metadata.get("environment")),
            "Source": _pascal(metadata.get("source")),
        }

    def attribute(self, name: str) -> Any:
        if name == "Arn":
            return self._project().arn
        raise KeyError(name)

    def live_tags(self) -> dict[str, str]:
        return pairs(
            [
                {"Key": t.get("key", t.get("Key")), "Value": t.get("value", t.get("Value"))}
                for t in self._project().tags or []
            ]
        )

    def write_tags(self, tags: dict[str, str]) -> None:
        project = self._project()
        project.tags = [{"key": k, "value": v} for k, v in tags.items()]
        project.project_metadata["tags"] = project.tags


def _pascal(value: Any) -> Any:
    """An API structure back in the template's PascalCase (drift compares the template's names)."""
    if isinstance(value, dict):
        return {
            ("BuildSpec" if k == "buildspec" else k[:1].upper() + k[1:]): _pascal(v) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_pascal(v) for v in value]
    return value
