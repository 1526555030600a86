"""NVIDIA's apt source line and key as the engine writes them, read by Debian's real apt.

`install` runs on the fake GPU workstation (tests/fakes/gpu_host.py) with a throwaway gpg
key standing in for NVIDIA's (its fingerprint passed as TB_TEST_NVIDIA_KEY_FPR, the key
served from the local mirror at nvidia.github.io/libnvidia-container/gpgkey). The list file
and key it left under the fake root — only the URL moved to a local flat repository laid
out as NVIDIA's (`stable/deb/<arch>/`, signed InRelease) — then go to the real `apt-get
update` and `apt-get install --simulate nvidia-container-toolkit`. A line apt cannot use
(the `$(ARCH)` path, the flat `/` suite, the signed-by path, an armored key under a name
apt does not read as armored) gives no candidate or an unsigned repository, as on a real
machine; a repository signed by another key is refused.

Self-contained: this file builds its own small repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from installer.decide.gpuhost import APT_KEY, APT_LIST, NVIDIA_REPO
from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import FakeCluster
from tests.fakes.runtime_host import root_calls, sysroot
from tests.test_cli_gpu_host import TOOLKIT_APT, workstation
from tests.test_cli_install import env_for

TOOLS = ("gpg", "apt-get", "apt-ftparchive", "dpkg-deb", "dpkg")
pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="Debian's apt runs on Linux only"),
    pytest.mark.skipif(
        shutil.which("dpkg") is None, reason="not a Debian-family machine (no dpkg)"
    ),
]


def run(*argv: str, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False, **kw)  # type: ignore[call-overload]


def gpg_key(home: Path, name: str) -> str:
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    env = {**os.environ, "GNUPGHOME": str(home)}
    made = run(
        "gpg",
        "--batch",
        "--passphrase",
        "",
        "--quick-gen-key",
        name,
        "ed25519",
        "sign",
        "never",
        env=env,
    )
    assert made.returncode == 0, made.stderr
    listed = run("gpg", "--batch", "--with-colons", "--list-keys", name, env=env).stdout
    return next(line.split(":")[9] for line in listed.splitlines() if line.startswith("fpr:"))


def export(home: Path, fpr: str) -> bytes:
    out = subprocess.run(
        ["gpg", "--batch", "--armor", "--export", fpr],
        capture_output=True,
        env={**os.environ, "GNUPGHOME": str(home)},
        timeout=60,
        check=True,
    )
    return out.stdout


def flat_repository(root: Path, arch: str, home: Path, fpr: str) -> None:
    """`<root>/stable/deb/<arch>/`: one nvidia-container-toolkit package, Packages, Release
    and an InRelease clear-signed by `fpr`, as NVIDIA's flat repository is laid out."""
    where = root / "stable" / "deb" / arch
    pkg = where / "build" / "DEBIAN"
    pkg.mkdir(parents=True)
    (pkg / "control").write_text(
        f"Package: nvidia-container-toolkit\nVersion: 1.17.8-1\nArchitecture: {arch}\n"
        "Maintainer: test <test@example.invalid>\nDescription: stand-in\n",
        encoding="utf-8",
    )
    built = run(
        "dpkg-deb",
        "--build",
        str(where / "build"),
        str(where / f"nvidia-container-toolkit_1.17.8-1_{arch}.deb"),
    )
    assert built.returncode == 0, built.stderr
    shutil.rmtree(where / "build")
    packages = run("apt-ftparchive", "packages", ".", cwd=where)
    (where / "Packages").write_text(packages.stdout, encoding="utf-8")
    release = run("apt-ftparchive", "release", ".", cwd=where)
    (where / "Release").write_text(release.stdout, encoding="utf-8")
    signed = run(
        "gpg",
        "--batch",
        "--yes",
        "--local-user",
        fpr,
        "--clearsign",
        "-o",
        str(where / "InRelease"),
        str(where / "Release"),
        env={**os.environ, "GNUPGHOME": str(home)},
    )
    assert signed.returncode == 0, signed.stderr


