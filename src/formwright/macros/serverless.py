"""`AWS::Serverless-2016-10-31` through aws-sam-translator, offline, the way its own `transform()` runs it.

The region is the target's (the translator derives AWS::Region and AWS::Partition from it; the
account id is not passed, as SAM's transform() does not); managed policy names resolve from the
map bundled with the translator.
A name not in that map is kept as given, as SAM does when its policy loader knows no more (SAM's
translator tests, managed_policies_minimal); formwright never calls IAM for it.
"""

from __future__ import annotations

import copy
from typing import Any

from formwright.macros.base import BuiltinMacro, MacroEnv
from formwright.macros.errors import MacroFailed
from formwright.macros.request import template_parameter_values

NAME = "AWS::Serverless-2016-10-31"
LANGUAGE_EXTENSIONS = "AWS::LanguageExtensions"


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
        from samtranslator.utils.py27hash_fix import (
            to_py27_compatible_template,
            undo_mark_unicode_str_in_template,
        )

        names = env.section_names
        if LANGUAGE_EXTENSIONS in names and names.index(LANGUAGE_EXTENSIONS) > names.index(NAME):
            raise MacroFailed(f"{LANGUAGE_EXTENSIONS} must come before {NAME} in the Transform section",
                              hint=f"write Transform: [{LANGUAGE_EXTENSIONS}, {NAME}]")
        if not isinstance(fragment, dict):
            raise MacroFailed("the template must be an object")
        template = copy.deepcopy(fragment)  # the translator edits its input
        template["Transform"] = NAME  # the translator reads its own marker
        # No AWS::AccountId: the translator adds only AWS::Region and AWS::Partition itself, so a
        # `${AWS::AccountId}` in a property it resolves (CodeUri, Auth, Domain, EventInvokeConfig)
        # stays a Fn::Sub for CloudFormation, as in SAM's own translator tests.
        values = _given_parameter_values(template, env.parameter_values)
        session = boto3.session.Session(
            region_name=env.region, aws_access_key_id="offline", aws_secret_access_key="offline"
        )
        previous = ArnGenerator.BOTO_SESSION_REGION_NAME
        ArnGenerator.BOTO_SESSION_REGION_NAME = env.region
        try:
            # samtranslator.translator.transform.transform() step by step, with our session: the
            # py27hash marking is what keeps API Gateway deployment logical ids (a hash of the API
            # body) equal to the ones CloudFormation's SAM transform makes.
            to_py27_compatible_template(template, values)
            translator = Translator(None, Parser(), boto_session=session)
            result = translator.translate(template, values, get_managed_policy_map=dict)
            result = undo_mark_unicode_str_in_template(result)
        except (InvalidDocumentException, InvalidTemplateException) as err:
            raise MacroFailed(str(err).strip()) from None
        except Exception as err:  # noqa: BLE001 - the translator raises bare errors on odd input
            raise MacroFailed(f"Invalid Serverless Application Specification document: {err}") from None
        finally:
            ArnGenerator.BOTO_SESSION_REGION_NAME = previous
        result.pop("Transform", None)
        return result


def _given_parameter_values(template: dict, values: dict[str, Any]) -> dict[str, Any]:
    """The values to hand the translator: those given for the stack, not the template's defaults.

    The translator reads a parameter's Default from the template itself, as written (a Number
    default stays a number, a CommaDelimitedList default keeps its spacing), as in SAM's own
    transform() and its translator tests; the engine's values are strings and split lists.
    """
    defaults = template_parameter_values(template, None)
    return {
        name: (",".join(value) if isinstance(value, list) else value)
        for name, value in values.items()
        if name not in defaults or defaults[name] != value
    }
