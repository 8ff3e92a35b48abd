"""Where Reuters-21578 comes from, and a check that a directory holds the genuine 22 SGML files.

The digests below are the SHA-256 of each reut2-NNN.sgm of Reuters-21578, Distribution 1.0, computed
from a verified copy of the distribution. The archive's own digest is not listed: the archive could
not be downloaded where this manifest was made, and re-packed copies differ byte-wise anyway, so
`xialpha fetch` checks the unpacked files (and prints the archive's digest for the record).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from xialpha.errors import UserError

REUTERS_URL = "http://kdd.ics.uci.edu/databases/reuters21578/reuters21578.tar.gz"
FETCH_DEST = Path("data") / "reuters21578"  # where `xialpha fetch reuters21578` puts it unless --dest

SGML_SHA256 = {
    "reut2-000.sgm": "9ff9bb40624ef992a03f62aace12e697dca1087abfd9b4d06aa787a6ad3e0687",
    "reut2-001.sgm": "1528e7e82d110d88d0234eb9619eadb7f9fd805711971df05975b92277dfdf4d",
    "reut2-002.sgm": "99f18068d0518952987dedd78c622e5c2a584e357d264d3754696c815f3e6628",
    "reut2-003.sgm": "78a3a8d7e04bc9d42c4614d5d5c60a4293dbe3f708df6fb5a71d9ef31f4b3fa3",
    "reut2-004.sgm": "726342c19a65873330b412378cd6a3f0d512035f5223146ddd60930c62eb6ff0",
    "reut2-005.sgm": "d09de619b6dd2d047d5124681f6df90550abaf592020d1c1ce338ae9b91522e7",
    "reut2-006.sgm": "b5535c0d66b01f4976f84621a4a795afbc00d2c4bd0a1b7ae426df6630fb361d",
    "reut2-007.sgm": "aa706007ec84a03537a3921ca976d60e11b3f99e4b9e9b2d5c81dd384d2c2062",
    "reut2-008.sgm": "a3994583694a00b7c744097c1d7eabfcf90f2e6650cc21663e46828035a336cb",
    "reut2-009.sgm": "29995f606dd1a9bdf907eacc9d879846c716860d9d9141676979474aaea39c7d",
    "reut2-010.sgm": "996df6008089bd09fa5b28a4d2eb0ee5f7b9d4601cde566fed3926ac82960fa3",
    "reut2-011.sgm": "d3a2782015247d9c2bffb8926267827fdd449c70d619435ef01a25a1c56a53ca",
    "reut2-012.sgm": "da31035d483851f2aebce5b66d779e5e2c0ac9dcfe098596c6d544e81c5604ab",
    "reut2-013.sgm": "8f7700bc0455fac3fcc12377ced4807b7df8aba1f21ecad059b9cc2b1cf0b8be",
    "reut2-014.sgm": "ef936bd3e0f36cf722afa9a6957563549775af32e9e28b4f539c8737ceda83ab",
    "reut2-015.sgm": "6d3bcec73eff871b8a5403588af814c4e50a0de6bc25707480522ab836f74026",
    "reut2-016.sgm": "be2f03a185fff70131f3b4fdbd6229b7ee2be077eba9691eaa597c8cfbda8812",
    "reut2-017.sgm": "f370e610b4b1342e41a98e0c426a08541044bd1d7e539674f32372a6060b73b5",
    "reut2-018.sgm": "a5f971bf25448e915781962309e669359a35fbcaf3017a806eca0590897f209a",
    "reut2-019.sgm": "d3b07097fba2633d130b4914aceba671645985248943ce9e39c289315339dffb",
    "reut2-020.sgm": "f6ad1b724125c202566c63b35ea0b5ee23881f8b7ed47a32829d5af05d8e860d",
    "reut2-021.sgm": "3f5196d32869723c9042aa5756805b4e90360f1f45ea17f4594fa0e2b3630b18",
}


def file_sha256(path: Path) -> str:
    """Hex SHA-256 of the file at `path` (read in chunks by hashlib.file_digest)."""
    with open(path, "rb") as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()


def verify_reuters_files(directory: Path) -> None:
    """UserError naming the first of the 22 SGML files in `directory` that is missing or differs."""
    for name, expected in SGML_SHA256.items():
        path = directory / name
        if not path.is_file():
            raise UserError(f"{directory}: {name} is missing (not a complete Reuters-21578 copy)")
        if file_sha256(path) != expected:
            raise UserError(f"{path}: SHA-256 differs from Reuters-21578 Distribution 1.0 (corrupt or altered copy)")


def fetched_copy(*places: Path) -> Path | None:
    """The first of `places` that holds the Reuters-21578 SGML files (reut2-000.sgm: a copy
    `xialpha fetch` made, or one given to it with --from), else None."""
    return next((place for place in places if (place / "reut2-000.sgm").is_file()), None)
