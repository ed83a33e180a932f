"""CloudWatch alarms as CloudFormation makes them, through moto's CloudWatch backend (DescribeAlarms and
ListTagsForResource answer what the stack made).

AWS::CloudWatch::Alarm (AWS CloudFormation Template Reference): `Ref` is the alarm's name (generated
`<stack>-<logical>-<suffix>` when AlarmName is not given), `Arn` its ARN; AlarmName is create-only, every
other property is updated in place, as PutMetricAlarm overwrites an alarm of the same name.
"""

from __future__ import annotations

from typing import Any

from formwright.cloud.emulator.own import Invalid, Model, backend, generated_name, register

# property -> moto Alarm attribute, for the plain values read back
ALARM_FIELDS = {
    "Namespace": "namespace",
    "MetricName": "metric_name",
    "ComparisonOperator": "comparison_operator",
    "EvaluationPeriods": "evaluation_periods",
    "DatapointsToAlarm": "datapoints_to_alarm",
    "Period": "period",
    "Threshold": "threshold",
    "Statistic": "statistic",
    "ExtendedStatistic": "extended_statistic",
    "AlarmDescription": "description",
    "ActionsEnabled": "actions_enabled",
    "AlarmActions": "alarm_actions",
    "OKActions": "ok_actions",
    "InsufficientDataActions": "insufficient_data_actions",
    "Unit": "unit",
    "TreatMissingData": "treat_missing_data",
    "ThresholdMetricId": "threshold_metric_id",
    "EvaluateLowSampleCountPercentile": "evaluate_low_sample_count_percentile",
}


def _backend(account: str, region: str) -> Any:
    return backend("cloudwatch", account, region)


def _queries(metrics: list[dict[str, Any]] | None) -> list[Any]:
    """The template's `Metrics` (metric math) as moto's MetricDataQuery objects."""
    from moto.cloudwatch.models import Dimension, Metric, MetricDataQuery, MetricStat

    # moto annotates these fields `str` but its own API parser passes absent optional ones as None, as here
    found = []
    for query in metrics or []:
        stat = query.get("MetricStat")
        metric_stat = None
        if stat:
            metric = stat.get("Metric") or {}
            dimensions = [Dimension(d["Name"], d["Value"]) for d in metric.get("Dimensions") or []]
            metric_stat = MetricStat(
                Metric(metric.get("MetricName"), metric.get("Namespace"), dimensions),  # type: ignore[arg-type]
                stat.get("Period"),
                stat.get("Stat"),
                stat.get("Unit"),
            )
        found.append(
            MetricDataQuery(
                query["Id"],
                query.get("Label"),  # type: ignore[arg-type]
                query.get("Period"),  # type: ignore[arg-type]
                query.get("ReturnData"),  # type: ignore[arg-type]
                query.get("Expression"),
                metric_stat,
            )
        )
    return found


@register
class Alarm(Model):
    """AWS::CloudWatch::Alarm (a metric alarm, on one metric or on metric math)."""

    kind = "AWS::CloudWatch::Alarm"
    in_place = frozenset({*ALARM_FIELDS, "Dimensions", "Metrics"})
    taggable = True

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        self.physical_resource_id = str(
            props.get("AlarmName") or generated_name(self.kind, stack_name, self.logical_resource_id)
        )
        self._put(props)

    def _put(self, props: dict[str, Any]) -> None:
        """PutMetricAlarm with every property: it replaces the alarm's whole configuration."""
        if not props.get("Metrics") and not props.get("MetricName"):
            raise Invalid("Either MetricName or Metrics must be specified")
        if props.get("Metrics") and props.get("MetricName"):
            raise Invalid("Metrics and MetricName cannot both be specified")
        if "Threshold" not in props and not props.get("ThresholdMetricId"):
            raise Invalid("Either Threshold or ThresholdMetricId must be specified")
        number = {
            n: (float(props[n]) if n == "Threshold" else int(props[n]))
            for n in ("Threshold", "EvaluationPeriods", "Period", "DatapointsToAlarm")
            if n in props
        }
        backend = _backend(self.account_id, self.region_name)
        tags = (
            backend.tagger.list_tags_for_resource(self.arn).get("Tags")
            if self.physical_resource_id in backend.alarms
            else None
        )
        enabled = props.get("ActionsEnabled")
        backend.put_metric_alarm(
            name=self.physical_resource_id,
            namespace=props.get("Namespace"),
            metric_name=props.get("MetricName"),
            comparison_operator=props["ComparisonOperator"],
            evaluation_periods=number["EvaluationPeriods"],
            period=number.get("Period"),
            threshold=number.get("Threshold"),
            statistic=props.get("Statistic"),
            description=props.get("AlarmDescription"),
            dimensions=props.get("Dimensions") or [],
            alarm_actions=list(props.get("AlarmActions") or []),
            metric_data_queries=_queries(props.get("Metrics")),
            datapoints_to_alarm=number.get("DatapointsToAlarm"),
            extended_statistic=props.get("ExtendedStatistic"),
            ok_actions=list(props.get("OKActions") or []),
            insufficient_data_actions=list(props.get("InsufficientDataActions") or []),
            unit=props.get("Unit"),
            actions_enabled=True if enabled is None else str(enabled).lower() == "true",
            treat_missing_data=props.get("TreatMissingData"),
            evaluate_low_sample_count_percentile=props.get("EvaluateLowSampleCountPercentile"),
            threshold_metric_id=props.get("ThresholdMetricId"),
            tags=tags,
        )

    @property
    def arn(self) -> str:
        from moto.cloudwatch.utils import make_arn_for_alarm

        return make_arn_for_alarm(self.region_name, self.account_id, self.physical_resource_id)

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        self._put(props)

    def remove(self) -> None:
        backend = _backend(self.account_id, self.region_name)
        if backend.alarms.pop(self.physical_resource_id, None) is not None:
            backend.tagger.delete_all_tags_for_resource(self.arn)

    def read(self) -> dict[str, Any] | None:
        alarm = _backend(self.account_id, self.region_name).alarms.get(self.physical_resource_id)
        if alarm is None:
            return None
        found = {name: getattr(alarm, attribute) for name, attribute in ALARM_FIELDS.items()}
        found["AlarmName"] = alarm.name
        if isinstance(alarm.threshold, float) and alarm.threshold.is_integer():
            found["Threshold"] = int(alarm.threshold)  # 100.0 as the template's 100
        found["Dimensions"] = [{"Name": d.name, "Value": d.value} for d in alarm.dimensions]
        return found

    def attribute(self, name: str) -> Any:
        if name == "Arn":
            return self.arn
        raise KeyError(name)

    def live_tags(self) -> dict[str, str]:
        return dict(_backend(self.account_id, self.region_name).list_tags_for_resource(self.arn))

    def write_tags(self, tags: dict[str, str]) -> None:
        tagger = _backend(self.account_id, self.region_name).tagger
        tagger.delete_all_tags_for_resource(self.arn)
        tagger.tag_resource(self.arn, tagger.convert_dict_to_tags_input(tags))


