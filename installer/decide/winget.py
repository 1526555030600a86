"""winget where it is missing: one pinned App Installer bundle, verified twice before it is installed.

Pure. The release is pinned; the bytes must have the SHA-256 published for it in winget-pkgs'
manifest and a valid Authenticode signature by Microsoft Corporation before Add-AppxPackage
runs (which checks the signature and block map again).
"""

from __future__ import annotations

import re

from installer.decide.shellquote import powershell as ps_literal

RELEASE = "v1.28.240"  # winget-cli's release; App Installer 1.28.240.0
BUNDLE = "Microsoft.DesktopAppInstaller_8wekyb3d8bbwe.msixbundle"
URL = f"https://github.com/microsoft/winget-cli/releases/download/{RELEASE}/{BUNDLE}"
SHA256 = "4ea2208f1648462bdc8c211811bbc8b2db1174a4172fb53fdbc52459fe09367e"
CHECKSUM_SOURCE = (
    "microsoft/winget-pkgs manifests/m/Microsoft/AppInstaller/1.28.240.0/"
    "Microsoft.AppInstaller.installer.yaml (InstallerSha256), commit "
    "4f12f0e8e5760214b792eeabf002517603a8af21"
)
# The bundle is ~207 MB; a server that sends more is not sending it.
MOST_BYTES = 512 * 2**20
DOWNLOAD_DEADLINE_S = 1800.0
SIGNATURE_TIMEOUT_S = 120.0
INSTALL_TIMEOUT_S = 900.0  # Add-AppxPackage on the bundle is silent for minutes
# The publisher the package family's id (8wekyb3d8bbwe) is derived from.
SIGNER = "Microsoft Corporation"
DIRECTORY = "tracebloc-winget"  # under the elevated account's TEMP
STORE_REMEDY = (
    "install 'App Installer' from the Microsoft Store "
    "(ms-windows-store://pdp/?productid=9NBLGGH4NNS1), or Docker Desktop from "
    "https://www.docker.com/products/docker-desktop/, then re-run"
)
KEYS = ("winget-download", "winget-signature", "winget-install")


def bundle_path(temp_dir: str) -> str:
    """Where the bundle is downloaded: a directory of ours under TEMP, joined with that
    directory's own separator (Windows' in use; the tests' POSIX temporary directories)."""
    sep = "\\" if "\\" in temp_dir or not temp_dir.startswith("/") else "/"
    return sep.join((temp_dir.rstrip("\\/"), DIRECTORY, BUNDLE))


def _powershell(script: str) -> tuple[str, ...]:
    return (
        "powershell.exe",
        "-NoProfile",
        "-NonInteractive",
        "-ExecutionPolicy",
        "Bypass",
        "-Command",
        script,
    )


def signature_argv(path: str) -> tuple[str, ...]:
    """The signature as data: Get-AuthenticodeSignature's status and the signer's subject."""
    return _powershell(
        f"$s = Get-AuthenticodeSignature -LiteralPath {ps_literal(path)}; "
        '[ordered]@{ status = "$($s.Status)"; subject = "$($s.SignerCertificate.Subject)" } '
        "| ConvertTo-Json -Compress"
    )


def install_argv(path: str) -> tuple[str, ...]:
    return _powershell(f"Add-AppxPackage -Path {ps_literal(path)} -ErrorAction Stop")


def subject_fields(subject: str) -> dict[str, str]:
    """`CN=Microsoft Corporation, O=Microsoft Corporation, L=Redmond, …` as {CN: …, O: …};
    a quoted value (`O="A, B"`) stays whole."""
    fields: dict[str, str] = {}
    for match in re.finditer(r'\s*([A-Za-z.0-9]+)=("(?:[^"]|"")*"|[^,]*)\s*(?:,|$)', subject):
        value = match.group(2).strip()
        if value.startswith('"') and value.endswith('"') and len(value) >= 2:
            value = value[1:-1].replace('""', '"')
        fields.setdefault(match.group(1).upper(), value)
    return fields


def signature_problem(status: str, subject: str) -> str | None:
    """None when the bundle may be installed; otherwise why not, in words."""
    if status != "Valid":
        return f"its signature is not valid (Get-AuthenticodeSignature: {status or 'no status'})"
    fields = subject_fields(subject)
    if fields.get("CN") != SIGNER or fields.get("O") != SIGNER:
        return f"it is not signed by {SIGNER} (signer: {subject or 'none'})"
    return None
