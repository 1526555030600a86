"""The fingerprint of an OpenPGP public key (RFC 4880 §12.2), armored or binary. Pure.

Enough to check that a downloaded repository signing key is the one its publisher names,
without gpg on the machine: a v4 fingerprint is the SHA-1 of 0x99, the two-byte length and
the body of the first public-key packet.
"""

from __future__ import annotations

import base64
import binascii
import hashlib

PUBLIC_KEY_TAG = 6


def dearmor(data: bytes) -> bytes:
    text = data.decode("ascii", errors="replace")
    if "-----BEGIN PGP PUBLIC KEY BLOCK-----" not in text:
        return data
    body = text.split("-----BEGIN PGP PUBLIC KEY BLOCK-----", 1)[1]
    body = body.split("-----END PGP PUBLIC KEY BLOCK-----", 1)[0]
    lines = body.strip().splitlines()
    if "" in [line.strip() for line in lines]:  # armor headers end at the first blank line
        lines = lines[[line.strip() for line in lines].index("") + 1:]
    payload = "".join(line.strip() for line in lines if not line.startswith("="))
    try:
        return base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        return b""


def first_packet(data: bytes) -> tuple[int, bytes] | None:
    if not data or not data[0] & 0x80:
        return None
    head = data[0]
    if head & 0x40:  # new format
        tag, at = head & 0x3F, 1
        if len(data) < 2:
            return None
        first = data[at]
        if first < 192:
            length, at = first, at + 1
        elif first < 224:
            if len(data) < 3:
                return None
            length, at = ((first - 192) << 8) + data[at + 1] + 192, at + 2
        elif first == 255:
            length, at = int.from_bytes(data[at + 1:at + 5], "big"), at + 5
        else:
            return None  # partial lengths never start a key
    else:
        tag, kind = (head >> 2) & 0x0F, head & 0x03
        size = {0: 1, 1: 2, 2: 4}.get(kind)
        if size is None:
            return None
        length, at = int.from_bytes(data[1:1 + size], "big"), 1 + size
    body = data[at:at + length]
    return (tag, body) if len(body) == length else None


def fingerprint(data: bytes) -> str | None:
    """The upper-case hex v4 fingerprint of the first public key in `data`; None when
    `data` is not an OpenPGP v4 public key."""
    packet = first_packet(dearmor(data))
    if packet is None or packet[0] != PUBLIC_KEY_TAG or not packet[1] or packet[1][0] != 4:
        return None
    body = packet[1]
    return hashlib.sha1(b"\x99" + len(body).to_bytes(2, "big") + body,  # noqa: S324
                        usedforsecurity=False).hexdigest().upper()  # fmt: skip
