"""The helpers' and the signals' parts that need no instance (fast): cfn-init's config sets, mustache and
package names, cfn-hup's config, the handle URLs and waits of the emulator.

Where the behaviour comes from: "AWS::CloudFormation::Init" (configSets, `{"ConfigSet": name}`, the `config`
key when there are none), pystache's rendering (HTML-escaping `{{x}}`), "CreationPolicy attribute" (Timeout
as an ISO 8601 duration, at most 12 hours), "cfn-hup" (its [main] and hook sections).
"""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from formwright.cloud.emulator import checks, signals
from formwright.cloud.instances import helpers
from formwright.cloud.instances.cfn_bootstrap import cloud, hup, init, mustache, sections


def test_config_sets_expand_in_order_with_included_sets() -> None:
    metadata = {"configSets": {"all": [{"ConfigSet": "base"}, "serve"], "base": ["setup"],
                               "default": [{"ConfigSet": "all"}]},
                "setup": {}, "serve": {}}
    assert init.configs(metadata, "all") == ["setup", "serve"]
    assert init.configs(metadata, None) == ["setup", "serve"]  # `default` when none is given
    assert init.configs(metadata, "base,all") == ["setup", "setup", "serve"]
    assert init.configs({"config": {}}, None) == ["config"]
    with pytest.raises(sections.InitError, match="configSet missing not found"):
        init.configs(metadata, "missing")


def test_mustache_escapes_double_braces_and_not_triple_ones() -> None:
    context = {"name": "<b>&", "site": {"port": 80}, "items": [{"n": 1}, {"n": 2}], "off": False}
    template = "{{name}}|{{{name}}}|{{& name}}|{{site.port}}|{{#items}}[{{n}}]{{/items}}|{{^off}}no{{/off}}"
    assert mustache.render(template, context) == "&lt;b&gt;&amp;|<b>&|<b>&|80|[1][2]|no"


@given(st.text(alphabet=st.characters(blacklist_characters="{}"), max_size=40))
def test_text_without_tags_renders_as_itself(text: str) -> None:
    assert mustache.render(text, {"x": 1}) == text


