"""HTTP APIs (API Gateway V2) made by a stack, read back with API Gateway V2's own API (issue 30, item 3).

Pages (AWS CloudFormation Template Reference): AWS::ApiGatewayV2::Api (Ref: the API id; ApiEndpoint
`https://{id}.execute-api.{region}.amazonaws.com`; ProtocolType create-only; "Target ... quick create"
makes a default route, integration and `$default` stage), AWS::ApiGatewayV2::Stage (Ref: the stage name;
ApiId and StageName create-only), AWS::ApiGatewayV2::Integration (Ref: the integration id),
AWS::ApiGatewayV2::Route (Ref: the route id; ApiId create-only).
"""

from __future__ import annotations

import re

from tests.localcloud.lifecycle import delete, deploy, drift, with_props

FUNCTION = "arn:aws:lambda:us-east-1:123456789012:function:orders"

TEMPLATE = {
    "Resources": {
        "Api": {
            "Type": "AWS::ApiGatewayV2::Api",
            "Properties": {
                "Name": "orders",
                "ProtocolType": "HTTP",
                "Tags": {"team": "orders"},
                "CorsConfiguration": {"AllowOrigins": ["https://example.com"], "AllowMethods": ["GET"]},
            },
        },
        "Integration": {
            "Type": "AWS::ApiGatewayV2::Integration",
            "Properties": {
                "ApiId": {"Ref": "Api"},
                "IntegrationType": "AWS_PROXY",
                "IntegrationUri": FUNCTION,
                "PayloadFormatVersion": "2.0",
            },
        },
        "Route": {
            "Type": "AWS::ApiGatewayV2::Route",
            "Properties": {
                "ApiId": {"Ref": "Api"},
                "RouteKey": "GET /orders",
                "Target": {"Fn::Sub": "integrations/${Integration}"},
            },
        },
        "Stage": {
            "Type": "AWS::ApiGatewayV2::Stage",
            "Properties": {
                "ApiId": {"Ref": "Api"},
                "StageName": "prod",
                "AutoDeploy": True,
                "StageVariables": {"table": "orders"},
                "Tags": {"stage": "prod"},
            },
        },
    },
    "Outputs": {
        "Api": {"Value": {"Ref": "Api"}},
        "Endpoint": {"Value": {"Fn::GetAtt": ["Api", "ApiEndpoint"]}},
        "Integration": {"Value": {"Ref": "Integration"}},
        "Route": {"Value": {"Ref": "Route"}},
        "Stage": {"Value": {"Ref": "Stage"}},
    },
}


def test_an_http_api_with_integration_route_and_stage(cfn, cloud) -> None:
    v2 = cloud.client("apigatewayv2")
    out = deploy(cfn, "http", TEMPLATE)
    assert re.fullmatch(r"[a-z0-9]{8,10}", out["Api"])
    assert out["Endpoint"] == f"https://{out['Api']}.execute-api.us-east-1.amazonaws.com"
    api = v2.get_api(ApiId=out["Api"])
    assert api["Name"] == "orders" and api["ProtocolType"] == "HTTP"
    assert api["CorsConfiguration"]["AllowOrigins"] == ["https://example.com"]
    assert api["Tags"]["team"] == "orders" and api["Tags"]["aws:cloudformation:logical-id"] == "Api"
    integration = v2.get_integration(ApiId=out["Api"], IntegrationId=out["Integration"])
    assert (integration["IntegrationType"], integration["IntegrationUri"]) == ("AWS_PROXY", FUNCTION)
    route = v2.get_route(ApiId=out["Api"], RouteId=out["Route"])
    assert (route["RouteKey"], route["Target"]) == ("GET /orders", f"integrations/{out['Integration']}")
    stage = v2.get_stage(ApiId=out["Api"], StageName="prod")
    assert (
        out["Stage"] == "prod"
        and stage["AutoDeploy"] is True
        and stage["StageVariables"] == {"table": "orders"}
    )
    assert stage["Tags"]["stage"] == "prod"
    assert [drift(cfn, "http", n)[0] for n in ("Api", "Integration", "Route", "Stage")] == ["IN_SYNC"] * 4

    # in place: the same ids, the new values
    changed = with_props(TEMPLATE, "Route", RouteKey="POST /orders")
    changed["Resources"]["Api"]["Properties"]["Description"] = "orders API"
    changed["Resources"]["Stage"]["Properties"]["StageVariables"] = {"table": "orders-v2"}
    changed["Resources"]["Integration"]["Properties"]["TimeoutInMillis"] = 5000
    again = deploy(cfn, "http", changed)
    assert {k: again[k] for k in ("Api", "Integration", "Route")} == {
        k: out[k] for k in ("Api", "Integration", "Route")
    }
    assert v2.get_route(ApiId=out["Api"], RouteId=out["Route"])["RouteKey"] == "POST /orders"
    assert v2.get_api(ApiId=out["Api"])["Description"] == "orders API"
    assert v2.get_stage(ApiId=out["Api"], StageName="prod")["StageVariables"] == {"table": "orders-v2"}
    assert v2.get_integration(ApiId=out["Api"], IntegrationId=out["Integration"])["TimeoutInMillis"] == 5000

    # ProtocolType is create-only: a new API, and every part that names it made again on it
    websocket = with_props(
        changed,
        "Api",
        ProtocolType="WEBSOCKET",
        CorsConfiguration=None,
        RouteSelectionExpression="$request.body.action",
    )
    websocket["Resources"]["Integration"]["Properties"].pop("PayloadFormatVersion")
    websocket["Resources"]["Route"]["Properties"]["RouteKey"] = "$default"
    third = deploy(cfn, "http", websocket)
    assert third["Api"] != out["Api"] and third["Endpoint"].startswith(f"wss://{third['Api']}.")
    assert [a["ApiId"] for a in v2.get_apis()["Items"]] == [third["Api"]]
    assert v2.get_stage(ApiId=third["Api"], StageName="prod")["StageVariables"] == {"table": "orders-v2"}

    v2.update_route(ApiId=third["Api"], RouteId=third["Route"], RouteKey="$connect")
    assert drift(cfn, "http", "Route") == ("MODIFIED", [("/RouteKey", "NOT_EQUAL")])
    v2.delete_stage(ApiId=third["Api"], StageName="prod")
    assert drift(cfn, "http", "Stage")[0] == "DELETED"
    delete(cfn, "http")
    assert v2.get_apis()["Items"] == []


