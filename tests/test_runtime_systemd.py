"""Every systemd drop-in the engine writes, read by systemd itself (Debian's `systemd`
package, installed by .ci/run): `systemd-analyze verify` finds no line of it wrong, and the
manager's own test mode (`systemd --test`, which loads the units and dumps them as parsed)
shows each `Environment=` value exactly as given — quotes, backslashes, percent signs,
spaces and non-ASCII in a proxy password included. A value with a line break never gets
that far: it is refused before anything runs (tests/test_runtime_root_input.py)."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from installer.decide import runtime as rt
from installer.decide.errors import BadInput
from tests.fakes import netlab
from tests.fakes.cluster import FakeCluster
from tests.fakes.runtime_host import GRANTEE, linux_host, sysroot

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="systemd is Linux's")

MANAGER = next(
    (p for p in ("/usr/lib/systemd/systemd", "/lib/systemd/systemd") if os.path.exists(p)), ""
)
NOBODY = 65534


def tools() -> tuple[str, str]:
    analyze = shutil.which("systemd-analyze") or ""
    if not (analyze and MANAGER):
        pytest.fail(
            "systemd-analyze and the systemd manager are needed: apt-get install -y systemd "
            "(.ci/run does)"
        )
    return analyze, MANAGER


@pytest.fixture
def unit_root() -> Iterator[Path]:
    """A scratch root that `nobody` can read: the manager's test mode refuses to run as root,
    and pytest's tmp_path is root's own (0700)."""
    top = Path(tempfile.mkdtemp(prefix="tb-systemd-"))
    top.chmod(0o755)
    try:
        yield top
    finally:
        shutil.rmtree(top, ignore_errors=True)


def systemd_reads(top: Path, services: dict[str, dict[str, str]]) -> dict[str, list[str]]:
    """Each service (name -> {drop-in file name: its text}) as systemd reads it: the
    `Environment` entries, in order. Fails on any complaint of verify's about a drop-in."""
    complaints = verify(top, services)
    assert not complaints, complaints
    return environments(top, services)


