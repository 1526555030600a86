"""packaging/install.sh, run for real by every POSIX shell here against a release served over
HTTP on 127.0.0.1 (plain http is accepted for loopback addresses only).

Releases are signed as the release job signs them (build/release_key.py), with a key the
tests make and pin into a copy of install.sh the way `release_key.py pin` pins the real one;
a second key stands for anyone else. The real openssl verifies, so a signature check that
could not fail would fail these tests.

The "binary" is a stub script that reports its arguments, its stdin and its exit code; with
TB_INSTALLER_BIN set (the binary-level suite) the real frozen binary is served as well and
must install and answer `--version`. PATH holds only what the script needs: real curl,
wget, sha256sum/shasum/openssl, coreutils — and fake `uname`, `sysctl` and `ldd`, so each
OS, processor and C library is reachable from any host.
"""

from __future__ import annotations

import atexit
import base64
import functools
import hashlib
import http.server
import importlib.util
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
INSTALL_SH = REPO / "packaging" / "install.sh"

pytestmark = pytest.mark.skipif(
    sys.platform == "win32", reason="install.sh is for Linux and macOS (install.ps1 is Windows')"
)

LINUX_X86 = "tracebloc-installer-linux-x86_64"
DARWIN_ARM = "tracebloc-installer-darwin-arm64"