def test_quick_create_makes_the_default_route_integration_and_stage(cfn, cloud) -> None:
    # AWS::ApiGatewayV2::Api, Target: "quick create produces an API with an integration, a default
    # catch-all route, and a default stage which is configured to automatically deploy changes"
    v2 = cloud.client("apigatewayv2")
    template = {
        "Resources": {
            "Api": {
                "Type": "AWS::ApiGatewayV2::Api",
                "Properties": {"Name": "quick", "ProtocolType": "HTTP", "Target": FUNCTION},
            }
        },
        "Outputs": {"Api": {"Value": {"Ref": "Api"}}},
    }
    api = deploy(cfn, "quick", template)["Api"]
    route = v2.get_routes(ApiId=api)["Items"][0]
    integration = v2.get_integration(ApiId=api, IntegrationId=route["Target"].split("/")[1])
    assert route["RouteKey"] == "$default" and integration["IntegrationUri"] == FUNCTION
    assert v2.get_stage(ApiId=api, StageName="$default")["AutoDeploy"] is True
    delete(cfn, "quick")


def test_an_http_api_from_an_openapi_file_in_s3(cfn, cloud) -> None:
    # AWS::ApiGatewayV2::Api BodyS3Location: "The S3 location of an OpenAPI definition"; without Name the
    # definition's info.title names the API; each path and method with an integration a route (moto's import
    # makes none for a method without one)
    s3 = cloud.client("s3")
    s3.create_bucket(Bucket="definitions")
    s3.put_object(
        Bucket="definitions",
        Key="orders.yaml",
        Body=b"openapi: 3.0.1\ninfo: {title: orders, version: '1'}\n"
        b"paths:\n  /orders:\n    get:\n"
        b"      x-amazon-apigateway-integration: {type: aws_proxy, httpMethod: POST, "
        b"payloadFormatVersion: '2.0', uri: arn:aws:lambda:us-east-1:123456789012:function:orders}\n",
    )
    template = {
        "Resources": {
            "Api": {
                "Type": "AWS::ApiGatewayV2::Api",
                "Properties": {"BodyS3Location": {"Bucket": "definitions", "Key": "orders.yaml"}},
            }
        },
        "Outputs": {"Api": {"Value": {"Ref": "Api"}}},
    }
    api = deploy(cfn, "def", template)["Api"]
    v2 = cloud.client("apigatewayv2")
    assert v2.get_api(ApiId=api)["Name"] == "orders"
    assert [r["RouteKey"] for r in v2.get_routes(ApiId=api)["Items"]] == ["GET /orders"]
    delete(cfn, "def")
