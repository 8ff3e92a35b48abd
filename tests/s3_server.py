"""S3 servers (moto) on 127.0.0.1 for the remote-store tests: `s3_endpoint`, a server in this process
that accepts any credentials, and `s3_with_auth`, a server process that checks them (IAM
signatures), with one user's access key. Both have a bucket "xialpha"."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass

import pytest
from extras import needs


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def s3_endpoint(monkeypatch):
    """host:port of a moto S3 server on 127.0.0.1 with a bucket "xialpha"."""
    server_module = needs("moto.server")
    boto3 = needs("boto3")
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(name, value)
    port = free_port()
    server = server_module.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"127.0.0.1:{port}"
    boto3.client("s3", endpoint_url=f"http://{endpoint}").create_bucket(Bucket="xialpha")
    yield endpoint
    server.stop()


@dataclass(frozen=True)
class AuthS3:
    """A moto S3 server that checks credentials: its host:port, and the access key of its one user."""

    endpoint: str
    access_key: str
    secret_key: str

    def client(self):
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=f"http://{self.endpoint}",
            region_name="us-east-1",
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
        )

    def objects(self) -> dict[str, bytes]:
        """{key: bytes} of every object in the bucket."""
        client = self.client()
        keys = [
            item["Key"]
            for page in client.get_paginator("list_objects_v2").paginate(Bucket="xialpha")
            for item in page.get("Contents", [])
        ]
        return {key: client.get_object(Bucket="xialpha", Key=key)["Body"].read() for key in keys}


@pytest.fixture(scope="module")
def s3_with_auth():
    """A moto server process on 127.0.0.1 that checks every request's signature: its first four
    requests (unsigned) create a user with S3 rights, its access key and the bucket "xialpha"."""
    needs("moto.server")
    boto3 = needs("boto3")
    port = free_port()
    env = {**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": "4"}
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    pytest.fail("the moto server did not start")
                time.sleep(0.1)
        anyone = {
            "endpoint_url": f"http://127.0.0.1:{port}",
            "region_name": "us-east-1",
            "aws_access_key_id": "unchecked",
            "aws_secret_access_key": "unchecked",
        }
        iam = boto3.client("iam", **anyone)
        iam.create_user(UserName="xialpha")
        policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
        iam.put_user_policy(UserName="xialpha", PolicyName="s3", PolicyDocument=json.dumps(policy))
        key = iam.create_access_key(UserName="xialpha")["AccessKey"]
        boto3.client("s3", **anyone).create_bucket(Bucket="xialpha")
        yield AuthS3(f"127.0.0.1:{port}", key["AccessKeyId"], key["SecretAccessKey"])
    finally:
        server.terminate()
        server.wait(timeout=30)
