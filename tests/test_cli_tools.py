"""A fresh machine: the CLI, as a process (or the frozen binary), fetches its own kubectl and
helm from a loopback HTTPS mirror with real TLS, verifies them, and uses them.

The archives are built here; their checksums reach the engine through a test manifest
(TB_TEST_TOOLS_MANIFEST, honoured only with a mirror on this machine: see edges/tools.py).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from installer.decide import shellquote
from tests.fakes import workloads
from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import FakeCluster, node
from tests.fakes.executables import executable_path, make_executable
from tests.fakes.mirror import (
    OS,
    PLATFORM,
    STALL,
    TRUNCATE,
    ConnectProxy,
    LoopbackTls,
    MirrorServer,
    artifact,
    mirror_path,
    official_members,
    sha256,
    tar_gz,
    write_manifest,
    zip_bytes,
)
from tests.fakes.workloads import pod

EXE = ".exe" if OS == "windows" else ""


class World:
    """A fake cluster whose PATH lacks kubectl and helm, a mirror serving both, and the
    manifest that pins what it serves."""

    def __init__(self, cluster: FakeCluster, mirror: MirrorServer, tls: LoopbackTls) -> None:
        self.cluster, self.mirror, self.tls = cluster, mirror, tls
        self.entries: dict[tuple[str, str], dict[str, Any]] = {}
        self.manifest = cluster.root / "manifest.json"
        self.tools_dir = cluster.home / ".tracebloc" / "bin"
        scratch = cluster.root / "scratch"
        self.binaries = {
            tool: make_executable(scratch / tool, cluster.program(tool)).read_bytes()
            for tool in ("kubectl", "helm", "k3d")
        }
        for tool in ("kubectl", "helm"):
            cluster.remove(tool)
            self.serve(tool)

    def serve(
        self,
        tool: str,
        content: bytes | None = None,
        *,
        platform: str = PLATFORM,
        pin: bytes | None = None,
    ) -> dict[str, Any]:
        """Serve `content` (default: the official layout around the fake) as the tool's
        artifact and pin `pin` (default: the content's own checksum)."""
        entry = artifact(tool, platform)
        if content is None:
            binary = self.binaries[tool]
            if entry["archive"] == "tar.gz":
                content = tar_gz(*official_members(tool, platform, binary))
            elif entry["archive"] == "zip":
                content = zip_bytes(*official_members(tool, platform, binary))
            else:
                content = binary
        entry["sha256"] = sha256(pin if pin is not None else content)
        self.entries[(tool, platform)] = entry
        self.mirror.files[mirror_path(entry)] = content
        write_manifest(self.manifest, self.entries)
        return entry

    def env(self, **extra: str) -> dict[str, str]:
        return {
            "TB_TEST_TOOLS_MANIFEST": str(self.manifest),
            "TRACEBLOC_TOOLS_MIRROR": self.mirror.url,
            "TRACEBLOC_CA_BUNDLE": str(self.tls.ca_path),
            "TB_PLAIN": "1",
            "TRACEBLOC_SKIP_PREFLIGHT": "1",
            **extra,
        }

    def installed(self) -> list[str]:
        return sorted(os.listdir(self.tools_dir)) if self.tools_dir.exists() else []


@pytest.fixture
def world(cluster: FakeCluster, tmp_path: Path) -> Iterator[World]:
    tls = LoopbackTls(tmp_path)
    with MirrorServer(tls) as mirror:
        yield World(cluster, mirror, tls)


def install_env(backend: BackendServer) -> dict[str, str]:
    return {
        "TRACEBLOC_CLIENT_ID": "client-1",
        "TRACEBLOC_CLIENT_PASSWORD": "pw-Secret-1",
        "TRACEBLOC_BACKEND_URL": backend.url,
        "TRACEBLOC_SKIP_PREFLIGHT": "1",
        "TB_METRICS_WAIT_S": "0",
    }


def errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


# --- a fresh machine --------------------------------------------------------------------------


def test_fresh_machine_install_fetches_verifies_and_uses_the_pinned_tools(
    world: World, backend: BackendServer
) -> None:
    cluster = world.cluster
    cluster.nodes(node("laptop", "8", "16Gi")).installed().installable()

    result = cluster.run("install", "--yes", **world.env(**install_env(backend)))

    assert result.returncode == 0, result.stderr
    assert world.installed() == [f"helm{EXE}", f"kubectl{EXE}"]  # no partial file left
    helm = world.entries[("helm", PLATFORM)]
    assert sorted(world.mirror.requests) == sorted(
        mirror_path(world.entries[(t, PLATFORM)]) for t in ("helm", "kubectl")
    )
    assert f"downloaded helm v4.2.3 ({PLATFORM})" in result.stderr
    assert helm["sha256"] in (cluster.home / ".tracebloc" / "install.log").read_text()
    # The fetched binaries did the work: PATH has neither tool.
    assert ["upgrade", "--install"] == next(
        a[:2] for a in cluster.calls("helm") if a[:1] == ["upgrade"]
    )
    assert cluster.calls("kubectl")

    again = cluster.run("install", "--yes", **world.env(**install_env(backend)))

    assert again.returncode == 0, again.stderr
    assert len(world.mirror.requests) == 2  # fetched once, then reused from the tools directory


def test_a_remedy_after_a_fetch_names_the_copy_the_engine_fetched_and_works_as_printed(
    world: World, backend: BackendServer
) -> None:
    """PATH has no kubectl: the printed `describe` names the fetched copy by its full path,
    and that line, pasted into a shell whose PATH still lacks kubectl, runs that copy."""
    cluster = world.cluster
    slow = pod("tracebloc-jobs-manager-1", "manager", "tracebloc/jobs-manager:1", waiting="Init")
    cluster.nodes(node("laptop", "8", "16Gi")).installed().installable()
    cluster.workloads(*workloads.client(manager=slow))

    result = cluster.run("install", "--yes", **world.env(READY_TIMEOUT="3", **install_env(backend)))

    assert result.returncode == 1
    fetched = str(world.tools_dir / f"kubectl{EXE}")
    printed = next(
        (line for line in result.stderr.splitlines() if "describe pod" in line), ""
    ).partition("inspect: ")[2]
    describe = printed.partition(";")[0].strip()
    assert describe.startswith(shellquote.join([fetched])), result.stderr
    if OS != "windows":  # the line is for PowerShell there
        cluster.on("kubectl", "describe", "pod", stdout="Name: tracebloc-jobs-manager-1\n")
        before = len(cluster.calls("kubectl"))
        pasted = subprocess.run(
            shlex.split(describe), env=cluster.env(), capture_output=True, timeout=60
        )
        assert pasted.returncode == 0, pasted.stderr
        assert pasted.stdout == b"Name: tracebloc-jobs-manager-1\n"
        assert cluster.calls("kubectl")[before:] == [
            ["describe", "pod", "tracebloc-jobs-manager-1", "-n", "tracebloc"]
        ]


def test_plan_and_probe_show_what_would_be_fetched(world: World) -> None:
    cluster = world.cluster
    helm = world.entries[("helm", PLATFORM)]

    plan = cluster.run_json("plan", **world.env())
    probe = cluster.run_json("probe", **world.env())
    text = cluster.run("plan", **world.env())

    for doc in (plan, probe):
        assert doc["tools"]["helm"] == {
            "path": str(world.tools_dir / f"helm{EXE}"),
            "version": "v4.2.3",
            "source": "download",
            "url": world.mirror.url + mirror_path(helm),
            "sha256": helm["sha256"],
        }
        assert doc["tools"]["kubectl"]["source"] == "download"
        assert doc["tools"]["k3d"]["source"] is None  # nothing pinned for it in this manifest
    assert f"helm v4.2.3 (to be downloaded from {world.mirror.url}" in text.stdout
    # Nothing to read the cluster with yet: neither a promise nor a refusal (exit 0).
    assert plan["verdict"]["action"] == "fetch-tools-first"
    assert world.mirror.requests == [] and world.installed() == []  # plan changes nothing


@pytest.mark.parametrize(
    ("version", "used"),
    [
        pytest.param("v3.14.4", True, id="helm-3.14-on-path-is-used"),
        pytest.param("v4.1.4", True, id="helm-4-on-path-is-used"),
        pytest.param("v3.9.0", False, id="helm-3.9-on-path-is-passed-over"),
        pytest.param("garbage", False, id="helm-of-unknown-version-is-passed-over"),
    ],
)
def test_a_tool_on_path_is_used_only_in_the_supported_range(
    world: World, version: str, used: bool
) -> None:
    cluster = world.cluster
    cluster.install("helm")
    cluster.version("helm", version)

    doc = cluster.run_json("tools", **world.env())

    helm = doc["tools"]["helm"]
    if used:
        assert (helm["source"], helm["version"]) == ("path", version)
        assert helm["path"] == str(cluster.executable("helm"))
    else:
        assert helm["source"] == "download"
        assert "outside the supported range (3.14 or later, up to 4.x)" in helm["note"]
    assert ["version", "--template", "{{.Version}}"] in cluster.calls("helm", versions=True)


def test_an_explicit_tool_wins_whatever_its_version(world: World) -> None:
    cluster = world.cluster
    old = make_executable(cluster.root / "opt" / "helm-old", cluster.program("helm"))
    cluster.version("helm", "v3.2.0")

    doc = cluster.run_json("tools", **world.env(TRACEBLOC_HELM=str(old)))

    assert doc["tools"]["helm"] == {"path": str(old), "version": "v3.2.0", "source": "env"}


# --- what does not match installs nothing ------------------------------------------------------


def tampered(data: bytes) -> bytes:
    middle = len(data) // 2
    return data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :]


