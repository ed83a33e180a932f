"""Secrets and identities as CloudFormation makes them: SecretsManager Secret, Cognito UserPoolClient and IoT
PolicyPrincipalAttachment, through moto's Secrets Manager, Cognito and IoT backends (DescribeSecret /
GetSecretValue, DescribeUserPoolClient and ListPrincipalPolicies answer what the stack made).

Return values (AWS CloudFormation Template Reference): Secret `Ref` and `Id` the secret's ARN
(`arn:aws:secretsmanager:{region}:{account}:secret:{name}-{6 characters}`); UserPoolClient `Ref` and
`ClientId` the client id, `ClientSecret`, `Name`; PolicyPrincipalAttachment `Ref` a generated id.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from formwright.cloud.emulator.own import Invalid, Model, backend, generated_name, pairs, register


def _secrets(account: str, region: str) -> Any:
    return backend("secretsmanager", account, region)


def _generated(backend: Any, spec: dict[str, Any]) -> str:
    """GenerateSecretString: a random password, alone or put under GenerateStringKey in the template's
    JSON (both or neither must be given, as the service says)."""
    template, key = spec.get("SecretStringTemplate"), spec.get("GenerateStringKey")
    if bool(template) != bool(key):
        raise Invalid("SecretStringTemplate and GenerateStringKey must be specified together")

    def flag(name: str) -> bool:
        return str(spec.get(name, False)).lower() == "true"

    password = json.loads(
        backend.get_random_password(
            password_length=int(spec.get("PasswordLength", 32)),
            exclude_characters=spec.get("ExcludeCharacters", ""),
            exclude_numbers=flag("ExcludeNumbers"),
            exclude_punctuation=flag("ExcludePunctuation"),
            exclude_uppercase=flag("ExcludeUppercase"),
            exclude_lowercase=flag("ExcludeLowercase"),
            include_space=flag("IncludeSpace"),
            require_each_included_type=spec.get("RequireEachIncludedType", True),
        )
    )["RandomPassword"]
    if not template:
        return str(password)
    return json.dumps({**json.loads(template), key: password})


@register
class Secret(Model):
    """AWS::SecretsManager::Secret."""

    kind = "AWS::SecretsManager::Secret"
    in_place = frozenset(
        {"Description", "SecretString", "GenerateSecretString", "KmsKeyId", "ReplicaRegions"}
    )
    taggable = True

    def _secret(self) -> Any:
        return _secrets(self.account_id, self.region_name).secrets[self.name]

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        backend = _secrets(self.account_id, self.region_name)
        if props.get("SecretString") is not None and props.get("GenerateSecretString") is not None:
            raise Invalid("You can't specify both SecretString and GenerateSecretString")
        self.name = str(props.get("Name") or generated_name(self.kind, stack_name, self.logical_resource_id))
        backend.create_secret(
            name=self.name,
            secret_string=self._value(props),
            secret_binary=None,
            description=props.get("Description"),
            tags=None,
            kms_key_id=props.get("KmsKeyId"),
            client_request_token=None,
            replica_regions=props.get("ReplicaRegions") or [],
            force_overwrite=False,
        )
        self.physical_resource_id = self._secret().arn

    def _value(self, props: dict[str, Any]) -> str:
        given = props.get("SecretString")
        if given is not None:
            return str(given)
        return _generated(
            _secrets(self.account_id, self.region_name), props.get("GenerateSecretString") or {}
        )

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        backend = _secrets(self.account_id, self.region_name)
        secret = self._secret()
        if names & {"SecretString", "GenerateSecretString"}:
            backend.update_secret(
                self.name,
                secret_string=self._value(props),
                kms_key_id=props.get("KmsKeyId"),
                client_request_token=str(uuid.uuid4()),  # a new version (moto refuses an update without one)
            )
        if "Description" in names:
            secret.description = props.get("Description")
        if "KmsKeyId" in names:
            secret.kms_key_id = props.get("KmsKeyId")

    def remove(self) -> None:
        # the resource handler deletes at once (ForceDeleteWithoutRecovery): a new stack can take the name
        backend = _secrets(self.account_id, self.region_name)
        if self.name in backend.secrets:
            backend.delete_secret(self.name, recovery_window_in_days=None, force_delete_without_recovery=True)

    def read(self) -> dict[str, Any] | None:
        secret = _secrets(self.account_id, self.region_name).secrets.get(self.name)
        if secret is None or secret.is_deleted():
            return None
        # SecretString and GenerateSecretString are write-only in the provider schema: never compared
        return {"Name": secret.name, "Description": secret.description, "KmsKeyId": secret.kms_key_id}

    def attribute(self, name: str) -> Any:
        if name == "Id":
            return self.physical_resource_id
        raise KeyError(name)

    def live_tags(self) -> dict[str, str]:
        return pairs(self._secret().tags or [])

    def write_tags(self, tags: dict[str, str]) -> None:
        self._secret().tags = [{"Key": k, "Value": v} for k, v in tags.items()] or None


def _cognito(account: str, region: str) -> Any:
    return backend("cognitoidp", account, region)


@register
class UserPool(Model):
    """AWS::Cognito::UserPool (moto has no CloudFormation model of it; its clients need one): its properties
    are CreateUserPool's by the same names, but for UserPoolName (PoolName)."""

    kind = "AWS::Cognito::UserPool"
    in_place = frozenset(
        {
            "UserPoolName",
            "Policies",
            "LambdaConfig",
            "AutoVerifiedAttributes",
            "SmsVerificationMessage",
            "EmailVerificationMessage",
            "EmailVerificationSubject",
            "VerificationMessageTemplate",
            "SmsAuthenticationMessage",
            "MfaConfiguration",
            "DeviceConfiguration",
            "EmailConfiguration",
            "SmsConfiguration",
            "AdminCreateUserConfig",
            "UserPoolAddOns",
            "AccountRecoverySetting",
            "DeletionProtection",
            "UserAttributeUpdateSettings",
            "EnabledMfas",
            "UserPoolTier",
            "UsernameConfiguration",
            "AliasAttributes",
            "UsernameAttributes",
            "EmailAuthenticationMessage",
            "EmailAuthenticationSubject",
        }
    )
    taggable = True

    def _pool(self) -> Any:
        return _cognito(self.account_id, self.region_name).describe_user_pool(self.physical_resource_id)

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        name = str(
            props.get("UserPoolName") or generated_name(self.kind, stack_name, self.logical_resource_id)
        )
        config = {k: v for k, v in props.items() if k not in ("UserPoolName", "UserPoolTags")}
        pool = _cognito(self.account_id, self.region_name).create_user_pool(name, config)
        self.physical_resource_id = pool.id

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        pool = self._pool()
        if "UserPoolName" in names and props.get("UserPoolName"):
            pool.name = props["UserPoolName"]
        for name in names - {"UserPoolName"}:
            if props.get(name) is None:
                pool.extended_config.pop(name, None)
            else:
                pool.extended_config[name] = props[name]

    def remove(self) -> None:
        _cognito(self.account_id, self.region_name).user_pools.pop(self.physical_resource_id, None)

    def read(self) -> dict[str, Any] | None:
        pool = _cognito(self.account_id, self.region_name).user_pools.get(self.physical_resource_id)
        if pool is None:
            return None
        return {
            "UserPoolName": pool.name,
            **{n: pool.extended_config.get(n) for n in self.in_place - {"UserPoolName"}},
        }

    def attribute(self, name: str) -> Any:
        pool_id, host = self.physical_resource_id, f"cognito-idp.{self.region_name}.amazonaws.com"
        values = {
            "Arn": self._pool().arn,
            "UserPoolId": pool_id,
            "ProviderName": f"{host}/{pool_id}",
            "ProviderURL": f"https://{host}/{pool_id}",
        }
        return values[name]

    def live_tags(self) -> dict[str, str]:
        return dict(self._pool().extended_config.get("UserPoolTags") or {})

    def write_tags(self, tags: dict[str, str]) -> None:
        self._pool().extended_config["UserPoolTags"] = dict(tags)


