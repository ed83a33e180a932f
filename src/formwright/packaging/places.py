"""Where `aws cloudformation package` looks for local paths, and how it writes what it uploaded.

From the command's reference page ("This command can upload local artifacts referenced in the following
places") and the AWS CLI's own list (awscli/customizations/cloudformation/artifact_exporter.py):
a property is rewritten to an `s3://bucket/key` URI, to an object of bucket and key properties, or (for a
nested template) to the template's HTTPS URL.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Place:
    """One packaged property of one resource type."""

    type: str
    path: tuple[str, ...]  # property names from Properties down
    form: str = "uri"  # uri | object | template
    bucket_key: str = ""  # for form "object": the names of bucket and key
    key_key: str = ""
    force_zip: bool = False  # a single file is zipped too (Lambda code)
    package_null: bool = False  # no value: the template's folder is packaged (the AWS CLI's rule)


PLACES: tuple[Place, ...] = (
    Place("AWS::Serverless::Function", ("CodeUri",), force_zip=True, package_null=True),
    Place("AWS::Serverless::Api", ("DefinitionUri",)),
    Place("AWS::Serverless::HttpApi", ("DefinitionUri",)),
    Place("AWS::Serverless::StateMachine", ("DefinitionUri",), "object", "Bucket", "Key"),
    Place("AWS::Serverless::LayerVersion", ("ContentUri",), force_zip=True, package_null=True),
    Place("AWS::Serverless::Application", ("Location",), "template"),
    Place("AWS::AppSync::GraphQLSchema", ("DefinitionS3Location",)),
    Place("AWS::AppSync::Resolver", ("RequestMappingTemplateS3Location",)),
    Place("AWS::AppSync::Resolver", ("ResponseMappingTemplateS3Location",)),
    Place("AWS::AppSync::FunctionConfiguration", ("RequestMappingTemplateS3Location",)),
    Place("AWS::AppSync::FunctionConfiguration", ("ResponseMappingTemplateS3Location",)),
    Place("AWS::ApiGateway::RestApi", ("BodyS3Location",), "object", "Bucket", "Key"),
    Place("AWS::Lambda::Function", ("Code",), "object", "S3Bucket", "S3Key", force_zip=True),
    Place("AWS::Lambda::LayerVersion", ("Content",), "object", "S3Bucket", "S3Key", force_zip=True),
    Place("AWS::ElasticBeanstalk::ApplicationVersion", ("SourceBundle",), "object", "S3Bucket", "S3Key"),
    Place("AWS::CloudFormation::Stack", ("TemplateURL",), "template"),
    Place("AWS::Glue::Job", ("Command", "ScriptLocation")),
    Place("AWS::StepFunctions::StateMachine", ("DefinitionS3Location",), "object", "Bucket", "Key"),
    Place("AWS::CodeCommit::Repository", ("Code", "S3"), "object", "Bucket", "Key", force_zip=True),
)

BY_TYPE: dict[str, tuple[Place, ...]] = {}
for _place in PLACES:
    BY_TYPE[_place.type] = (*BY_TYPE.get(_place.type, ()), _place)

# the Metadata section's AWS::ServerlessRepo::Application entries (ReadmeUrl, LicenseUrl): files as is
METADATA_PLACES = (("AWS::ServerlessRepo::Application", "ReadmeUrl"),
                   ("AWS::ServerlessRepo::Application", "LicenseUrl"))