def test_a_tampered_byte_installs_nothing_and_names_both_checksums(world: World) -> None:
    entry = world.entries[("helm", PLATFORM)]
    good = world.mirror.files[mirror_path(entry)]
    world.mirror.files[mirror_path(entry)] = bad = tampered(good)

    result = world.cluster.run(
        "tools", "--download-to", str(world.cluster.root / "carry"), **world.env()
    )

    assert result.returncode == 1
    [error] = errors(result.stderr)
    assert f"expected sha256 {entry['sha256']}, received {sha256(bad)}" in error
    assert not (world.cluster.root / "carry" / mirror_path(entry)).exists()
    assert not [
        p
        for p in (world.cluster.root / "carry").rglob("*")
        if p.is_file() and p.name.startswith(".tracebloc-")
    ]


@pytest.mark.parametrize(
    "fault",
    [
        pytest.param("tampered", id="tampered-byte"),
        pytest.param("short-file", id="truncated-file"),
        pytest.param(TRUNCATE, id="connection-closed-mid-body"),
    ],
)
def test_bad_bytes_on_install_leave_the_tools_directory_empty(
    world: World, backend: BackendServer, fault: str
) -> None:
    entry = world.entries[("helm", PLATFORM)]
    path = mirror_path(entry)
    if fault == "tampered":
        world.mirror.files[path] = tampered(world.mirror.files[path])
    elif fault == "short-file":
        world.mirror.files[path] = world.mirror.files[path][:-100]
    else:
        world.mirror.faults[path] = [TRUNCATE] * 3

    result = world.cluster.run("install", "--yes", **world.env(**install_env(backend)))

    assert result.returncode == 1, result.stderr
    assert len(errors(result.stderr)) == 1
    assert f"helm{EXE}" not in world.installed()
    assert not [name for name in world.installed() if name.startswith(".tracebloc-")]
    assert backend.requests == []  # stopped before the credentials check


