"""Instances launched other than by a stack's `AWS::EC2::Instance` boot too (docs/local-cloud.md).

- RunInstances called directly (boto3, the AWS CLI) boots its instances when the local cloud was started
  with `local-cloud start --instances boot` (`set_boot_all`): there is no project whose
  `local_cloud: {instances: boot}` could say so. An instance that cannot boot is terminated with the others
  of its call, and the call answers `Unsupported` with the reason (nothing is left half made).
- An Auto Scaling group boots the instances it launches from its launch template or launch configuration
  (each with the template's UserData) when its stack boots instances (`boot_group`, from the execution) or,
  for CreateAutoScalingGroup called directly, when the local cloud boots every launch. From then on the
  group is marked (`fw_boot`): every instance it launches later (a larger desired capacity, a replacement)
  boots; those it terminates (a smaller one, the group's deletion) stop, as every terminated instance does
  (`hooks.install`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

from formwright.cloud.instances import boot as booting
from formwright.cloud.instances import hooks

GROUP = "AWS::AutoScaling::AutoScalingGroup"
_mode = {"boot_all": False}


def set_boot_all(on: bool) -> None:
    """Boot (True) or only record (False) the instances RunInstances and CreateAutoScalingGroup launch."""
    _mode["boot_all"] = on


def boot_all() -> bool:
    """Whether instances launched outside a stack boot (`local-cloud start --instances boot`)."""
    return _mode["boot_all"]


def boot_each(instances: Iterable[Any]) -> None:
    """Boot every running instance not booted yet; BootRefused (the instance named) at the first that
    cannot, the ones booted before it left running (the caller terminates what it launched)."""
    for instance in instances:
        if instance.state == "running" and not hooks.is_booted(instance.id):
            try:
                hooks.start(instance)
            except booting.BootRefused as refused:
                raise booting.BootRefused(hooks.refusal_text(instance, refused)) from None


def group_instances(group: Any) -> list[Any]:
    """The moto instances an Auto Scaling group holds now."""
    return [state.instance for state in group.instance_states]


def boot_group(group: Any) -> None:
    """Boot the group's instances and every one it launches from now on; BootRefused naming the first
    that cannot boot."""
    group.fw_boot = True
    boot_each(group_instances(group))


def boot_stack_group(logical: str, group: Any) -> None:
    """Boot the instances of an Auto Scaling group a booting stack made; a refusal fails the resource (its
    rollback deletes the group, terminating them)."""
    from formwright.cloud.emulator.resources import ResourceFailure

    try:
        boot_group(group)
    except booting.BootRefused as refused:
        raise ResourceFailure(logical, str(refused)) from None


def _terminate(backend: Any, instances: list[Any]) -> None:
    running = [i.id for i in instances if i.state != "terminated"]
    if running:
        backend.terminate_instances(running)


def install() -> None:
    """Patch moto: RunInstances and Auto Scaling launches boot (see the module's docstring)."""
    from moto.autoscaling.exceptions import ValidationError
    from moto.autoscaling.models import FakeAutoScalingGroup
    from moto.autoscaling.responses import AutoScalingResponse
    from moto.ec2.exceptions import EC2ClientError
    from moto.ec2.responses.instances import InstanceResponse

    run = InstanceResponse.run_instances

    def run_instances(self: Any) -> Any:
        answer = run(self)
        if boot_all():
            launched = list(answer.result.instances)  # type: ignore[attr-defined]  # the Reservation
            try:
                boot_each(launched)
            except booting.BootRefused as refused:
                _terminate(self.ec2_backend, launched)
                raise EC2ClientError("Unsupported", str(refused)) from None
        return answer

    InstanceResponse.run_instances = run_instances  # type: ignore[method-assign]  # moto has no hook: patched
    create_group = AutoScalingResponse.create_auto_scaling_group

    def create_auto_scaling_group(self: Any) -> Any:
        answer = create_group(self)
        name = self._get_param("AutoScalingGroupName")
        group = self.autoscaling_backend.autoscaling_groups.get(name)
        if boot_all() and group is not None:
            try:
                boot_group(group)
            except booting.BootRefused as refused:  # refused whole: the group and its instances go
                self.autoscaling_backend.delete_auto_scaling_group(name)
                raise ValidationError(str(refused)) from None
        return answer

    AutoScalingResponse.create_auto_scaling_group = create_auto_scaling_group  # type: ignore[method-assign]
    replace = FakeAutoScalingGroup.replace_autoscaling_group_instances

    def launch(self: Any, count_needed: int, propagated_tags: dict[str, str]) -> None:
        before = {i.id for i in group_instances(self)}
        replace(self, count_needed, propagated_tags)
        if not getattr(self, "fw_boot", False):
            return  # a stack's group boots once its create returns (execute.py), a stub group never
        launched = [i for i in group_instances(self) if i.id not in before]
        try:
            boot_each(launched)
        except booting.BootRefused as refused:  # these instances are not launched: the group stays short
            _terminate(self.autoscaling_backend.ec2_backend, launched)
            gone = {i.id for i in launched}
            self.instance_states = [s for s in self.instance_states if s.instance.id not in gone]
            print(f"formwright: Auto Scaling group {self.name}: {refused}", file=sys.stderr, flush=True)
            raise ValidationError(str(refused)) from None

    FakeAutoScalingGroup.replace_autoscaling_group_instances = launch  # type: ignore[method-assign]
