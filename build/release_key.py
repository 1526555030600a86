"""The release signing key: pin its public half in the bootstrap scripts, sign SHA256SUMS.

    python build/release_key.py new --private-key ~/secure/tracebloc-release.pem  # once
    python build/release_key.py check                          # the pinned copies agree
    TRACEBLOC_RELEASE_SIGNING_KEY="$(cat key.pem)" python build/release_key.py sign release/SHA256SUMS

packaging/install.sh and install.ps1 trust SHA256SUMS only when SHA256SUMS.sig, written by
`sign`, is an RSA PKCS#1 v1.5 / SHA-256 signature by the key whose public half is pinned in
them (packaging/README.md says why a pinned key and not Sigstore keyless alone). The
public key lives in three places that must agree, all written by `pin`:

- packaging/release-key.pem: the PEM users verify with by hand;
- install.sh: the PEM (openssl checks the signature) and its key id;
- install.ps1: modulus and exponent in base64 (.NET's RSA checks it: Windows PowerShell
  5.1's .NET Framework cannot read a PEM) and the key id.

The key id is `sha256:<hex>` of the public key's DER SubjectPublicKeyInfo. SHA256SUMS.sig
names it beside the signature, so a signature by another key is refused as "another key"
rather than as a damaged signature; the id is only a label, the signature is what counts.

SHA256SUMS.sig is three LF-terminated lines:

    tracebloc-installer-signature: 1
    key: sha256:<64 hex>
    signature: <base64 of the raw RSA signature over the bytes of SHA256SUMS>

openssl does the cryptography (no Python crypto dependency for a build script): `new`,
`pin` and `sign` need it on PATH.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import re
import shutil
import subprocess  # noqa: TID251 - a build script, not the engine
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

BUILD = Path(__file__).resolve().parent
REPO = BUILD.parent
PACKAGING = REPO / "packaging"
PEM_FILE = "release-key.pem"
HEADER = "tracebloc-installer-signature: 1"
KEY_ENV = "TRACEBLOC_RELEASE_SIGNING_KEY"
BEGIN, END = "# BEGIN RELEASE KEY", "# END RELEASE KEY"


@dataclass(frozen=True)
class PublicKey:
    pem: str  # "-----BEGIN PUBLIC KEY-----\n...\n-----END PUBLIC KEY-----\n"
    key_id: str  # "sha256:<hex of the DER SubjectPublicKeyInfo>"
    modulus_b64: str
    exponent_b64: str


def _openssl(*args: str, data: bytes | None = None) -> bytes:
    openssl = shutil.which("openssl")
    if openssl is None:
        raise SystemExit("release_key: openssl is needed and is not on PATH")
    result = subprocess.run(
        [openssl, *args], input=data, capture_output=True, timeout=120, check=False
    )
    if result.returncode != 0:
        raise SystemExit(
            f"release_key: openssl {args[0]} failed: {result.stderr.decode(errors='replace').strip()}"
        )
    return result.stdout


def _int_bytes(value: int) -> bytes:
    return value.to_bytes((value.bit_length() + 7) // 8, "big")


def public_key(pem: str) -> PublicKey:
    """Everything the scripts pin, derived from one PEM public key (RSA only)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "key.pem"
        path.write_text(pem, encoding="ascii")
        der = _openssl("pkey", "-pubin", "-in", str(path), "-outform", "DER")
        canonical = _openssl("pkey", "-pubin", "-in", str(path)).decode("ascii")
        text = _openssl("rsa", "-pubin", "-in", str(path), "-noout", "-text").decode("ascii")
        modulus = _openssl("rsa", "-pubin", "-in", str(path), "-noout", "-modulus").decode()
    exponent = re.search(r"Exponent: (\d+)", text)
    hex_modulus = modulus.strip().partition("=")[2]
    if exponent is None or not hex_modulus:
        raise SystemExit("release_key: not an RSA public key")
    return PublicKey(
        pem=canonical,
        key_id="sha256:" + hashlib.sha256(der).hexdigest(),
        modulus_b64=base64.b64encode(_int_bytes(int(hex_modulus, 16))).decode("ascii"),
        exponent_b64=base64.b64encode(_int_bytes(int(exponent.group(1)))).decode("ascii"),
    )