@pytest.mark.parametrize(
    ("members", "said"),
    [
        pytest.param(
            [("extra/evil.sh", b"#!/bin/sh\n", "file")],
            "which the official one does not",
            id="extra-member",
        ),
        pytest.param(
            [("../escape", b"x", "file")], "a path outside its folder", id="dotdot-member"
        ),
        pytest.param(
            [("/etc/evil", b"x", "file")], "a path outside its folder", id="absolute-member"
        ),
    ],
)
def test_an_archive_with_more_than_the_official_files_is_refused(
    world: World, members: list[tuple[str, bytes, str]], said: str
) -> None:
    official = official_members("helm", PLATFORM, world.binaries["helm"])
    content = (zip_bytes if OS == "windows" else tar_gz)(*official, *members)
    world.serve("helm", content)  # pinned as served: only the archive rules can stop it

    result = world.cluster.run("install", "--yes", **world.env())

    assert result.returncode == 1
    [error] = errors(result.stderr)
    assert said in error, error
    assert world.installed() == [f"kubectl{EXE}"]  # fetched before helm; no helm, no part
    assert not (world.cluster.root / "escape").exists()


def test_a_symlink_member_is_refused(world: World) -> None:
    folder = PLATFORM.replace("x86_64", "amd64")
    exe = f"helm{EXE}"
    content = (zip_bytes if OS == "windows" else tar_gz)(
        (f"{folder}/", None, "dir"),
        (f"{folder}/{exe}", b"/usr/bin/true", "symlink"),
        (f"{folder}/LICENSE", b"l", "file"),
        (f"{folder}/README.md", b"r", "file"),
    )
    world.serve("helm", content)

    result = world.cluster.run("install", "--yes", **world.env())

    assert result.returncode == 1
    assert "which is not a plain file" in errors(result.stderr)[0]
    assert world.installed() == [f"kubectl{EXE}"]


