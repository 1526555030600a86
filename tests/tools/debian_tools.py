"""Install Debian's own tools the real-tool tests run, where they are missing.

systemd (`systemd-analyze verify` and the manager's test mode read every drop-in the engine
writes), util-linux (setpriv), sudo (root's file content relayed on stdin), apt-utils
(apt-ftparchive builds the signed local repositories the real-apt tests read with apt-get),
gnupg (their throwaway keys), zsh and fish (the completion tests).

    python tests/tools/debian_tools.py

As root on a Debian-family machine it runs apt-get; otherwise it prints what to install and
exits 0, and the tests that need a missing tool fail naming it. Exit 1 when apt-get failed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

# (a command the tests run, the Debian package that ships it)
NEEDED = (
    ("systemd-analyze", "systemd"),
    ("setpriv", "util-linux"),
    ("sudo", "sudo"),
    ("apt-ftparchive", "apt-utils"),
    ("gpg", "gnupg"),
    ("zsh", "zsh"),
    ("fish", "fish"),
)


def missing() -> list[str]:
    return [package for command, package in NEEDED if shutil.which(command) is None]


def main() -> int:
    if not sys.platform.startswith("linux") or shutil.which("apt-get") is None:
        print("debian_tools: not a Debian-family machine; the real-tool tests skip or say why")
        return 0
    packages = missing()
    if not packages:
        print("debian_tools: every tool the real-tool tests run is installed")
        return 0
    if os.geteuid() != 0:
        print(f"debian_tools: as root, install: apt-get install -y {' '.join(packages)}")
        return 0
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    print(f"debian_tools: apt-get install {' '.join(packages)}", flush=True)
    update = subprocess.run(["apt-get", "update", "-qq"], env=env, check=False)
    install = subprocess.run(
        ["apt-get", "install", "-y", "-q", "--no-install-recommends", *packages],
        env=env,
        check=False,
    )
    return 0 if update.returncode == 0 and install.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
