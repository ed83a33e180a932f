"""An instance's home region (where its stacks that are not per region live) and environment: both stay."""

from __future__ import annotations

from formwright.errors import InputError
from formwright.model.project import Project
from formwright.state.journal import Journal


def home_region(journal: Journal, project: Project, name: str | None,
                region_flag: str | None) -> tuple[str, str | None]:
    """The home region and the note to show when it won over AWS_REGION: --region or the project's, else
    where the instance's stacks already are (so an update finds them whatever AWS_REGION says now), else
    AWS_REGION or the profile's region. An instance never moves: another region given is exit 2."""
    from formwright.cloud.session import default_region, region_note

    recorded = recorded_home(journal, name) if name else None
    if project.region and recorded and project.region != recorded:
        how = "--region" if region_flag else "the project's `region:`"
        raise InputError(f"instance '{name}' has its stacks in {recorded}, not {project.region} ({how})",
                         where=name, hint=f"use --region {recorded}: an instance does not move between "
                                          "regions (create a new one there)")
    if project.region:
        return project.region, region_note(project.region, region_flag)
    if recorded:
        return recorded, region_note(recorded, None, f"the region of instance '{name}',")
    return default_region(project.target.profile), None


def recorded_home(journal: Journal, name: str) -> str | None:
    """The region the live instance's stacks that are not per region were deployed to, else the home
    its last operation was started with (a create that has not finished), if any."""
    inst = journal.instance(name)
    if inst is None or inst.status == "deleted":
        return None
    current = journal.revision(name)
    for element, record in (current.elements if current else {}).items():
        if "@" not in element and record.get("region"):
            return str(record["region"])
    last = journal.last_operation(name)
    home = last.params.get("home") if last is not None else None
    return str(home) if home else None


def instance_environment(journal: Journal, name: str, given: str | None) -> str | None:
    """The instance's environment: the one it was created in (recorded with each operation). --env may
    name it, never another: an instance does not move between environments."""
    inst = journal.instance(name)
    if inst is None or inst.status == "deleted":
        return given
    last = journal.last_operation(name)
    recorded = last.params.get("environment") if last is not None else None
    if given is not None and given != recorded:
        was = f"of environment '{recorded}'" if recorded else "of no environment"
        raise InputError(f"instance '{name}' is {was}, not '{given}' (--env, FORMWRIGHT_ENV)",
                         where=name, hint="an instance keeps the environment it was created in: create "
                                          "another instance for this one")
    return str(recorded) if recorded else None