def test_a_binary_that_does_not_run_here_is_not_installed(world: World) -> None:
    world.cluster.version("kubectl", "v1.30.0")  # not the pinned v1.37.1

    result = world.cluster.run("install", "--yes", **world.env())

    assert result.returncode == 1
    [error] = errors(result.stderr)
    assert (
        "the downloaded kubectl does not run here (it reports v1.30.0, expected v1.37.1)" in error
    )
    assert world.installed() == []


# --- networks that fight back ------------------------------------------------------------------


def test_a_404_is_not_retried(world: World) -> None:
    entry = world.entries[("kubectl", PLATFORM)]
    del world.mirror.files[mirror_path(entry)]

    result = world.cluster.run(
        "tools", "--download-to", str(world.cluster.root / "carry"), **world.env()
    )

    assert result.returncode == 1
    assert "HTTP 404" in errors(result.stderr)[0]
    assert world.mirror.requests.count(mirror_path(entry)) == 1


def test_a_500_then_200_succeeds_on_the_second_try(world: World) -> None:
    entry = world.entries[("kubectl", PLATFORM)]
    world.mirror.faults[mirror_path(entry)] = [500]
    carry = world.cluster.root / "carry"

    result = world.cluster.run("tools", "--download-to", str(carry), **world.env())

    assert result.returncode == 0, result.stderr
    assert world.mirror.requests.count(mirror_path(entry)) == 2
    assert sha256((carry / mirror_path(entry)).read_bytes()) == entry["sha256"]


def test_a_server_that_stalls_is_abandoned_at_the_deadline(world: World) -> None:
    entry = world.entries[("kubectl", PLATFORM)]
    world.mirror.faults[mirror_path(entry)] = [STALL] * 3

    started = time.monotonic()
    result = world.cluster.run("install", "--yes", **world.env(TRACEBLOC_DOWNLOAD_TIMEOUT_S="2"))
    wall = time.monotonic() - started

    assert result.returncode == 1
    assert "did not finish downloading within 2s" in errors(result.stderr)[0]
    assert wall < 20, f"took {wall:.1f}s with a 2s deadline"
    assert f"kubectl{EXE}" not in world.installed()


def test_downloads_go_through_the_proxy(world: World) -> None:
    carry = world.cluster.root / "carry"
    with ConnectProxy() as proxy:
        result = world.cluster.run(
            "tools",
            "--download-to",
            str(carry),
            **world.env(HTTPS_PROXY=proxy.url, TB_TEST_PROXY_LOOPBACK="1"),
        )
        tunnels = list(proxy.tunnels)

    assert result.returncode == 0, result.stderr
    port = world.mirror.url.rstrip("/").rsplit(":", 1)[1]
    assert tunnels == [f"127.0.0.1:{port}"] * 2


# --- the air gap ---------------------------------------------------------------------------------


def test_download_to_fills_a_mirror_that_an_offline_install_uses(
    world: World, backend: BackendServer
) -> None:
    cluster = world.cluster
    cluster.nodes(node("laptop", "8", "16Gi")).installed().installable()
    carry = cluster.root / "carry"

    filled = cluster.run("tools", "--download-to", str(carry), "--json", **world.env())

    assert filled.returncode == 0, filled.stderr
    doc = json.loads(filled.stdout)
    assert doc["complete"] is True
    assert {(f["tool"], f["status"]) for f in doc["files"]} == {
        ("kubectl", "downloaded"),
        ("helm", "downloaded"),
    }
    served = len(world.mirror.requests)

    offline = cluster.run(
        "install", "--yes", **world.env(TRACEBLOC_TOOLS_MIRROR=str(carry), **install_env(backend))
    )

    assert offline.returncode == 0, offline.stderr
    assert world.installed() == [f"helm{EXE}", f"kubectl{EXE}"]
    assert len(world.mirror.requests) == served  # the network was not used