def test_yum_names_install_as_their_debian_packages_and_rpm_is_refused(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    config = tmp_path / "cloud.json"
    config.write_text(json.dumps({"yum_to_apt": helpers.YUM_TO_APT}))
    monkeypatch.setenv("FORMWRIGHT_CLOUD_CONFIG", str(config))
    wanted: list[dict] = []
    monkeypatch.setattr(sections, "_apt", lambda names, log: wanted.append(names) or list(names))
    sections.packages({"yum": {"httpd": [], "git": []}, "apt": {"curl": ["7.88"]}}, [])
    assert wanted == [{"apache2": [], "git": [], "curl": ["7.88"]}]  # git: Debian's package of that name
    with pytest.raises(sections.InitError, match="rpm packages cannot be installed on this image"):
        sections.packages({"rpm": {"epel": "http://example.com/epel.rpm"}}, [])


def test_s3_urls_are_read_from_the_local_cloud(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    config = tmp_path / "cloud.json"
    config.write_text(json.dumps({"url": "http://10.213.0.1:4000", "region": "eu-west-1"}))
    monkeypatch.setenv("FORMWRIGHT_CLOUD_CONFIG", str(config))
    assert cloud.local_url("https://b.s3.eu-west-1.amazonaws.com/k/x.txt") == "http://10.213.0.1:4000/b/k/x.txt"
    assert cloud.local_url("https://s3.amazonaws.com/b/k") == "http://10.213.0.1:4000/b/k"
    assert cloud.local_url("https://example.com/x") == "https://example.com/x"
    assert cloud.s3_bucket("https://b.s3.amazonaws.com/k") == "b"
    monkeypatch.setattr(sections, "AUTHENTICATION", {"Role": {"type": "S3", "buckets": ["b"]}})
    assert sections._signed("https://b.s3.amazonaws.com/k", None)
    assert not sections._signed("https://other.s3.amazonaws.com/k", None)
    assert sections._signed("https://other.s3.amazonaws.com/k", "Role")


def test_cfn_hup_reads_its_main_section_and_hooks(tmp_path: Path) -> None:
    (tmp_path / "hooks.d").mkdir()
    (tmp_path / "cfn-hup.conf").write_text("[main]\nstack=s\nregion=us-east-1\ninterval=5\n")
    (tmp_path / "hooks.d" / "a.conf").write_text(
        "[a]\ntriggers=post.update\npath=Resources.Web.Metadata.AWS::CloudFormation::Init\naction=true\n")
    main, hooks = hup.read_config(str(tmp_path))
    assert main["stack"] == "s" and hooks["a"]["path"].endswith("AWS::CloudFormation::Init")
    (tmp_path / "cfn-hup.conf").write_text("[main]\nregion=us-east-1\n")
    with pytest.raises(ValueError, match=r"\[main\] must set stack"):
        hup.read_config(str(tmp_path))


def test_the_helpers_are_put_into_a_root(tmp_path: Path) -> None:
    helpers.inject(tmp_path, "http://10.213.0.1:4000", "us-east-1")
    for name in ("cfn-init", "cfn-signal", "cfn-hup"):
        assert (tmp_path / "opt/aws/bin" / name).stat().st_mode & 0o111
        assert (tmp_path / "usr/local/bin" / name).readlink() == Path("/opt/aws/bin", name)
    assert (tmp_path / "opt/aws/lib/cfn_bootstrap/init.py").exists()
    assert json.loads((tmp_path / "opt/aws/etc/formwright-cloud.json").read_text())["region"] == "us-east-1"


def _stack() -> SimpleNamespace:
    return SimpleNamespace(region_name="us-east-1", status="CREATE_IN_PROGRESS",
                           stack_id="arn:aws:cloudformation:us-east-1:123456789012:stack/s/1-2")


def _put(url: str, body: dict, signature: str | None = None) -> str:
    path, _, query = url.split("://", 1)[1].partition("/")[2].partition("?")
    if signature is not None:
        query = query.rsplit("X-Amz-Signature=", 1)[0] + f"X-Amz-Signature={signature}"
    data = json.dumps(body).encode()
    answer: list[str] = []
    signals.receive({"PATH_INFO": "/" + path, "QUERY_STRING": query, "REQUEST_METHOD": "PUT",
                     "CONTENT_LENGTH": str(len(data)), "wsgi.input": io.BytesIO(data)},
                    lambda status, headers: answer.append(status))
    return answer[0]


def test_a_handle_url_takes_signed_signals_and_the_wait_condition_counts_them() -> None:
    stack = _stack()
    url = signals.handle_url(stack, "Handle", "http://10.213.0.1:4000")
    assert url.startswith("http://10.213.0.1:4000/cloudformation-waitcondition-us-east-1/")
    forged = _put(url, {"Status": "SUCCESS", "UniqueId": "a", "Data": "x"}, signature="0" * 64)
    assert forged.startswith("403")
    assert _put(url, {"Status": "MAYBE", "UniqueId": "a"}).startswith("400")
    assert _put(url, {"Status": "SUCCESS", "UniqueId": "a", "Data": "first"}) == "200 OK"
    assert _put(url, {"Status": "SUCCESS", "UniqueId": "b", "Data": "second"}) == "200 OK"
    props = {"Handle": url, "Timeout": "5", "Count": 2}
    assert signals.condition_id(stack.stack_id, props) == f"{stack.stack_id}/Handle"
    assert signals.await_wait_condition(stack.stack_id, "Done", props) == {"a": "first", "b": "second"}
    _put(url, {"Status": "FAILURE", "UniqueId": "c", "Reason": "broke"})
    with pytest.raises(signals.SignalFailure, match="WaitCondition received failed message: 'broke' for "
                                                    "uniqueId: c"):
        signals.await_wait_condition(stack.stack_id, "Done", {**props, "Count": 3})
    signals.forget(stack.stack_id)


def test_a_creation_policy_counts_distinct_signals_and_times_out_with_cloudformations_reason() -> None:
    stack = _stack()
    signals.expect(stack.stack_id, "Web")
    said: list[str] = []

    def later() -> None:
        signals.signal_resource(stack, "Web", "one", "SUCCESS")
        signals.signal_resource(stack, "Web", "one", "SUCCESS")  # the same UniqueId again: one signal

    threading.Thread(target=later).start()
    with pytest.raises(signals.SignalFailure,
                       match=r"^Failed to receive 1 resource signal\(s\) within the specified duration$"):
        policy = {"ResourceSignal": {"Count": 2, "Timeout": "PT1S"}}
        signals.await_creation_policy(stack.stack_id, "Web", policy, said.append)
    assert said == ["Received SUCCESS signal with UniqueId one"]
    with pytest.raises(Exception, match="is in CREATE_IN_PROGRESS state and cannot be signaled"):
        signals.signal_resource(stack, "Web", "late", "SUCCESS")  # it waits no more


def test_durations_are_iso_8601_and_at_most_twelve_hours() -> None:
    assert signals.seconds("PT1H2M3S", "Timeout") == 3723
    assert signals.seconds("PT15M", "Timeout") == 900
    with pytest.raises(signals.SignalFailure, match="not an ISO 8601 duration"):
        signals.seconds("15", "CreationPolicy Timeout")
    with pytest.raises(signals.SignalFailure, match="longer than the maximum of 12 hours"):
        signals.seconds("PT13H", "CreationPolicy Timeout")


def test_booting_lets_wait_conditions_and_instance_and_group_creation_policies_through() -> None:
    resources = {"Done": {"Type": "AWS::CloudFormation::WaitCondition"},
                 "Web": {"Type": "AWS::EC2::Instance", "CreationPolicy": {}}}
    implemented = {"AWS::EC2::Instance"}
    assert "cannot receive the cfn-signal" in checks.cannot_run({"Web": resources["Web"]}, implemented, set())
    assert checks.cannot_run(resources, implemented, set(), signals=True) is None
    group = {"G": {"Type": "AWS::AutoScaling::AutoScalingGroup", "CreationPolicy": {}}}  # instances signal
    assert checks.cannot_run(group, {"AWS::AutoScaling::AutoScalingGroup"}, set(), signals=True) is None
    assert "cannot receive the cfn-signal" in checks.cannot_run(group, {"AWS::AutoScaling::AutoScalingGroup"},
                                                                 set())
