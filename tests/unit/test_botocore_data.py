"""botocore's data files through formwright's caching loader (cloud/botocore_data.py): the clients it
makes answer as plain botocore's do, cold and warm; a changed data file or a model dropped in a data path
is seen at once; a corrupt, unreadable or unwritable cache is passed over; concurrent writers leave whole
entries. Real botocore and its real data files throughout; the fake service is a model in a temporary
AWS_DATA_PATH folder, botocore's documented way for users to add models (botocore/loaders.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import botocore.loaders
import botocore.session
import pytest
from botocore import xform_name
from botocore.exceptions import UnknownServiceError
from botocore.session import Session
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from formwright.cloud import botocore_data
from formwright.cloud.botocore_data import CachingLoader, DiskCache
from formwright.cloud.session import Target

SERVICES = ["cloudformation", "sts", "sqs", "sns", "lambda", "iam", "dynamodb", "ssm", "kms", "logs",
            "events", "s3"]
REGIONS = ["us-east-1", "eu-west-1", "ap-southeast-2", "cn-north-1", "us-gov-west-1"]


def fake_model(operations: list[str], api_version: str = "2020-01-01") -> dict:
    """A minimal JSON-protocol service model named fwfake."""
    return {
        "version": "2.0",
        "metadata": {"apiVersion": api_version, "endpointPrefix": "fwfake", "protocol": "json",
                     "jsonVersion": "1.1", "serviceId": "FwFake", "signatureVersion": "v4",
                     "targetPrefix": "FwFake", "uid": f"fwfake-{api_version}"},
        "operations": {name: {"name": name, "http": {"method": "POST", "requestUri": "/"},
                              "input": {"shape": "Empty"}, "output": {"shape": "Empty"}}
                       for name in operations},
        "shapes": {"Empty": {"type": "structure", "members": {}}},
    }


def write_model(models: Path, operations: list[str], api_version: str = "2020-01-01") -> Path:
    path = models / "fwfake" / api_version / "service-2.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(fake_model(operations, api_version)))
    return path


def fresh(folder: Path, *data_paths: Path) -> CachingLoader:
    """A new loader (empty in memory) over the cache `folder`."""
    return CachingLoader(DiskCache(folder), [str(path) for path in data_paths] or None)


def session(loader: object | None = None) -> botocore.session.Session:
    core = botocore.session.Session()
    core.set_credentials("a", "b")  # never the credential chain (no instance metadata asked)
    if loader is not None:
        core.register_component("data_loader", loader)
    return core


def operations(loader: CachingLoader) -> list[str]:
    client = session(loader).create_client("fwfake", region_name="us-east-1")
    return list(client.meta.service_model.operation_names)


def same_client(cached: botocore.session.Session, service: str, region: str) -> None:
    """The clients of `cached` and of a new plain botocore session have the same model (in the same
    order), endpoint and partition. A new session with a loader of its own each time: botocore changes the
    models its loader keeps when an operation is first called (handlers.py's
    `remove_bucket_from_url_paths_from_model` moves an S3 operation's `{Bucket}` from `requestUri` to
    `authPath`), and tests/conftest.py gives every plain session of the test process one loader, which
    another test's S3 calls may have changed so."""
    plain = session(botocore.loaders.create_loader())
    ours = cached.create_client(service, region_name=region)
    theirs = plain.create_client(service, region_name=region)
    our_loader, their_loader = cached.get_component("data_loader"), plain.get_component("data_loader")
    ours_model = our_loader.load_service_model(service, "service-2")
    theirs_model = their_loader.load_service_model(service, "service-2")
    assert json.dumps(ours_model) == json.dumps(theirs_model), first_difference(ours_model, theirs_model)
    assert ours.meta.service_model.operation_names == theirs.meta.service_model.operation_names
    assert list(ours.meta.service_model.shape_names) == list(theirs.meta.service_model.shape_names)
    assert (ours.meta.endpoint_url, ours.meta.partition, ours.meta.region_name) == \
        (theirs.meta.endpoint_url, theirs.meta.partition, theirs.meta.region_name)
    assert first_request_url(ours) == first_request_url(theirs)
    for partition in ("aws", "aws-cn", "aws-us-gov"):
        regions = cached.get_available_regions(service, partition)
        assert regions == plain.get_available_regions(service, partition)


