"""`AWS::Serverless-2016-10-31` through aws-sam-translator, offline.

The region is the target's; managed policy names resolve from the map bundled with the
translator. A policy name that is not in that map would need an IAM look-up, which we refuse
with a clear error rather than calling IAM.
"""

from __future__ import annotations

import copy
from typing import Any

from formwright.macros.base import BuiltinMacro, MacroEnv
from formwright.macros.errors import MacroFailed

NAME = "AWS::Serverless-2016-10-31"
LANGUAGE_EXTENSIONS = "AWS::LanguageExtensions"


class _NeedsIamLookup(Exception):
    pass


def _no_iam_lookup() -> dict[str, str]:
    raise _NeedsIamLookup


def _policy_hint(template: dict) -> str:
    from samtranslator.internal.managed_policies import get_bundled_managed_policy_map

    known = get_bundled_managed_policy_map("aws") or {}
    for resource in (template.get("Resources") or {}).values():
        if not isinstance(resource, dict):
            continue
        policies = (resource.get("Properties") or {}).get("Policies")
        for policy in policies if isinstance(policies, list) else [policies]:
            if isinstance(policy, str) and not policy.startswith("arn:") and policy not in known:
                return f"the policy {policy} is not an AWS managed policy known offline; give its full ARN"
    return "give the full ARN of every customer-managed policy"


class ServerlessMacro(BuiltinMacro):
    """The SAM transform."""

    def __init__(self) -> None:
        super().__init__(NAME)

    def apply(self, fragment: Any, params: dict[str, Any], env: MacroEnv) -> Any:
        """Translate the SAM template to CloudFormation with the target's region, offline."""
        import boto3
        from samtranslator.model.exceptions import InvalidDocumentException, InvalidTemplateException
        from samtranslator.parser.parser import Parser
        from samtranslator.translator.arn_generator import ArnGenerator
        from samtranslator.translator.translator import Translator

        names = env.section_names
        if LANGUAGE_EXTENSIONS in names and names.index(LANGUAGE_EXTENSIONS) > names.index(NAME):
            raise MacroFailed(f"{LANGUAGE_EXTENSIONS} must come before {NAME} in the Transform section",
                              hint=f"write Transform: [{LANGUAGE_EXTENSIONS}, {NAME}]")
        if not isinstance(fragment, dict):
            raise MacroFailed("the template must be an object")
        template = copy.deepcopy(fragment)  # the translator edits its input
        template["Transform"] = NAME  # the translator reads its own marker
        values = {k: (",".join(v) if isinstance(v, list) else v) for k, v in env.parameter_values.items()}
        values.setdefault("AWS::AccountId", env.account_id)
        session = boto3.session.Session(region_name=env.region,
                                        aws_access_key_id="offline", aws_secret_access_key="offline")
        previous = ArnGenerator.BOTO_SESSION_REGION_NAME
        ArnGenerator.BOTO_SESSION_REGION_NAME = env.region
        try:
            translator = Translator(None, Parser(), boto_session=session)
            result = translator.translate(template, values, get_managed_policy_map=_no_iam_lookup)
        except _NeedsIamLookup:
            raise MacroFailed("a policy name needs an IAM look-up, which formwright does not do offline",
                              hint=_policy_hint(template)) from None
        except (InvalidDocumentException, InvalidTemplateException) as err:
            raise MacroFailed(str(err).strip()) from None
        except Exception as err:  # noqa: BLE001 - the translator raises bare errors on odd input
            raise MacroFailed(f"Invalid Serverless Application Specification document: {err}") from None
        finally:
            ArnGenerator.BOTO_SESSION_REGION_NAME = previous
        result.pop("Transform", None)
        return result
