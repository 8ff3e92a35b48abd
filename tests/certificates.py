"""Test certificates made with `cryptography`: a CA and one node certificate signed by it."""

from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

from cryptography import x509


def write_certificates(directory: Path, prefix: str = "", addresses: tuple[str, ...] = ()) -> dict[str, str]:
    """A fresh CA and a certificate+key for 127.0.0.1, localhost and `addresses` (IP addresses);
    {ca_file, cert_file, key_file}. Client, scheduler and workers share the one certificate."""
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key, node_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"xialpha test CA {prefix}")])
    valid = {"not_valid_before": now - datetime.timedelta(hours=1), "not_valid_after": now + datetime.timedelta(days=1)}
    ca = (
        x509.CertificateBuilder(
            subject_name=ca_name,
            issuer_name=ca_name,
            public_key=ca_key.public_key(),
            serial_number=x509.random_serial_number(),
            **valid,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    node = (
        x509.CertificateBuilder(
            subject_name=x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]),
            issuer_name=ca_name,
            public_key=node_key.public_key(),
            serial_number=x509.random_serial_number(),
            **valid,
        )
        .add_extension(
            x509.SubjectAlternativeName(
                [
                    x509.DNSName("localhost"),
                    *(x509.IPAddress(ipaddress.ip_address(a)) for a in ("127.0.0.1", *addresses)),
                ]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False
        )
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    files = {
        "ca_file": directory / f"{prefix}ca.pem",
        "cert_file": directory / f"{prefix}node.pem",
        "key_file": directory / f"{prefix}node-key.pem",
    }
    files["ca_file"].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files["cert_file"].write_bytes(node.public_bytes(serialization.Encoding.PEM))
    files["key_file"].write_bytes(
        node_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return {key: str(path) for key, path in files.items()}
