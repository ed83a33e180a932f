"""What DescribeStacks says of one stack (read by the CloudFormation layer and by the shared listing)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass
class StackInfo:
    """What describe_stacks says of one stack."""

    name: str
    stack_id: str
    status: str
    reason: str = ""
    outputs: dict[str, str] = field(default_factory=dict)
    exports: dict[str, str] = field(default_factory=dict)
    parameters: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    termination_protection: bool = False
    updated: datetime | None = None
    drift: str = ""  # the latest drift detection's StackDriftStatus (DriftInformation); "" never checked
    drift_checked: datetime | None = None

    @classmethod
    def from_api(cls, data: dict[str, Any]) -> StackInfo:
        """Build from one element of describe_stacks' `Stacks`."""
        outputs, exports = {}, {}
        for out in data.get("Outputs") or []:
            outputs[out["OutputKey"]] = out.get("OutputValue", "")
            if out.get("ExportName"):
                exports[out["ExportName"]] = out.get("OutputValue", "")
        return cls(
            name=data["StackName"],
            stack_id=data.get("StackId", ""),
            status=data.get("StackStatus", ""),
            reason=data.get("StackStatusReason", "") or "",
            outputs=outputs,
            exports=exports,
            parameters={p["ParameterKey"]: p.get("ParameterValue", "") for p in data.get("Parameters") or []},
            tags={t["Key"]: t["Value"] for t in data.get("Tags") or []},
            termination_protection=bool(data.get("EnableTerminationProtection")),
            updated=data.get("LastUpdatedTime") or data.get("CreationTime"),
            drift=str((data.get("DriftInformation") or {}).get("StackDriftStatus") or ""),
            drift_checked=(data.get("DriftInformation") or {}).get("LastCheckTimestamp"),
        )

    @property
    def stamp(self) -> str:
        """When the stack last changed (ISO 8601), as the applied cache and saved plans record it."""
        return self.updated.isoformat() if self.updated else ""

    @property
    def in_progress(self) -> bool:
        """True while CloudFormation is still working on the stack."""
        return self.status.endswith("_IN_PROGRESS") and self.status != "REVIEW_IN_PROGRESS"

    @property
    def settled_ok(self) -> bool:
        """True in a *_COMPLETE state that leaves the stack usable."""
        return self.status in {"CREATE_COMPLETE", "UPDATE_COMPLETE", "UPDATE_ROLLBACK_COMPLETE",
                               "IMPORT_COMPLETE", "IMPORT_ROLLBACK_COMPLETE"}
