"""Database clusters as CloudFormation makes them: RDS DBCluster, through moto's RDS backend
(DescribeDBClusters answers what the stack made; an AWS::RDS::DBInstance with DBClusterIdentifier joins it).

AWS::RDS::DBCluster (AWS CloudFormation Template Reference): `Ref` the cluster identifier (generated in lower
case when not given); `Endpoint.Address`, `Endpoint.Port`, `ReadEndpoint.Address`, `DBClusterArn`,
`DBClusterResourceId`. The properties are CreateDBCluster's by the same names; the create-only ones replace
the cluster, the others go through ModifyDBCluster.
"""

from __future__ import annotations

from typing import Any

from formwright.cloud.emulator.own import Model, backend, register

# the properties changed in place (ModifyDBCluster); a change of another non-create-only one is refused
MODIFIABLE = frozenset(
    {
        "BackupRetentionPeriod",
        "MasterUserPassword",
        "Port",
        "PreferredBackupWindow",
        "PreferredMaintenanceWindow",
        "VpcSecurityGroupIds",
        "EngineVersion",
        "DeletionProtection",
        "CopyTagsToSnapshot",
        "ServerlessV2ScalingConfiguration",
        "ScalingConfiguration",
        "EnableIAMDatabaseAuthentication",
        "DBClusterParameterGroupName",
        "EnableHttpEndpoint",
        "BacktrackWindow",
        "AutoMinorVersionUpgrade",
    }
)
# property -> moto DBCluster attribute read back (drift), where it is not the property in snake case
READ_AS = {
    "DBClusterParameterGroupName": "parameter_group",
    "EnableIAMDatabaseAuthentication": "iam_auth",
    "MasterUserPassword": None,
}


def _snake(name: str) -> str:
    from moto.core.utils import camelcase_to_underscores

    return str(camelcase_to_underscores(name))


@register
class DBCluster(Model):
    """AWS::RDS::DBCluster."""

    kind = "AWS::RDS::DBCluster"
    in_place = MODIFIABLE
    taggable = True

    def _rds(self) -> Any:
        return backend("rds", self.account_id, self.region_name)

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        from formwright.cloud.emulator.resources import fitted_name

        name = str(props.get("DBClusterIdentifier") or fitted_name(stack_name, self.logical_resource_id, 63))
        kwargs = {_snake(k): v for k, v in props.items() if k != "Tags"}
        # RDS takes the engine in any case and answers it in lower case, as the engine names are
        kwargs["engine"] = str(props["Engine"]).lower()
        kwargs["db_cluster_identifier"] = name
        cluster = self._rds().create_db_cluster(kwargs)
        cluster.status = "available"  # the create has finished once CloudFormation says CREATE_COMPLETE
        self.physical_resource_id = cluster.db_cluster_identifier
        if "EnableHttpEndpoint" in props:
            # the RDS Data API of a provisioned or Serverless v2 cluster (RDS User Guide, "Using the RDS Data
            # API", Aurora PostgreSQL and MySQL): moto still limits it to Serverless v1 and dropped it, so
            # AWS's sample RDS/aurora-postgres failed its read-back
            cluster._enable_http_endpoint = str(props["EnableHttpEndpoint"]).lower() == "true"

    def _cluster(self) -> Any:
        return self._rds().clusters.get(self.physical_resource_id)

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        kwargs = {_snake(n): props.get(n) for n in names & MODIFIABLE}
        self._rds().modify_db_cluster(
            {**kwargs, "db_cluster_identifier": self.physical_resource_id, "apply_immediately": True}
        )
        cluster = self._cluster()
        for name in names & MODIFIABLE:  # a property the template drops: moto keeps the old value
            if props.get(name) is None and READ_AS.get(name, _snake(name)):
                setattr(cluster, READ_AS.get(name) or _snake(name), None)

    def remove(self) -> None:
        if self._cluster() is not None:
            self._rds().delete_db_cluster(cluster_identifier=self.physical_resource_id)

    def read(self) -> dict[str, Any] | None:
        cluster = self._cluster()
        if cluster is None:
            return None
        found = {
            "DBClusterIdentifier": cluster.db_cluster_identifier,
            "Engine": cluster.engine,
            "MasterUsername": cluster.master_username,
            "DatabaseName": cluster.database_name,
        }
        for name in sorted(MODIFIABLE):
            attribute = READ_AS.get(name, _snake(name))
            if attribute:
                found[name] = getattr(cluster, attribute, None)
        return found

    def attribute(self, name: str) -> Any:
        cluster = self._cluster()
        values = {
            "Endpoint.Address": cluster.endpoint,
            "Endpoint.Port": str(cluster.port),
            "ReadEndpoint.Address": cluster.reader_endpoint,
            "DBClusterArn": cluster.db_cluster_arn,
            "DBClusterResourceId": cluster.db_cluster_resource_id,
        }
        return values[name]

    def live_tags(self) -> dict[str, str]:
        return {t["Key"]: t["Value"] for t in self._cluster().tags or []}

    def write_tags(self, tags: dict[str, str]) -> None:
        self._cluster().tags = [{"Key": k, "Value": v} for k, v in tags.items()]


def patch_moto() -> None:
    """An AWS::RDS::DBInstance with DBClusterIdentifier is an instance of that cluster: moto's
    CloudFormation model drops the identifier and fails on an Aurora engine it has no default version for
    (issue 30: "RDS::DBInstance in a cluster"); such an instance is made as CreateDBInstance makes it, taking
    the cluster's engine version, storage and credentials."""
    from moto.rds.models import DBInstance

    original = DBInstance.create_from_cloudformation_json.__func__  # type: ignore[attr-defined]

    def create(
        cls: Any,
        resource_name: str,
        cloudformation_json: Any,
        account_id: str,
        region_name: str,
        **kwargs: Any,
    ) -> Any:
        props = cloudformation_json.get("Properties") or {}
        if not props.get("DBClusterIdentifier"):
            return original(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs)
        rds = backend("rds", account_id, region_name)
        cluster = rds.clusters.get(str(props["DBClusterIdentifier"]).lower())
        return rds.create_db_instance(
            {
                "db_instance_identifier": resource_name.replace("_", "-").lower(),
                "db_instance_class": props.get("DBInstanceClass"),
                "engine": str(props.get("Engine") or "").lower(),
                "db_cluster_identifier": str(props["DBClusterIdentifier"]).lower(),
                "engine_version": props.get("EngineVersion") or (cluster.engine_version if cluster else None),
                "availability_zone": props.get("AvailabilityZone"),
                "publicly_accessible": props.get("PubliclyAccessible"),
                "db_parameter_group_name": props.get("DBParameterGroupName"),
                "tags": props.get("Tags"),
                "promotion_tier": int(props.get("PromotionTier", 1)),
            }
        )

    DBInstance.create_from_cloudformation_json = classmethod(create)  # type: ignore[method-assign,assignment]
