"""placeholder"""
from formwright.macros.base import BuiltinMacro


class LanguageExtensionsMacro(BuiltinMacro):
    def __init__(self) -> None:
        super().__init__("AWS::LanguageExtensions")
