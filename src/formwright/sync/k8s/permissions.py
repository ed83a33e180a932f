"""The operator's Kubernetes permissions, checked once at start-up so that a missing verb is named.

Without this, kopf meets a 403 deep inside a watch or a patch and keeps retrying with a warning, and the
object just never becomes Ready. Each permission the operator uses is asked of the API server with a
SelfSubjectAccessReview (authorization.k8s.io/v1, which every authenticated user may create), in the
scope the operator serves (all namespaces, or each `--namespace`), and a missing one stops start-up
with its verb, resource and scope. deploy/k8s grants exactly this list.
"""

from __future__ import annotations

import json
import ssl
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from formwright.sync.objects import STACK_API_GROUP, STACK_PLURAL

SOURCE_GROUP = "source.toolkit.fluxcd.io"


@dataclass(frozen=True)
class Permission:
    """One verb on one resource (group "" is the core API)."""

    group: str
    resource: str
    verb: str
    subresource: str = ""

    def __str__(self) -> str:
        name = f"{self.resource}/{self.subresource}" if self.subresource else self.resource
        return f"{self.verb} {name}" + (f" ({self.group})" if self.group else "")


def required(clusterwide: bool) -> list[Permission]:
    """What the operator does: watch its objects and their sources, patch objects (finalizer) and their
    status, post events, and keep its peering record."""
    perms = [Permission(STACK_API_GROUP, STACK_PLURAL, verb) for verb in ("list", "watch", "patch")]
    perms.append(Permission(STACK_API_GROUP, STACK_PLURAL, "patch", "status"))
    perms += [Permission(SOURCE_GROUP, plural, verb)
              for plural in ("gitrepositories", "buckets", "ocirepositories") for verb in ("list", "watch")]
    perms.append(Permission("", "events", "create"))
    if clusterwide:  # kopf watches CRDs to serve source kinds installed after it started
        perms += [Permission("apiextensions.k8s.io", "customresourcedefinitions", verb)
                  for verb in ("list", "watch")]
    peering = "clusterkopfpeerings" if clusterwide else "kopfpeerings"
    perms += [Permission("kopf.dev", peering, verb) for verb in ("list", "watch", "patch", "create")]
    return perms


def scope_from_argv(argv: Sequence[str]) -> list[str | None]:
    """The namespaces `kopf run` serves from its command line: [None] for all of them."""
    namespaces: list[str | None] = []
    args = list(argv)
    for i, arg in enumerate(args):
        if arg in ("-A", "--all-namespaces"):
            return [None]
        if arg in ("-n", "--namespace") and i + 1 < len(args):
            namespaces.append(args[i + 1])
        elif arg.startswith("--namespace="):
            namespaces.append(arg.split("=", 1)[1])
    return namespaces or [None]


def connection(settings: Any) -> Any:
    """kopf's own view of the credentials: the pod's service account, else the kubeconfig."""
    import kopf

    found = (kopf.login_with_service_account(settings=settings)
             or kopf.login_with_kubeconfig(settings=settings))
    if found is None:
        raise PermissionError("no Kubernetes credentials (neither a service account nor a kubeconfig)")
    return found


def _call(conn: Any, method: str, path: str, body: dict) -> dict:
    """One JSON call to the API server with kopf's credentials; raises urllib's HTTPError on refusal."""
    headers = {"Content-Type": "application/json"}
    if conn.token:
        headers["Authorization"] = f"{conn.scheme or 'Bearer'} {conn.token}"
    context = ssl.create_default_context()
    if conn.insecure:
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    elif conn.ca_path:
        context.load_verify_locations(cafile=str(conn.ca_path))
    elif conn.ca_data:
        data = conn.ca_data.decode() if isinstance(conn.ca_data, bytes) else conn.ca_data
        context.load_verify_locations(cadata=data)
    if conn.certificate_path and conn.private_key_path:
        context.load_cert_chain(str(conn.certificate_path), str(conn.private_key_path))
    request = urllib.request.Request(conn.server.rstrip("/") + path, data=json.dumps(body).encode(),
                                     headers=headers, method=method)
    with urllib.request.urlopen(request, timeout=30, context=context) as reply:  # noqa: S310 - the API server
        return json.loads(reply.read() or b"{}")


def _review(conn: Any, perm: Permission, namespace: str | None) -> bool:
    """Ask the API server whether this identity may do `perm` in `namespace` (None: cluster-wide)."""
    attributes: dict[str, str] = {"group": perm.group, "resource": perm.resource, "verb": perm.verb}
    if perm.subresource:
        attributes["subresource"] = perm.subresource
    if namespace:
        attributes["namespace"] = namespace
    body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": attributes}}
    answer = _call(conn, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", body)
    return bool(answer.get("status", {}).get("allowed"))


def ensure_peering(conn: Any, name: str, namespaces: Sequence[str | None]) -> None:
    """Create the replicas' peering record when it is missing (kopf only reads and patches it), so that one
    `kubectl apply -k` installs everything: a record and its CRD in the same apply would race."""
    targets: list[tuple[str, str, str | None]]
    if namespaces == [None]:
        targets = [("/apis/kopf.dev/v1/clusterkopfpeerings", "ClusterKopfPeering", None)]
    else:
        targets = [(f"/apis/kopf.dev/v1/namespaces/{ns}/kopfpeerings", "KopfPeering", ns)
                   for ns in namespaces]
    for path, kind, namespace in targets:
        meta = {"name": name, **({"namespace": namespace} if namespace else {})}
        try:
            _call(conn, "POST", path, {"apiVersion": "kopf.dev/v1", "kind": kind, "metadata": meta})
        except urllib.error.HTTPError as err:
            if err.code != 409:  # 409: it exists already
                raise PermissionError(f"could not create the peering record {kind} {name}: HTTP {err.code}") \
                    from None


def missing(conn: Any, namespaces: Sequence[str | None]) -> list[str]:
    """Each permission this identity lacks, as "verb resource (group) in SCOPE"."""
    clusterwide = namespaces == [None]
    gaps = []
    for namespace in namespaces:
        scope = f"namespace {namespace}" if namespace else "all namespaces"
        gaps += [f"{perm} in {scope}" for perm in required(clusterwide) if not _review(conn, perm, namespace)]
    return gaps


def check(conn: Any, argv: Sequence[str] | None = None) -> list[str | None]:
    """Stop start-up, naming every missing permission, when this identity lacks any the operator uses;
    the namespaces served (None: all)."""
    namespaces = scope_from_argv(sys.argv if argv is None else argv)
    try:
        gaps = missing(conn, namespaces)
    except (OSError, urllib.error.URLError, PermissionError) as err:
        raise PermissionError(f"could not check the operator's permissions: {err}") from None
    if gaps:
        raise PermissionError("the operator's Kubernetes identity lacks " + "; ".join(gaps)
                              + " (grant them in its Role or ClusterRole, as deploy/k8s/overlays/*/rbac.yaml"
                                " do)")
    return namespaces
