"""Issue 24 item 3: plugins by entry point (resolvers, hooks, template handlers) and the built-in `http` and
`s3` template handlers, through the real CLI against the local cloud.

The plugins come from a fake installed distribution: a `*.dist-info` folder with `entry_points.txt` in a
folder on the child's PYTHONPATH, found by importlib.metadata's ordinary discovery (as
tests/macros/test_examples.py does). The example package in examples/plugin is installed into a fresh venv
by its README (tests/cli/test_example_readmes.py).
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

MODULE = """\
import json

class Good:
    secret = True
    def resolve(self, argument, context):
        return "plug-" + str(argument) + "-" + context["region"]

class NoResolve:
    def fetch(self, argument):
        return "x"

class Listing:
    secret = False
    def resolve(self, argument, context):
        return ["a", "b"]

class Handler:
    def handle(self, arguments, context):
        return json.dumps({"Resources": {"Q": {"Type": "AWS::SQS::Queue"}}})

def hook(context):
    with open("hooked.txt", "a") as out:
        out.write(context["event"] + " " + context["stack"]["name"] + "\\n")
"""
ENTRY_POINTS = """\
[formwright.resolvers]
good = plugmod:Good
broken = no_such_module_24:Thing
noresolve = plugmod:NoResolve
listing = plugmod:Listing

[formwright.template_handlers]
generated = plugmod:Handler
brokenhandler = plugmod:Missing

[formwright.hooks]
hk = plugmod:hook
"""
TEMPLATE = """\
Parameters:
  Value: {Type: String, NoEcho: true}
Resources:
  Q: {Type: AWS::SQS::Queue}
"""


@pytest.fixture
def plugin_env(tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "site"
    dist = site / "fake_plugins-1.2.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-plugins\nVersion: 1.2\n")
    (dist / "entry_points.txt").write_text(ENTRY_POINTS)
    (site / "plugmod.py").write_text(MODULE)
    return {"PYTHONPATH": str(site)}


def write(folder: Path, stacks: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "t.yaml").write_text(TEMPLATE)
    (folder / "formwright.yaml").write_text(f"name: pl\nregion: us-east-1\nstacks:\n{stacks}")
    return folder


def test_a_resolver_plugin_is_a_tag_and_its_secret_is_masked(tmp_path: Path, run_cli, cloud,
                                                            plugin_env) -> None:
    folder = write(tmp_path / "p", "  a:\n    template: t.yaml\n    parameters: {Value: !good thing}\n"
                                   "    hooks: {after_deploy: [{plugin: hk}]}\n")
    plan = run_cli("plan", str(folder), env=plugin_env)
    assert plan.code == 0, plan.err
    assert "Value <- good:thing" in plan.out
    done = run_cli("deploy", str(folder), "-y", env=plugin_env)
    assert done.code == 0, done.err
    assert "plug-thing-us-east-1" not in done.out + done.err + plan.out
    assert (folder / "hooked.txt").read_text() == "after_deploy a\n"  # the hook plugin ran


@pytest.mark.parametrize(("use", "message"), [
    ("template: t.yaml\n    parameters: {Value: !broken x}",
     "plugin broken does not load (distribution 'fake-plugins' 1.2, entry point "
     "formwright.resolvers:broken = no_such_module_24:Thing): ModuleNotFoundError"),
    ("template: t.yaml\n    parameters: {Value: !noresolve x}",
     "plugin noresolve has no method resolve(argument, context) (distribution 'fake-plugins' 1.2"),
    ("template: {type: brokenhandler}",
     "plugin brokenhandler does not load (distribution 'fake-plugins' 1.2, entry point "
     "formwright.template_handlers:brokenhandler = plugmod:Missing): AttributeError"),
    ("template: t.yaml\n    parameters: {Value: x}\n    hooks: {before_deploy: [{plugin: nohook}]}",
     "no plugin 'nohook'"),
])
def test_a_broken_plugin_is_one_line_naming_it_and_only_when_used(tmp_path: Path, run_cli, cloud, plugin_env,
                                                                 use: str, message: str) -> None:
    folder = write(tmp_path / "p", f"  a:\n    {use}\n")
    result = run_cli("deploy", str(folder), "-y", env=plugin_env)
    assert result.code == 2, result.err
    assert message in result.err and "Traceback" not in result.err
    assert cloud.client("cloudformation").describe_stacks()["Stacks"] == []
    # the same broken plugins installed, a project that does not use them deploys
    fine = write(tmp_path / "q", "  a:\n    template: t.yaml\n    parameters: {Value: !listing x}\n")
    assert run_cli("deploy", str(fine), "-y", env=plugin_env).code == 0


def test_a_template_handler_plugin_produces_the_template(tmp_path: Path, run_cli, cloud, plugin_env) -> None:
    folder = write(tmp_path / "p", "  a:\n    template: {type: generated}\n")
    done = run_cli("deploy", str(folder), "-y", "--output", "json", env=plugin_env)
    assert done.code == 0, done.err
    assert (folder / ".formwright" / "build" / "a" / "fetched" / "template.yaml").is_file()
    unknown = write(tmp_path / "q", "  a:\n    template: {type: nope}\n")
    result = run_cli("validate", str(unknown), "--no-lint")
    assert result.code == 2 and "unknown template handler type 'nope'" in result.err


class _Templates(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path == "/vpc.yaml":
            body = TEMPLATE.encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        else:
            self.send_error(404)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def template_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Templates)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_the_http_handler_fetches_the_template(tmp_path: Path, run_cli, cloud, template_server: str) -> None:
    folder = write(tmp_path / "p", f"  a:\n    template: {{type: http, url: {template_server}/vpc.yaml}}\n"
                                   "    parameters: {Value: v}\n")
    assert run_cli("validate", str(folder), "--no-lint").code == 0
    done = run_cli("deploy", str(folder), "-y")
    assert done.code == 0, done.err
    assert cloud.client("cloudformation").describe_stacks(StackName="pl-a")["Stacks"]
    missing = write(tmp_path / "q", f"  a:\n    template: {{type: http, url: {template_server}/gone.yaml}}\n")
    result = run_cli("plan", str(missing))
    assert result.code == 2 and "HTTP 404" in result.err and "formwright.yaml:5" in result.err
    bad = write(tmp_path / "r", "  a:\n    template: {type: http, url: ftp://x/y.yaml}\n")
    result = run_cli("validate", str(bad), "--no-lint")
    assert result.code == 2 and "needs an http(s) `url`" in result.err


def test_the_s3_handler_reads_the_template_with_the_stacks_credentials(tmp_path: Path, run_cli,
                                                                        cloud) -> None:
    s3 = cloud.client("s3")
    s3.create_bucket(Bucket="templates-24")
    s3.put_object(Bucket="templates-24", Key="app/q.yaml", Body=TEMPLATE.encode())
    folder = write(tmp_path / "p", "  a:\n    template: {type: s3, path: templates-24/app/q.yaml}\n"
                                   "    parameters: {Value: v}\n")
    done = run_cli("deploy", str(folder), "-y")
    assert done.code == 0, done.err
    gone = write(tmp_path / "q", "  a:\n    template: {type: s3, url: s3://templates-24/none.yaml}\n")
    result = run_cli("plan", str(gone))
    assert result.code == 2 and "s3://templates-24/none.yaml: NoSuchKey" in result.err