@register
class UserPoolClient(Model):
    """AWS::Cognito::UserPoolClient: its properties are the API's (CreateUserPoolClient) by the same names."""

    kind = "AWS::Cognito::UserPoolClient"
    in_place = frozenset(
        {
            "ClientName",
            "ExplicitAuthFlows",
            "CallbackURLs",
            "LogoutURLs",
            "DefaultRedirectURI",
            "AllowedOAuthFlows",
            "AllowedOAuthScopes",
            "AllowedOAuthFlowsUserPoolClient",
            "SupportedIdentityProviders",
            "RefreshTokenValidity",
            "AccessTokenValidity",
            "IdTokenValidity",
            "TokenValidityUnits",
            "ReadAttributes",
            "WriteAttributes",
            "PreventUserExistenceErrors",
            "EnableTokenRevocation",
            "AuthSessionValidity",
            "AnalyticsConfiguration",
            "EnablePropagateAdditionalUserContextData",
            "RefreshTokenRotation",
        }
    )

    def _client(self) -> Any:
        return _cognito(self.account_id, self.region_name).describe_user_pool_client(
            self.pool, self.physical_resource_id
        )

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        self.pool = str(props["UserPoolId"])
        generate = str(props.get("GenerateSecret", False)).lower() == "true"
        client = _cognito(self.account_id, self.region_name).create_user_pool_client(
            self.pool, generate, self._config(props)
        )
        self.physical_resource_id = client.id

    def _config(self, props: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in props.items() if k in self.in_place}

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        # UpdateUserPoolClient resets what it is not given, as CloudFormation's update does
        self._client().extended_config = self._config(props)

    def remove(self) -> None:
        pool = _cognito(self.account_id, self.region_name).user_pools.get(self.pool)
        if pool is not None:
            pool.clients.pop(self.physical_resource_id, None)

    def read(self) -> dict[str, Any] | None:
        pool = _cognito(self.account_id, self.region_name).user_pools.get(self.pool)
        client = pool.clients.get(self.physical_resource_id) if pool is not None else None
        if client is None:
            return None
        return {
            "UserPoolId": self.pool,
            "GenerateSecret": client.generate_secret,
            **{name: client.extended_config.get(name) for name in self.in_place},
        }

    def attribute(self, name: str) -> Any:
        client = self._client()
        if name == "ClientId":
            return client.id
        if name == "ClientSecret" and client.generate_secret:
            return client.secret
        if name == "Name":
            return client.extended_config.get("ClientName")
        raise KeyError(name)


def _iot(account: str, region: str) -> Any:
    return backend("iot", account, region)


@register
class PolicyPrincipalAttachment(Model):
    """AWS::IoT::PolicyPrincipalAttachment: an IoT policy attached to a certificate (or Cognito identity)."""

    kind = "AWS::IoT::PolicyPrincipalAttachment"

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        self.policy, self.principal = str(props["PolicyName"]), str(props["Principal"])
        _iot(self.account_id, self.region_name).attach_principal_policy(self.policy, self.principal)
        self.physical_resource_id = generated_name(self.kind, stack_name, self.logical_resource_id)

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        """Both properties are create-only: nothing changes in place."""

    def remove(self) -> None:
        _iot(self.account_id, self.region_name).principal_policies.pop((self.principal, self.policy), None)

    def read(self) -> dict[str, Any] | None:
        if (self.principal, self.policy) not in _iot(self.account_id, self.region_name).principal_policies:
            return None
        return {"PolicyName": self.policy, "Principal": self.principal}
