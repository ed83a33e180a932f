"""API Gateway REST APIs made by a stack, read back with API Gateway's own API (issue 30, item 3).

Pages (AWS CloudFormation Template Reference): AWS::ApiGateway::RestApi ("Name ... If you don't specify a
name using OpenAPI, you must specify a name"; Ref: the RestApi ID, e.g. `a1bcdef2gh`; RootResourceId: the
root resource ID, e.g. `a0bc123d4e`), AWS::ApiGateway::Deployment (Ref: the deployment ID, e.g.
`123abc`), AWS::ApiGateway::Stage (Ref: the stage name), AWS::ApiGateway::Authorizer (Ref: the
authorizer's ID, e.g. `abcde1`). Update behaviour from the provider schemas (RestApiId and Stage
StageName create-only).
"""

from __future__ import annotations

import json
import re

import pytest

from tests.localcloud.lifecycle import delete, deploy, drift, with_props

# a Swagger 2.0 body, no Name: the RestApi takes its name from info.title (as in AWS's sample templates)
BODY = {
    "swagger": "2.0",
    "info": {"title": "pets", "version": "1"},
    "paths": {
        "/pets": {
            "parameters": [],
            "get": {
                "responses": {"200": {"description": "ok"}},
                "x-amazon-apigateway-integration": {
                    "type": "mock",
                    "requestTemplates": {"application/json": '{"statusCode": 200}'},
                    "responses": {"default": {"statusCode": "200"}},
                },
            },
        }
    },
}

TEMPLATE = {
    "Resources": {
        "Api": {
            "Type": "AWS::ApiGateway::RestApi",
            "Properties": {"Body": BODY, "Tags": [{"Key": "team", "Value": "pets"}]},
        },
        "Deployment": {"Type": "AWS::ApiGateway::Deployment", "Properties": {"RestApiId": {"Ref": "Api"}}},
        "Stage": {
            "Type": "AWS::ApiGateway::Stage",
            "Properties": {
                "RestApiId": {"Ref": "Api"},
                "DeploymentId": {"Ref": "Deployment"},
                "StageName": "prod",
                "Variables": {"table": "pets"},
                "Description": "production",
            },
        },
        "Auth": {
            "Type": "AWS::ApiGateway::Authorizer",
            "Properties": {
                "RestApiId": {"Ref": "Api"},
                "Name": "token",
                "Type": "TOKEN",
                "IdentitySource": "method.request.header.Authorization",
                "AuthorizerUri": {
                    "Fn::Sub": "arn:aws:apigateway:${AWS::Region}:lambda:path/2015-03-31/functions/"
                    "arn:aws:lambda:${AWS::Region}:${AWS::AccountId}:function:auth/invocations"
                },
            },
        },
    },
    "Outputs": {
        "Api": {"Value": {"Ref": "Api"}},
        "Root": {"Value": {"Fn::GetAtt": ["Api", "RootResourceId"]}},
        "Deployment": {"Value": {"Ref": "Deployment"}},
        "Stage": {"Value": {"Ref": "Stage"}},
        "Auth": {"Value": {"Ref": "Auth"}},
        "AuthId": {"Value": {"Fn::GetAtt": ["Auth", "AuthorizerId"]}},
        "Url": {"Value": {"Fn::Sub": "https://${Api}.execute-api.${AWS::Region}.amazonaws.com/${Stage}"}},
    },
}


@pytest.fixture
def apigw(cloud):
    return cloud.client("apigateway")