def _definitions(account: str, region: str) -> dict[str, dict[str, Any]]:
    """The Logs backend's saved queries by id (moto has none: kept beside its log groups, and answered by
    DescribeQueryDefinitions once `patch_moto` has run)."""
    logs = backend("logs", account, region)
    if not hasattr(logs, "fw_query_definitions"):
        logs.fw_query_definitions = {}
    return logs.fw_query_definitions  # type: ignore[no-any-return]


@register
class QueryDefinition(Model):
    """AWS::Logs::QueryDefinition: a saved CloudWatch Logs Insights query."""

    kind = "AWS::Logs::QueryDefinition"
    in_place = frozenset({"Name", "QueryString", "LogGroupNames", "QueryLanguage"})

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        import uuid

        self.physical_resource_id = str(uuid.uuid4())
        self.update(props, set(self.in_place))

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        import time

        _definitions(self.account_id, self.region_name)[self.physical_resource_id] = {
            "queryDefinitionId": self.physical_resource_id,
            "name": props["Name"],
            "queryString": props["QueryString"],
            "logGroupNames": list(props.get("LogGroupNames") or []),
            "queryLanguage": props.get("QueryLanguage") or "CWLI",
            "lastModified": int(time.time() * 1000),
        }

    def remove(self) -> None:
        _definitions(self.account_id, self.region_name).pop(self.physical_resource_id, None)

    def read(self) -> dict[str, Any] | None:
        found = _definitions(self.account_id, self.region_name).get(self.physical_resource_id)
        if found is None:
            return None
        return {
            "Name": found["name"],
            "QueryString": found["queryString"],
            "LogGroupNames": found["logGroupNames"],
            "QueryLanguage": found["queryLanguage"],
        }

    def attribute(self, name: str) -> Any:
        if name == "QueryDefinitionId":
            return self.physical_resource_id
        raise KeyError(name)


def patch_moto() -> None:
    """PutQueryDefinition, DescribeQueryDefinitions and DeleteQueryDefinition on moto's Logs API, over the
    store QueryDefinition uses (CloudWatch Logs API Reference)."""
    import json
    import time
    import uuid

    from moto.logs.responses import LogsResponse

    def put_query_definition(self: Any) -> str:
        store = _definitions(self.current_account, self.region)
        found = self._get_param("queryDefinitionId") or str(uuid.uuid4())
        store[found] = {
            "queryDefinitionId": found,
            "name": self._get_param("name"),
            "queryString": self._get_param("queryString"),
            "logGroupNames": self._get_param("logGroupNames") or [],
            "queryLanguage": self._get_param("queryLanguage") or "CWLI",
            "lastModified": int(time.time() * 1000),
        }
        return json.dumps({"queryDefinitionId": found})

    def describe_query_definitions(self: Any) -> str:
        prefix = self._get_param("queryDefinitionNamePrefix") or ""
        found = [
            d
            for d in _definitions(self.current_account, self.region).values()
            if str(d["name"]).startswith(prefix)
        ]
        return json.dumps({"queryDefinitions": found})

    def delete_query_definition(self: Any) -> str:
        gone = _definitions(self.current_account, self.region).pop(self._get_param("queryDefinitionId"), None)
        return json.dumps({"success": gone is not None})

    LogsResponse.put_query_definition = put_query_definition  # type: ignore[attr-defined]
    LogsResponse.describe_query_definitions = describe_query_definitions  # type: ignore[attr-defined]
    LogsResponse.delete_query_definition = delete_query_definition  # type: ignore[attr-defined]
