"""Debian's own tools, for tests that prove what the engine writes is what apt reads: a
throwaway OpenPGP key (gpg in a private GNUPGHOME), a signed apt repository of stand-in
packages (dpkg-deb, apt-ftparchive), and the real apt-get run against a private directory
tree (its own configuration, sources, lists, cache and dpkg status: never the machine's)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

# What Docker's repository serves (https://docs.docker.com/engine/install/debian/).
DOCKER_PACKAGES = (
    "docker-ce",
    "docker-ce-cli",
    "containerd.io",
    "docker-buildx-plugin",
    "docker-compose-plugin",
)
NEEDED = ("apt-get", "dpkg", "dpkg-deb", "apt-ftparchive", "gpg")


def missing_tools() -> list[str]:
    return [tool for tool in NEEDED if shutil.which(tool) is None]


def _run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"}
    env.update(kwargs.pop("env", {}))  # type: ignore[arg-type]
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=120, env=env, check=False, **kwargs
    )  # type: ignore[call-overload]


def gpg_key(home: Path, name: str) -> str:
    """A new signing key in `home` (a GNUPGHOME); its fingerprint."""
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    made = _run(
        [
            "gpg",
            "--batch",
            "--passphrase",
            "",
            "--quick-gen-key",
            f"{name} <{name.replace(' ', '-')}@example.invalid>",
            "default",
            "default",
            "never",
        ],
        env={"GNUPGHOME": str(home)},
    )
    assert made.returncode == 0, made.stderr
    listed = _run(
        ["gpg", "--batch", "--with-colons", "--list-keys", name], env={"GNUPGHOME": str(home)}
    )
    return next(
        line.split(":")[9] for line in listed.stdout.splitlines() if line.startswith("fpr:")
    )


def export(home: Path, *fprs: str, armor: bool = True) -> bytes:
    done = subprocess.run(
        ["gpg", "--batch", *(["--armor"] if armor else []), "--export", *fprs],
        capture_output=True,
        timeout=60,
        env={"GNUPGHOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        check=True,
    )
    return done.stdout


def dpkg_arch() -> str:
    return _run(["dpkg", "--print-architecture"]).stdout.strip()


def signed_repository(base: Path, codename: str, home: Path, fpr: str, arch: str) -> None:
    """Docker's layout under `base` (…/linux/debian): dists/<codename>/stable for `arch`,
    stand-in packages in pool/, an InRelease signed by `fpr`."""
    pool = base / "pool" / "stable"
    pool.mkdir(parents=True)
    for package in DOCKER_PACKAGES:
        tree = base.parent / "build" / package
        (tree / "DEBIAN").mkdir(parents=True)
        (tree / "DEBIAN" / "control").write_text(
            f"Package: {package}\nVersion: 99.0\nArchitecture: {arch}\n"
            "Maintainer: tests <tests@example.invalid>\nDescription: a stand-in\n",
            encoding="utf-8",
        )
        built = _run(["dpkg-deb", "--build", str(tree), str(pool / f"{package}_99.0_{arch}.deb")])
        assert built.returncode == 0, built.stderr
    binary = base / "dists" / codename / "stable" / f"binary-{arch}"
    binary.mkdir(parents=True)
    packages = _run(["apt-ftparchive", "packages", "pool"], cwd=str(base))
    assert packages.returncode == 0, packages.stderr
    (binary / "Packages").write_text(packages.stdout, encoding="utf-8")
    options = [
        f"-oAPT::FTPArchive::Release::{k}={v}"
        for k, v in (
            ("Origin", "Docker"),
            ("Suite", codename),
            ("Codename", codename),
            ("Components", "stable"),
            ("Architectures", arch),
        )
    ]
    release = _run(["apt-ftparchive", *options, "release", f"dists/{codename}"], cwd=str(base))
    assert release.returncode == 0, release.stderr
    (base / "dists" / codename / "Release").write_text(release.stdout, encoding="utf-8")
    signed = _run(
        [
            "gpg",
            "--batch",
            "--yes",
            "--local-user",
            fpr,
            "--clearsign",
            "--output",
            str(base / "dists" / codename / "InRelease"),
            str(base / "dists" / codename / "Release"),
        ],
        env={"GNUPGHOME": str(home)},
    )
    assert signed.returncode == 0, signed.stderr


class Apt:
    """The real apt-get with every directory inside `root` (APT_CONFIG is read before
    anything else, so the machine's apt.conf, apt.conf.d, sources and lists never are)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        for folder in (
            "etc/apt/sources.list.d",
            "etc/apt/apt.conf.d",
            "etc/apt/preferences.d",
            "etc/apt/trusted.gpg.d",
            "var/lib/apt/lists/partial",
            "var/lib/dpkg",
            "var/cache/apt/archives/partial",
            "var/log/apt",
        ):
            (root / folder).mkdir(parents=True, exist_ok=True)
        (root / "var/lib/dpkg/status").write_text("", encoding="utf-8")
        (root / "etc/apt/sources.list").write_text("", encoding="utf-8")
        lines = [
            f'Dir "{root}/";',
            f'Dir::State::status "{root}/var/lib/dpkg/status";',
            'Dir::Cache::pkgcache "pkgcache.bin";',
            'Dir::Cache::srcpkgcache "srcpkgcache.bin";',
            f'Dir::Log "{root}/var/log/apt";',
            'Debug::NoLocking "true";',
            'Acquire::Languages "none";',
        ]
        if hasattr(os, "getuid") and os.getuid() == 0:
            lines.append('APT::Sandbox::User "root";')  # _apt cannot enter a 0700 tmp dir
        self.config = root / "apt-test.conf"
        self.config.write_text("\n".join(lines) + "\n", encoding="utf-8")

    def source(self, text: str) -> None:
        (self.root / "etc/apt/sources.list.d/docker.list").write_text(text, encoding="utf-8")
        shutil.rmtree(self.root / "var/lib/apt/lists")
        (self.root / "var/lib/apt/lists/partial").mkdir(parents=True)

    def __call__(self, *args: str) -> subprocess.CompletedProcess[str]:
        return _run(["apt-get", *args], env={"APT_CONFIG": str(self.config)})
