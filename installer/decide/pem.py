"""PEM certificate bundles, parsed (RFC 7468): root is given only the bundle's certificates,
re-encoded from their decoded bytes. Pure. Text between blocks is dropped; a block of any
other label (a private key) makes the bundle unusable, so no secret lands under /etc.
"""

from __future__ import annotations

import base64
import binascii
import re

_BLOCK = re.compile(r"-----BEGIN ([A-Z0-9 ]*)-----(.*?)-----END ([A-Z0-9 ]*)-----", re.S)
_OPENING = re.compile(r"-----BEGIN ")


class NotCertificates(ValueError):
    """Why the bundle is not PEM certificates only (one line, naming no content)."""


def certificates(data: bytes) -> str:
    """The CERTIFICATE blocks of `data`, each re-encoded (64 columns); NotCertificates when
    there is none, one is broken, or any block is something else."""
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        raise NotCertificates("it is not PEM text (a binary or non-ASCII file)") from None
    out: list[str] = []
    for block in _BLOCK.finditer(text):
        label, body, end = block.group(1), block.group(2), block.group(3)
        if label != end:
            raise NotCertificates(f"a {label} block ends as {end}")
        if label != "CERTIFICATE":
            raise NotCertificates(
                f"it holds a {label or 'nameless'} block: only certificates may be given"
            )
        if _OPENING.search(body):
            raise NotCertificates("a CERTIFICATE block has no end")
        try:
            der = base64.b64decode("".join(body.split()), validate=True)
        except (binascii.Error, ValueError):
            raise NotCertificates("a CERTIFICATE block is not base64") from None
        if not der or der[0] != 0x30:  # an X.509 certificate is a DER SEQUENCE
            raise NotCertificates("a CERTIFICATE block holds no certificate")
        encoded = base64.b64encode(der).decode("ascii")
        lines = [encoded[i : i + 64] for i in range(0, len(encoded), 64)]
        out.append(
            "-----BEGIN CERTIFICATE-----\n" + "\n".join(lines) + "\n-----END CERTIFICATE-----\n"
        )
    rest = _BLOCK.sub("", text)
    if _OPENING.search(rest) or "-----END " in rest:
        raise NotCertificates("it holds a PEM block that does not end (or end without a start)")
    if not out:
        raise NotCertificates("it holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
    return "".join(out)