def verify(top: Path, services: dict[str, dict[str, str]]) -> list[str]:
    """`systemd-analyze verify`'s complaints about the drop-ins (the stand-in units' own,
    such as a missing sysinit.target under the scratch root, are not the drop-ins')."""
    analyze, _ = tools()
    units = top / "etc/systemd/system"
    units.mkdir(parents=True, exist_ok=True)
    for name, dropins in services.items():
        (units / f"{name}.service").write_text(
            "[Unit]\nDescription=stand-in\n[Service]\nExecStart=/bin/true\n", encoding="utf-8"
        )
        folder = units / f"{name}.service.d"
        folder.mkdir(exist_ok=True)
        for file, text in dropins.items():
            (folder / file).write_text(text, encoding="utf-8")
    for path in top.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    names = [f"{n}.service" for n in services]
    checked = subprocess.run(
        [analyze, "verify", f"--root={top}", "--man=no", *names],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return [line for line in checked.stderr.splitlines() if ".service.d/" in line]


def environments(top: Path, services: dict[str, dict[str, str]]) -> dict[str, list[str]]:
    """The `Environment` entries of each service, as the manager's test mode dumps them."""
    _, manager = tools()
    units = top / "etc/systemd/system"
    names = [f"{n}.service" for n in services]
    (units / "tb-all.target").write_text(
        "[Unit]\nDescription=all\nWants=" + " ".join(names) + "\n", encoding="utf-8"
    )
    (units / "tb-all.target").chmod(0o644)
    drop = (
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
        if os.getuid() == 0
        else []
    )
    env = {
        "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": str(top),
        "SYSTEMD_LOG_TARGET": "console",
        "SYSTEMD_UNIT_PATH": f"{units}:",
    }
    dump = subprocess.run(
        [*drop, manager, "--test", "--system", "--unit=tb-all.target", "--no-pager"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert dump.returncode == 0, dump.stderr[-2000:]
    found: dict[str, list[str]] = {}
    current = ""
    for line in dump.stdout.splitlines():
        if line.startswith("\t-> Unit "):
            current = line.removeprefix("\t-> Unit ").rstrip(":").removesuffix(".service")
        elif current in services and line.startswith("\t\tEnvironment: "):
            found.setdefault(current, []).append(line.removeprefix("\t\tEnvironment: "))
    return {name: found.get(name, []) for name in services}


TRICKY = [
    'pa"ss',
    "back\\slash",
    "trailing\\",
    "50%off",
    "%n%i%%",
    "it's",
    "semi;colon # hash",
    " leading and trailing ",
    "$HOME ${X} `id`",
    "caf\u00e9 \u4e2d\u6587 \U0001f511",
    "a=b=c",
    "\\n is two characters",
    '\\"',
    "\\\\\\",
    "@:/@",
]
PRINTABLE = "".join(map(chr, range(0x20, 0x7F))) + "\u00e9\u00df\u20ac\u4e2d\U0001f511"


def passwords(count: int = 40) -> list[str]:
    """TRICKY, then random passwords over every printable ASCII character and some others
    (seeded: a failure reproduces)."""
    pick = random.Random(31)
    return TRICKY + [
        "".join(pick.choice(PRINTABLE) for _ in range(pick.randint(1, 24))) for _ in range(count)
    ]


def test_systemd_reads_every_proxy_value_back_unchanged(unit_root: Path) -> None:
    cases = {}
    for i, password in enumerate(passwords()):
        proxy = {
            "HTTPS_PROXY": f"http://ana:{password}@proxy.corp:3128",
            "NO_PROXY": f"localhost,.corp,{password.replace(',', '')}",
        }
        dropin = rt.proxy_dropin(proxy)
        assert dropin is not None
        cases[f"docker-{i}"] = (proxy, dropin)
    read = systemd_reads(unit_root, {n: {"http-proxy.conf": d} for n, (_, d) in cases.items()})
    for name, (proxy, _) in cases.items():
        hosts = [h for h in proxy["NO_PROXY"].split(",") if h.strip()]
        assert read[name] == [
            f"HTTP_PROXY={proxy['HTTPS_PROXY']}",
            f"HTTPS_PROXY={proxy['HTTPS_PROXY']}",
            f"NO_PROXY={','.join(hosts)}",
        ], name


def test_systemd_reads_the_ca_drop_in_as_the_daemon_needs_it(unit_root: Path) -> None:
    read = systemd_reads(unit_root, {"docker": {"tracebloc-ca.conf": rt.ca_dropin()}})
    assert read["docker"] == [
        f"SSL_CERT_DIR=/etc/ssl/certs:/etc/pki/tls/certs:/var/lib/ca-certificates/pem:{rt.CA_DIR}"
    ]


def test_systemd_rejects_what_the_engine_refuses(unit_root: Path) -> None:
    """The check can fail: a value with a line break becomes a line of its own."""
    with pytest.raises(BadInput):  # the engine never writes it
        rt.proxy_dropin({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "a\nExecStartPre=/bin/true\nX="})
    # What quoting alone would have written: the line break makes a line of its own.
    broken = (
        f'{rt.MARKER}\n[Service]\nEnvironment="HTTPS_PROXY=http://p:1"\n'
        'Environment="NO_PROXY=a\nExecStartPre=/bin/true\nX="\n'
    )
    services = {"docker": {"http-proxy.conf": broken}}
    assert verify(unit_root, services)  # the unbalanced quotes are seen
    assert (
        "NO_PROXY=a\nExecStartPre=/bin/true\nX=" not in environments(unit_root, services)["docker"]
    )


def test_every_drop_in_a_prepare_host_writes_is_read_by_systemd_as_given(
    cluster: FakeCluster, unit_root: Path, tmp_path: Path
) -> None:
    authority = netlab.Authority("Corp Root", tmp_path)
    env = linux_host(cluster, "debian", docker="stopped", sudo="nopw")
    proxy = 'http://ana:p"a\\ss%20 w\u00f6rd$1@proxy.corp:3128'
    result = cluster.run(
        "prepare-host",
        TB_PREPARE_USER=GRANTEE,
        HTTPS_PROXY=proxy,
        NO_PROXY="localhost,.corp",
        TRACEBLOC_CA_BUNDLE=str(authority.pem),
        **env,
    )
    assert result.returncode == 0, result.stderr
    folder = sysroot(cluster) / rt.DROPIN_DIR.lstrip("/")
    written = {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.conf"))}
    assert set(written) == {"http-proxy.conf", "tracebloc-ca.conf"}
    read = systemd_reads(unit_root, {"docker": written})["docker"]
    assert f"HTTPS_PROXY={proxy}" in read and f"HTTP_PROXY={proxy}" in read
    assert "NO_PROXY=localhost,.corp" in read
    assert any(e.startswith("SSL_CERT_DIR=") and e.endswith(rt.CA_DIR) for e in read)
