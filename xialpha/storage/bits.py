"""Compact per-example indicator vectors: one bit per training example, little-endian bit order."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from xialpha.errors import UserError


def pack_bits(indicators: npt.ArrayLike) -> bytes:
    """Pack a 1-D boolean vector of length n into ceil(n / 8) bytes.

    Example i is bit (i % 8), least significant first, of byte i // 8; padding bits are 0.
    """
    vector = np.asarray(indicators)
    if vector.ndim != 1 or vector.dtype != np.bool_:
        raise UserError(f"indicators: expected a 1-D boolean array, got shape {vector.shape} dtype {vector.dtype}")
    return np.packbits(vector, bitorder="little").tobytes()


def unpack_bits(data: bytes, n: int) -> np.ndarray:
    """Unpack `pack_bits` output back into a boolean vector of length n."""
    if n < 0 or len(data) != (n + 7) // 8:
        raise UserError(f"bits: {len(data)} bytes cannot hold exactly n={n} indicators (need {(n + 7) // 8})")
    return np.unpackbits(np.frombuffer(data, dtype=np.uint8), count=n, bitorder="little").astype(bool)