def test_download_to_lists_what_has_no_verified_pin_and_fails(world: World) -> None:
    other = "linux-arm64" if PLATFORM != "linux-arm64" else "linux-x86_64"
    world.entries[("helm", other)] = artifact("helm", other)  # sha256 PENDING
    write_manifest(world.manifest, world.entries)
    carry = world.cluster.root / "carry"

    result = world.cluster.run(
        "tools", "--download-to", str(carry), "--platform", "all", **world.env()
    )

    assert result.returncode == 1
    assert f"missing  helm v4.2.3 {other}: no verified checksum" in result.stdout
    assert errors(result.stderr) == [
        "error: some tools have no verified checksum pinned in this build (listed above)"
    ]
    assert not (carry / mirror_path(world.entries[("helm", other)])).exists()
    assert (carry / mirror_path(world.entries[("helm", PLATFORM)])).is_file()


def test_download_to_the_home_removes_only_its_own_files(world: World) -> None:
    """`tools --download-to ~`: a day-old file of the user's that merely starts like our
    temporary names stays; only the engine's own leftover temporary file is swept."""
    home = world.cluster.home
    day_old = time.time() - 3 * 24 * 3600
    theirs = home / ".tracebloc-backup.tar.gz"
    ours = home / ".tracebloc-k2j9x_q1.download"  # a killed run's temporary file
    for path in (theirs, ours):
        path.write_bytes(b"x")
        os.utime(path, (day_old, day_old))

    result = world.cluster.run("tools", "--download-to", "~", **world.env())

    assert result.returncode == 0, result.stderr
    assert theirs.read_bytes() == b"x"
    assert not ours.exists()
    assert (home / mirror_path(world.entries[("helm", PLATFORM)])).is_file()


# --- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        pytest.param(
            {"TRACEBLOC_TOOLS_MIRROR": "ftp://mirror.example/tools/"},
            "TRACEBLOC_TOOLS_MIRROR='ftp://mirror.example/tools/' is neither",
            id="ftp-mirror",
        ),
        pytest.param(
            {"TRACEBLOC_TOOLS_MIRROR": "no-such-directory"},
            "TRACEBLOC_TOOLS_MIRROR='no-such-directory' is not a directory",
            id="missing-mirror-directory",
        ),
        pytest.param(
            {"TRACEBLOC_TOOLS_DIR": "{root}/a-file/bin"},
            "TRACEBLOC_TOOLS_DIR",
            id="unwritable-tools-directory",
        ),
        pytest.param(
            {"TRACEBLOC_TOOLS_MIRROR": "https://tools.example.com/"},
            "TB_TEST_TOOLS_MANIFEST is for tests only",
            id="test-manifest-with-a-remote-mirror",
        ),
        pytest.param(
            {"TRACEBLOC_DOWNLOAD_TIMEOUT_S": "soon"},
            "TRACEBLOC_DOWNLOAD_TIMEOUT_S='soon'",
            id="download-timeout-not-a-number",
        ),
    ],
)
def test_bad_tool_settings_are_one_line_and_exit_2(
    world: World, extra: dict[str, str], said: str
) -> None:
    (world.cluster.root / "a-file").write_text("not a directory")
    extra = {k: v.format(root=world.cluster.root) for k, v in extra.items()}

    result = world.cluster.run("install", "--yes", **world.env(**extra))

    assert result.returncode == 2, result.stderr
    [error] = errors(result.stderr)
    assert said in error, error
    assert "Traceback" not in result.stderr
    assert world.mirror.requests == []


def test_the_cached_tool_is_reused_without_the_network(world: World) -> None:
    world.tools_dir.mkdir(parents=True)
    cached = executable_path(world.tools_dir / "helm")
    cached.write_bytes(world.binaries["helm"])
    cached.chmod(0o755)

    doc = world.cluster.run_json("tools", **world.env())

    assert doc["tools"]["helm"] == {"path": str(cached), "version": "v4.2.3", "source": "cache"}


def test_a_download_larger_than_the_pinned_size_is_stopped_there(world: World) -> None:
    entry = world.serve("kubectl", b"k" * 50_000)
    entry["size"] = 1000  # the manifest pins the official file's size
    write_manifest(world.manifest, world.entries)
    carry = world.cluster.root / "carry"

    result = world.cluster.run("tools", "--download-to", str(carry), **world.env())

    assert result.returncode != 0
    assert "sent more than the pinned artifact's 1000 bytes" in result.stderr, result.stderr
    assert not any(p.name.startswith("kubectl") for p in carry.rglob("*"))