def public_pem_of_private(private_pem: str) -> str:
    return _openssl("pkey", "-pubout", data=private_pem.encode("ascii")).decode("ascii")


# ---------------------------------------------------------------------------------------
# The pinned blocks: `# BEGIN RELEASE KEY` ... `# END RELEASE KEY` in each script.
# ---------------------------------------------------------------------------------------


def _replace_block(text: str, block: str, name: str) -> str:
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"release_key: {name} has no {BEGIN} ... {END} block")
    line_start = text.rfind("\n", 0, start) + 1
    indent = text[line_start:start]
    line_end = text.index("\n", end) + 1
    body = "".join(f"{indent}{line}\n" if line else "\n" for line in block.splitlines())
    return text[:line_start] + body + text[line_end:]


def sh_block(key: PublicKey | None) -> str:
    pem = key.pem.strip() if key else ""
    key_id = key.key_id if key else ""
    return (
        f"{BEGIN} (written by build/release_key.py pin; empty: none pinned yet)\n"
        f'RELEASE_KEY_ID="{key_id}"\n'
        f'RELEASE_KEY_PEM="{pem}"\n'
        f"{END}"
    )


def ps1_block(key: PublicKey | None) -> str:
    return (
        f"{BEGIN} (written by build/release_key.py pin; empty: none pinned yet)\n"
        f"$releaseKeyId = '{key.key_id if key else ''}'\n"
        f"$releaseKeyModulus = '{key.modulus_b64 if key else ''}'\n"
        f"$releaseKeyExponent = '{key.exponent_b64 if key else ''}'\n"
        f"{END}"
    )


def pinned_script_texts(key: PublicKey | None, packaging: Path = PACKAGING) -> dict[str, str]:
    """install.sh and install.ps1 with `key` pinned (None: the empty, not-yet-pinned block)."""
    sh = (packaging / "install.sh").read_text(encoding="utf-8")
    ps1 = (packaging / "install.ps1").read_text(encoding="utf-8")
    return {
        "install.sh": _replace_block(sh, sh_block(key), "install.sh"),
        "install.ps1": _replace_block(ps1, ps1_block(key), "install.ps1"),
    }


def pin(pem: str, packaging: Path = PACKAGING) -> PublicKey:
    key = public_key(pem)
    for name, text in pinned_script_texts(key, packaging).items():
        (packaging / name).write_bytes(text.encode("ascii"))
    (packaging / PEM_FILE).write_bytes(key.pem.encode("ascii"))
    return key


def pinned(packaging: Path = PACKAGING) -> PublicKey | None:
    """The key packaging/release-key.pem holds, after checking both scripts pin exactly it;
    None when none is pinned anywhere yet."""
    pem_path = packaging / PEM_FILE
    key = public_key(pem_path.read_text(encoding="ascii")) if pem_path.exists() else None
    expected = pinned_script_texts(key, packaging)
    for name, text in expected.items():
        if (packaging / name).read_text(encoding="utf-8") != text:
            what = f"the key in {PEM_FILE}" if key else f"no key (there is no {PEM_FILE})"
            raise SystemExit(
                f"release_key: packaging/{name} does not pin {what}: run build/release_key.py pin"
            )
    return key


# ---------------------------------------------------------------------------------------
# Signing.
# ---------------------------------------------------------------------------------------


def bundle_text(key_id: str, signature: bytes) -> str:
    return f"{HEADER}\nkey: {key_id}\nsignature: {base64.b64encode(signature).decode()}\n"


