"""The apt source line and keyring the engine writes, read by Debian's real apt-get.

`prepare-host` runs against the fake Linux host (tests/fakes/runtime_host.py); then the
files it left under the fake root — exactly them, only the URL moved from
download.docker.com to a local signed repository laid out as Docker's — go to the real
`apt-get update` and `apt-get install --simulate`. A wrong architecture name, suite,
component or signed-by path gives no candidate or an unsigned repository, as it would on a
real Debian machine. The real key check runs too: the repository is signed by a throwaway
gpg key, whose fingerprint stands in for Docker's published one.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from installer.decide.runtime import APT_SOURCE, DOCKER_DOWNLOAD
from tests.fakes.cluster import FakeCluster
from tests.fakes.debian_repo import (
    Apt,
    dpkg_arch,
    export,
    gpg_key,
    missing_tools,
    signed_repository,
)
from tests.fakes.runtime_host import (
    DOCKER_CE_APT,
    GRANTEE,
    OS_RELEASES,
    linux_host,
    root_calls,
    sysroot,
)

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="Debian's apt runs on Linux only"),
    pytest.mark.skipif(
        shutil.which("dpkg") is None, reason="not a Debian-family machine (no dpkg)"
    ),
]


@pytest.fixture
def debian_tools() -> None:
    missing = missing_tools()
    assert not missing, f"install {missing} (apt-ftparchive: Debian's apt-utils; .ci/run does)"


def engine_files(cluster: FakeCluster, tmp_path: Path, distro: str) -> tuple[str, list[str], str]:
    """Run prepare-host with a throwaway key standing in for Docker's; the source line,
    the packages it installed, and the key's fingerprint."""
    home = tmp_path / "gnupg"
    fpr = gpg_key(home, "docker stand-in")
    env = linux_host(cluster, distro)
    base = "ubuntu" if distro == "ubuntu" else "debian"
    (cluster.root / "mirror/download.docker.com/linux" / base / "gpg").write_bytes(
        export(home, fpr)
    )
    # The engine asks this machine's dpkg for apt's architecture name, as on a real host.
    (cluster.bin / "dpkg").symlink_to(shutil.which("dpkg") or "/usr/bin/dpkg")
    env["TB_TEST_DOCKER_APT_KEY_FPR"] = fpr
    result = cluster.run("prepare-host", TB_PREPARE_USER=GRANTEE, **env)
    assert result.returncode == 0, result.stderr
    install = next(
        c
        for c in root_calls(cluster)
        if c[: len(DOCKER_CE_APT) - 3] == DOCKER_CE_APT[:-3] and "docker-ce" in c
    )
    packages = [a for a in install[len(DOCKER_CE_APT) - 3 :] if not a.startswith("-")]
    source = (sysroot(cluster) / APT_SOURCE.lstrip("/")).read_text(encoding="utf-8")
    return source, packages, fpr


def for_apt(source: str, repo: Path, root: Path) -> str:
    """The engine's line with only the URL moved to the local repository and the keyring
    path read under the fake root (where the engine's `install` put it)."""
    moved = source.replace(DOCKER_DOWNLOAD, f"file://{repo}/linux")
    return re.sub(r"signed-by=(/\S+?)([\] ])", lambda m: f"signed-by={root}{m[1]}{m[2]}", moved)


def installs(apt: Apt, line: str, packages: list[str]) -> tuple[bool, str]:
    apt.source(line)
    update = apt("update")
    if update.returncode != 0 or "W: " in update.stderr:
        return False, update.stdout + update.stderr
    simulated = apt("install", "--simulate", "-y", *packages)
    said = simulated.stdout + simulated.stderr
    return simulated.returncode == 0 and all(f"Inst {p} " in said for p in packages), said


@pytest.mark.parametrize(
    "distro",
    [
        pytest.param("debian", id="debian-12-bookworm"),
        pytest.param("ubuntu", id="ubuntu-24.04-noble"),
    ],
)
def test_the_real_apt_installs_docker_from_the_source_and_key_the_engine_wrote(
    cluster: FakeCluster,
    tmp_path: Path,
    distro: str,
    debian_tools: None,
) -> None:
    source, packages, fpr = engine_files(cluster, tmp_path, distro)
    assert packages == ["docker-ce", "docker-ce-cli", "containerd.io"]
    codename = "noble" if distro == "ubuntu" else "bookworm"
    assert f"VERSION_CODENAME={codename}" in OS_RELEASES[distro]
    repo = tmp_path / "repo"
    signed_repository(
        repo / "linux" / ("ubuntu" if distro == "ubuntu" else "debian"),
        codename,
        tmp_path / "gnupg",
        fpr,
        dpkg_arch(),
    )
    apt = Apt(tmp_path / "apt")
    line = for_apt(source, repo, sysroot(cluster))

    ok, said = installs(apt, line, packages)
    assert ok, f"{line}\n{said}"

    # The same check refuses each way the line could be wrong.
    arch = dpkg_arch()
    wrong = {
        "the machine name, not dpkg's": line.replace(f"arch={arch}", "arch=x86_64"),
        "another suite": line.replace(f" {codename} stable", " jammy stable"),
        "another component": line.replace(f" {codename} stable", f" {codename} edge"),
        "a keyring path the key is not at": line.replace("/docker.asc", "/docker.gpg"),
    }
    for why, bad in wrong.items():
        assert bad != line, why
        assert not installs(apt, bad, packages)[0], f"apt accepted {why}: {bad}"
