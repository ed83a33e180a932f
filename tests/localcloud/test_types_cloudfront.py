"""A CloudFront distribution with its cache policy made by a stack, read back with CloudFront's own API
(issue 30, item 3).

Pages (AWS CloudFormation Template Reference): AWS::CloudFront::CachePolicy (Ref and Id: the policy id;
CachePolicyConfig "No interruption"), AWS::CloudFront::Distribution (Ref: the distribution id, e.g.
`E27LVI50CSW06W`; DomainName, e.g. `d111111abcdef8.cloudfront.net`; DistributionConfig "No interruption").
The template's lists are the API's {Quantity, Items} ("CloudFront API Reference", DistributionConfig).
"""

from __future__ import annotations

import re

from tests.localcloud.lifecycle import delete, deploy, drift, with_props

POLICY_CONFIG = {
    "Name": "static",
    "DefaultTTL": 86400,
    "MaxTTL": 31536000,
    "MinTTL": 1,
    "ParametersInCacheKeyAndForwardedToOrigin": {
        "EnableAcceptEncodingGzip": True,
        "HeadersConfig": {"HeaderBehavior": "none"},
        "CookiesConfig": {"CookieBehavior": "none"},
        "QueryStringsConfig": {"QueryStringBehavior": "whitelist", "QueryStrings": ["v"]},
    },
}

TEMPLATE = {
    "Resources": {
        "Bucket": {"Type": "AWS::S3::Bucket"},
        "Policy": {
            "Type": "AWS::CloudFront::CachePolicy",
            "Properties": {"CachePolicyConfig": POLICY_CONFIG},
        },
        "Cdn": {
            "Type": "AWS::CloudFront::Distribution",
            "Properties": {
                "Tags": [{"Key": "team", "Value": "web"}],
                "DistributionConfig": {
                    "Enabled": True,
                    "Comment": "site",
                    "DefaultRootObject": "index.html",
                    "Aliases": ["www.example.com"],
                    "Origins": [
                        {
                            "Id": "site",
                            "DomainName": {"Fn::GetAtt": ["Bucket", "RegionalDomainName"]},
                            "S3OriginConfig": {},
                        }
                    ],
                    "DefaultCacheBehavior": {
                        "TargetOriginId": "site",
                        "ViewerProtocolPolicy": "redirect-to-https",
                        "CachePolicyId": {"Ref": "Policy"},
                        "AllowedMethods": ["GET", "HEAD", "OPTIONS"],
                    },
                },
            },
        },
    },
    "Outputs": {
        "Policy": {"Value": {"Ref": "Policy"}},
        "Cdn": {"Value": {"Ref": "Cdn"}},
        "Domain": {"Value": {"Fn::GetAtt": ["Cdn", "DomainName"]}},
    },
}


def test_a_distribution_with_its_cache_policy(cfn, cloud) -> None:
    cloudfront = cloud.client("cloudfront")
    out = deploy(cfn, "cdn", TEMPLATE)
    assert re.fullmatch(r"[0-9a-f-]{36}", out["Policy"]) and re.fullmatch(
        r"\w+\.cloudfront\.net", out["Domain"]
    )
    policy = cloudfront.get_cache_policy(Id=out["Policy"])["CachePolicy"]["CachePolicyConfig"]
    assert (policy["Name"], policy["DefaultTTL"]) == ("static", 86400)
    strings = policy["ParametersInCacheKeyAndForwardedToOrigin"]["QueryStringsConfig"]["QueryStrings"]
    assert strings == {"Quantity": 1, "Items": ["v"]}
    config = cloudfront.get_distribution(Id=out["Cdn"])["Distribution"]["DistributionConfig"]
    assert config["DefaultCacheBehavior"]["CachePolicyId"] == out["Policy"]
    assert config["Aliases"]["Items"] == ["www.example.com"] and config["DefaultRootObject"] == "index.html"
    assert [drift(cfn, "cdn", n)[0] for n in ("Policy", "Cdn")] == ["IN_SYNC", "IN_SYNC"]

    changed = with_props(TEMPLATE, "Policy", CachePolicyConfig={**POLICY_CONFIG, "DefaultTTL": 3600})
    changed["Resources"]["Cdn"]["Properties"]["DistributionConfig"]["Comment"] = "the site"
    again = deploy(cfn, "cdn", changed)
    assert (again["Policy"], again["Cdn"]) == (out["Policy"], out["Cdn"])  # both in place
    assert (
        cloudfront.get_cache_policy(Id=out["Policy"])["CachePolicy"]["CachePolicyConfig"]["DefaultTTL"]
        == 3600
    )
    assert (
        cloudfront.get_distribution(Id=out["Cdn"])["Distribution"]["DistributionConfig"]["Comment"]
        == "the site"
    )
    listed = cloudfront.list_cache_policies()["CachePolicyList"]["Items"]
    assert [p["CachePolicy"]["Id"] for p in listed] == [out["Policy"]]

    drifted = cloudfront.get_distribution_config(Id=out["Cdn"])
    config = drifted["DistributionConfig"]
    config["Comment"] = "by hand"
    cloudfront.update_distribution(Id=out["Cdn"], DistributionConfig=config, IfMatch=drifted["ETag"])
    assert drift(cfn, "cdn", "Cdn") == ("MODIFIED", [("/DistributionConfig/Comment", "NOT_EQUAL")])
    delete(cfn, "cdn")
    assert cloudfront.list_cache_policies()["CachePolicyList"]["Quantity"] == 0
    assert cloudfront.list_distributions()["DistributionList"].get("Quantity", 0) == 0