def test_a_rest_api_from_its_body_alone_with_deployment_stage_and_authorizer(cfn, apigw) -> None:
    out = deploy(cfn, "api", TEMPLATE)
    assert re.fullmatch(r"[a-z0-9]{10}", out["Api"]), out
    api = apigw.get_rest_api(restApiId=out["Api"])
    assert api["name"] == "pets"  # from the Body's info.title
    assert api["tags"]["team"] == "pets" and api["tags"]["aws:cloudformation:logical-id"] == "Api"
    paths = {r["path"]: r for r in apigw.get_resources(restApiId=out["Api"])["items"]}
    assert set(paths) == {"/", "/pets"} and out["Root"] == paths["/"]["id"]
    assert "GET" in paths["/pets"]["resourceMethods"]
    assert (
        apigw.get_deployment(restApiId=out["Api"], deploymentId=out["Deployment"])["id"] == out["Deployment"]
    )
    stage = apigw.get_stage(restApiId=out["Api"], stageName="prod")
    assert out["Stage"] == "prod" and stage["deploymentId"] == out["Deployment"]
    assert stage["variables"] == {"table": "pets"} and stage["description"] == "production"
    auth = apigw.get_authorizer(restApiId=out["Api"], authorizerId=out["Auth"])
    assert out["AuthId"] == out["Auth"] and auth["type"] == "TOKEN" and auth["name"] == "token"
    assert out["Url"] == f"https://{out['Api']}.execute-api.us-east-1.amazonaws.com/prod"
    assert [drift(cfn, "api", name)[0] for name in ("Api", "Deployment", "Stage", "Auth")] == ["IN_SYNC"] * 4

    # update in place: the same ids, the service answers the new values
    updated = with_props(
        TEMPLATE, "Stage", Variables={"table": "cats"}, Description="live", TracingEnabled=True
    )
    updated["Resources"]["Auth"]["Properties"]["AuthorizerResultTtlInSeconds"] = 60
    updated["Resources"]["Api"]["Properties"]["Description"] = "the pets API"
    again = deploy(cfn, "api", updated)
    assert (again["Api"], again["Auth"], again["Stage"]) == (out["Api"], out["Auth"], "prod")
    stage = apigw.get_stage(restApiId=out["Api"], stageName="prod")
    assert (stage["variables"], stage["description"], stage["tracingEnabled"]) == (
        {"table": "cats"},
        "live",
        True,
    )
    assert (
        apigw.get_authorizer(restApiId=out["Api"], authorizerId=out["Auth"])["authorizerResultTtlInSeconds"]
        == 60
    )
    assert apigw.get_rest_api(restApiId=out["Api"])["description"] == "the pets API"

    # replacement: StageName is create-only; the new stage is made, the old one deleted
    renamed = with_props(updated, "Stage", StageName="v2")
    third = deploy(cfn, "api", renamed)
    assert third["Stage"] == "v2"
    assert {s["stageName"] for s in apigw.get_stages(restApiId=out["Api"])["item"]} == {"v2"}

    # drift: a change made outside the stack, and a resource deleted outside it
    apigw.update_stage(
        restApiId=out["Api"],
        stageName="v2",
        patchOperations=[{"op": "replace", "path": "/description", "value": "by hand"}],
    )
    assert drift(cfn, "api", "Stage") == ("MODIFIED", [("/Description", "NOT_EQUAL")])
    apigw.delete_authorizer(restApiId=out["Api"], authorizerId=out["Auth"])
    assert drift(cfn, "api", "Auth")[0] == "DELETED"

    delete(cfn, "api")
    with pytest.raises(apigw.exceptions.NotFoundException):
        apigw.get_rest_api(restApiId=out["Api"])


def test_a_rest_api_without_name_or_body_fails_its_create_naming_it(cfn) -> None:
    # AWS::ApiGateway::RestApi, Name: "If you don't specify a name using OpenAPI, you must specify a name"
    template = {
        "Resources": {"Api": {"Type": "AWS::ApiGateway::RestApi", "Properties": {"Description": "x"}}}
    }
    assert cfn.deploy("noname", template)["StackStatus"] == "ROLLBACK_COMPLETE"
    reason = next(r for logical, status, r in cfn.events("noname") if status == "CREATE_FAILED")
    assert "Invalid API name specified" in reason and "InternalFailure" not in reason


