"""The fingerprint of an OpenPGP public key file (RFC 4880 §11.1, §12.2), armored or binary.
Pure: a downloaded signing key is checked without gpg.

apt trusts every key in a signed-by file, so a file is one key only when it holds exactly
one primary key and nothing but its user IDs, subkeys and signatures.
"""

from __future__ import annotations

import base64
import binascii
import hashlib

PUBLIC_KEY_TAG = 6
# What may follow the primary key in a transferable public key (§11.1): signatures, user
# IDs, user attributes, public subkeys; trust packets gpg may keep beside them.
KEY_PARTS = frozenset({2, 12, 13, 14, 17})
BEGIN, END = "-----BEGIN PGP PUBLIC KEY BLOCK-----", "-----END PGP PUBLIC KEY BLOCK-----"


def dearmor(data: bytes) -> bytes:
    """The binary packets of an armored key; `data` itself when it is not armored; empty
    when the armor is broken or there is anything but blank space around its one block (a
    second block would be a second key apt reads)."""
    text = data.decode("ascii", errors="replace")
    if BEGIN not in text:
        return data
    before, _, rest = text.partition(BEGIN)
    body, found, after = rest.partition(END)
    if before.strip() or not found or after.strip():
        return b""
    lines = body.strip().splitlines()
    if "" in [line.strip() for line in lines]:  # armor headers end at the first blank line
        lines = lines[[line.strip() for line in lines].index("") + 1 :]
    payload = "".join(line.strip() for line in lines if not line.startswith("="))
    try:
        return base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        return b""


def _packet(data: bytes, at: int) -> tuple[int, bytes, int] | None:
    """(tag, body, where the next packet starts) of the packet at `at`; None when it is
    not a whole packet."""
    if at >= len(data) or not data[at] & 0x80:
        return None
    head = data[at]
    if head & 0x40:  # new format
        tag = head & 0x3F
        if at + 1 >= len(data):
            return None
        first = data[at + 1]
        if first < 192:
            length, start = first, at + 2
        elif first < 224:
            if at + 2 >= len(data):
                return None
            length, start = ((first - 192) << 8) + data[at + 2] + 192, at + 3
        elif first == 255:
            length, start = int.from_bytes(data[at + 2 : at + 6], "big"), at + 6
        else:
            return None  # partial lengths are for data packets, never a key's
    else:
        tag, kind = (head >> 2) & 0x0F, head & 0x03
        size = {0: 1, 1: 2, 2: 4}.get(kind)
        if size is None:
            return None  # indeterminate length: nothing could follow it
        length, start = int.from_bytes(data[at + 1 : at + 1 + size], "big"), at + 1 + size
    body = data[start : start + length]
    return (tag, body, start + length) if len(body) == length else None


def packets(data: bytes) -> list[tuple[int, bytes]] | None:
    """Every packet of `data` in order; None when any part of it is not a whole packet."""
    out: list[tuple[int, bytes]] = []
    at = 0
    while at < len(data):
        packet = _packet(data, at)
        if packet is None:
            return None
        out.append(packet[:2])
        at = packet[2]
    return out


def fingerprint(data: bytes) -> str | None:
    """The upper-case hex v4 fingerprint of the one public key `data` holds; None when
    `data` is not exactly one OpenPGP v4 public key (a second primary key, or a packet no
    key has, makes it something else)."""
    found = packets(dearmor(data))
    if not found or found[0][0] != PUBLIC_KEY_TAG:
        return None
    if any(tag not in KEY_PARTS for tag, _ in found[1:]):
        return None
    body = found[0][1]
    if not body or body[0] != 4:
        return None
    return (
        hashlib.sha1(
            b"\x99" + len(body).to_bytes(2, "big") + body,  # noqa: S324
            usedforsecurity=False,
        )
        .hexdigest()
        .upper()
    )


def _crc24(data: bytes) -> int:
    """The armor checksum (RFC 4880 §6.1)."""
    crc = 0xB704CE
    for byte in data:
        crc ^= byte << 16
        for _ in range(8):
            crc <<= 1
            if crc & 0x1000000:
                crc ^= 0x1864CFB
    return crc & 0xFFFFFF


def marked(data: bytes, marker: str) -> str:
    """The key file the engine writes for `data` (a key `fingerprint` accepted): `marker`
    on the first line, then the key's packets armored afresh, so nothing but the checked
    packets reaches the file (apt, gpg, rpm and dnf skip what precedes the armor)."""
    body = dearmor(data)
    encoded = base64.b64encode(body).decode("ascii")
    lines = [encoded[i : i + 64] for i in range(0, len(encoded), 64)]
    crc = base64.b64encode(_crc24(body).to_bytes(3, "big")).decode("ascii")
    return "\n".join([marker, BEGIN, "", *lines, f"={crc}", END, ""])
