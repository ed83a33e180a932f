"""Issue #17 item 6: an output built from a secure (NoEcho) input is not cached in clear.

CloudFormation itself shows such an output in clear (its docs warn that NoEcho does not mask outputs
or metadata); formwright's own records on disk must not add a copy of the secret.
"""

from __future__ import annotations

from pathlib import Path

TEMPLATE = """\
Parameters:
  Password: {Type: String, NoEcho: true}
Resources:
  Q:
    Type: AWS::SQS::Queue
Outputs:
  Dsn: {Value: !Sub "mysql://admin:${Password}@db"}
  Arn: {Value: !GetAtt Q.Arn}
"""


def test_secret_derived_output_is_masked_in_the_applied_cache(tmp_path: Path, run_cli, cloud) -> None:
    (tmp_path / "t.yaml").write_text(TEMPLATE)
    (tmp_path / "formwright.yaml").write_text(
        "name: sec\nregion: us-east-1\nstacks:\n  db:\n    template: t.yaml\n"
        "    parameters: {Password: s3cr3t-Pa55word}\n")
    done = run_cli("deploy", str(tmp_path), "-y")
    assert done.code == 0, done.err
    records = list((tmp_path / ".formwright" / "applied").rglob("*.json"))
    assert records
    text = "".join(r.read_text() for r in records)
    assert "s3cr3t-Pa55word" not in text
    assert '"Dsn": "****"' in text and "arn:aws:sqs" in text  # other outputs stay as they are