def sign_bytes(private_pem: str, data: bytes) -> bytes:
    """The raw RSA PKCS#1 v1.5 SHA-256 signature; the private key touches disk only in an
    owner-only temporary directory that is removed at once."""
    with tempfile.TemporaryDirectory() as tmp:
        key_path, data_path = Path(tmp) / "key.pem", Path(tmp) / "data"
        fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(private_pem)
        data_path.write_bytes(data)
        return _openssl("dgst", "-sha256", "-sign", str(key_path), str(data_path))


def verify_bytes(public_pem: str, data: bytes, signature: bytes) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        paths = {n: Path(tmp) / n for n in ("key.pem", "data", "sig")}
        paths["key.pem"].write_text(public_pem, encoding="ascii")
        paths["data"].write_bytes(data)
        paths["sig"].write_bytes(signature)
        openssl = shutil.which("openssl")
        assert openssl is not None
        result = subprocess.run(
            [
                openssl,
                "dgst",
                "-sha256",
                "-verify",
                str(paths["key.pem"]),
                "-signature",
                str(paths["sig"]),
                str(paths["data"]),
            ],
            capture_output=True,
            timeout=120,
            check=False,
        )
        return result.returncode == 0


def sign_file(sums: Path, private_pem: str, expect: PublicKey | None) -> Path:
    """Write sums + '.sig'. With `expect`, the private key must be its private half, and the
    signature must verify against it before the file is written."""
    key = public_key(public_pem_of_private(private_pem))
    if expect is not None and key.key_id != expect.key_id:
        raise SystemExit(
            f"release_key: the signing key is {key.key_id}, but the scripts pin "
            f"{expect.key_id}: a release signed by it would be refused by every install"
        )
    data = sums.read_bytes()
    signature = sign_bytes(private_pem, data)
    if not verify_bytes(key.pem, data, signature):
        raise SystemExit("release_key: the new signature does not verify")
    out = sums.with_name(sums.name + ".sig")
    out.write_bytes(bundle_text(key.key_id, signature).encode("ascii"))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    new = commands.add_parser("new", help="make a key pair and pin its public half")
    new.add_argument(
        "--private-key",
        type=Path,
        required=True,
        help="where the private key goes (outside the repository)",
    )
    pinning = commands.add_parser("pin", help="pin a PEM public key in the scripts")
    pinning.add_argument("public_key", type=Path)
    commands.add_parser("check", help="the pinned copies agree")
    signing = commands.add_parser("sign", help=f"write SUMS.sig with the key in ${KEY_ENV}")
    signing.add_argument("sums", type=Path)
    args = parser.parse_args(argv)

    if args.command == "new":
        target = args.private_key.resolve()
        if target.exists():
            raise SystemExit(f"release_key: {target} exists; not overwriting a key")
        if target.is_relative_to(REPO):
            raise SystemExit("release_key: keep the private key outside the repository")
        private = _openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:3072")
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(private)
        key = pin(public_pem_of_private(private.decode("ascii")))
        print(f"private key: {target} (store it as the secret {KEY_ENV}, then delete it)")
        print(f"pinned {key.key_id} in packaging/{PEM_FILE}, install.sh and install.ps1")
        return 0
    if args.command == "pin":
        key = pin(args.public_key.read_text(encoding="ascii"))
        print(f"pinned {key.key_id}")
        return 0
    if args.command == "check":
        key = pinned()
        print(f"pinned: {key.key_id}" if key else "pinned: none yet (releases cannot be signed)")
        return 0
    private_pem = os.environ.get(KEY_ENV, "")
    if not private_pem.strip():
        raise SystemExit(f"release_key: ${KEY_ENV} is empty: no key to sign with")
    expect = pinned()
    if expect is None:
        raise SystemExit(
            "release_key: no release key is pinned in the scripts: run build/release_key.py new"
        )
    out = sign_file(args.sums, private_pem, expect)
    print(f"{out}: signed by {expect.key_id}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