@functools.cache
def _release_key_module() -> ModuleType:
    name = "tracebloc_build_release_key"
    spec = importlib.util.spec_from_file_location(name, REPO / "build" / "release_key.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class Signer:
    private_pem: str
    key_id: str


@dataclass(frozen=True)
class ReleaseKeys:
    """The test release key, someone else's key, and install.sh with the first pinned."""

    release: Signer
    other: Signer
    install_sh: Path


@functools.cache
def release_keys() -> ReleaseKeys:
    release_key = _release_key_module()
    keys = []
    for _ in range(2):
        private = release_key._openssl(
            "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"
        ).decode()
        public = release_key.public_key(release_key.public_pem_of_private(private))
        keys.append((Signer(private, public.key_id), public))
    folder = Path(tempfile.mkdtemp(prefix="tb-install-sh-"))
    atexit.register(shutil.rmtree, folder, True)
    script = folder / "install.sh"
    script.write_text(release_key.pinned_script_texts(keys[0][1])["install.sh"], encoding="ascii")
    return ReleaseKeys(release=keys[0][0], other=keys[1][0], install_sh=script)


def sign(folder: Path, signer: Signer | None = None, key_id: str | None = None) -> None:
    """Write folder/SHA256SUMS.sig over folder/SHA256SUMS, as the release job does; `key_id`
    names another key than the one that signed (a forged label)."""
    signer = signer or release_keys().release
    release_key = _release_key_module()
    signature = release_key.sign_bytes(signer.private_pem, (folder / "SHA256SUMS").read_bytes())
    text = release_key.bundle_text(key_id or signer.key_id, signature)
    (folder / "SHA256SUMS.sig").write_text(text, encoding="ascii")


STUB = """#!/bin/sh
printf 'ran %s:' "{label}"
for arg in "$@"; do printf ' [%s]' "$arg"; done
echo
if [ -t 0 ]; then echo "stdin: terminal"; else echo "stdin: not a terminal"; fi
exit "${{STUB_EXIT:-0}}"
"""


def stub(label: str = "latest") -> bytes:
    return STUB.format(label=label).encode()


def sums_line(content: bytes, name: str) -> str:
    return f"{hashlib.sha256(content).hexdigest()}  {name}\n"


# Every tool install.sh calls besides the shell's builtins; the checksum tools and
# downloaders are separate so a test can leave them out.
BASE_TOOLS = ("mktemp", "mkdir", "rm", "mv", "chmod", "cp", "awk", "tr", "grep", "sed")
DOWNLOADERS = ("curl", "wget")
HASHERS = ("sha256sum", "shasum", "openssl")


def _shells() -> list[object]:
    shells: list[object] = [pytest.param(("sh",), id="sh")]
    for name, argv in (
        ("dash", ("dash",)),
        ("busybox", ("busybox", "sh")),
        ("bash-posix", ("bash", "--posix")),
    ):
        if shutil.which(argv[0]):
            shells.append(pytest.param(argv, id=name))
    return shells


SHELLS = _shells()
PRESENT_HASHERS = [pytest.param(h, id=f"only-{h}") for h in HASHERS if shutil.which(h)]


# ---------------------------------------------------------------------------------------
# A release on 127.0.0.1: a directory served over HTTP, every requested path recorded.
# ---------------------------------------------------------------------------------------


@dataclass
class Server:
    root: Path
    url: str = ""
    requests: list[str] = field(default_factory=list)
    status: dict[str, int] = field(default_factory=dict)  # path -> forced error status
    redirect: dict[str, str] = field(default_factory=dict)  # path -> Location of a 302

    def publish(
        self,
        name: str,
        content: bytes,
        sums: str | None = "auto",
        under: str = "",
        signed: bool = True,
    ) -> None:
        """Put a file (and, by default, its SHA256SUMS line, signed by the release key) at
        /<under>/<name>."""
        folder = self.root / under
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(content)
        if sums == "auto":
            sums = sums_line(content, name)
        if sums is not None:
            with (folder / "SHA256SUMS").open("a", encoding="ascii", newline="") as handle:
                handle.write(sums)
            if signed:
                sign(folder)


def _handler(server: Server) -> type[http.server.SimpleHTTPRequestHandler]:
    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            server.requests.append(self.path)
            forced = server.status.get(self.path)
            if forced is not None:
                self.send_error(forced)
                return
            if self.path in server.redirect:
                self.send_response(302)
                self.send_header("Location", server.redirect[self.path])
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            super().do_GET()

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

    return Handler


def _serve(root: Path, tls: ssl.SSLContext | None = None) -> Iterator[Server]:
    state = Server(root=root)
    state.root.mkdir()
    handler = functools.partial(_handler(state), directory=str(state.root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    if tls is not None:
        httpd.socket = tls.wrap_socket(httpd.socket, server_side=True)
    scheme = "https" if tls else "http"
    state.url = f"{scheme}://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    yield from _serve(tmp_path / "release")


# A config file rather than -addext: LibreSSL (macOS) and OpenSSL both read it.
CERT_CONFIG = """[req]
distinguished_name = dn
x509_extensions = ext
prompt = no
[dn]
CN = 127.0.0.1
[ext]
subjectAltName = IP:127.0.0.1
basicConstraints = critical, CA:TRUE
keyUsage = critical, digitalSignature, keyCertSign
extendedKeyUsage = serverAuth
"""


@pytest.fixture
def tls_cert(tmp_path: Path) -> Path:
    """A self-signed certificate for 127.0.0.1; the key and certificate also in one PEM."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is needed to make a test certificate")
    config, key, cert = tmp_path / "cert.cnf", tmp_path / "key.pem", tmp_path / "cert.pem"
    config.write_text(CERT_CONFIG)
    subprocess.run(
        [
            openssl,
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-config",
            str(config),
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    (tmp_path / "localhost.pem").write_text(key.read_text() + cert.read_text())
    return cert


@pytest.fixture
def https_server(tmp_path: Path, tls_cert: Path) -> Iterator[Server]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "localhost.pem")
    yield from _serve(tmp_path / "tls-release", context)


# ---------------------------------------------------------------------------------------
# The machine install.sh sees: a curated PATH, a HOME, fake platform tools.
# ---------------------------------------------------------------------------------------


@dataclass
class Machine:
    root: Path
    bin: Path
    home: Path

    @property
    def installed(self) -> Path:
        return self.home / ".local" / "bin" / "tracebloc-installer"

    def link(self, *tools: str) -> None:
        for tool in tools:
            real = shutil.which(tool)
            assert real is not None, f"{tool} is needed on this machine to test install.sh"
            (self.bin / tool).unlink(missing_ok=True)
            (self.bin / tool).symlink_to(real)

    def unlink(self, *tools: str) -> None:
        for tool in tools:
            (self.bin / tool).unlink(missing_ok=True)

    def fake(self, tool: str, script: str) -> None:
        path = self.bin / tool
        path.unlink(missing_ok=True)
        path.write_text("#!/bin/sh\n" + script)
        path.chmod(0o755)

    def platform(
        self, system: str, machine: str, arm64_sysctl: bool | None = None, libc: str = "glibc"
    ) -> None:
        self.fake("uname", f'case "$1" in -m) echo {machine} ;; *) echo {system} ;; esac\n')
        if arm64_sysctl is None:
            self.unlink("sysctl")
        elif arm64_sysctl:
            self.fake("sysctl", '[ "$*" = "-n hw.optional.arm64" ] && echo 1 && exit 0\nexit 1\n')
        else:  # an Intel Mac has no such key
            self.fake("sysctl", "echo \"sysctl: unknown oid '$2'\" >&2\nexit 1\n")
        if libc == "musl":
            self.fake("ldd", 'echo "musl libc (x86_64)" >&2\necho "Version 1.2.4" >&2\nexit 1\n')
        else:
            self.fake("ldd", 'echo "ldd (GNU libc) 2.36"\n')

    def env(self, **extra: str) -> dict[str, str]:
        return {"PATH": str(self.bin), "HOME": str(self.home), "LC_ALL": "C", **extra}

    def run(
        self, *args: str, shell: tuple[str, ...] = ("sh",), script: Path | None = None, **env: str
    ) -> subprocess.CompletedProcess[str]:
        exe = shutil.which(shell[0])
        assert exe is not None
        # A new session has no controlling terminal: /dev/tty is unusable, as in CI.
        return subprocess.run(
            [exe, *shell[1:], str(script or release_keys().install_sh), *args],
            env=self.env(**env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            start_new_session=True,
        )

    def leftovers(self, directory: Path | None = None) -> list[str]:
        folder = directory or self.installed.parent
        return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


@pytest.fixture
def machine(tmp_path: Path) -> Machine:
    state = Machine(root=tmp_path, bin=tmp_path / "bin", home=tmp_path / "home")
    state.bin.mkdir()
    state.home.mkdir()
    state.link(*BASE_TOOLS, *(t for t in (*DOWNLOADERS, *HASHERS) if shutil.which(t)))
    state.platform("Linux", "x86_64")
    return state


def host_sh() -> str:
    sh = shutil.which("sh")
    assert sh is not None
    return sh


def ran(result: subprocess.CompletedProcess[str]) -> bool:
    return "ran " in result.stdout


# ---------------------------------------------------------------------------------------
# The happy path, in every shell.
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("shell", SHELLS)
def test_verifies_installs_and_runs_with_the_users_arguments(
    machine: Machine, server: Server, shell: tuple[str, ...]
) -> None:
    server.publish(LINUX_X86, stub())
    result = machine.run(
        "--yes", "two words", "", shell=shell, TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ran latest: [--yes] [two words] []\nstdin: not a terminal\n"
    assert machine.installed.read_bytes() == stub()
    assert machine.installed.stat().st_mode & 0o777 == 0o755
    assert machine.leftovers() == ["tracebloc-installer"], "scratch files were left behind"
    assert server.requests == [f"/{LINUX_X86}", "/SHA256SUMS", "/SHA256SUMS.sig"]
    assert "signature and SHA-256 verified" in result.stderr
    assert "warning" not in result.stderr


def test_the_installers_exit_code_is_the_scripts(machine: Machine, server: Server) -> None:
    server.publish(LINUX_X86, stub())
    result = machine.run("install", TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url, STUB_EXIT="3")
    assert result.returncode == 3
    assert result.stdout.startswith("ran latest: [install]\n")


def test_an_upgrade_replaces_the_previous_binary(machine: Machine, server: Server) -> None:
    machine.installed.parent.mkdir(parents=True)
    machine.installed.write_text("#!/bin/sh\necho previous\n")
    server.publish(LINUX_X86, stub())
    result = machine.run(TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url)
    assert result.returncode == 0, result.stderr
    assert machine.installed.read_bytes() == stub()
    assert machine.leftovers() == ["tracebloc-installer"]


@pytest.mark.parametrize(
    "sums",
    [
        pytest.param("{hex}  {name}\n", id="sha256sum-text-mode"),
        pytest.param("{hex} *{name}\n", id="sha256sum-binary-mode"),
        pytest.param("{HEX}  {name}\n", id="upper-case-hex"),
        pytest.param("{hex}  {name}\r\n", id="crlf-line-ending"),
        pytest.param(
            "{other}  tracebloc-installer-darwin-arm64\n{hex}  {name}\n"
            "{other}  tracebloc-installer-windows-x86_64.exe\n",
            id="merged-release-sums",
        ),
        pytest.param("{hex}  {name}\n{hex}  {name}\n", id="same-entry-twice"),
    ],
)
def test_reads_every_sha256sums_layout(machine: Machine, server: Server, sums: str) -> None:
    content = stub()
    digest = hashlib.sha256(content).hexdigest()
    text = sums.format(hex=digest, HEX=digest.upper(), name=LINUX_X86, other="1" * 64)
    server.publish(LINUX_X86, content, sums=text)
    result = machine.run(TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url)
    assert result.returncode == 0, result.stderr
    assert ran(result)


# ---------------------------------------------------------------------------------------
# Refusals: nothing unverified is installed or run.
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("previous", [None, "#!/bin/sh\necho previous\n"], ids=["fresh", "upgrade"])
def test_a_tampered_binary_is_refused_and_nothing_installed(
    machine: Machine, server: Server, previous: str | None, shell: tuple[str, ...]
) -> None:
    if previous is not None:
        machine.installed.parent.mkdir(parents=True)
        machine.installed.write_text(previous)
    server.publish(LINUX_X86, stub() + b"echo injected\n", sums=sums_line(stub(), LINUX_X86))
    result = machine.run(TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url, shell=shell)
    assert result.returncode == 1
    assert "checksum mismatch" in result.stderr
    assert not ran(result)
    if previous is None:
        assert machine.leftovers() == []
    else:
        assert machine.installed.read_text() == previous
        assert machine.leftovers() == ["tracebloc-installer"]


@pytest.mark.parametrize(
    ("sums", "message"),
    [
        pytest.param(
            f"{'1' * 64}  tracebloc-installer-darwin-arm64\n", "no entry for", id="no-entry"
        ),
        pytest.param(f"{'1' * 64}  {LINUX_X86}.old\n", "no entry for", id="only-a-similar-name"),
        pytest.param("", "no entry for", id="empty-sums"),
        pytest.param(
            f"{'1' * 64}  {LINUX_X86}\n{'2' * 64}  {LINUX_X86}\n",
            "different entries",
            id="two-different-entries",
        ),
        pytest.param(f"not-a-checksum  {LINUX_X86}\n", "holds no SHA-256", id="garbage-entry"),
        pytest.param(f"{'a' * 63}  {LINUX_X86}\n", "holds no SHA-256", id="short-entry"),
        pytest.param(None, "no SHA256SUMS", id="sums-file-missing"),
    ],
)
def test_a_missing_or_unusable_entry_is_refused(
    machine: Machine, server: Server, sums: str | None, message: str
) -> None:
    server.publish(LINUX_X86, stub(), sums=sums)
    result = machine.run(TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url)
    assert result.returncode == 1
    assert message in result.stderr
    assert not ran(result)
    assert machine.leftovers() == []


def test_without_any_checksum_tool_it_fails_rather_than_skip(
    machine: Machine, server: Server
) -> None:
    # Without openssl the signature cannot be checked either: skip that check to reach this one.
    machine.unlink(*HASHERS)
    server.publish(LINUX_X86, stub())
    result = machine.run(
        TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url, TRACEBLOC_INSTALLER_INSECURE_SKIP_SIGNATURE="1"
    )
    assert result.returncode == 1
    assert "no SHA-256 tool found" in result.stderr
    assert not ran(result)
    assert machine.leftovers() == []


@pytest.mark.parametrize("hasher", PRESENT_HASHERS)
def test_each_checksum_tool_alone_verifies(machine: Machine, server: Server, hasher: str) -> None:
    # openssl stays as the signature verifier; it computes the SHA-256 only when it is the
    # one left (it comes last).
    machine.unlink(*HASHERS)
    machine.link(hasher, "openssl")
    server.publish(LINUX_X86, stub())
    assert machine.run(TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url).returncode == 0
    (server.root / LINUX_X86).write_bytes(stub() + b"echo injected\n")
    machine.installed.unlink()
    tampered = machine.run(TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url)
    assert tampered.returncode == 1
    assert "checksum mismatch" in tampered.stderr
    assert not machine.installed.exists()


# ---------------------------------------------------------------------------------------
# The signature on SHA256SUMS: checked before any line of it is trusted, served over HTTP
# or from an offline directory alike. Each refusal is one line, exit 1, nothing installed.
# ---------------------------------------------------------------------------------------


def _make_release(folder: Path, case: str, name: str = LINUX_X86) -> None:
    """A release of `name` in `folder`, signed or damaged as `case` says."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(stub())
    (folder / "SHA256SUMS").write_text(sums_line(stub(), name))
    keys = release_keys()
    if case == "missing-signature":
        return
    if case == "other-key":
        sign(folder, keys.other)
    elif case == "other-key-claiming-the-release-key":
        sign(folder, keys.other, key_id=keys.release.key_id)
    else:
        sign(folder)
    if case == "sums-changed-after-signing":
        # A binary swapped for another, and its line in SHA256SUMS with it.
        (folder / name).write_bytes(stub("evil"))
        (folder / "SHA256SUMS").write_text(sums_line(stub("evil"), name))
    elif case == "sums-line-added-after-signing":
        with (folder / "SHA256SUMS").open("a", encoding="ascii") as handle:
            handle.write(sums_line(b"x", "tracebloc-installer-darwin-arm64"))
    elif case == "signature-bytes-flipped":
        text = (folder / "SHA256SUMS.sig").read_text()
        head, _, encoded = text.rpartition("signature: ")
        raw = bytearray(base64.b64decode(encoded))
        raw[len(raw) // 2] ^= 0x01
        encoded = base64.b64encode(bytes(raw)).decode()
        (folder / "SHA256SUMS.sig").write_text(f"{head}signature: {encoded}\n")
    elif case == "not-a-signature-file":
        (folder / "SHA256SUMS.sig").write_text("-----BEGIN PGP SIGNATURE-----\n")
    elif case == "signature-not-base64":
        text = (folder / "SHA256SUMS.sig").read_text()
        head, _, _ = text.rpartition("signature: ")
        (folder / "SHA256SUMS.sig").write_text(f"{head}signature: !!!not base64!!!\n")
    elif case == "binary-tampered":
        (folder / name).write_bytes(stub("evil"))


SIGNATURE_REFUSALS = [
    pytest.param("missing-signature", "has no SHA256SUMS.sig", id="missing-signature"),
    pytest.param("other-key", "signed by another key", id="another-identity"),
    pytest.param(
        "other-key-claiming-the-release-key", "bad signature", id="another-identity-claiming-ours"
    ),
    pytest.param("sums-changed-after-signing", "bad signature", id="tampered-sums"),
    pytest.param("sums-line-added-after-signing", "bad signature", id="line-added-to-sums"),
    pytest.param("signature-bytes-flipped", "bad signature", id="damaged-signature"),
    pytest.param("signature-not-base64", "bad signature", id="signature-not-base64"),
    pytest.param(
        "not-a-signature-file",
        "not a tracebloc-installer signature file",
        id="not-a-signature-file",
    ),
    pytest.param("binary-tampered", "checksum mismatch", id="tampered-binary"),
]


def _refused_with_one_line(result: subprocess.CompletedProcess[str], message: str) -> None:
    assert result.returncode == 1, result.stderr
    errors = [line for line in result.stderr.splitlines() if ": error: " in line]
    assert len(errors) == 1 and message in errors[0], result.stderr
    assert not ran(result)


@pytest.mark.parametrize(("case", "message"), SIGNATURE_REFUSALS)
def test_an_unverifiable_release_is_refused_over_http(
    machine: Machine, server: Server, case: str, message: str
) -> None:
    _make_release(server.root, case)
    result = machine.run(TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url)
    _refused_with_one_line(result, message)
    assert machine.leftovers() == []


@pytest.mark.parametrize(("case", "message"), SIGNATURE_REFUSALS)
def test_an_unverifiable_release_is_refused_from_an_offline_directory(
    machine: Machine, tmp_path: Path, case: str, message: str
) -> None:
    machine.unlink(*DOWNLOADERS)
    _make_release(tmp_path / "offline", case)
    result = machine.run(TRACEBLOC_INSTALLER_DOWNLOAD_URL=str(tmp_path / "offline"))
    _refused_with_one_line(result, message)
    assert machine.leftovers() == []


def test_a_refused_signature_keeps_the_previous_binary(machine: Machine, server: Server) -> None:
    machine.installed.parent.mkdir(parents=True)
    machine.installed.write_text("#!/bin/sh\necho previous\n")
    _make_release(server.root, "other-key")
    result = machine.run(TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url)
    _refused_with_one_line(result, "signed by another key")
    assert machine.installed.read_text() == "#!/bin/sh\necho previous\n"
    assert machine.leftovers() == ["tracebloc-installer"]


def test_the_signature_is_checked_before_the_sums_are_read(
    machine: Machine, server: Server
) -> None:
    # An attacker's SHA256SUMS without an entry would otherwise say "no entry": the
    # signature refusal comes first, whatever SHA256SUMS holds.
    _make_release(server.root, "other-key")
    (server.root / "SHA256SUMS").write_text("garbage\n")
    result = machine.run(TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url)
    _refused_with_one_line(result, "signed by another key")


@pytest.mark.parametrize("case", ["missing-signature", "other-key", "sums-changed-after-signing"])
def test_the_opt_out_installs_without_the_signature_and_warns_every_time(
    machine: Machine, server: Server, case: str
) -> None:
    _make_release(server.root, case)
    for _ in range(2):
        result = machine.run(
            TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url,
            TRACEBLOC_INSTALLER_INSECURE_SKIP_SIGNATURE="1",
        )
        assert result.returncode == 0, result.stderr
        assert "warning: TRACEBLOC_INSTALLER_INSECURE_SKIP_SIGNATURE=1" in result.stderr
        assert "signature NOT checked" in result.stderr
        assert ran(result)
    assert "/SHA256SUMS.sig" not in server.requests


def test_the_opt_out_still_checks_the_sha256(machine: Machine, server: Server) -> None:
    _make_release(server.root, "binary-tampered")
    result = machine.run(
        TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url, TRACEBLOC_INSTALLER_INSECURE_SKIP_SIGNATURE="1"
    )
    _refused_with_one_line(result, "checksum mismatch")


@pytest.mark.parametrize(
    ("value", "verifies"), [("0", True), ("", True), ("yes", None), ("true", None), ("1 ", None)]
)
def test_only_1_turns_the_signature_check_off(
    machine: Machine, server: Server, value: str, verifies: bool | None
) -> None:
    _make_release(server.root, "missing-signature")
    result = machine.run(
        TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url,
        TRACEBLOC_INSTALLER_INSECURE_SKIP_SIGNATURE=value,
    )
    if verifies:
        _refused_with_one_line(result, "has no SHA256SUMS.sig")
    else:
        _refused_with_one_line(result, "set it to 1 to skip the signature check")
        assert server.requests == []


def test_without_openssl_it_refuses_before_downloading(machine: Machine, server: Server) -> None:
    machine.unlink("openssl")
    _make_release(server.root, "good")
    result = machine.run(TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url)
    _refused_with_one_line(result, "openssl is needed to verify the release's signature")
    assert server.requests == []


def test_the_script_as_committed_verifies_against_the_pinned_key(
    machine: Machine, server: Server
) -> None:
    # The repository's own install.sh: with no key pinned yet it refuses everything; once
    # the real key is pinned, the test key's signature is someone else's.
    _make_release(server.root, "good")
    result = machine.run(TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url, script=INSTALL_SH)
    if 'RELEASE_KEY_PEM=""' in INSTALL_SH.read_text(encoding="utf-8"):
        _refused_with_one_line(result, "has no release key pinned")
        assert server.requests == []
    else:
        _refused_with_one_line(result, "signed by another key")
    assert machine.leftovers() == []


# ---------------------------------------------------------------------------------------
# macOS: the quarantine attribute a browser download carries is cleared, after the checks.
# ---------------------------------------------------------------------------------------

XATTR = """echo "$*" >>"$XATTR_LOG"
case "$1" in
    -p) [ -n "$QUARANTINED" ] && echo "0081;5f000000;Safari;" && exit 0; exit 1 ;;
    -d) exit "${XATTR_DELETE_EXIT:-0}" ;;
esac
exit 2
"""


@pytest.mark.parametrize("quarantined", [True, False], ids=["quarantined", "not-quarantined"])
def test_macos_clears_the_quarantine_attribute_after_the_checks(
    machine: Machine, tmp_path: Path, quarantined: bool
) -> None:
    machine.platform("Darwin", "arm64", arm64_sysctl=True)
    machine.fake("xattr", XATTR)
    folder = tmp_path / "Downloads"
    _make_release(folder, "good", DARWIN_ARM)
    log = tmp_path / "xattr.log"
    result = machine.run(
        TRACEBLOC_INSTALLER_DOWNLOAD_URL=str(folder),
        XATTR_LOG=str(log),
        QUARANTINED="1" if quarantined else "",
    )
    assert result.returncode == 0, result.stderr
    calls = log.read_text().splitlines()
    assert calls[0].startswith("-p com.apple.quarantine ")
    if quarantined:
        assert len(calls) == 2 and calls[1].startswith("-d com.apple.quarantine ")
        # The scratch copy, before it became the installed file.
        assert (
            calls[1].split()[-1].startswith(str(machine.installed.parent / ".tracebloc-installer."))
        )
    else:
        assert len(calls) == 1
    assert "warning" not in result.stderr


def test_a_quarantine_that_cannot_be_cleared_is_a_warning(machine: Machine, tmp_path: Path) -> None:
    machine.platform("Darwin", "arm64", arm64_sysctl=True)
    machine.fake("xattr", XATTR)
    folder = tmp_path / "Downloads"
    _make_release(folder, "good", DARWIN_ARM)
    result = machine.run(
        TRACEBLOC_INSTALLER_DOWNLOAD_URL=str(folder),
        QUARANTINED="1",
        XATTR_LOG=str(tmp_path / "xattr.log"),
        XATTR_DELETE_EXIT="1",
    )
    assert result.returncode == 0, result.stderr
    assert "could not clear the quarantine attribute" in result.stderr
    assert ran(result)


@pytest.mark.parametrize(
    ("system", "case"), [("Darwin", "binary-tampered"), ("Darwin", "other-key"), ("Linux", "good")]
)
def test_quarantine_is_left_alone_when_refused_or_not_macos(
    machine: Machine, tmp_path: Path, system: str, case: str
) -> None:
    machine.platform(
        system,
        "arm64" if system == "Darwin" else "x86_64",
        arm64_sysctl=True if system == "Darwin" else None,
    )
    machine.fake("xattr", XATTR)
    folder = tmp_path / "release"
    _make_release(folder, case, DARWIN_ARM if system == "Darwin" else LINUX_X86)
    log = tmp_path / "xattr.log"
    result = machine.run(
        TRACEBLOC_INSTALLER_DOWNLOAD_URL=str(folder), XATTR_LOG=str(log), QUARANTINED="1"
    )
    assert result.returncode == (0 if case == "good" else 1), result.stderr
    assert not log.exists(), "xattr ran: " + log.read_text()


# ---------------------------------------------------------------------------------------
# Where it downloads from: pins, mirrors, offline directories, https only.
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("pin", ["1.2.3", "v1.2.3"], ids=["pin", "pin-with-v"])
def test_a_version_pin_fetches_that_releases_directory(
    machine: Machine, server: Server, pin: str
) -> None:
    server.publish(LINUX_X86, stub("latest"))
    server.publish(LINUX_X86, stub("v1.2.3"), under="v1.2.3")
    result = machine.run(
        TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url + "/", TRACEBLOC_INSTALLER_VERSION=pin
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ran v1.2.3:")
    assert server.requests == [
        f"/v1.2.3/{LINUX_X86}",
        "/v1.2.3/SHA256SUMS",
        "/v1.2.3/SHA256SUMS.sig",
    ]


@pytest.mark.parametrize(
    "pin", ["1.2.3;rm -rf ~", "../1.2.3", "1.2.3/x"], ids=["shell", "dotdot", "slash"]
)
def test_a_pin_that_is_not_a_version_is_refused(machine: Machine, server: Server, pin: str) -> None:
    result = machine.run(
        TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url, TRACEBLOC_INSTALLER_VERSION=pin
    )
    assert result.returncode == 1
    assert "is not a version" in result.stderr
    assert server.requests == []


def test_a_404_says_there_is_no_build_not_a_checksum_error(
    machine: Machine, server: Server
) -> None:
    machine.platform("Linux", "aarch64")
    server.publish(LINUX_X86, stub())
    result = machine.run(
        TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url, TRACEBLOC_INSTALLER_VERSION="9.9.9"
    )
    assert result.returncode == 1
    assert "no build for linux-arm64 v9.9.9" in result.stderr
    assert "checksum" not in result.stderr.lower()
    assert machine.leftovers() == []


def test_another_http_error_is_a_download_failure(machine: Machine, server: Server) -> None:
    server.publish(LINUX_X86, stub())
    server.status[f"/{LINUX_X86}"] = 403
    result = machine.run(TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url)
    assert result.returncode == 1
    assert "download failed" in result.stderr and "HTTP 403" in result.stderr
    assert "no build" not in result.stderr


@pytest.mark.parametrize("form", ["path", "file-url"])
@pytest.mark.parametrize("pin", [None, "2.0.0"], ids=["unpinned", "pinned"])
def test_an_offline_directory_needs_no_network_tool(
    machine: Machine, tmp_path: Path, form: str, pin: str | None
) -> None:
    machine.unlink(*DOWNLOADERS)
    mirror = tmp_path / ("offline mirror" if form == "path" else "offline-mirror")
    folder = mirror / ("v" + pin if pin else "")
    folder.mkdir(parents=True)
    (folder / LINUX_X86).write_bytes(stub("offline"))
    (folder / "SHA256SUMS").write_text(sums_line(stub("offline"), LINUX_X86))
    sign(folder)
    result = machine.run(
        "--yes",
        TRACEBLOC_INSTALLER_VERSION=pin or "latest",
        TRACEBLOC_INSTALLER_DOWNLOAD_URL=str(mirror) if form == "path" else mirror.as_uri(),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ran offline: [--yes]")
    assert machine.installed.read_bytes() == stub("offline")


def test_a_file_url_with_escapes_asks_for_a_plain_path(machine: Machine, tmp_path: Path) -> None:
    mirror = tmp_path / "offline mirror"
    mirror.mkdir()
    result = machine.run(TRACEBLOC_INSTALLER_DOWNLOAD_URL=mirror.as_uri())
    assert result.returncode == 1
    assert "give the directory as a plain path" in result.stderr


def test_an_offline_directory_that_does_not_exist_is_named(
    machine: Machine, tmp_path: Path
) -> None:
    result = machine.run(TRACEBLOC_INSTALLER_DOWNLOAD_URL=str(tmp_path / "nowhere"))
    assert result.returncode == 1
    assert f"no such directory: {tmp_path / 'nowhere'}" in result.stderr


@pytest.mark.parametrize(
    "url",
    [
        pytest.param("http://example.com/mirror", id="plain-http-elsewhere"),
        pytest.param("http://127.0.0.1.example.com/mirror", id="loopback-lookalike-host"),
        pytest.param("http://127.0.0.1@example.com/mirror", id="loopback-as-user-info"),
        pytest.param("http://localhost.example.com/mirror", id="localhost-lookalike-host"),
        pytest.param("ftp://127.0.0.1/mirror", id="ftp"),
    ],
)
def test_only_https_or_loopback_http_is_accepted(machine: Machine, url: str) -> None:
    result = machine.run(TRACEBLOC_INSTALLER_DOWNLOAD_URL=url)
    assert result.returncode == 1
    assert "must be an https:// URL" in result.stderr
    assert not machine.installed.parent.exists()


def test_an_https_mirror_is_fetched_over_tls(
    machine: Machine, https_server: Server, tls_cert: Path
) -> None:
    https_server.publish(LINUX_X86, stub("tls"))
    result = machine.run(
        TRACEBLOC_INSTALLER_DOWNLOAD_URL=https_server.url, CURL_CA_BUNDLE=str(tls_cert)
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ran tls:")
    assert https_server.requests == [f"/{LINUX_X86}", "/SHA256SUMS", "/SHA256SUMS.sig"]


def test_an_https_mirror_may_not_redirect_to_plain_http(
    machine: Machine, server: Server, https_server: Server, tls_cert: Path
) -> None:
    server.publish(LINUX_X86, stub("downgraded"))
    https_server.publish(LINUX_X86, stub("tls"))
    https_server.redirect[f"/{LINUX_X86}"] = f"{server.url}/{LINUX_X86}"
    result = machine.run(
        TRACEBLOC_INSTALLER_DOWNLOAD_URL=https_server.url, CURL_CA_BUNDLE=str(tls_cert)
    )
    assert result.returncode == 1
    assert "download failed" in result.stderr
    assert server.requests == [], "the plain-http redirect target was contacted"
    assert machine.leftovers() == []


def test_wget_serves_when_curl_is_missing(machine: Machine, server: Server) -> None:
    if shutil.which("wget") is None:
        pytest.skip("wget is not installed here")
    machine.unlink("curl")
    server.publish(LINUX_X86, stub())
    result = machine.run("--yes", TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ran latest: [--yes]")
    missing = machine.run(
        TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url, TRACEBLOC_INSTALLER_VERSION="9.9.9"
    )
    assert missing.returncode == 1
    assert "no build for linux-x86_64 v9.9.9" in missing.stderr


def test_without_curl_or_wget_it_says_so(machine: Machine, server: Server) -> None:
    machine.unlink(*DOWNLOADERS)
    server.publish(LINUX_X86, stub())
    result = machine.run(TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url)
    assert result.returncode == 1
    assert "neither curl nor wget" in result.stderr


# ---------------------------------------------------------------------------------------
# Which build: OS, processor, Rosetta, musl.
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("system", "uname_m", "sysctl", "asset"),
    [
        pytest.param("Linux", "x86_64", None, "linux-x86_64", id="linux-intel"),
        pytest.param("Linux", "amd64", None, "linux-x86_64", id="linux-amd64-spelling"),
        pytest.param("Linux", "aarch64", None, "linux-arm64", id="linux-arm"),
        pytest.param("Darwin", "arm64", True, "darwin-arm64", id="mac-apple-silicon"),
        pytest.param("Darwin", "x86_64", True, "darwin-arm64", id="mac-rosetta-shell-gets-native"),
        pytest.param("Darwin", "x86_64", False, "darwin-x86_64", id="mac-intel"),
    ],
)
def test_picks_the_build_for_the_machine(
    machine: Machine, server: Server, system: str, uname_m: str, sysctl: bool | None, asset: str
) -> None:
    machine.platform(system, uname_m, arm64_sysctl=sysctl)
    server.publish(f"tracebloc-installer-{asset}", stub(asset))
    result = machine.run(TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"ran {asset}:")
    assert server.requests[0] == f"/tracebloc-installer-{asset}"


@pytest.mark.parametrize(
    ("system", "uname_m", "message"),
    [
        pytest.param(
            "Linux", "riscv64", "unsupported processor architecture 'riscv64'", id="riscv"
        ),
        pytest.param(
            "Linux", "i686", "unsupported processor architecture 'i686'", id="32-bit-linux"
        ),
        pytest.param(
            "Linux", "armv7l", "unsupported processor architecture 'armv7l'", id="32-bit-arm"
        ),
        pytest.param("FreeBSD", "amd64", "unsupported operating system 'FreeBSD'", id="freebsd"),
        pytest.param("MINGW64_NT-10.0", "x86_64", "use install.ps1", id="git-bash-on-windows"),
    ],
)
def test_a_platform_without_a_build_is_refused_by_name(
    machine: Machine, server: Server, system: str, uname_m: str, message: str
) -> None:
    machine.platform(system, uname_m)
    server.publish(LINUX_X86, stub())
    result = machine.run(TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url)
    assert result.returncode == 1
    assert message in result.stderr
    assert server.requests == [], "nothing is downloaded for a platform without a build"
    assert not machine.installed.exists()


def test_musl_linux_is_refused_clearly(machine: Machine, server: Server) -> None:
    machine.platform("Linux", "x86_64", libc="musl")
    server.publish(LINUX_X86, stub())
    result = machine.run(TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url)
    assert result.returncode == 1
    assert "musl" in result.stderr and "glibc" in result.stderr
    assert server.requests == []


# ---------------------------------------------------------------------------------------
# Install only, install directory, PATH note.
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("no_run", "runs"),
    [pytest.param("1", False, id="no-run"), pytest.param("0", True, id="no-run-0-still-runs")],
)
def test_no_run_installs_without_running(
    machine: Machine, server: Server, no_run: str, runs: bool
) -> None:
    server.publish(LINUX_X86, stub())
    result = machine.run(
        TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url, TRACEBLOC_INSTALLER_NO_RUN=no_run
    )
    assert result.returncode == 0, result.stderr
    assert ran(result) is runs
    assert machine.installed.read_bytes() == stub()
    if not runs:
        assert f"start it with: {machine.installed}" in result.stderr


def test_install_dir_is_created_and_used(machine: Machine, server: Server) -> None:
    server.publish(LINUX_X86, stub())
    target = machine.root / "opt" / "tracebloc tools"
    result = machine.run(
        TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url,
        TRACEBLOC_INSTALLER_INSTALL_DIR=str(target) + "/",
    )
    assert result.returncode == 0, result.stderr
    assert (target / "tracebloc-installer").read_bytes() == stub()
    assert machine.leftovers(target) == ["tracebloc-installer"]
    assert not machine.installed.exists()
    assert f"{target} is not on your PATH" in result.stderr


def test_no_path_note_when_the_install_dir_is_on_path(machine: Machine, server: Server) -> None:
    server.publish(LINUX_X86, stub())
    installed_dir = machine.installed.parent
    result = machine.run(
        TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url, PATH=f"{machine.bin}:{installed_dir}"
    )
    assert result.returncode == 0, result.stderr
    assert "not on your PATH" not in result.stderr


# ---------------------------------------------------------------------------------------
# `curl | sh`: the script arrives on stdin; the installer gets the terminal.
# ---------------------------------------------------------------------------------------


def test_piped_script_passes_arguments_after_dash_dash(machine: Machine, server: Server) -> None:
    server.publish(LINUX_X86, stub())
    result = subprocess.run(
        [host_sh(), "-s", "--", "--yes", "a b"],
        input=release_keys().install_sh.read_text(encoding="utf-8"),
        env=machine.env(TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        start_new_session=True,
    )
    assert result.returncode == 0, result.stderr
    # No terminal to hand over (no controlling tty): the installer keeps the drained pipe.
    assert result.stdout == "ran latest: [--yes] [a b]\nstdin: not a terminal\n"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pty as controlling tty: Linux")
def test_piped_script_hands_the_terminal_to_the_installer(machine: Machine, server: Server) -> None:
    import pty

    server.publish(LINUX_X86, stub())
    leader, follower = pty.openpty()
    follower_name = os.ttyname(follower)

    def take_terminal() -> None:  # runs in the child after setsid(): the pty becomes its tty
        os.close(os.open(follower_name, os.O_RDWR))

    try:
        result = subprocess.run(
            [host_sh(), "-s", "--", "--yes"],
            input=release_keys().install_sh.read_text(encoding="utf-8"),
            env=machine.env(TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            start_new_session=True,
            preexec_fn=take_terminal,
        )
    finally:
        os.close(follower)
        os.close(leader)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ran latest: [--yes]\nstdin: terminal\n"


def test_a_truncated_download_runs_nothing(machine: Machine, tmp_path: Path) -> None:
    text = INSTALL_SH.read_text(encoding="utf-8")
    assert text.rstrip().splitlines()[-1] == 'main "$@"'
    for cut in (text.rindex('main "$@"'), text.index("main() {")):
        truncated = tmp_path / "truncated.sh"
        truncated.write_text(text[:cut])
        result = subprocess.run(
            [host_sh(), str(truncated)],
            env=machine.env(),
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        assert result.returncode == 0
        assert result.stdout == "" and result.stderr == ""
    assert not (machine.home / ".local").exists()


# ---------------------------------------------------------------------------------------
# The real frozen binary (binary-level suite: TB_INSTALLER_BIN=dist/tracebloc-installer-…).
# ---------------------------------------------------------------------------------------


@pytest.mark.skipif(not os.environ.get("TB_INSTALLER_BIN"), reason="TB_INSTALLER_BIN not set")
def test_the_real_binary_installs_with_the_hosts_own_platform_detection(
    machine: Machine, server: Server
) -> None:
    binary = Path(os.environ["TB_INSTALLER_BIN"]).resolve()
    assert binary.name.startswith("tracebloc-installer-"), binary
    # The host's own uname/sysctl/ldd: the name install.sh asks for must be the file built here.
    machine.unlink("uname", "sysctl", "ldd")
    machine.link(*(t for t in ("uname", "sysctl", "ldd") if shutil.which(t)))
    server.publish(binary.name, binary.read_bytes())
    result = machine.run("--version", TRACEBLOC_INSTALLER_DOWNLOAD_URL=server.url)
    assert server.requests[:1] == [f"/{binary.name}"], result.stderr
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("tracebloc-installer ")
    assert machine.installed.read_bytes() == binary.read_bytes()
