"""Credentials of a remote store are never shown or stored: a real sweep and every command after it
against an S3 server that checks them (moto on 127.0.0.1), each output and every stored byte
searched for the secret; the credentials work from the environment or a credentials file, never
needing the URI; `redact` takes them out of any text."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from s3_server import s3_with_auth  # noqa: F401 (a fixture)
from swept import small_spec

from xialpha.printable import redact

REPO = Path(__file__).resolve().parents[2]


def _run(argv: list[str], env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "xialpha.cli", *argv], env=env, cwd=cwd, capture_output=True, text=True, timeout=300
    )


def _environment(**extra) -> dict:
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("AWS_", "XIALPHA_")) or name == "XIALPHA_STORE_TIMEOUT"
    }
    return {
        **env,
        "PYTHONPATH": str(REPO),
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        **extra,
    }


def _options(s3) -> str:
    # allow_delayed_open: small files go up in one PutObject (moto mishandles pyarrow's multipart completion)
    return f"endpoint_override={s3.endpoint}&scheme=http&allow_delayed_open=true"


@pytest.mark.cluster
def test_no_output_and_no_stored_byte_of_a_sweep_and_its_commands_holds_the_credentials(s3_with_auth, tmp_path):
    s3 = s3_with_auth
    uri = f"s3://{s3.access_key}:{s3.secret_key.replace('/', '%2F')}@xialpha/stores/{uuid.uuid4().hex}?{_options(s3)}"
    spec = tmp_path / "secret.toml"
    spec.write_text(small_spec("secret", splits=True, sweep_extra=f'store = "{uri}"'))
    env = _environment()
    outputs = []

    def run(*argv, code=0, **extra):
        done = _run(list(argv), {**env, **extra}, tmp_path)
        outputs.append(f"{done.stdout}\n{done.stderr}")
        assert done.returncode == code, f"{argv[:2]}: {outputs[-1]}"
        return done.stdout + done.stderr

    run("sweep", str(spec))  # the store from the spec
    run("sweep", str(spec), "--dry-run")
    saved = run("select", "--store", uri, "--save")
    selection = saved.split("stored selection ")[1].split()[0]
    run("certify", "--store", uri, "--selection", selection, "--test-split", "test", "--draws", "1000")
    run("report", "--store", uri, "--html", str(tmp_path / "page.html"))
    run("report", uri, "--wide")
    run("select", "--store", uri, "--refit", str(tmp_path / "model"))
    run("store", "ls", XIALPHA_STORE=uri)
    run("store", "check", uri)
    run("store", "compact", "--store", uri)
    run("select", "--store", uri, "--sweep", "absent", code=2)
    run("certify", "--store", uri, "--selection", selection, "--test-split", "test", code=2)
    in_query = f"s3://xialpha/stores/absent?{_options(s3)}&access_key={s3.access_key}&secret_key={s3.secret_key}"
    run("store", "ls", in_query, code=2)
    wrong = f"s3://{s3.access_key}:wrong-{s3.secret_key[:8]}@xialpha/stores/x?{_options(s3)}"
    run("store", "ls", wrong, code=2)
    python = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, xialpha\ntry:\n    xialpha.results(sys.argv[1], "
            "sweep='absent')\nexcept Exception as exc:\n    print(exc)",
            uri,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    outputs.append(python.stdout + python.stderr)
    assert "absent" in python.stdout, python.stderr

    written = {str(path): path.read_bytes() for path in tmp_path.rglob("*") if path.is_file() and path != spec}
    written |= {f"s3://xialpha/{key}": data for key, data in s3.objects().items()}
    assert any(key.endswith("manifest.json") for key in written) and any("sweeps/" in key for key in written)
    for secret in (s3.secret_key, s3.secret_key[:12], s3.secret_key.replace("/", "%2F"), s3.access_key):
        assert not [text for text in outputs if secret in text], secret
        assert not [name for name, data in written.items() if secret.encode() in data], secret
    assert "s3://***@xialpha/stores/" in "\n".join(outputs)  # the URI is named, without its credentials


@pytest.mark.cluster
@pytest.mark.parametrize("where", ["environment", "credentials file"])
def test_credentials_work_from_the_environment_or_a_credentials_file(s3_with_auth, tmp_path, where):
    s3 = s3_with_auth
    uri = f"s3://xialpha/stores/{uuid.uuid4().hex}?{_options(s3)}"
    if where == "environment":
        env = _environment(AWS_ACCESS_KEY_ID=s3.access_key, AWS_SECRET_ACCESS_KEY=s3.secret_key)
    else:
        credentials = tmp_path / "credentials"
        credentials.write_text(
            f"[default]\naws_access_key_id = {s3.access_key}\naws_secret_access_key = {s3.secret_key}\n"
        )
        env = _environment(AWS_SHARED_CREDENTIALS_FILE=str(credentials))
    spec = tmp_path / "plain.toml"
    spec.write_text(small_spec("plain"))
    done = _run(["sweep", str(spec), "--store", uri, "--quiet"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert any(key.endswith(".parquet") for key in s3.objects())
    refused = _run(
        ["store", "ls", uri], _environment(AWS_ACCESS_KEY_ID=s3.access_key, AWS_SECRET_ACCESS_KEY="wrong"), tmp_path
    )
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert "wrong" not in refused.stderr


@pytest.mark.parametrize(
    "text, shown",
    [
        ("s3://AKIA123:S3CR3T@bucket/x", "s3://***@bucket/x"),
        (
            "store = 's3://AKIA123:S3CR3T@bucket/x' and http://user:pass@host/y",
            "store = 's3://***@bucket/x' and http://***@host/y",
        ),
        (
            "s3://bucket/x?endpoint_override=h:1&secret_key=S3CR3T&access_key=AKIA123&scheme=http",
            "s3://bucket/x?endpoint_override=h:1&secret_key=***&access_key=***&scheme=http",
        ),
        (
            "gs://b/p?token=abc;x=1 az://c/p?sas_token=s%3Dv&account_key=k",
            "gs://b/p?token=***;x=1 az://c/p?sas_token=***&account_key=***",
        ),
        ("https://TOKEN@github.com/x", "https://***@github.com/x"),
        ("/local/path/store", "/local/path/store"),
        ("s3://bucket/prefix", "s3://bucket/prefix"),
        ("memory://name", "memory://name"),
        ("file:///tmp/a@b", "file:///tmp/a@b"),
    ],
)
def test_redact_takes_credentials_out_of_any_text(text, shown):
    assert redact(text) == shown


@pytest.mark.timeout(20)  # each took minutes: every scheme's user part was scanned to the word's end
@pytest.mark.parametrize(
    "text",
    [
        "a://b:" * 100_000 + " @",  # no "@" ends a user part
        "x@" + "a://b:" * 100_000,  # the "@" before every scheme
    ],
    ids=["at-after-a-blank", "at-first"],
)
def test_redact_takes_linear_time_on_any_text(text):
    """Issue 48, item 2: no pattern applied to untrusted text backtracks (an error message can echo
    a store URI or a path of any length)."""
    assert redact(text) == text
    assert redact(f"{text} s3://user:secret@host/p") == f"{text} s3://***@host/p"