def first_difference(ours: object, theirs: object, path: str = "") -> str:
    """Where two decoded JSON documents first differ (a key's value, a key order, a list item), for a
    failure's message."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        if list(ours) != list(theirs):
            return f"{path or '/'}: keys {list(ours)[:12]} (ours) vs {list(theirs)[:12]} (botocore's)"
        for key in ours:
            if json.dumps(ours[key]) != json.dumps(theirs[key]):
                return first_difference(ours[key], theirs[key], f"{path}/{key}")
    if isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
        for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            if json.dumps(a) != json.dumps(b):
                return first_difference(a, b, f"{path}[{i}]")
    return f"{path or '/'}: {json.dumps(ours)[:300]} (ours) vs {json.dumps(theirs)[:300]} (botocore's)"


class _Stop(Exception):
    """Raised by a before-send handler: the request is resolved, signed and not sent."""


def first_request_url(client: object) -> str:
    """The URL of the client's first operation that needs no parameters, as botocore would send it (its
    endpoint rule set evaluated for that operation); botocore's `before-send` event stops the sending."""
    model = client.meta.service_model  # type: ignore[attr-defined]
    name = next(op for op in model.operation_names
                if not (model.operation_model(op).input_shape and
                        model.operation_model(op).input_shape.required_members))
    urls: list[str] = []

    def stop(request, **_):
        urls.append(request.url)
        raise _Stop

    client.meta.events.register("before-send", stop)  # type: ignore[attr-defined]
    with pytest.raises(_Stop):
        getattr(client, xform_name(name))()
    return urls[0]


@pytest.fixture(scope="module")
def shared_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("botocore-cache")


@pytest.fixture(scope="module")
def plain() -> botocore.session.Session:
    """One plain botocore session for the module (its loader keeps what it decoded)."""
    return session()


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(SERVICES), st.sampled_from(REGIONS))
def test_a_cached_client_is_botocores_client_cold_and_warm(shared_folder: Path, plain: Session, service: str,
                                                          region: str) -> None:
    same_client(session(fresh(shared_folder)), service, region)  # cold the first time for a service
    same_client(session(fresh(shared_folder)), service, region)  # warm: from the disk cache
    assert session(fresh(shared_folder)).get_available_services() == plain.get_available_services()


def test_a_warm_load_reads_the_cache_not_the_json(tmp_path: Path) -> None:
    # sys.audit's "open" event names each file Python opens (an audit hook stays for the process: cheap)
    opened: list[str] = []
    watching = False

    def hook(event: str, args: tuple) -> None:
        if watching and event == "open":
            opened.append(str(args[0]))

    sys.addaudithook(hook)
    fresh(tmp_path).load_service_model("cloudformation", "service-2")
    watching = True
    fresh(tmp_path).load_service_model("cloudformation", "service-2")
    watching = False
    assert not [path for path in opened if ".json" in path], opened
    assert [path for path in opened if path.startswith(str(tmp_path))], opened


def test_a_changed_data_file_is_read_again(tmp_path: Path) -> None:
    models, cache = tmp_path / "models", tmp_path / "cache"
    path = write_model(models, ["Ping"])
    assert operations(fresh(cache, models)) == ["Ping"]  # cold: written to the cache
    assert operations(fresh(cache, models)) == ["Ping"]  # warm
    mtime = path.stat().st_mtime_ns

    # changed in place (same inode), same size, a later mtime
    with path.open("r+") as out:
        out.write(path.read_text().replace("Ping", "Pong"))
    os.utime(path, ns=(mtime + 10**9, mtime + 10**9))
    assert operations(fresh(cache, models)) == ["Pong"]

    # changed in place to another size, the mtime set back to what it was
    path.write_text(json.dumps(fake_model(["Pings"])))
    os.utime(path, ns=(mtime + 10**9, mtime + 10**9))
    assert operations(fresh(cache, models)) == ["Pings"]

    # replaced by another file of the same size and mtime (a new inode, as an editor's or pip's write)
    other = tmp_path / "other.json"
    other.write_text(json.dumps(fake_model(["Pongs"])))
    os.utime(other, ns=(mtime + 10**9, mtime + 10**9))
    os.replace(other, path)
    assert operations(fresh(cache, models)) == ["Pongs"]


