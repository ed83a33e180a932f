"""CloudFront as CloudFormation makes it: CachePolicy and Distribution. A distribution goes through moto's
CloudFront backend (GetDistribution answers it); moto has no cache policies, so the local cloud keeps them
beside the distributions and answers GetCachePolicy and ListCachePolicies itself (`patch_moto`).

Return values (AWS CloudFormation Template Reference): CachePolicy `Ref` and `Id` its id, `LastModifiedTime`;
Distribution `Ref` and `Id` its id (e.g. `E2QWRUHAPOMQZL`), `DomainName` (`d111111abcdef8.cloudfront.net`).
The template's structures are the API's without the `Quantity`/`Items` wrappers of its lists.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from formwright.cloud.emulator.own import Model, register

# the template's names of fields the API spells otherwise
RENAMES = {
    "AcmCertificateArn": "ACMCertificateArn",
    "IamCertificateId": "IAMCertificateId",
    "OriginSSLProtocols": "OriginSslProtocols",
}


def api_shape(value: Any) -> Any:
    """A template structure in the CloudFront API's shape: each list as {Quantity, Items}, a GeoRestriction's
    Locations as its Items, a behavior's CachedMethods inside its AllowedMethods."""
    if isinstance(value, list):
        return {"Quantity": len(value), "Items": [api_shape(v) for v in value]}
    if not isinstance(value, dict):
        return value
    shaped = {
        RENAMES.get(k, k): api_shape(v)
        for k, v in value.items()
        if k not in ("Locations", "CachedMethods", "AllowedMethods")
    }
    if "Locations" in value:
        shaped.update(api_shape(value["Locations"]))
    if "AllowedMethods" in value:
        shaped["AllowedMethods"] = {
            **api_shape(value["AllowedMethods"]),
            "CachedMethods": api_shape(value.get("CachedMethods") or ["GET", "HEAD"]),
        }
    if "S3OriginConfig" in shaped:  # with an origin access control, the identity is empty
        shaped["S3OriginConfig"] = {"OriginAccessIdentity": "", **(shaped["S3OriginConfig"] or {})}
    return shaped


def _cloudfront(account: str) -> Any:
    from moto.cloudfront.models import cloudfront_backends

    return cloudfront_backends[account]["aws"]  # a global service, by partition


def _policies(account: str) -> dict[str, dict[str, Any]]:
    front = _cloudfront(account)
    if not hasattr(front, "fw_cache_policies"):
        front.fw_cache_policies = {}
    return front.fw_cache_policies  # type: ignore[no-any-return]


def _now() -> str:
    return datetime.now(UTC).isoformat()


@register
class CachePolicy(Model):
    """AWS::CloudFront::CachePolicy."""

    kind = "AWS::CloudFront::CachePolicy"
    in_place = frozenset({"CachePolicyConfig"})

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        name = props["CachePolicyConfig"]["Name"]
        if any(p["config"]["Name"] == name for p in _policies(self.account_id).values()):
            from moto.core.exceptions import ServiceException

            raise ServiceException(
                "CachePolicyAlreadyExists", f"A cache policy with name {name} already exists"
            )
        self.physical_resource_id = str(uuid.uuid4())
        self.update(props, {"CachePolicyConfig"})

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        _policies(self.account_id)[self.physical_resource_id] = {
            "config": props["CachePolicyConfig"],
            "modified": _now(),
        }

    def remove(self) -> None:
        _policies(self.account_id).pop(self.physical_resource_id, None)

    def read(self) -> dict[str, Any] | None:
        found = _policies(self.account_id).get(self.physical_resource_id)
        return None if found is None else {"CachePolicyConfig": found["config"]}

    def attribute(self, name: str) -> Any:
        if name == "Id":
            return self.physical_resource_id
        if name == "LastModifiedTime":
            return _policies(self.account_id)[self.physical_resource_id]["modified"]
        raise KeyError(name)


# the DistributionConfig fields read back from moto's distribution (drift compares these)
READ_BACK = ("Enabled", "Comment", "PriceClass", "HttpVersion", "DefaultRootObject", "Aliases")


