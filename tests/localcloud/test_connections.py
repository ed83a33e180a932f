"""The local cloud keeps a connection open between requests (HTTP/1.1 keep-alive, cloud/connections.py),
where werkzeug's development server closed each one after its answer; what it cannot read safely it
still closes. Raw sockets here, so that what the server does with the connection is seen, not hidden by
a client's pool."""

from __future__ import annotations

import http.client
import socket
from urllib.parse import urlparse

import boto3

LIST_QUEUES = "Action=ListQueues&Version=2012-11-05"


def connection(endpoint: str) -> http.client.HTTPConnection:
    """A plain HTTP/1.1 connection to the local cloud."""
    url = urlparse(endpoint)
    return http.client.HTTPConnection(url.hostname, url.port, timeout=10)


def post(conn: http.client.HTTPConnection, body: str, **headers: str) -> http.client.HTTPResponse:
    """An SQS query POST (a sized body), its answer read whole."""
    conn.request("POST", "/", body=body, headers={
        "Content-Type": "application/x-www-form-urlencoded", "Host": "sqs.us-east-1.amazonaws.com",
        "Authorization": "AWS4-HMAC-SHA256 Credential=test/20261127/us-east-1/sqs/aws4_request, "
                         "SignedHeaders=host, Signature=x", **headers})
    answer = conn.getresponse()
    answer.read()
    return answer


def test_one_connection_carries_many_requests(local_cloud) -> None:
    conn = connection(local_cloud.endpoint)
    post(conn, LIST_QUEUES)
    first = conn.sock
    for _ in range(5):
        answer = post(conn, LIST_QUEUES)
        assert answer.status == 200
        assert answer.getheader("Connection") != "close"
    assert conn.sock is first  # never reopened: http.client reconnects only after a close
    conn.close()


def test_a_client_asking_to_close_is_answered_and_closed(local_cloud) -> None:
    conn = connection(local_cloud.endpoint)
    answer = post(conn, LIST_QUEUES, Connection="close")
    assert answer.status == 200 and answer.getheader("Connection") == "close"
    conn.close()


def test_a_chunked_request_is_answered_and_its_connection_closed(local_cloud) -> None:
    # a body without a length: werkzeug dechunks it, and the stream past it is not known to be at the
    # next request line, so the connection is not kept
    url = urlparse(local_cloud.endpoint)
    with socket.create_connection((url.hostname, url.port), timeout=10) as sock:
        body = LIST_QUEUES.encode()
        sock.sendall(b"POST / HTTP/1.1\r\nHost: sqs.us-east-1.amazonaws.com\r\n"
                     b"Content-Type: application/x-www-form-urlencoded\r\n"
                     b"Authorization: AWS4-HMAC-SHA256 Credential=test/20261127/us-east-1/sqs/aws4_request, "
                     b"SignedHeaders=host, Signature=x\r\nTransfer-Encoding: chunked\r\n\r\n"
                     + f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n")
        received = b""
        while chunk := sock.recv(65536):  # the server closes: recv returns b"" at the end
            received += chunk
    head = received.split(b"\r\n\r\n", 1)[0].decode()
    assert head.startswith("HTTP/1.1 200") and "Connection: close" in head


def test_sdk_calls_with_bodies_follow_each_other_on_kept_connections(local_cloud) -> None:
    # boto3's pool reuses the kept connections: a body of one request must never be read as the next
    s3 = boto3.client("s3", endpoint_url=local_cloud.endpoint, region_name="us-east-1",
                      aws_access_key_id="k", aws_secret_access_key="s")
    s3.create_bucket(Bucket="fw-keepalive")
    for i in range(20):
        s3.put_object(Bucket="fw-keepalive", Key=f"k{i}", Body=b"x" * (i * 1000))
    assert [len(s3.get_object(Bucket="fw-keepalive", Key=f"k{i}")["Body"].read()) for i in range(20)] == \
        [i * 1000 for i in range(20)]
