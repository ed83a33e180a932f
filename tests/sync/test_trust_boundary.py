"""The trust boundary (issue 17, item 1): a synced repository never runs code on the reconciler host and
never reads outside its checkout. Real git repositories, the real reconciler, the local cloud.

Why: the Flux CloudFormation controller only reads the one template file from the source artifact
and hands it to CloudFormation (internal/controllers/cloudformationstack_controller.go,
loadCloudFormationTemplate);
whoever can push to the repository must not own the host.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import QUEUE, Repo, objects_yaml
from .harness import Harness

pytestmark = pytest.mark.cloud


def evil_template(marker: Path) -> str:
    """A template defining a macro whose inline Lambda code writes `marker`, and using it."""
    code = (f"import pathlib\ndef handler(event, context):\n"
            f"    pathlib.Path({str(marker)!r}).write_text('x')\n"
            "    return {'requestId': event['requestId'], 'status': 'success',\n"
            "            'fragment': event['fragment']}\n")
    return json.dumps({
        "Transform": "Evil",
        "Resources": {
            "Fn": {"Type": "AWS::Lambda::Function",
                   "Properties": {"Runtime": "python3.12", "Handler": "index.handler",
                                  "Role": "arn:aws:iam::123456789012:role/x", "Code": {"ZipFile": code}}},
            "Macro": {"Type": "AWS::CloudFormation::Macro",
                      "Properties": {"Name": "Evil", "FunctionName": {"Fn::GetAtt": ["Fn", "Arn"]}}},
            "Queue": {"Type": "AWS::SQS::Queue"},
        },
    })


def include_template(location: str) -> str:
    return json.dumps({"Resources": {"Fn::Transform": {"Name": "AWS::Include",
                                                       "Parameters": {"Location": location}}}})


def harness(tmp_path: Path, repo: Repo, cloud, stacks: list[dict], macros: Path | None = None) -> Harness:
    folder = tmp_path / "objects"
    folder.mkdir(exist_ok=True)
    (folder / "stacks.yaml").write_text(objects_yaml(repo.url, stacks))
    h = Harness(folder, cloud, tmp_path / "state")
    h.reconciler.macros_dir = macros
    return h


def test_inline_macro_code_never_runs_and_the_good_object_carries_on(tmp_path, repo, cloud):
    marker = tmp_path / "pwned"
    repo.commit({"evil.json": evil_template(marker), "template.yaml": QUEUE})
    h = harness(tmp_path, repo, cloud, [{"name": "evil", "templatePath": "evil.json"}, {"name": "good"}])
    st = h.settle("evil")
    assert st.ready == "False" and "refused by the sandbox" in st.message, st.message
    assert not marker.exists()
    assert h.settle("good").ready == "True"


def test_operator_macros_folder_is_the_one_place_macros_run_from(tmp_path, repo, cloud):
    macros = tmp_path / "operator-macros"
    macros.mkdir()
    (macros / "AddTopic.py").write_text(
        "def handler(event, context):\n"
        "    fragment = event['fragment']\n"
        "    fragment['Resources']['Topic'] = {'Type': 'AWS::SNS::Topic'}\n"
        "    return {'requestId': event['requestId'], 'status': 'success', 'fragment': fragment}\n")
    repo.commit({"template.yaml": "Transform: AddTopic\n" + QUEUE})
    h = harness(tmp_path, repo, cloud, [{"name": "app"}], macros=macros)
    st = h.settle("app")
    assert st.ready == "True", st.message
    names = {r["LogicalResourceId"] for r in
             h.cfn.client.describe_stack_resources(StackName="sync-app")["StackResources"]}
    assert names == {"Queue", "Topic"}


def test_include_of_a_host_file_is_refused_and_one_inside_is_read(tmp_path, repo, cloud):
    host = tmp_path / "host-snippet.json"
    host.write_text(json.dumps({"Stolen": {"Type": "AWS::SQS::Queue"}}))
    repo.commit({"abs.json": include_template(str(host)),
                 "dots.json": include_template("../host-snippet.json"),
                 "ok.json": include_template("snippets/queue.json"),
                 "snippets/queue.json": json.dumps({"Inside": {"Type": "AWS::SQS::Queue"}})})
    h = harness(tmp_path, repo, cloud, [{"name": "abs", "templatePath": "abs.json"},
                                        {"name": "dots", "templatePath": "dots.json"},
                                        {"name": "ok", "templatePath": "ok.json"}])
    for name in ("abs", "dots"):
        st = h.settle(name)
        assert st.ready == "False" and "outside the checkout" in st.message, st.message
        assert h.cfn.describe(f"sync-{name}") is None
    assert h.settle("ok").ready == "True"


def test_include_through_a_symlink_out_of_the_checkout_is_refused(tmp_path, repo, cloud):
    (tmp_path / "host-snippet.json").write_text(json.dumps({"Stolen": {"Type": "AWS::SQS::Queue"}}))
    repo.commit({"app.json": include_template("snippet.json")})
    (repo.path / "snippet.json").symlink_to(tmp_path / "host-snippet.json")
    repo.commit({}, "symlink out")
    h = harness(tmp_path, repo, cloud, [{"name": "app", "templatePath": "app.json"}])
    st = h.settle("app")
    # the checkout drops links out of it (tar's data filter) and the sandbox would refuse them
    assert st.ready == "False" and "snippet.json" in st.message, st.message
    assert h.cfn.describe("sync-app") is None


def test_sandbox_resolves_symlinks_and_refuses_loops(tmp_path):
    from formwright.sandbox import Sandbox, SandboxError

    root = tmp_path / "checkout"
    root.mkdir()
    (tmp_path / "host.txt").write_text("x")
    (root / "out").symlink_to(tmp_path / "host.txt")
    (root / "loop").symlink_to(root / "loop")
    (root / "in.txt").write_text("y")
    (root / "alias").symlink_to(root / "in.txt")
    box = Sandbox(root)
    assert box.confine("alias", what="file") == (root / "in.txt").resolve()
    for bad in ("out", "../host.txt", str(tmp_path / "host.txt")):
        with pytest.raises(SandboxError, match="outside the checkout"):
            box.confine(bad, what="file")
    with pytest.raises(SandboxError):
        box.confine("loop", what="file")


PROJECT = """\
name: synced
stacks:
  app:
    template: {template}
    stack_name: synced-app
