"""The checks of a spec's `[cluster]` table, made when the spec is parsed (so a typo fails before any
corpus is loaded or store touched): each kind's options, sizes, the scheduler address and the TLS
files. Light to import (no Dask), as `xialpha.spec.cluster` is (its `check_cluster` applies them);
`xialpha.jobs.cluster` starts what they allow.
"""

from __future__ import annotations

import os
import re
import ssl
from typing import Any, NoReturn

from xialpha.errors import UserError, one_of

SECURITY_FILES = ("ca_file", "cert_file", "key_file")
ADDRESS = re.compile(r"^((tcp|tls|ws|wss|ucx)://)?(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+)(:\d{1,5})?$")
WALLTIME = re.compile(r"^(\d+-)?(\d{1,2}:)?\d{1,2}:\d{2}$")  # SLURM: [D-][HH:]MM:SS
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


def check_security_files(files: dict) -> None:
    """Each of ca_file, cert_file, key_file exists and is PEM; the certificate matches the key."""
    for key in SECURITY_FILES:
        if key not in files:
            raise UserError(f"cluster.security.{key}: is required with the other TLS files")
        if not os.path.isfile(files[key]):
            raise UserError(f"cluster.security.{key}: file not found: {files[key]}")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    try:
        context.load_verify_locations(cafile=files["ca_file"])
    except (ssl.SSLError, ValueError) as exc:
        raise UserError(f"cluster.security.ca_file: not a PEM CA certificate: {files['ca_file']} ({exc})") from None

    def no_passphrase() -> NoReturn:  # else OpenSSL asks for one on the terminal (and fails without one)
        raise UserError(
            f"cluster.security.key_file: {files['key_file']} is protected by a passphrase; Dask's TLS "
            "needs a key without one (openssl pkey -in KEY -out KEY.plain)"
        )

    try:
        context.load_cert_chain(files["cert_file"], files["key_file"], password=no_passphrase)
    except UserError:
        raise
    except (ssl.SSLError, ValueError) as exc:
        raise UserError(
            f"cluster.security.cert_file: not a PEM certificate matching key_file "
            f"{files['key_file']}: {files['cert_file']} ({exc})"
        ) from None


def check_address(name: str, address: str, security: object) -> None:
    """UserError naming `name` unless `address` is a scheduler address, tls:// exactly when `security` is set."""
    if not ADDRESS.match(address):
        raise UserError(f"{name}: not a scheduler address like tcp://host:8786 or tls://host:8786, got {address!r}")
    if security and not address.startswith("tls://"):
        raise UserError(f"{name}: must be a tls:// address when cluster.security is set, got {address!r}")
    if not security and address.startswith("tls://"):
        raise UserError(f"{name}: a tls:// address needs [cluster.security] with ca_file, cert_file and key_file")


def check_options(kind: str, options: dict, checks: dict) -> None:
    for key, value in options.items():
        if key not in checks:
            hint = {"cores": "threads_per_worker", "memory": "memory_limit", "n_workers": "workers"}.get(key)
            raise UserError(f'cluster.{key}: unknown key for kind "{kind}"' + (f"; use {hint}" if hint else ""))
        checks[key](f"cluster.{key}", value)


def _string(path: str, value: object) -> str:
    if not isinstance(value, str) or not value:
        raise UserError(f"{path}: must be a non-empty string, got {value!r}")
    return value


def _string_list(path: str, value: object) -> list:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UserError(f"{path}: must be a list of strings, got {value!r}")
    return value


def _positive_int(path: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UserError(f"{path}: must be an integer >= 1, got {value!r}")
    return value


def _positive_number(path: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise UserError(f"{path}: must be a number > 0, got {value!r}")
    return value


def _walltime(path: str, value: object) -> str:
    if not isinstance(value, str) or not WALLTIME.match(value):
        raise UserError(f"{path}: must be a SLURM time [D-]HH:MM:SS, got {value!r}")
    return value


def _dns_label(path: str, value: object) -> str:
    if not isinstance(value, str) or not DNS_LABEL.match(value):
        raise UserError(
            f"{path}: must be a Kubernetes name (lower-case letters, digits, '-', at most 63), got {value!r}"
        )
    return value


def _env(path: str, value: object) -> dict:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise UserError(f"{path}: must be a table of string values, got {value!r}")
    return value


def _resources(path: str, value: object) -> dict:
    if not isinstance(value, dict) or not all(
        k in ("requests", "limits") and isinstance(v, dict) for k, v in value.items()
    ):
        raise UserError(f"{path}: must be a table with requests and/or limits tables, got {value!r}")
    return value


def _pull_policy(path: str, value: Any) -> str:
    if value not in ("Always", "IfNotPresent", "Never"):
        raise UserError(f"{path}: {one_of(value, ('Always', 'IfNotPresent', 'Never'))}")
    return value


SLURM_OPTIONS = {
    "queue": _string,
    "account": _string,
    "walltime": _walltime,
    "processes": _positive_int,
    "interface": _string,
    "local_directory": _string,
    "log_directory": _string,
    "shared_temp_directory": _string,
    "python": _string,
    "job_name": _string,
    "death_timeout": _positive_number,
    "job_extra_directives": _string_list,
    "job_script_prologue": _string_list,
    "job_directives_skip": _string_list,
    "worker_extra_args": _string_list,
}
KUBERNETES_OPTIONS = {
    "image": _string,
    "name": _dns_label,
    "namespace": _dns_label,
    "env": _env,
    "resources": _resources,
    "image_pull_policy": _pull_policy,
}
