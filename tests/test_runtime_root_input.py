"""What reaches root, as a process on a Linux machine made of fakes (tests/fakes/runtime_host.py):
a value with a line break never becomes a line of a root-owned file, the CA bundle is
handed over as its certificates and never as a path, a grant is real before it is
announced, and no proxy password is staged on disk, even when the engine is killed."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from installer.decide import runtime as rt
from installer.decide.errors import BadInput
from installer.decide.redact import Redactor
from installer.decide.settings import one_line, prepare_user, runtime_given
from installer.edges import runtime as executor
from tests.fakes import netlab
from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import FakeCluster
from tests.fakes.executables import make_executable
from tests.fakes.localcluster import creatable, machine_without_cluster
from tests.fakes.runtime_host import GRANTEE, linux_host, root_calls, sysroot
from tests.test_cli_install import env_for, fresh

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the Linux runtime step")

PASSWORD = "s3cr%t"
PROXY = f"http://ana:{PASSWORD}@proxy.corp:3128"
INJECTED = "\nExecStartPre=/usr/bin/touch /root/pwned\nX="
CA_FILE = "etc/docker/tracebloc-ca/ca.crt"


def one_clear_line(stderr: str) -> None:
    assert "Traceback" not in stderr
    assert len([line for line in stderr.splitlines() if line.startswith("error:")]) == 1, stderr


# --- finding 2: control characters in values bound for root-owned files -------------------------


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        pytest.param("NO_PROXY", "localhost" + INJECTED, id="no-proxy"),
        pytest.param("HTTPS_PROXY", "http://proxy.corp:3128" + INJECTED, id="https-proxy"),
        pytest.param("http_proxy", f"http://ana:pw\r\n{INJECTED}@proxy:3128", id="http-proxy-crlf"),
    ],
)
def test_a_line_break_in_a_proxy_variable_stops_prepare_host_before_anything(
    cluster: FakeCluster, variable: str, value: str
) -> None:
    env = linux_host(cluster, "debian")
    result = cluster.run("prepare-host", TB_PREPARE_USER=GRANTEE, **{variable: value}, **env)

    assert result.returncode == 2, result.stderr
    assert f"{variable} holds a control character" in result.stderr
    one_clear_line(result.stderr)
    assert "pw" not in result.stderr.replace("pwned", "")  # the value is never echoed
    assert root_calls(cluster) == []  # not even the password prompt
    assert not (sysroot(cluster) / "etc").exists()


@pytest.mark.parametrize("variable", ["NO_PROXY", "HTTPS_PROXY"])
def test_a_line_break_in_a_proxy_variable_stops_an_install_before_the_question(
    cluster: FakeCluster, backend: BackendServer, variable: str
) -> None:
    creatable(machine_without_cluster(fresh(cluster)))
    env = linux_host(cluster, "ubuntu", docker="missing")
    value = ("localhost" if variable == "NO_PROXY" else "http://proxy.corp:3128") + INJECTED
    result = cluster.run("install", "--yes", **env_for(backend, **env, **{variable: value}))

    assert result.returncode == 2, result.stderr
    assert variable in result.stderr and "control character" in result.stderr, result.stderr
    one_clear_line(result.stderr)
    assert "Install?" not in result.stdout + result.stderr
    assert root_calls(cluster) == []
    assert not (sysroot(cluster) / "etc").exists()


@pytest.mark.parametrize(
    "char", ["\n", "\r", "\t", "\x1b", "\x7f", "\x85", "\u2028", "\u2029", "\x01"]
)
def test_every_control_character_is_bad_input_naming_the_variable_not_the_value(char: str) -> None:
    with pytest.raises(BadInput) as raised:
        runtime_given({"HTTPS_PROXY": f"http://u:secret{char}@p:1"})
    assert "HTTPS_PROXY" in raised.value.message and "secret" not in raised.value.message
    with pytest.raises(BadInput):
        one_line("NO_PROXY", f"a{char}b")
    with pytest.raises(BadInput):
        prepare_user({"TB_PREPARE_USER": f"ana{char}"})
    with pytest.raises(BadInput):
        runtime_given({"TRACEBLOC_CA_BUNDLE": f"/tmp/ca{char}.pem"})


def test_printable_values_pass_unchanged() -> None:
    value = 'http://u:p"a\\s%s w\u00f6rd$@p:1'
    assert runtime_given({"HTTPS_PROXY": value}).proxy == {"HTTPS_PROXY": value}


# --- finding 3: the CA bundle is content, read as the person --------------------------------------


def corp_bundle(tmp_path: Path) -> tuple[Path, bytes]:
    authority = netlab.Authority("Corp Root", tmp_path)
    cert = authority.pem.read_bytes()
    bundle = tmp_path / "corp-bundle.pem"
    bundle.write_bytes(b"# Issuer: Corp Root\n" + cert + b"\nsome openssl -text output\n")
    return bundle, cert


def test_root_writes_the_bundles_certificates_and_never_reads_its_path(
    cluster: FakeCluster, tmp_path: Path
) -> None:
    bundle, cert = corp_bundle(tmp_path)
    env = linux_host(cluster, "debian", docker="stopped", sudo="nopw")
    result = cluster.run(
        "prepare-host", TB_PREPARE_USER=GRANTEE, TRACEBLOC_CA_BUNDLE=str(bundle), **env
    )

    assert result.returncode == 0, result.stderr
    written = (sysroot(cluster) / CA_FILE).read_bytes()
    assert written == cert.replace(b"\r\n", b"\n")  # the certificate alone, comments dropped
    assert not any(str(bundle) in " ".join(c) for c in root_calls(cluster))
    assert ["install", "-m", "0644", "/dev/stdin", "/" + CA_FILE] in root_calls(cluster)


def test_a_link_to_another_owners_file_is_refused_before_anything(
    cluster: FakeCluster, tmp_path: Path
) -> None:
    target, _ = corp_bundle(tmp_path)
    link = tmp_path / "innocent.pem"
    link.symlink_to(target)
    if os.getuid() == 0:
        os.lchown(link, 65534, 65534)  # someone's link to root's file
    else:
        target = Path("/etc/ssl/certs/ca-certificates.crt")  # root's, linked by this user
        link.unlink()
        link.symlink_to(target)
    env = linux_host(cluster, "debian", docker="stopped", sudo="nopw")
    result = cluster.run(
        "prepare-host", TB_PREPARE_USER=GRANTEE, TRACEBLOC_CA_BUNDLE=str(link), **env
    )

    assert result.returncode == 2, result.stderr
    assert "a link to a file another user owns" in result.stderr
    one_clear_line(result.stderr)
    assert root_calls(cluster) == []


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        pytest.param(
            b"-----BEGIN PRIVATE KEY-----\nMAA=\n-----END PRIVATE KEY-----\n",
            "PRIVATE KEY block",
            id="private-key",
        ),
        pytest.param(
            b"-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n",
            "not base64",
            id="broken-certificate",
        ),
        pytest.param(b"-----BEGIN CERTIFICATE-----\nMAA=\n", "does not end", id="unterminated"),
    ],
)
def test_a_bundle_with_anything_but_certificates_is_refused_before_anything(
    cluster: FakeCluster, tmp_path: Path, extra: bytes, said: str
) -> None:
    bundle, cert = corp_bundle(tmp_path)
    bundle.write_bytes(cert + extra)
    env = linux_host(cluster, "debian", docker="stopped", sudo="nopw")
    result = cluster.run(
        "prepare-host", TB_PREPARE_USER=GRANTEE, TRACEBLOC_CA_BUNDLE=str(bundle), **env
    )

    assert result.returncode == 2, result.stderr
    assert said in result.stderr and "TRACEBLOC_CA_BUNDLE" in result.stderr
    one_clear_line(result.stderr)
    assert root_calls(cluster) == []
    assert not (sysroot(cluster) / CA_FILE).exists()


# --- finding 6: a grant is real before it is announced -------------------------------------------


@pytest.mark.parametrize(
    ("user", "said"),
    [
        pytest.param("bbo", "names no account on this machine", id="typo"),
        pytest.param("-o", "is not a user name", id="an-option"),
        pytest.param("root", "root needs no docker group", id="root"),
        pytest.param(f"{GRANTEE}\nx", "holds a control character", id="line-break"),
    ],
)
def test_a_prepare_user_that_is_no_account_is_refused_before_anything(
    cluster: FakeCluster, user: str, said: str
) -> None:
    env = linux_host(cluster, "debian")
    result = cluster.run("prepare-host", TB_PREPARE_USER=user, **env)

    assert result.returncode == 2, result.stderr
    assert said in result.stderr
    one_clear_line(result.stderr)
    assert "can now install" not in result.stdout
    assert root_calls(cluster) == []


@pytest.mark.parametrize("broken", ["usermod-fails", "not-read-back"])
def test_a_grant_that_did_not_happen_fails_the_run_and_is_never_announced(
    cluster: FakeCluster, broken: str
) -> None:
    env = linux_host(cluster, "debian", docker="stopped", sudo="nopw")
    if broken == "usermod-fails":
        cluster.on("usermod", rc=10, stderr="usermod: cannot lock /etc/group; try again later.\n")
    else:  # usermod says yes, the account database says no
        cluster.on("id", "-nG", stdout="nogroup\n")
    result = cluster.run("prepare-host", "--json", TB_PREPARE_USER=GRANTEE, **env)

    assert result.returncode == 1, result.stderr
    assert "can now install" not in result.stdout + result.stderr
    assert (
        "cannot lock /etc/group"
        if broken == "usermod-fails"
        else f"{GRANTEE} is not in the docker group"
    ) in result.stderr


# --- finding 7: no secret staged on disk, even through a kill -9 ----------------------------------


def files_holding(top: Path, secret: bytes) -> list[Path]:
    out = []
    for path in top.rglob("*"):
        try:
            if path.is_file() and not path.is_symlink() and secret in path.read_bytes():
                out.append(path)
        except OSError:
            continue
    return out


def test_a_kill_9_during_the_sudo_step_leaves_no_proxy_password_on_disk(
    cluster: FakeCluster, tmp_path: Path
) -> None:
    env = linux_host(cluster, "debian", docker="stopped", sudo="nopw")
    tmp = tmp_path / "engine-tmp"
    tmp.mkdir()
    env["TMPDIR"] = str(tmp)
    # sudo, but the drop-in's write waits (pid recorded), as a slow sudo or disk would.
    waiting = tmp_path / "sudo-waiting"
    real = cluster.bin / "sudo-real"
    os.replace(cluster.bin / "sudo", real)
    make_executable(
        cluster.bin / "sudo",
        "import os, sys, time\n"
        "if sys.argv[-1].endswith('http-proxy.conf.tracebloc-new'):\n"
        f"    open({str(waiting)!r}, 'w').write(str(os.getpid()))\n"
        "    time.sleep(60)\n"
        f"os.execv(sys.executable, [sys.executable, {str(real)!r}, *sys.argv[1:]])\n",
    )
    engine = cluster.start("prepare-host", TB_PREPARE_USER=GRANTEE, HTTPS_PROXY=PROXY, **env)
    try:
        deadline = time.monotonic() + 60
        while not (waiting.exists() and waiting.read_text()) and engine.poll() is None:
            assert time.monotonic() < deadline, "the drop-in's write was never reached"
            time.sleep(0.1)
        assert engine.poll() is None, engine.communicate()
        os.kill(engine.pid, signal.SIGKILL)
        engine.communicate(timeout=30)
    finally:
        if waiting.exists() and waiting.read_text():
            try:
                os.kill(int(waiting.read_text()), signal.SIGKILL)  # the sudo we started
            except ProcessLookupError:
                pass
    secret = PASSWORD.encode()
    escaped = PASSWORD.replace("%", "%%").encode()  # as the drop-in writes it
    assert files_holding(tmp, secret) + files_holding(tmp, escaped) == []
    assert files_holding(cluster.home, secret) + files_holding(cluster.home, escaped) == []

    waiting.unlink()
    os.replace(real, cluster.bin / "sudo")
    again = cluster.run("prepare-host", TB_PREPARE_USER=GRANTEE, HTTPS_PROXY=PROXY, **env)
    assert again.returncode == 0, again.stderr
    assert files_holding(tmp, secret) + files_holding(tmp, escaped) == []
    assert list(tmp.iterdir()) == []  # nothing of the runs is left in TMPDIR


# --- the same steps against Debian's own tools (coreutils, grep, passwd) -------------------------


def real_tools_runner(said: list[str]) -> executor.Runner:
    return executor.Runner(
        {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
        Redactor(),
        as_root=True,
        say=said.append,
        warn=said.append,
        sleep=lambda s: None,
    )


def test_real_install_cmp_grep_and_mv_take_a_streamed_owner_only_file(tmp_path: Path) -> None:
    """The guarded write of decide/runtime.py with the real GNU tools (as root here, run
    directly: the runner is told it is root), into a scratch folder: content on stdin, the
    mode kept, nothing staged, a second run sees it unchanged and rewrites nothing."""
    dest = tmp_path / "http-proxy.conf"
    content = rt.proxy_dropin({"HTTPS_PROXY": PROXY})
    assert content is not None
    step = rt.streamed(
        rt.Step(
            ("install", "-m", "0600", rt.STAGED, str(dest)),
            "proxy",
            kind="stage",
            content=content,
            secret=True,
            guard="ours",
        )
    )
    assert step.argv[3] == "/dev/stdin"
    plan = rt.RuntimePlan(rt.PRIVILEGED, "test", (step,), as_root=True)
    said: list[str] = []
    done = executor.execute(plan, real_tools_runner(said))
    assert dest.read_text(encoding="utf-8") == content
    assert (dest.stat().st_mode & 0o777) == 0o600
    assert not (tmp_path / "http-proxy.conf.tracebloc-new").exists()
    assert any(line.startswith("mv -f ") for line in done), done
    again = executor.execute(plan, real_tools_runner(said))
    assert again == [f"{dest} is already as wanted"]  # real cmp -s - read the same bytes


@pytest.mark.skipif(os.getuid() != 0, reason="sudo -n runs without a password for root only")
def test_real_sudo_relays_the_streamed_content_to_root(tmp_path: Path) -> None:
    """Debian's sudo (its `Defaults use_pty` too) hands the engine's stdin pipe to the
    command it runs: the guarded write and the compare through `sudo -n`, as for /etc."""
    import shutil

    assert shutil.which("sudo", path="/usr/bin:/bin"), (
        "sudo is missing: apt-get install -y sudo (.ci/run does)"
    )
    dest = tmp_path / "http-proxy.conf"
    content = rt.proxy_dropin({"HTTPS_PROXY": PROXY})
    assert content is not None
    step = rt.streamed(
        rt.Step(
            ("install", "-m", "0600", rt.STAGED, str(dest)),
            "proxy",
            kind="stage",
            content=content,
            secret=True,
            guard="ours",
        )
    )
    plan = rt.RuntimePlan(rt.PRIVILEGED, "test", (step,))
    said: list[str] = []
    through_sudo = executor.Runner(
        {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
        Redactor(),
        as_root=False,
        say=said.append,
        warn=said.append,
        sleep=lambda s: None,
    )
    done = executor.execute(plan, through_sudo)
    assert any(line.startswith("sudo -n mv -f ") for line in done), done
    assert dest.read_text(encoding="utf-8") == content and (dest.stat().st_mode & 0o777) == 0o600
    assert executor.execute(plan, through_sudo)[-1] == f"{dest} is already as wanted"


@pytest.mark.skipif(os.getuid() != 0, reason="usermod --root chroots: root only")
def test_real_usermod_takes_the_grant_argv_and_refuses_an_option_as_a_name(tmp_path: Path) -> None:
    """The engine's `usermod -aG docker -- NAME` on a scratch account database (usermod
    --root): the name is granted; `-o` after `--` is a name that does not exist, never an
    option; the read-back's `id -nG -- NAME` form is accepted by the real id."""
    import shutil
    import subprocess

    from installer.decide.runtime_linux import decide_linux

    usermod = shutil.which("usermod", path="/usr/sbin:/sbin")
    assert usermod, "usermod (Debian's passwd package) is missing"
    etc = tmp_path / "etc"
    etc.mkdir()
    (etc / "passwd").write_text(
        f"root:x:0:0:root:/root:/bin/sh\n{GRANTEE}:x:65534:65534::/:/usr/sbin/nologin\n"
    )
    (etc / "shadow").write_text(f"root:*:19000:0:99999:7:::\n{GRANTEE}:*:19000:0:99999:7:::\n")
    (etc / "group").write_text("root:x:0:\nnogroup:x:65534:\ndocker:x:999:\n")
    (etc / "gshadow").write_text("root:*::\nnogroup:*::\ndocker:!::\n")
    facts = rt.Facts(
        os="linux",
        docker="stopped",
        docker_cli=True,
        uid=0,
        sudo="root",
        user="root",
        tools=frozenset({"systemctl"}),
    )
    plan = decide_linux(facts, mode=rt.PREPARE_HOST, target_user=GRANTEE)
    grant = next(s.argv for s in plan.steps if s.argv[:1] == ("usermod",))
    ok = subprocess.run(
        [usermod, "--root", str(tmp_path), *grant[1:]],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert ok.returncode == 0, ok.stderr
    assert f"docker:x:999:{GRANTEE}" in (etc / "group").read_text()
    refused = subprocess.run(
        [usermod, "--root", str(tmp_path), *grant[1:-1], "-o"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert refused.returncode == 6 and "'-o' does not exist" in refused.stderr
    check = next(s.argv for s in plan.steps if s.kind == "member")
    assert (
        subprocess.run(["id", *check[1:]], capture_output=True, timeout=30, check=False).returncode
        == 0
    )


def test_the_certificates_kept_are_the_bundles_own_bytes(tmp_path: Path) -> None:
    import ssl

    from installer.decide import pem

    first = netlab.Authority("First Root", tmp_path).pem.read_text()
    second = netlab.Authority("Second Root", tmp_path).pem.read_text()
    bundle = f"# comment\r\n{first.replace(chr(10), chr(13) + chr(10))}\nSubject: x\n{second}"
    kept = pem.certificates(bundle.encode())
    blocks = [
        b + "-----END CERTIFICATE-----\n" for b in kept.split("-----END CERTIFICATE-----\n")[:-1]
    ]
    assert [ssl.PEM_cert_to_DER_cert(b) for b in blocks] == [
        ssl.PEM_cert_to_DER_cert(first),
        ssl.PEM_cert_to_DER_cert(second),
    ]
    with pytest.raises(pem.NotCertificates):
        pem.certificates(b"no pem here")
    with pytest.raises(pem.NotCertificates):
        pem.certificates(
            first.encode() + b"-----BEGIN EC PRIVATE KEY-----\nMAA=\n-----END EC PRIVATE KEY-----\n"
        )


def test_a_proxy_variable_that_is_not_utf8_stops_prepare_host_in_one_line(
    cluster: FakeCluster,
) -> None:
    """A byte that is not UTF-8 (`$'http://u:p\\xff@proxy'`, Python's surrogate escape) has
    no place in a unit file (systemd ignores such an assignment) and cannot even be encoded
    for root's stdin: bad input, one line, before anything."""
    env = linux_host(cluster, "debian")
    result = cluster.run(
        "prepare-host",
        TB_PREPARE_USER=GRANTEE,
        HTTPS_PROXY="http://u:p\udcff@proxy.corp:3128",
        **env,
    )

    assert result.returncode == 2, result.stderr
    assert "HTTPS_PROXY" in result.stderr and "Traceback" not in result.stderr, result.stderr
    one_clear_line(result.stderr)
    assert root_calls(cluster) == []
    assert not (sysroot(cluster) / "etc").exists()