"""


@pytest.mark.parametrize("template", ["../../outside.yaml", "escape.yaml"])
def test_project_path_templates_stay_in_the_checkout(tmp_path, repo, cloud, template):
    (tmp_path / "outside.yaml").write_text(QUEUE)
    repo.commit({"infra/formwright.yaml": PROJECT.format(template=template)})
    (repo.path / "infra" / "escape.yaml").symlink_to(tmp_path / "outside.yaml")
    repo.commit({}, "symlink out")
    h = harness(tmp_path, repo, cloud, [{"name": "proj", "projectPath": "infra"}])
    st = h.settle("proj")
    assert st.ready == "False" and st.reason == "ArtifactFailed", st.message
    # a symlink out is already dropped by the checkout (tar's data filter); `..` is the sandbox's
    assert "outside the checkout" in st.message or template == "escape.yaml", st.message
    assert h.cfn.describe("synced-app") is None


def test_project_path_tosca_source_stays_in_the_checkout(tmp_path, repo, cloud):
    (tmp_path / "topology.yaml").write_text("tosca_definitions_version: tosca_simple_yaml_1_3\n")
    repo.commit({"infra/formwright.yaml": "name: synced\nstacks:\n  app:\n    tosca: ../../topology.yaml\n"})
    h = harness(tmp_path, repo, cloud, [{"name": "proj", "projectPath": "infra"}])
    st = h.settle("proj")
    assert st.ready == "False" and "tosca of stack 'app'" in st.message
    assert "outside the checkout" in st.message


def test_project_macros_and_jinja_never_run_host_code(tmp_path, repo, cloud):
    marker = tmp_path / "pwned"
    repo.commit({
        "a/formwright.yaml": "name: a\nmacros:\n  Evil: evil.py\nstacks:\n  app:\n    template: t.yaml\n",
        "a/evil.py": f"import pathlib\npathlib.Path({str(marker)!r}).write_text('x')\n"
                     "def handler(event, context):\n    return event\n",
        "a/t.yaml": "Transform: Evil\n" + QUEUE,
        "b/formwright.yaml": "name: b\nstacks:\n  app:\n    template: t.yaml\n    parameters:\n"
                             "      Suffix: \"{{ cycler.__init__.__globals__.os.system('touch "
                             f"{marker}') }}}}\"\n",
        "b/t.yaml": QUEUE,
        "c/formwright.yaml": "name: c\nstacks:\n  app:\n    template: t.yaml\n    stack_name: synced-c\n"
                             "    parameters:\n      Suffix: \"{{ env.get('HOME', 'none') }}\"\n",
        "c/t.yaml": QUEUE,
    })
    h = harness(tmp_path, repo, cloud, [{"name": "a", "projectPath": "a"},
                                        {"name": "b", "projectPath": "b"},
                                        {"name": "c", "projectPath": "c"}])
    st = h.settle("a")
    assert st.ready == "False" and "refused by the sandbox" in st.message, st.message
    st = h.settle("b")
    assert st.ready == "False" and "unsafe" in st.message, st.message
    assert not marker.exists()
    # the host's environment is not the repository's to read
    assert h.settle("c").ready == "True"
    params = h.cfn.client.describe_stacks(StackName="synced-c")["Stacks"][0]["Parameters"]
    assert params == [{"ParameterKey": "Suffix", "ParameterValue": "none"}]


def formwright(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "formwright", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def test_cli_sandbox_confines_an_untrusted_project(tmp_path):
    (tmp_path / "outside.yaml").write_text(QUEUE)
    project = tmp_path / "project"
    project.mkdir()
    (project / "formwright.yaml").write_text(PROJECT.format(template="../outside.yaml"))
    assert formwright("validate", cwd=project).returncode == 0
    done = formwright("--sandbox", "validate", cwd=project)
    assert done.returncode == 2, done.stderr
    assert "outside the checkout" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_cli_sandbox_expand_refuses_template_macro_code_and_host_includes(tmp_path):
    marker = tmp_path / "pwned"
    (tmp_path / "evil.json").write_text(evil_template(marker))
    (tmp_path / "snippet.json").write_text(json.dumps({"Stolen": {"Type": "AWS::SQS::Queue"}}))
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "inc.json").write_text(include_template("../snippet.json"))
    done = formwright("--sandbox", "expand", "evil.json", cwd=tmp_path)
    assert done.returncode == 2 and "refused by the sandbox" in done.stderr, done.stderr
    assert not marker.exists()
    done = formwright("--sandbox", "expand", "sub/inc.json", cwd=tmp_path)
    assert done.returncode == 2 and "outside the checkout" in done.stderr, done.stderr
    assert formwright("expand", "sub/inc.json", cwd=tmp_path).returncode == 0
    done = formwright("--sandbox", "sync", "status", cwd=tmp_path)
    assert done.returncode == 2 and "does not cover" in done.stderr
