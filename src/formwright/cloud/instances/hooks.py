"""Ties booting instances to moto's: boot after CloudFormation creates one, stop on terminate, console output.

The local cloud's process holds every booted instance; nothing of them survives it (`local-cloud stop` sends
SIGTERM, on which the server exits, stopping each instance, its network and its root first).
"""

from __future__ import annotations

import atexit
import threading
from pathlib import Path
from typing import Any

from formwright.cloud.instances import boot as booting
from formwright.cloud.instances import proxy

BOOTED: dict[str, booting.Booted] = {}
# the console output of each booted instance that ended: GetConsoleOutput still answers it after the
# termination (EC2 posts it at termination too, and shows a terminated instance for about an hour; here, for
# as long as this local cloud runs)
ENDED: dict[str, str] = {}
_lock = threading.Lock()


def boot_instance(logical: str, instance: Any, metadata: Any = None) -> None:
    """Boot a moto instance CloudFormation just created (`metadata`: its resource's Metadata); a refusal
    fails the resource with its reason."""
    from formwright.cloud.emulator.resources import ResourceFailure

    try:
        start(instance, metadata, logical)
    except booting.BootRefused as refused:
        raise ResourceFailure(logical, refusal_text(instance, refused)) from None


def refusal_text(instance: Any, refused: booting.BootRefused) -> str:
    """What the local cloud says when `instance` cannot boot."""
    return f"The local cloud cannot boot instance {instance.id}: {refused}"


def start(instance: Any, metadata: Any = None, logical: str = "") -> None:
    """Boot a moto instance, whatever launched it (`metadata`: the Metadata its packages are checked
    against, of resource `logical`); BootRefused with the reason."""
    from formwright.cloud.instances import endpoint, helpers, package_layers
    from formwright.cloud.instances.refusals import refusal
    from formwright.cloud.local import instances_home

    user_data = instance.user_data
    text = str(user_data) if user_data is not None else None
    region = str(instance.ec2_backend.region_name)  # moto sets region_name only on RunInstances
    cannot = booting.unavailable() or refusal(instance, metadata)
    if cannot:
        raise booting.BootRefused(cannot)
    packages_at = proxy.ensure_running()  # the instance's apt downloads through it
    reached_at = endpoint.ensure_listening()  # the instance's helpers call the local cloud there

    def prepare(root: Path) -> None:
        proxy.configure_apt(root, packages_at)
        helpers.inject(root, reached_at, region)

    # the packages its cfn-init will install, from a cached layer of the image (like a baked AMI)
    layer = package_layers.layer(package_layers.wanted(logical, metadata, text), packages_at)
    booted = booting.boot(instance.id, instance.private_ip, text, instances_home(), prepare=prepare,
                          below=(layer,) if layer else ())
    keep(booted)


def keep(booted: booting.Booted) -> None:
    """Hold a booted instance: stopped when terminated, at a reset and when the local cloud exits."""
    with _lock:
        BOOTED[booted.instance_id] = booted


def is_booted(instance_id: str) -> bool:
    """Whether this local cloud runs the instance now."""
    with _lock:
        return instance_id in BOOTED


def signal_url(stack: Any, logical: str) -> str:
    """A WaitConditionHandle's URL on the instance network (where booted instances reach the local cloud)."""
    from formwright.cloud.emulator.resources import ResourceFailure
    from formwright.cloud.emulator.signals import handle_url
    from formwright.cloud.instances.endpoint import ensure_listening

    try:
        return handle_url(stack, logical, ensure_listening())
    except booting.BootRefused as refused:
        raise ResourceFailure(logical, f"The local cloud cannot serve wait condition handle {logical}: "
                                       f"{refused}") from None


def stop_instance(instance_id: str) -> None:
    """Stop a booted instance (nothing when it was not booted); its last console output stays readable."""
    with _lock:
        booted = BOOTED.pop(instance_id, None)
    if booted is not None:
        from formwright.cloud.emulator import locking

        text = booting.console_output(booted)
        with locking.released():  # seconds (its processes gone, its root unmounted): other requests go on
            booting.stop(booted)
        with _lock:
            ENDED[instance_id] = text


def console_of(instance_id: str) -> str | None:
    """The console output of a booted instance, running or terminated (None when it never booted here)."""
    with _lock:
        booted = BOOTED.get(instance_id)
        if booted is None:
            return ENDED.get(instance_id)
    return booting.console_output(booted)


def stop_all() -> None:
    """Stop every booted instance of this local cloud, all at once (each waits for its processes to go:
    one after another, a reset of a few instances outlasted its callers' timeouts)."""
    stopping = [threading.Thread(target=stop_instance, args=(i,)) for i in list(BOOTED)]
    for thread in stopping:
        thread.start()
    for thread in stopping:
        thread.join()


def install() -> None:
    """Patch moto: terminating an instance stops it; GetConsoleOutput gives its console; exit stops all;
    instances get addresses on the instance network (`addresses`); a served DBInstance (`databases`)."""
    from formwright.cloud.instances import addresses, databases

    addresses.install()
    databases.install()
    from moto.core.types import Base64EncodedString
    from moto.ec2.models.instances import Instance
    from moto.ec2.responses.general import General

    terminate = Instance.terminate

    def terminate_and_stop(self: Any) -> Any:
        stop_instance(self.id)
        return terminate(self)

    Instance.terminate = terminate_and_stop  # type: ignore[method-assign]  # moto has no hook: patched
    console = General.get_console_output

    def get_console_output(self: Any) -> Any:
        text = console_of(self._get_param("InstanceId"))
        result = console(self)
        if text is not None:
            result.result["Output"] = Base64EncodedString.from_raw_string(text)  # type: ignore[index]
        return result

    General.get_console_output = get_console_output  # type: ignore[method-assign]  # moto has no hook: patched
    from moto.moto_api._internal.models import MotoAPIBackend

    reset = MotoAPIBackend.reset

    def reset_and_stop(self: Any) -> None:  # the reset API forgets every instance: none may keep running
        stop_all()
        reset(self)

    MotoAPIBackend.reset = reset_and_stop  # type: ignore[method-assign]  # moto has no hook: patched
    # moto's server answers SIGTERM (`local-cloud stop`) with sys.exit(0): the exit stops every instance
    atexit.register(stop_all)
