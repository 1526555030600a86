"""Every file the engine touches fails closed: the CLI as a process against fake tools and a
temporary HOME, one test per way a file was turned against it (issue 19).

Writes never follow a link into another file nor replace one; every read is bounded (a
FIFO, a device, a huge file, an alias bomb, a 5,000-deep document are each a one-line error
naming the file, within a second or two, never a hang or a traceback).
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from pathlib import Path

import pytest

from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import FakeCluster, node
from tests.fakes.localcluster import creatable, docker_running, machine_without_cluster

CLIENT_ID = "client-7f3a"
PASSWORD = "Cl1ent-P4ss:#w0rd"
POSIX = pytest.mark.skipif(sys.platform == "win32", reason="POSIX links, FIFOs and devices")
# A 447-byte billion laughs: nine levels of nine aliases, 9**9 strings once expanded (the
# comment pads it to the size the issue measured).
_LAUGHS = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'] + [
    f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join(["*" + chr(97 + i)] * 9) + "]\n" for i in range(8)
]
BOMB = "".join(_LAUGHS)
BOMB = "#" + "lol" * ((445 - len(BOMB)) // 3) + "\n" + BOMB
BOMB = " " * (447 - len(BOMB)) + BOMB
DEEP = "clientId: x\nnested: " + "[" * 5000 + "]" * 5000 + "\n"


def env_for(backend: BackendServer, **extra: str) -> dict[str, str]:
    return {
        "TRACEBLOC_CLIENT_ID": CLIENT_ID,
        "TRACEBLOC_CLIENT_PASSWORD": PASSWORD,
        "TRACEBLOC_BACKEND_URL": backend.url,
        "TRACEBLOC_SKIP_PREFLIGHT": "1",
        "TB_METRICS_WAIT_S": "0",
        "TB_PLAIN": "1",
        **extra,
    }


def fresh(cluster: FakeCluster) -> FakeCluster:
    return cluster.nodes(node("laptop", "8", "16Gi")).installed().installable()


def data_dir(cluster: FakeCluster) -> Path:
    return cluster.home / ".tracebloc"


def mutations(cluster: FakeCluster) -> list[list[str]]:
    return [
        argv
        for argv in cluster.calls("helm")
        if argv and argv[0] in {"upgrade", "rollback", "uninstall", "install"}
    ]


def one_line_error(stderr: str, *words: str) -> None:
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    first = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert first, stderr
    for word in words:
        assert word in first[0], stderr


def test_the_bomb_is_the_one_the_issue_measured() -> None:
    assert len(BOMB.encode()) == 447


# --- writes never follow a link --------------------------------------------------------------


@POSIX
def test_an_install_log_that_is_a_link_is_not_appended_through(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster)
    notes = cluster.home / "notes.txt"
    notes.write_text("my notes\n", encoding="utf-8")
    notes.chmod(0o644)
    data_dir(cluster).mkdir(parents=True)
    (data_dir(cluster) / "install.log").symlink_to(notes)

    result = cluster.run("install", "--yes", **env_for(backend))

    assert result.returncode == 0, result.stderr  # the install runs, without a log file
    assert "install.log" in result.stderr and "symbolic link" in result.stderr
    assert notes.read_text(encoding="utf-8") == "my notes\n"
    assert stat.S_IMODE(notes.stat().st_mode) == 0o644
    assert (data_dir(cluster) / "install.log").is_symlink()


@POSIX
def test_a_linked_kubeconfig_stays_a_link_and_its_target_is_anchored(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    creatable(docker_running(machine_without_cluster(fresh(cluster))))
    target = cluster.home / "dotfiles" / "kubeconfig"
    target.parent.mkdir()
    target.write_text("apiVersion: v1\nkind: Config\n", encoding="utf-8")
    cluster.kubeconfig.symlink_to(target)

    result = cluster.run("install", "--yes", **env_for(backend, PF_MIN_DISK_GB="0"))

    assert result.returncode == 0, result.stderr
    assert cluster.kubeconfig.is_symlink()
    assert os.readlink(cluster.kubeconfig) == str(target)
    text = target.read_text(encoding="utf-8")
    assert "https://127.0.0.1:6550" in text and "0.0.0.0" not in text


@POSIX
@pytest.mark.parametrize("kind", ["fifo", "link-like-dev-stdout"])
def test_values_out_onto_a_special_file_or_a_link_is_refused(
    cluster: FakeCluster, kind: str
) -> None:
    fresh(cluster)
    out = cluster.root / "out.yaml"
    captured = cluster.root / "captured.txt"  # what /dev/stdout leads to when stdout is a file
    if kind == "fifo":
        os.mkfifo(out)
    else:
        captured.write_text("earlier output\n", encoding="utf-8")
        out.symlink_to(captured)

    result = cluster.run(
        "plan",
        "--values-out",
        str(out),
        timeout=30,
        TRACEBLOC_CLIENT_ID=CLIENT_ID,
        TRACEBLOC_CLIENT_PASSWORD=PASSWORD,
    )

    assert result.returncode == 2, result.stderr
    one_line_error(result.stderr, str(out))
    assert PASSWORD not in result.stdout + result.stderr
    if kind == "fifo":
        assert stat.S_ISFIFO(os.lstat(out).st_mode)
    else:
        assert out.is_symlink()
        assert captured.read_text(encoding="utf-8") == "earlier output\n"
    assert not Path(str(out) + ".bak").exists() and not Path(str(captured) + ".bak").exists()


# --- every read is bounded -------------------------------------------------------------------


@POSIX
@pytest.mark.parametrize("command", [("plan",), ("install", "--yes")])
def test_kubeconfig_naming_a_fifo_is_an_error_not_a_hang(
    cluster: FakeCluster, backend: BackendServer, command: tuple[str, ...]
) -> None:
    fresh(cluster)
    fifo = cluster.root / "kube.fifo"
    os.mkfifo(fifo)

    started = time.monotonic()
    result = cluster.run(
        *command, timeout=60, **env_for(backend, KUBECONFIG=f"{cluster.kubeconfig}:{fifo}")
    )

    assert time.monotonic() - started < 20
    assert result.returncode == 2, result.stderr
    one_line_error(result.stderr, str(fifo), "not a regular file")
    assert cluster.calls("kubectl") == [] or mutations(cluster) == []


@POSIX
def test_values_file_a_fifo_does_not_hang_diagnose(cluster: FakeCluster) -> None:
    fresh(cluster)
    data_dir(cluster).mkdir(parents=True)
    os.mkfifo(data_dir(cluster) / "values.yaml")

    started = time.monotonic()
    result = cluster.run("diagnose", "--json", timeout=60)

    assert time.monotonic() - started < 30
    assert result.returncode == 0, result.stderr  # the bundle is written, the FIFO noted
    bundle = json.loads(result.stdout)
    assert "values.yaml: not a regular file: not read" in bundle["notes"], bundle


@pytest.mark.parametrize(
    "content, what",
    [
        pytest.param(BOMB, "alias bomb", id="billion-laughs"),
        pytest.param(DEEP, "levels deep", id="5000-deep"),
    ],
)
@pytest.mark.parametrize("command", ["plan", "diagnose"])
def test_a_hostile_values_file_is_exit_2_within_a_second(
    cluster: FakeCluster, content: str, what: str, command: str
) -> None:
    fresh(cluster)
    data_dir(cluster).mkdir(parents=True)
    values = data_dir(cluster) / "values.yaml"
    values.write_text(content, encoding="utf-8")

    started = time.monotonic()
    result = cluster.run(
        command, timeout=60, TRACEBLOC_CLIENT_ID=CLIENT_ID, TRACEBLOC_CLIENT_PASSWORD=PASSWORD
    )
    elapsed = time.monotonic() - started

    assert result.returncode == 2, result.stderr
    one_line_error(result.stderr, str(values), what)
    # The process starts, reads and answers; the bounded load itself is milliseconds.
    assert elapsed < 10, elapsed


@pytest.mark.parametrize(
    "content, what",
    [
        pytest.param(BOMB, "alias bomb", id="billion-laughs"),
        pytest.param(DEEP, "levels deep", id="5000-deep"),
    ],
)
def test_a_hostile_kubeconfig_is_exit_2_naming_it(
    cluster: FakeCluster, content: str, what: str
) -> None:
    fresh(cluster)
    cluster.kubeconfig.write_text(content, encoding="utf-8")

    result = cluster.run(
        "plan", timeout=60, TRACEBLOC_CLIENT_ID=CLIENT_ID, TRACEBLOC_CLIENT_PASSWORD=PASSWORD
    )

    assert result.returncode == 2, result.stderr
    one_line_error(result.stderr, str(cluster.kubeconfig), what)
    assert cluster.calls("kubectl") == []


def test_a_ca_bundle_larger_than_any_is_refused_unread(
    cluster: FakeCluster, backend: BackendServer, tmp_path: Path
) -> None:
    import trustme

    fresh(cluster)
    pem = trustme.CA().cert_pem.bytes()
    bundle = tmp_path / "huge-ca.pem"
    bundle.write_bytes(pem * (5 * 2**20 // len(pem) + 1))  # valid PEM, 5 MiB of it

    result = cluster.run("plan", timeout=60, **env_for(backend, TRACEBLOC_CA_BUNDLE=str(bundle)))

    assert result.returncode == 2, result.stderr
    one_line_error(result.stderr, "TRACEBLOC_CA_BUNDLE", "larger than 4 MiB")


@POSIX
def test_a_ca_bundle_that_is_a_fifo_is_refused(
    cluster: FakeCluster, backend: BackendServer, tmp_path: Path
) -> None:
    fresh(cluster)
    fifo = tmp_path / "ca.fifo"
    os.mkfifo(fifo)

    result = cluster.run("plan", timeout=30, **env_for(backend, TRACEBLOC_CA_BUNDLE=str(fifo)))

    assert result.returncode == 2, result.stderr
    one_line_error(result.stderr, "TRACEBLOC_CA_BUNDLE", "is not a file")


@POSIX
def test_a_test_manifest_that_is_a_fifo_is_refused(cluster: FakeCluster, tmp_path: Path) -> None:
    fresh(cluster)
    fifo = tmp_path / "manifest.fifo"
    os.mkfifo(fifo)
    mirror = tmp_path / "mirror"
    mirror.mkdir()

    result = cluster.run(
        "tools",
        "--json",
        timeout=30,
        TB_TEST_TOOLS_MANIFEST=str(fifo),
        TRACEBLOC_TOOLS_MIRROR=str(mirror),
    )

    assert result.returncode == 2, result.stderr
    one_line_error(result.stderr, "TB_TEST_TOOLS_MANIFEST", "not a regular file")


# --- a mirror copy stops at the pinned size ----------------------------------------------


def _mirror_with_kubectl(cluster: FakeCluster, tmp_path: Path, **pin: object) -> Path:
    from tests.fakes.mirror import PLATFORM, artifact, mirror_path, write_manifest

    cluster.remove("kubectl")
    entry = artifact("kubectl", PLATFORM)
    entry["sha256"] = "0" * 64
    entry.update(pin)
    manifest = write_manifest(tmp_path / "manifest.json", {("kubectl", PLATFORM): entry})
    mirror = tmp_path / "mirror"
    place = mirror / mirror_path(entry)
    place.parent.mkdir(parents=True)
    return manifest, place  # type: ignore[return-value]


@POSIX
def test_a_mirror_file_that_is_dev_zero_is_refused_not_copied_forever(
    cluster: FakeCluster, tmp_path: Path
) -> None:
    fresh(cluster)
    manifest, place = _mirror_with_kubectl(cluster, tmp_path)
    place.symlink_to("/dev/zero")

    result = cluster.run(
        "tools",
        "--download-to",
        str(tmp_path / "carry"),
        timeout=60,
        TB_TEST_TOOLS_MANIFEST=str(manifest),
        TRACEBLOC_TOOLS_MIRROR=str(tmp_path / "mirror"),
    )

    assert result.returncode != 0, result.stderr
    assert "not a regular file" in result.stderr, result.stderr
    carried = tmp_path / "carry"
    assert sum(p.stat().st_size for p in carried.rglob("*") if p.is_file()) == 0


def test_a_mirror_file_larger_than_its_pinned_size_stops_there(
    cluster: FakeCluster, tmp_path: Path
) -> None:
    fresh(cluster)
    manifest, place = _mirror_with_kubectl(cluster, tmp_path, size=1000)
    place.write_bytes(b"x" * 5000)

    result = cluster.run(
        "tools",
        "--download-to",
        str(tmp_path / "carry"),
        timeout=60,
        TB_TEST_TOOLS_MANIFEST=str(manifest),
        TRACEBLOC_TOOLS_MIRROR=str(tmp_path / "mirror"),
    )

    assert result.returncode != 0, result.stderr
    assert "larger than the pinned artifact (more than 1000 bytes)" in result.stderr
    assert "does not match the checksum" not in result.stderr
    json.dumps(result.stderr)


@POSIX
@pytest.mark.parametrize("kind", ["link", "fifo", "release-dir-link", "mysql-dir-link"])
def test_a_values_file_that_is_a_link_is_refused_before_the_question_and_any_change(
    cluster: FakeCluster, kind: str
) -> None:
    """A refusal that depends only on the data directory's files comes with its other
    checks: before the question is asked and before the chart repository is prepared."""
    from tests.fakes.terminal import Pty

    fresh(cluster)
    data_dir(cluster).mkdir(parents=True)
    values = data_dir(cluster) / "values.yaml"
    elsewhere = cluster.root / "elsewhere.yaml"
    elsewhere.write_text("clientId: someone\n", encoding="utf-8")
    projects = cluster.home / "projects"
    projects.mkdir(mode=0o700)
    if kind == "link":
        values.symlink_to(elsewhere)
    elif kind == "fifo":
        os.mkfifo(values)
    elif kind == "release-dir-link":  # the install would make mysql/ behind it, mode 0777
        (data_dir(cluster) / "tracebloc").symlink_to(projects)
    else:  # the install would chmod 0777 what it points at
        (data_dir(cluster) / "tracebloc").mkdir()
        (data_dir(cluster) / "tracebloc" / "mysql").symlink_to(projects)
    env = cluster.env(
        TRACEBLOC_CLIENT_ID=CLIENT_ID,
        TRACEBLOC_CLIENT_PASSWORD=PASSWORD,
        TRACEBLOC_SKIP_PREFLIGHT="1",
    )
    with Pty.spawn(["install"], env=env, cwd=cluster.root) as term:
        code = term.wait(timeout=60)
        screen = term.screen()

    assert code == 2, screen
    assert "[y/N]" not in screen and "about to change" not in screen, screen
    said = f"will not write {values}" if kind in ("link", "fifo") else "is a symbolic link"
    assert said in screen and "nothing was changed" in screen, screen
    assert not [a for a in cluster.calls("helm") if a[:2] in (["repo", "add"], ["repo", "update"])]
    assert mutations(cluster) == []
    assert elsewhere.read_text(encoding="utf-8") == "clientId: someone\n"
    assert stat.S_IMODE(projects.stat().st_mode) == 0o700 and list(projects.iterdir()) == []
