"""What every command's `--help` ends with: examples to copy and what its exit codes mean (as kubectl's
"Examples:" and git's "EXIT STATUS"), in one table so that the commands read alike.

`add_epilogs` puts them on the commands a module registered; a command missing here is a bug that
tests/cli/test_commands.py catches.
"""

from __future__ import annotations

from typing import Any

from formwright.errors import (
    EXIT_BAD_INPUT,
    EXIT_CANCELLED,
    EXIT_CHANGES,
    EXIT_CLOUD_FAILED,
    EXIT_INTERRUPTED,
    EXIT_LOCKED,
    EXIT_OK,
)

BAD_INPUT = "bad input: one line with file:line and how to fix it"
CLOUD = "the cloud refused a call (the message says which)"
FAILED = "a stack failed: the summary names the failing resource and its reason"
LOCKED = "another run holds the project's lock (it names the run)"
DECLINED = "the prompt was declined: \"Cancelled; nothing changed.\""
INTERRUPTED = "interrupted (Ctrl-C): the stacks still in progress in the cloud are listed"
RESUMABLE = "interrupted (Ctrl-C): `formwright instance retry NAME` resumes"

# command path: (examples as (command line, what it does), {exit code: meaning} beyond 0 and 2)
HELP: dict[str, tuple[list[tuple[str, str]], dict[int, str]]] = {
    "": ([("formwright init infra && cd infra", "a new project"),
          ("formwright local-cloud start", "the embedded local cloud (the default target)"),
          ("formwright validate && formwright plan", "check, then see what would change"),
          ("formwright deploy -y", "deploy every stack in dependency order"),
          ("formwright COMMAND --help", "each command's options, examples and exit codes")],
         {EXIT_CLOUD_FAILED: "the cloud said no: a stack failed (the summary says which resource and why), "
                             "or a call was refused", EXIT_LOCKED: LOCKED, EXIT_CANCELLED: DECLINED,
          EXIT_INTERRUPTED: INTERRUPTED}),
    "init": ([("formwright init infra", "a new project in ./infra"),
              ("formwright init --name shop", "here, named shop")], {}),
    "validate": ([("formwright validate", "the project upward of here"),
                  ("formwright validate infra --env prod", "with the prod overlay"),
                  ("formwright validate --output json", "findings for CI")], {}),
    "build": ([("formwright build", "packaged and processed templates, artifacts and their manifest"),
               ("formwright build infra --env prod", "the prod overlay's")], {}),
    "graph": ([("formwright graph | dot -Tsvg > graph.svg", "DOT through Graphviz"),
               ("formwright graph --format svg -o graph.svg", "the same in one step"),
               ("formwright graph --output json", "nodes and edges")], {}),
    "plan": ([("formwright plan", "every stack"),
              ("formwright plan infra -s app", "one stack (and what it needs)"),
              ("formwright plan --output json", "totals; per resource: replacement, may_change, because"),
              ("formwright plan -o plan.json", "saved, change sets kept, for `deploy --plan plan.json`"),
              ("formwright plan --exit-code", f"for CI: {EXIT_CHANGES} when anything would change")],
             {EXIT_CLOUD_FAILED: "planning failed: " + CLOUD, EXIT_CHANGES: "with --exit-code: the plan "
              "changes something (0: nothing to do)", EXIT_INTERRUPTED: INTERRUPTED}),
    "show-plan": ([("formwright show-plan plan.json", "a saved plan as the text plan"),
                   ("formwright show-plan plan.json --output json", "as saved (jq reads it too)")], {}),
    "deploy": ([("formwright deploy", "plan, ask, execute"),
                ("formwright deploy app -y", "inside the project: app and its dependencies, no prompt"),
                ("formwright deploy infra net -y", "the project in ./infra: group net"),
                ("formwright deploy --env prod --output json -y", "for CI"),
                ("formwright deploy --plan plan.json", "exactly the saved plan, or nothing (exit 2)"),
                ("formwright deploy -y --allow-replacement Table", "past a `deny:` guard, for Table")],
               {EXIT_CLOUD_FAILED: FAILED, EXIT_LOCKED: LOCKED, EXIT_CANCELLED: DECLINED,
                EXIT_INTERRUPTED: INTERRUPTED}),
    "delete": ([("formwright delete", "every stack, dependents first, after a prompt"),
                ("formwright delete infra -s network -y", "network and the stacks that depend on it"),
                ("formwright delete --prune -y", "with the stacks taken out of formwright.yaml too")],
               {EXIT_CLOUD_FAILED: FAILED, EXIT_LOCKED: LOCKED, EXIT_CANCELLED: DECLINED,
                EXIT_INTERRUPTED: INTERRUPTED}),
    "drift": ([("formwright drift", "every deployed stack: drifted resources, expected -> actual"),
               ("formwright drift infra net", "the stacks of group net in ./infra"),
               ("formwright drift --output json", "for CI: exit 1 when anything drifted")],
              {EXIT_CLOUD_FAILED: "a stack drifted (or a detection failed: the stack's line says why)"}),
    "import": ([("formwright import store Bucket=my-existing-bucket", "after a prompt"),
                ("formwright import infra store Bucket=my-existing-bucket -y", "the project in ./infra")],
               {EXIT_CLOUD_FAILED: FAILED, EXIT_LOCKED: LOCKED, EXIT_CANCELLED: DECLINED,
                EXIT_INTERRUPTED: INTERRUPTED}),
    "ls": ([("formwright ls", "every stack of the default region, whoever made it"),
            ("formwright ls --region us-east-1 --region eu-west-1", "two regions"),
            ("formwright ls --output json", "for scripts: stack_name, status, owner, updated")],
           {EXIT_CLOUD_FAILED: CLOUD}),
    "adopt": ([("formwright adopt 'shop-*' -o shop", "the stacks named shop-* into ./shop"),
               ("formwright adopt net app --region us-east-1 --region eu-west-1 -o infra", "in two regions"),
               ("formwright adopt 'shop-*' -o shop --tag", "the next deploy adds the ownership tags"),
               ("formwright adopt 'shop-*' -o shop --output json", "what was written, ambiguous matches")],
              {}),
    "import-sceptre": ([("formwright import-sceptre ../infra-sceptre -o infra", "then: formwright plan"),
                        ("formwright import-sceptre ../infra-sceptre --strict --output json",
                         "for CI: exit 2 on anything not mapped"),
                        ("formwright import-sceptre ../infra-sceptre -o infra --tag",
                         "the next deploy adds the ownership tags")], {}),
    "status": ([("formwright status", "every stack"),
                ("formwright status infra net", "the stacks of group net"),
                ("formwright status --stack-name legacy-vpc", "a stack in no project")],
               {EXIT_CLOUD_FAILED: CLOUD + "; with --stack-name: no such stack"}),
    "outputs": ([("formwright outputs", "every deployed stack's outputs"),
                 ("formwright outputs app", "one stack's"),
                 ("url=$(formwright outputs app Url)", "one value, for scripts"),
                 ("formwright outputs infra app Url", "the same, naming the project folder")],
                {EXIT_CLOUD_FAILED: CLOUD}),
    "diff": ([("formwright diff", "templates, parameters and tags against the deployed ones"),
              ("formwright diff -s app --exit-code", "exit 1 when app differs")],
             {EXIT_CLOUD_FAILED: "with --exit-code: something differs; else " + CLOUD}),
    "events": ([("formwright events", "the last 20 events of every deployed stack"),
                ("formwright events -s app -n 50", "app's last 50"),
                ("formwright events -s app --follow", "watch them come until app settles")],
               {EXIT_CLOUD_FAILED: CLOUD, EXIT_INTERRUPTED: "interrupted (Ctrl-C)"}),
    "expand": ([("formwright expand template.yaml", "the processed template as JSON"),
                ("formwright expand template.yaml --format yaml -p Env=dev", "as YAML, with a parameter"),
                ("formwright expand template.yaml --macros macros -o processed.json", "with your macros")],
               {EXIT_CLOUD_FAILED: CLOUD}),
    "transform tosca": ([("formwright transform tosca service.yaml", "into ./<name>-cfn"),
                         ("formwright transform tosca app.csar -o out -i port=8080", "a CSAR, an input")],
                        {}),
    "instance create": ([("formwright instance create demo", "instance demo of the project upward"),
                         ("formwright instance create demo -i size=2 --regions us-east-1,eu-west-1", "")],
                        {EXIT_CLOUD_FAILED: FAILED, EXIT_LOCKED: LOCKED, EXIT_INTERRUPTED: RESUMABLE}),
    "instance update": ([("formwright instance update demo -i size=3", "new input values"),
                         ("formwright instance update demo -i size=3 --dry-run", "a preview")],
                        {EXIT_CLOUD_FAILED: FAILED, EXIT_LOCKED: LOCKED, EXIT_CANCELLED: DECLINED,
                         EXIT_INTERRUPTED: RESUMABLE}),
    "instance upgrade": ([("formwright instance upgrade demo --to ../v2", "to the version in ../v2"),
                          ("formwright instance upgrade demo --from shop-2.0.tar.gz", "from a package"),
                          ("formwright instance upgrade demo --to ../v2 --dry-run", "a preview")],
                         {EXIT_CLOUD_FAILED: FAILED, EXIT_LOCKED: LOCKED, EXIT_CANCELLED: DECLINED,
                          EXIT_INTERRUPTED: RESUMABLE}),
    "instance rollback": ([("formwright instance rollback demo", "undo the last change"),
                           ("formwright instance rollback demo --to-revision 3", "back to revision 3"),
                           ("formwright instance rollback demo --dry-run", "a preview")],
                          {EXIT_CLOUD_FAILED: FAILED, EXIT_LOCKED: LOCKED, EXIT_CANCELLED: DECLINED,
                           EXIT_INTERRUPTED: RESUMABLE}),
    "instance retry": ([("formwright instance retry demo", "resume the failed operation")],
                       {EXIT_CLOUD_FAILED: FAILED, EXIT_LOCKED: LOCKED, EXIT_INTERRUPTED: RESUMABLE}),
    "instance run": ([("formwright instance run demo backup -i target=s3://b", "a day-2 operation")],
                     {EXIT_CLOUD_FAILED: FAILED, EXIT_LOCKED: LOCKED, EXIT_INTERRUPTED: RESUMABLE}),
    "instance scope": ([("formwright instance scope demo --regions us-east-1,eu-west-1", "")],
                       {EXIT_CLOUD_FAILED: FAILED, EXIT_LOCKED: LOCKED, EXIT_INTERRUPTED: RESUMABLE}),
    "instance delete": ([("formwright instance delete demo", "after its preview and a prompt"),
                         ("formwright instance delete demo --dry-run", "what it would delete, in order"),
                         ("formwright instance delete demo -y", "no prompt")],
                        {EXIT_CLOUD_FAILED: FAILED, EXIT_LOCKED: LOCKED, EXIT_CANCELLED: DECLINED,
                         EXIT_INTERRUPTED: RESUMABLE}),
    "instance list": ([("formwright instance list", "the instances of the project upward")], {}),
    "instance show": ([("formwright instance show demo --output json", "stacks and inputs")], {}),
    "instance history": ([("formwright instance history demo", "operations and revisions")], {}),
    "history": ([("formwright history demo", "the same as `formwright instance history demo`")], {}),
    "package": ([("formwright package", "./NAME-VERSION.tar.gz of the project upward"),
                 ("formwright package infra -o dist/shop.tar.gz", ""),
                 ("formwright package template.yaml --bucket B -o packaged.yaml",
                  "as `aws cloudformation package`")], {EXIT_CLOUD_FAILED: CLOUD}),
    "sync run": ([("formwright sync run objects/", "reconcile until Ctrl-C or SIGTERM (then exit 0)")], {}),
    "sync status": ([("formwright sync status objects/", "every object"),
                     ("formwright sync status --events", "with their recent events")], {}),
    "sync reconcile": ([("formwright sync reconcile app objects/", "now, and wait for the result"),
                        ("formwright sync reconcile default/app --no-wait", "just ask the daemon")],
                       {EXIT_CLOUD_FAILED: "the object is not Ready (its reason is printed)"}),
    "sync suspend": ([("formwright sync suspend app objects/", "")], {}),
    "sync resume": ([("formwright sync resume app objects/", "")], {}),
    "local-cloud start": ([("formwright local-cloud start", "on a free port, with what the last stop kept"),
                           ("formwright local-cloud start --port 5000", ""),
                           ("formwright local-cloud start --reset", "empty"),
                           ("formwright local-cloud start --snapshot-interval 0", "snapshot at stop only"),
                           ("formwright local-cloud start --instances boot",
                            "RunInstances and Auto Scaling groups (boto3) boot their instances")],
                          {}),
    "local-cloud stop": ([("formwright local-cloud stop", "says how many stacks it keeps")], {}),
    "local-cloud reset": ([("formwright local-cloud reset", "forget every stack, resource and object")],
                          {}),
    "local-cloud status": ([("formwright local-cloud status --output json", "")],
                           {EXIT_CLOUD_FAILED: "the local cloud is not running"}),
    "completion": ([("source <(formwright completion bash)", "in ~/.bashrc"),
                    ("formwright completion zsh > \"${fpath[1]}/_formwright\"", ""),
                    ("formwright completion fish > ~/.config/fish/completions/formwright.fish", "")], {}),
}


def epilog(path: str) -> str:
    """The text after a command's options: its examples and its exit codes (click keeps the lines of a
    paragraph that starts with \\b as they are)."""
    examples, codes = HELP[path]
    width = max(len(line) for line, _ in examples)
    lines = [f"  {line.ljust(width)}  # {note}" if note else f"  {line}" for line, note in examples]
    meanings = {EXIT_OK: "done", EXIT_BAD_INPUT: BAD_INPUT, **codes}
    code_lines = [f"  {code:<3}  {meanings[code]}" for code in sorted(meanings)]
    return "\b\nExamples:\n" + "\n".join(lines) + "\n\n\b\nExit codes:\n" + "\n".join(code_lines)


def add_epilogs(app: Any, prefix: str = "") -> None:
    """Give every command registered on `app` (and its sub-groups) the epilog of its path in HELP."""
    for info in app.registered_commands:
        name = info.name or info.callback.__name__.replace("_", "-")
        path = f"{prefix}{name}"
        if path in HELP and info.epilog is None:
            info.epilog = epilog(path)
    for group in app.registered_groups:
        add_epilogs(group.typer_instance, f"{prefix}{group.name} ")
