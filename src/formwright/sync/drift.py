"""Drift detection of an applied stack, and the correction tag that makes a change set undo drift."""

from __future__ import annotations

import threading
import time

from botocore.exceptions import BotoCoreError, ClientError
from botocore.parsers import ResponseParserError

from formwright.cloud.errors import error_code, translate
from formwright.engine.cfn import CloudFormation, StackInfo
from formwright.engine.drift import drifted_resources
from formwright.sync.objects import StackObject
from formwright.sync.passes import PassSteps
from formwright.sync.status_store import Status

DRIFT_UNSUPPORTED = "drift detection unsupported by target"


class DriftSteps(PassSteps):
    """Starts and reads drift detections; learns once whether the target supports them."""

    _drift_supported: bool | None
    _probe_cfn: CloudFormation | None
    _desired_lock: threading.Lock

    def _probe(self) -> CloudFormation:
        """CloudFormation without retries until drift detection is known to work (moto answers 500)."""
        if self._drift_supported:
            return self.cfn
        with self._desired_lock:
            if self._probe_cfn is None:
                from botocore.config import Config

                client = self.target.session().client("cloudformation", endpoint_url=self.target.endpoint,
                                                      config=Config(retries={"max_attempts": 1}))
                self._probe_cfn = CloudFormation(client, self.counter)
            return self._probe_cfn

    def _check_drift(self, obj: StackObject, st: Status, info: StackInfo) -> float | None:
        """Start or read a drift detection; report it; ask for correction when driftCorrection is on."""
        if self._drift_supported is False:
            st.drift = DRIFT_UNSUPPORTED
            return None
        stack_name = str(obj.spec.stack_name)
        try:
            if not st.drift_detection_id:
                st.drift_detection_id = self._probe().call("detect_stack_drift", StackName=stack_name)[
                    "StackDriftDetectionId"]
                self._drift_supported = True
                return obj.spec.poll_interval
            result = self.cfn.call("describe_stack_drift_detection_status",
                                   StackDriftDetectionId=st.drift_detection_id)
        except (ClientError, BotoCoreError, ResponseParserError) as err:
            if self._drift_supported is None and _unsupported(err):
                self._drift_supported = False
                st.drift, st.drift_detection_id = DRIFT_UNSUPPORTED, ""
                return None
            st.drift, st.drift_detection_id = f"drift detection failed: {translate(err)}", ""
            return None
        if result.get("DetectionStatus") == "DETECTION_IN_PROGRESS":
            return obj.spec.poll_interval
        st.drift_detection_id = ""
        if result.get("DetectionStatus") == "DETECTION_FAILED":
            st.drift = f"drift detection failed: {result.get('DetectionStatusReason', '')}".rstrip(": ")
            return None
        if result.get("StackDriftStatus") != "DRIFTED":
            st.drift = "IN_SYNC"
            return None
        items = ", ".join(f"{d.logical_id} {d.status}" for d in drifted_resources(self.cfn, stack_name))
        st.drift = f"DRIFTED: {items or 'resources differ from the template'}"
        if obj.spec.drift_correction:
            st.correction = result.get("StackDriftDetectionId", str(int(time.time())))[-12:]
            st.phase = "correcting"
        return None


def _unsupported(err: Exception) -> bool:
    """True when the target does not implement the call (moto answers HTTP 500 or NotImplemented)."""
    if isinstance(err, ClientError):
        return error_code(err) in ("NotImplemented", "InternalFailure", "InternalError", "501", "500",
                                   "UnknownOperationException", "InvalidAction")
    return (
        "Internal Server Error" in str(err) or "invalid XML" in str(err) or "not yet implemented" in str(err)
    )