class Apt:
    """The real apt-get with every directory of its own under `root` (never /etc/apt)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        for d in (
            "state/lists/partial",
            "cache/archives/partial",
            "etc/sources.list.d",
            "etc/preferences.d",
            "etc/apt.conf.d",
        ):
            (root / d).mkdir(parents=True, exist_ok=True)
        (root / "status").write_text("", encoding="utf-8")

    def __call__(self, *args: str) -> subprocess.CompletedProcess[str]:
        r = self.root
        opts = [
            f"Dir::Etc::sourcelist={r}/sources.list",
            f"Dir::Etc::sourceparts={r}/etc/sources.list.d",
            f"Dir::Etc::preferencesparts={r}/etc/preferences.d",
            f"Dir::Etc::parts={r}/etc/apt.conf.d",
            f"Dir::State={r}/state",
            f"Dir::State::status={r}/status",
            f"Dir::Cache={r}/cache",
            "Debug::NoLocking=1",
            "APT::Sandbox::User=root",
        ]
        return run(
            "apt-get",
            *[x for o in opts for x in ("-o", o)],
            *args,
            env={**os.environ, "LC_ALL": "C"},
        )

    def installs(self, line: str) -> tuple[bool, str]:
        (self.root / "sources.list").write_text(line, encoding="utf-8")
        shutil.rmtree(self.root / "state" / "lists")
        (self.root / "state" / "lists" / "partial").mkdir(parents=True)
        update = self("update")
        if update.returncode != 0 or "W: " in update.stderr:
            return False, update.stdout + update.stderr
        simulated = self("install", "--simulate", "-y", "nvidia-container-toolkit")
        said = simulated.stdout + simulated.stderr
        return simulated.returncode == 0 and "Inst nvidia-container-toolkit " in said, said


def test_the_real_apt_installs_the_toolkit_from_the_source_and_key_the_engine_wrote(
    cluster: FakeCluster, backend: BackendServer, tmp_path: Path
) -> None:
    missing = [t for t in TOOLS if shutil.which(t) is None]
    assert not missing, f"install {missing} (apt-ftparchive: Debian's apt-utils; .ci/run does)"
    home = tmp_path / "gnupg"
    fpr = gpg_key(home, "nvidia stand-in")
    env = workstation(cluster, toolkit=False, default=False)
    (cluster.root / "mirror/nvidia.github.io/libnvidia-container/gpgkey").write_bytes(
        export(home, fpr)
    )
    env["TB_TEST_NVIDIA_KEY_FPR"] = fpr
    result = cluster.run("install", "--yes", **env_for(backend, **env))
    assert result.returncode == 0, result.stderr
    assert TOOLKIT_APT in root_calls(cluster)

    arch = run("dpkg", "--print-architecture").stdout.strip()
    repo = tmp_path / "repo"
    flat_repository(repo, arch, home, fpr)
    root = sysroot(cluster)
    line = (root / APT_LIST.lstrip("/")).read_text(encoding="utf-8")
    line = line.replace(NVIDIA_REPO, f"file://{repo}").replace(APT_KEY, f"{root}{APT_KEY}")
    apt = Apt(tmp_path / "apt")

    ok, said = apt.installs(line)
    assert ok, f"{line}\n{said}"

    # The same apt refuses each way the line or the key could be wrong.
    other = tmp_path / "other"
    other_fpr = gpg_key(other, "someone else")
    (tmp_path / "other.asc").write_bytes(export(other, other_fpr))
    wrong = {
        "the machine's name for the architecture": line.replace(
            "$(ARCH)", "x86_64" if arch != "x86_64" else "amd64x"
        ),
        "a keyring path the key is not at": line.replace(".asc]", ".gpg]"),
        "another key than the repository's": line.replace(
            f"{root}{APT_KEY}", str(tmp_path / "other.asc")
        ),
    }
    for why, bad in wrong.items():
        assert bad != line, why
        assert not apt.installs(bad)[0], f"apt accepted {why}: {bad}"