def test_a_model_dropped_in_a_data_path_is_found(tmp_path: Path) -> None:
    models, cache = tmp_path / "models", tmp_path / "cache"
    (models / "fwfake" / "2020-01-01").mkdir(parents=True)
    (models / "fwfake" / "2020-01-01" / "paginators-1.json").write_text('{"pagination": {}}')
    loader = fresh(cache, models)
    assert "fwfake" not in loader.list_available_services("service-2")
    assert "fwfake" in loader.list_available_services("paginators-1")
    with pytest.raises(UnknownServiceError):
        session(fresh(cache, models)).create_client("fwfake", region_name="us-east-1")  # warm: still absent

    write_model(models, ["Ping"])  # beside the paginators: the folder's names change, not its parents'
    assert operations(fresh(cache, models)) == ["Ping"]
    assert operations(fresh(cache, models)) == ["Ping"]  # warm

    write_model(models, ["Ping", "Pong"], api_version="2021-01-01")  # a newer API version is used
    assert operations(fresh(cache, models)) == ["Ping", "Pong"]

    for version in ("2020-01-01", "2021-01-01"):
        (models / "fwfake" / version / "service-2.json").unlink()
    assert "fwfake" not in fresh(cache, models).list_available_services("service-2")


CORRUPTIONS = {
    "garbage": lambda blob: b"not a cache entry at all",
    "empty": lambda blob: b"",
    "truncated": lambda blob: blob[: len(blob) // 2],
    "one byte flipped": lambda blob: blob[:-100] + bytes([blob[-100] ^ 0x20]) + blob[-99:],
    "a valid entry for another key": None,
}


@pytest.mark.parametrize("corruption", CORRUPTIONS)
def test_a_corrupt_cache_is_passed_over(tmp_path: Path, plain: Session, corruption: str) -> None:
    same_client(session(fresh(tmp_path)), "cloudformation", "us-east-1")
    entries = sorted(tmp_path.iterdir())
    blobs = [entry.read_bytes() for entry in entries]
    assert len(entries) > 1
    spoil = CORRUPTIONS[corruption]
    for i, entry in enumerate(entries):
        entry.write_bytes(spoil(blobs[i]) if spoil else blobs[i - 1])  # or another entry's whole content
    same_client(session(fresh(tmp_path)), "cloudformation", "us-east-1")
    same_client(session(fresh(tmp_path)), "cloudformation", "us-east-1")  # rewritten whole


def test_an_unwritable_or_unreadable_cache_is_passed_over(tmp_path: Path, plain: Session) -> None:
    (tmp_path / "a-file").write_text("")
    same_client(session(fresh(tmp_path / "a-file" / "cache")), "sqs", "eu-west-1")  # cannot be made

    readable = tmp_path / "cache"
    same_client(session(fresh(readable)), "sqs", "eu-west-1")
    for entry in readable.iterdir():  # each entry now a folder: neither read nor replaced
        entry.unlink()
        entry.mkdir()
    same_client(session(fresh(readable)), "sqs", "eu-west-1")
    assert all(entry.is_dir() for entry in readable.iterdir())


WRITER = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    import botocore.loaders
    from formwright.cloud.botocore_data import CachingLoader, DiskCache

    folder, me = Path(sys.argv[1]), int(sys.argv[2])
    cache = DiskCache(folder)
    blob = [str(me) * 1000] * 300
    for i in range(150):
        cache.put(("race",), ("key",), {"writer": me, "blob": blob})
        got = cache.get(("race",), ("key",))
        assert got is None or got["blob"] == [str(got["writer"]) * 1000] * 300, "a torn entry"
    ours = CachingLoader(DiskCache(folder)).load_service_model("cloudformation", "service-2")
    theirs = botocore.loaders.Loader().load_service_model("cloudformation", "service-2")
    assert json.dumps(ours) == json.dumps(theirs)
    print("ok")
""")


def test_two_processes_writing_at_once_leave_whole_entries(tmp_path: Path, plain: Session) -> None:
    children = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), str(me)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for me in (1, 2)]
    for child in children:
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0 and out.strip() == "ok", err
    assert not [entry for entry in tmp_path.iterdir() if entry.name.startswith(".tmp-")]
    got = DiskCache(tmp_path).get(("race",), ("key",))
    assert got is not None and got["writer"] in (1, 2)
    same_client(session(fresh(tmp_path)), "cloudformation", "us-east-1")


def test_sessions_share_one_loader_per_data_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORMWRIGHT_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AWS_DATA_PATH", raising=False)
    first, second = session(), session()
    botocore_data.install(first)
    botocore_data.install(second)
    assert first.get_component("data_loader") is second.get_component("data_loader")
    assert isinstance(first.get_component("data_loader"), CachingLoader)

    write_model(tmp_path / "models", ["Ping"])
    monkeypatch.setenv("AWS_DATA_PATH", str(tmp_path / "models"))  # botocore's own variable for it
    third = session()
    botocore_data.install(third)
    assert third.get_component("data_loader") is not first.get_component("data_loader")
    fake = third.create_client("fwfake", region_name="us-east-1")
    assert fake.meta.service_model.operation_names == ["Ping"]
    assert (tmp_path / "home" / "cache" / "botocore").is_dir()


def test_a_target_and_its_assumed_role_use_the_shared_loader(cloud: Target) -> None:
    role = Target("local", "us-east-1", cloud.endpoint, role_arn="arn:aws:iam::222222222222:role/deployer")
    loader = cloud.core().get_component("data_loader")
    assert isinstance(loader, CachingLoader)
    assert role.core().get_component("data_loader") is loader
    assert role.client("sts").get_caller_identity()["Account"] == "222222222222"


def test_boto3_sessions_over_the_shared_loader_add_their_path_once(tmp_path: Path) -> None:
    import boto3

    loader = fresh(tmp_path)
    before = list(loader.search_paths)
    for _ in range(3):
        boto3.session.Session(botocore_session=session(loader))  # each appends boto3's data folder
    assert loader.search_paths[:len(before)] == before and len(loader.search_paths) == len(before) + 1
    assert "s3" in loader.list_available_services("resources-1")  # boto3's resource models, found


def test_without_a_home_folder_botocores_own_loader_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FORMWRIGHT_HOME", raising=False)
    # the one stand-in: a user with no HOME and no passwd entry cannot be made here; Python 3.11's
    # Path.home() then gives "~" unexpanded (os.path.expanduser's documented fallback)
    monkeypatch.setattr("pathlib.Path.home", lambda: Path("~"))
    loader = botocore_data.shared_loader(None)
    assert type(loader) is botocore.loaders.Loader


def test_threads_of_sessions_sharing_the_loader_get_botocores_models(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    loader = fresh(tmp_path)
    plain = session().get_component("data_loader")
    # autoscaling's paginators have sdk-extras, which botocore merges into the model it has cached
    expected = json.dumps(plain.load_service_model("autoscaling", "paginators-1"))

    def one(_: int) -> str:
        client = session(loader).create_client("autoscaling", region_name="us-east-1")
        client.get_paginator("describe_auto_scaling_groups")
        return json.dumps(loader.load_service_model("autoscaling", "paginators-1"))

    with ThreadPoolExecutor(8) as pool:
        assert set(pool.map(one, range(8))) == {expected}
