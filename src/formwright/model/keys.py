"""The keys formwright.yaml may hold, each with its help (the project, a group, a stack, an environment's
overlay), and the check that names an unknown one with the nearest known key."""

from __future__ import annotations

import difflib
import re

from formwright.errors import Problems, ProjectError
from formwright.model.targets import TARGET_KEYS
from formwright.template.document import Mapping

# Deploy options a stack takes and the project sets for all of its stacks.
STACK_OPTIONS = {
    "on_failure": "rollback | delete | do_nothing: what CloudFormation does when a create fails",
    "service_role": "ARN of the IAM role CloudFormation uses for the stack's operations (RoleARN)",
    "notification_arns": "SNS topic ARNs that receive the stack's events",
    "termination_protection": "true to protect the stack from deletion; false to switch it off "
                              "(unset: left as it is)",
    "artifact_bucket": "S3 bucket for large templates and artifacts (default: formwright's managed one)",
    "ownership_tags": "false: deploy leaves the stack's tags as written, without formwright's ownership "
                      "tags (stacks taken over by `formwright adopt`; `deploy --prune` never removes such "
                      "a stack)",
    "stack_timeout": "minutes to wait for the stack's deploy or delete before reporting it timed out "
                     "(as sceptre's; 0 or unset: no limit)",
    "deny": "guards: {replacement: [TYPE, ...], removal: [TYPE, ...]} (`AWS::RDS::*` patterns): a plan "
            "replacing or removing a matching resource fails unless --allow-replacement names it",
}
ON_FAILURE = ("rollback", "delete", "do_nothing")
GUARDS = ("replacement", "removal")  # the keys of `deny:`

PROJECT_KEYS = {
    "name": "the project's name; stack names default to <name>-<stack> (<name>-<env>-<stack> with --env)",
    **TARGET_KEYS,
    "tags": "tags every stack gets",
    "stacks": "the stacks, by name",
    "groups": "groups of stacks: {name: {region, account, profile, role_arn, regions, tags, stacks}}",
    "environments": "per-environment overlays of this file: {dev: {...}, prod: {...}}",
    "default_environment": "the environment used without --env (without it a project with environments "
                           "needs --env)",
    "vars": "default values of {{ var.K }} (an environment, --var-file and --var override them)",
    "macros": "user macros: {Name: path} or {Name: {path, environment, timeout}}",
    "version": "the project's version",
    "inputs": "instance inputs",
    "policies": "instance policies",
    "triggers": "actions on events",
    "operations": "custom day-2 operations",
    "description": "free text",
    **{key: help + " (default for every stack)" for key, help in STACK_OPTIONS.items()},
    "local_cloud": "local-cloud settings: {stub: [TYPE, ...]} types the local cloud may stub; "
                   "{instances: boot} EC2 instances really boot",
    "hooks": "actions around every stack's deploy and delete: {before_deploy: [...], after_deploy, "
             "before_delete, after_delete, on_failure}",
}
STACK_KEYS = {
    "template": "path of the CloudFormation template",
    "tosca": "path of a TOSCA service template or CSAR to transform",
    "inputs": "TOSCA inputs for a `tosca:` stack",
    "stack_name": "the CloudFormation stack name (default <project>-<stack>)",
    "parameters": "template parameters; `!ref stack.outputs.Key` for another stack's output",
    "tags": "tags for this stack (merged over the project's)",
    "depends_on": "stacks that must be deployed first",
    "capabilities": "CAPABILITY_IAM, CAPABILITY_NAMED_IAM, CAPABILITY_AUTO_EXPAND",
    **STACK_OPTIONS,
    "triggers": "actions on this stack's events",
    "hooks": "actions around this stack's deploy and delete: {before_deploy: [...], after_deploy, "
             "before_delete, after_delete, on_failure}",
    "immutable": "replace instead of update on upgrade",
    "description": "free text",
    "regions": "regions of a per-region stack: one stack per region",
    "obsolete": "true: the stack is to be removed (`plan` lists it, `deploy --prune` deletes it); its "
                "definition stays for reference",
    "import": "existing resources to bring under the stack: {LogicalId: {IdentifierProperty: value}}",
    "import_existing": "true: change sets import custom-named resources that already exist "
                       "(ImportExistingResources)",
    "shared": "one stack for every instance of a multi-instance project (made with the first, removed "
              "with the last)",
    **TARGET_KEYS,
}
GROUP_KEYS = {
    "stacks": "the group's stacks, by name",
    "tags": "tags for the group's stacks (merged over the project's)",
    "regions": "regions for each of the group's stacks",
    "hooks": "actions around each of the group's stacks' deploy and delete (the stack's own win per event)",
    "description": "free text",
    **TARGET_KEYS,
    **{key: help + " (default for the group's stacks)" for key, help in STACK_OPTIONS.items()},
}
OVERLAY_KEYS = {k: v for k, v in PROJECT_KEYS.items() if k not in ("name", "environments",
                                                                          "default_environment")}
CAPABILITIES = {"CAPABILITY_IAM", "CAPABILITY_NAMED_IAM", "CAPABILITY_AUTO_EXPAND"}
STACK_NAME = re.compile(r"[A-Za-z][-A-Za-z0-9]{0,127}")


# sceptre's stack and stack-group config keys (its docs, "Stack Config") and the key meaning the same here;
# the nearest spelling would mislead (`iam_role` reads like `service_role`, but is the role sceptre assumes).
# sceptre's own `role_arn` (renamed `cloudformation_service_role` in sceptre 4) is `service_role` here.
SCEPTRE_KEYS = {
    "iam_role": "role_arn",
    "sceptre_role": "role_arn",
    "iam_role_session_duration": "session_duration",
    "sceptre_role_session_duration": "session_duration",
    "cloudformation_service_role": "service_role",
    "stack_tags": "tags",
    "dependencies": "depends_on",
    "template_path": "template",
    "notifications": "notification_arns",
}


def did_you_mean(word: str, choices: list[str]) -> str:
    """A hint: sceptre's key's counterpart, else the known word nearest to `word`, else the known words."""
    ours = SCEPTRE_KEYS.get(word)
    if ours in choices:
        return f"sceptre's `{word}` is `{ours}` here"
    close = difflib.get_close_matches(word, choices, n=1)
    return f"did you mean '{close[0]}'?" if close else f"known keys: {', '.join(sorted(choices))}"


def check_keys(mapping: Mapping, known: dict[str, str], file: str, what: str) -> None:
    """Every key of `mapping` is one of `known`; each unknown one is an error at its line (all reported)."""
    problems = Problems()
    for key in mapping:
        if key not in known:
            problems.add(ProjectError(f"unknown key '{key}' in {what}", file=file, line=mapping.line_of(key),
                                      hint=did_you_mean(key, list(known))))
    problems.check()