def test_a_deployment_with_a_stage_name_makes_that_stage_and_deletes_it_with_itself(cfn, apigw) -> None:
    # AWS::ApiGateway::Deployment, StageName: "The name of the Stage resource for the Deployment resource to
    # create"; StageDescription sets that stage's properties
    template = {
        "Resources": {
            "Api": TEMPLATE["Resources"]["Api"],
            "Deployment": {
                "Type": "AWS::ApiGateway::Deployment",
                "Properties": {
                    "RestApiId": {"Ref": "Api"},
                    "StageName": "dev",
                    "Description": "first",
                    "StageDescription": {"Variables": {"a": "1"}, "Description": "dev stage"},
                },
            },
        },
        "Outputs": {
            "Api": {"Value": {"Ref": "Api"}},
            "Id": {"Value": {"Fn::GetAtt": ["Deployment", "DeploymentId"]}},
            "Ref": {"Value": {"Ref": "Deployment"}},
        },
    }
    out = deploy(cfn, "dep", template)
    assert out["Id"] == out["Ref"] and re.fullmatch(r"[a-z0-9]+", out["Ref"])
    stage = apigw.get_stage(restApiId=out["Api"], stageName="dev")
    assert (stage["deploymentId"], stage["variables"], stage["description"]) == (
        out["Ref"],
        {"a": "1"},
        "dev stage",
    )
    again = deploy(cfn, "dep", with_props(template, "Deployment", Description="second"))
    assert again["Ref"] == out["Ref"]
    assert apigw.get_deployment(restApiId=out["Api"], deploymentId=out["Ref"])["description"] == "second"
    # RestApiId is create-only: a new API gets a new deployment, the old API goes in the clean-up
    moved = with_props(template, "Api", Body={**BODY, "info": {"title": "other", "version": "1"}})
    moved["Resources"]["Api2"] = moved["Resources"].pop("Api")
    moved["Resources"]["Deployment"]["Properties"]["RestApiId"] = {"Ref": "Api2"}
    moved["Outputs"]["Api"] = {"Value": {"Ref": "Api2"}}
    third = deploy(cfn, "dep", moved)
    assert third["Ref"] != out["Ref"] and third["Api"] != out["Api"]
    assert apigw.get_stage(restApiId=third["Api"], stageName="dev")["deploymentId"] == third["Ref"]
    delete(cfn, "dep")
    assert apigw.get_rest_apis()["items"] == []


MODEL_TEMPLATE = {"Resources": {
    "Api": {"Type": "AWS::ApiGateway::RestApi", "Properties": {"Name": "models"}},
    "Caller": {"Type": "AWS::ApiGateway::Model", "Properties": {
        "RestApiId": {"Ref": "Api"}, "ContentType": "application/json", "Name": "Caller",
        "Schema": {"$schema": "http://json-schema.org/draft-04/schema#", "title": "Caller", "type": "object",
                   "properties": {"callerName": {"type": "string"}}}}}},
    "Outputs": {"Api": {"Value": {"Ref": "Api"}}, "Model": {"Value": {"Ref": "Caller"}}}}


def test_a_request_model_is_made_updated_in_place_drifted_and_deleted(cfn, cloud) -> None:
    # AWS::ApiGateway::Model: Ref the model name; Description and Schema "No interruption", ContentType,
    # Name and RestApiId "Replacement" (AWS's sample apigateway_lambda_integration.yaml uses one)
    api = cloud.client("apigateway")
    outputs = deploy(cfn, "models", MODEL_TEMPLATE)
    assert outputs["Model"] == "Caller"
    made = api.get_model(restApiId=outputs["Api"], modelName="Caller")
    assert json.loads(made["schema"])["properties"] == {"callerName": {"type": "string"}}
    assert drift(cfn, "models", "Caller") == ("IN_SYNC", [])

    outputs = deploy(cfn, "models", with_props(MODEL_TEMPLATE, "Caller", Description="who calls"))
    assert api.get_model(restApiId=outputs["Api"], modelName="Caller")["description"] == "who calls"
    api.delete_model(restApiId=outputs["Api"], modelName="Caller")
    assert drift(cfn, "models", "Caller")[0] == "DELETED"
    delete(cfn, "models")