@register
class Distribution(Model):
    """AWS::CloudFront::Distribution."""

    kind = "AWS::CloudFront::Distribution"
    in_place = frozenset({"DistributionConfig"})
    taggable = True

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        self.reference = str(uuid.uuid4())  # the CallerReference CloudFormation makes for it
        made, _, _ = _cloudfront(self.account_id).create_distribution(self._config(props), [])
        self.physical_resource_id = made.distribution_id

    def _config(self, props: dict[str, Any]) -> dict[str, Any]:
        config = api_shape(props["DistributionConfig"])
        config.setdefault("Comment", "")
        config["CallerReference"] = self.reference
        return config

    def _distribution(self) -> Any:
        return _cloudfront(self.account_id).distributions.get(self.physical_resource_id)

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        from moto.cloudfront.models import DistributionConfig

        distribution = self._distribution()
        distribution.distribution_config = DistributionConfig(self._config(props))
        distribution.etag = uuid.uuid4().hex[:14].upper()  # UpdateDistribution answers a new ETag

    def remove(self) -> None:
        distribution = _cloudfront(self.account_id).distributions.pop(self.physical_resource_id, None)
        if distribution is not None:
            _cloudfront(self.account_id).tagger.delete_all_tags_for_resource(distribution.arn)

    def read(self) -> dict[str, Any] | None:
        distribution = self._distribution()
        if distribution is None:
            return None
        config = distribution.distribution_config
        aliases = (config.Aliases or {}).get("Items") or []
        return {
            "DistributionConfig": {
                "Enabled": config.Enabled,
                "Comment": config.Comment,
                "PriceClass": config.PriceClass,
                "HttpVersion": config.HttpVersion,
                "DefaultRootObject": config.DefaultRootObject or None,
                "Aliases": list(aliases) or None,
            }
        }

    def comparable(self, expected: dict[str, Any]) -> dict[str, Any]:
        config = expected.get("DistributionConfig")
        if not isinstance(config, dict):
            return expected
        return {**expected, "DistributionConfig": {k: v for k, v in config.items() if k in READ_BACK}}

    def attribute(self, name: str) -> Any:
        if name == "Id":
            return self.physical_resource_id
        if name == "DomainName":
            return self._distribution().domain_name
        raise KeyError(name)

    def live_tags(self) -> dict[str, str]:
        return dict(_cloudfront(self.account_id).tagger.get_tag_dict_for_resource(self._distribution().arn))

    def write_tags(self, tags: dict[str, str]) -> None:
        tagger, arn = _cloudfront(self.account_id).tagger, self._distribution().arn
        tagger.delete_all_tags_for_resource(arn)
        tagger.tag_resource(arn, tagger.convert_dict_to_tags_input(tags))


def _described(policy_id: str, found: dict[str, Any]) -> dict[str, Any]:
    return {
        "Id": policy_id,
        "LastModifiedTime": found["modified"],
        "CachePolicyConfig": api_shape(found["config"]),
    }


def patch_moto() -> None:
    """GetCachePolicy and ListCachePolicies on moto's CloudFront API, over the policies kept here."""
    from moto.cloudfront import urls
    from moto.cloudfront.responses import CloudFrontResponse
    from moto.core.responses import ActionResult

    urls.url_paths["{0}/2020-05-31/cache-policy$"] = CloudFrontResponse.dispatch
    urls.url_paths["{0}/2020-05-31/cache-policy/(?P<policy_id>[^/]+)$"] = CloudFrontResponse.dispatch

    def get_cache_policy(self: Any) -> ActionResult:
        policy_id = self._get_param("Id")
        found = _policies(self.current_account).get(policy_id)
        if found is None:
            from moto.core.exceptions import ServiceException

            raise ServiceException("NoSuchCachePolicy", "The cache policy does not exist.")
        return ActionResult(
            {"CachePolicy": _described(policy_id, found), "ETag": "E" + policy_id[:12].upper()}
        )

    def list_cache_policies(self: Any) -> ActionResult:
        policies = _policies(self.current_account)
        items = [{"Type": "custom", "CachePolicy": _described(i, p)} for i, p in policies.items()]
        return ActionResult({"CachePolicyList": {"MaxItems": 100, "Quantity": len(items), "Items": items}})

    CloudFrontResponse.get_cache_policy = get_cache_policy  # type: ignore[attr-defined]
    CloudFrontResponse.list_cache_policies = list_cache_policies  # type: ignore[attr-defined]
