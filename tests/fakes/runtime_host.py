"""A Linux machine for the container-runtime step: fake sudo, package managers, systemctl,
usermod, install, modprobe, sg and docker on PATH, each logging its argv to the cluster's
call log, replaying a state (no Docker, stopped, installed but not in the group, running).

`sudo` logs itself with the wrapped command and then runs that command from PATH, so each
root call appears twice in order: `sudo -n <argv>` and `<argv>` itself. It refuses a
`-n <command>` until `-v` succeeded (or the scenario says no password is needed): a run that
forgot to ask for the password once fails as the real sudo would.

`install` performs what it was asked under `sysroot` (the machine's `/`), keeping modes, so
tests read the files the engine put under /etc and their permissions.
"""

from __future__ import annotations

import json
import platform
import shutil
import sys
from pathlib import Path

from installer.decide.runtime import parse_os_release
from tests.fakes.cluster import FakeCluster
from tests.fakes.executables import make_executable

OS_RELEASES = {
    "debian": 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\nVERSION_ID="12"\n'
    "VERSION_CODENAME=bookworm\n",
    "ubuntu": 'NAME="Ubuntu"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID="24.04"\n'
    "VERSION_CODENAME=noble\nUBUNTU_CODENAME=noble\n",
    "fedora": 'NAME="Fedora Linux"\nID=fedora\nVERSION_ID=40\n',
    "rhel9": 'NAME="Red Hat Enterprise Linux"\nID="rhel"\nID_LIKE="fedora"\nVERSION_ID="9.4"\n',
    "rocky9": 'NAME="Rocky Linux"\nID="rocky"\nID_LIKE="rhel centos fedora"\nVERSION_ID="9.4"\n',
    "amzn2023": 'NAME="Amazon Linux"\nID="amzn"\nID_LIKE="fedora"\nVERSION_ID="2023"\n',
    "arch": 'NAME="Arch Linux"\nID=arch\n',
    "opensuse": 'NAME="openSUSE Leap"\nID="opensuse-leap"\nID_LIKE="suse opensuse"\n'
    'VERSION_ID="15.6"\n',
}
PACKAGE_MANAGER = {
    "debian": "apt-get",
    "ubuntu": "apt-get",
    "fedora": "dnf",
    "rhel9": "dnf",
    "rocky9": "dnf",
    "amzn2023": "dnf",
    "arch": "pacman",
    "opensuse": "zypper",
}
USER, UID = "ana", "1000"
# Whom prepare-host grants: an account every Debian (and Fedora) has, since the engine looks
# TB_PREPARE_USER up in this machine's passwd database before anything runs.
GRANTEE = "nobody"
KERNEL_MODULE_NAMES = ("overlay", "br_netfilter", "xt_addrtype", "iptable_nat", "ip_tables")
STOPPED = json.dumps(
    {
        "ServerErrors": [
            "Cannot connect to the Docker daemon at "
            "unix:///var/run/docker.sock. Is the docker daemon running?"
        ]
    }
)
DENIED = json.dumps(
    {
        "ServerErrors": [
            "permission denied while trying to connect to the Docker "
            "daemon socket at unix:///var/run/docker.sock"
        ]
    }
)
RUNNING = json.dumps(
    {
        "MemTotal": 16 * 2**30,
        "NCPU": 8,
        "OperatingSystem": "Ubuntu",
        "Runtimes": {"runc": {}},
        "ServerErrors": None,
    }
)
TEST_KEY = Path(__file__).parent / "data" / "test-apt-key.asc"
TEST_KEY_FPR = "06C6EE65ADA7838FB379AAE08693637E2E58A330"
DOCKER_CE_APT = [
    "env",
    "DEBIAN_FRONTEND=noninteractive",
    "NEEDRESTART_MODE=a",
    "apt-get",
    "install",
    "-y",
    "-q",
    "-o",
    "DPkg::Lock::Timeout=600",
    "-o",
    "Dpkg::Options::=--force-confdef",
    "-o",
    "Dpkg::Options::=--force-confold",
    "docker-ce",
    "docker-ce-cli",
    "containerd.io",
]
# dpkg's architecture names (dpkg-architecture -L, the common ones) and this machine's.
DPKG_ARCHES = (
    "amd64",
    "arm64",
    "armel",
    "armhf",
    "i386",
    "mips64el",
    "ppc64el",
    "riscv64",
    "s390x",
    "loong64",
)
MACHINE_DPKG_ARCH = {"x86_64": "amd64", "aarch64": "arm64", "arm64": "arm64", "amd64": "amd64"}.get(
    platform.machine().lower(), platform.machine().lower()
)
STARTED, GRANTED, INSTALLED = "docker-started", "docker-granted", "docker-installed"

SUDO = """import json, os, sys
log, marks, nopw, password_ok = {log!r}, {marks!r}, {nopw!r}, {password_ok!r}
argv = sys.argv[1:]
with open(log, "a", encoding="utf-8") as out:
    out.write(json.dumps({{"tool": "sudo", "argv": argv, "pid": os.getpid(), "env": {{}},
                          "env_names": sorted(os.environ)}}) + "\\n")
primed = os.path.join(marks, "sudo-primed")
if argv == ["-v"]:
    if password_ok:
        os.makedirs(marks, exist_ok=True)
        open(primed, "w").close()
    sys.exit(0 if password_ok else 1)
if argv[:1] != ["-n"]:  # the twin's bare `sudo COMMAND`
    argv = ["-n", *argv]
if argv[1:] in (["true"], ["-v"]):  # `sudo -n -v`: the keepalive's refresh
    sys.exit(0 if nopw or os.path.exists(primed) else 1)
if not nopw and not os.path.exists(primed):
    sys.stderr.write("sudo: a password is required\\n")
    sys.exit(1)
os.environ["FAKE_ROOT"] = "1"
os.execvp(argv[1], argv[1:])
"""

INSTALL = """import json, os, shutil, sys
log, root = {log!r}, {root!r}
argv = sys.argv[1:]
with open(log, "a", encoding="utf-8") as out:
    out.write(json.dumps({{"tool": "install", "argv": argv, "pid": os.getpid(), "env": {{}},
                          "env_names": []}}) + "\\n")
mode = int(argv[argv.index("-m") + 1], 8) if "-m" in argv else 0o755
paths = [a for i, a in enumerate(argv) if not a.startswith("-") and argv[i - 1] != "-m"]
if "-d" in argv:
    for p in paths:
        os.makedirs(root + p, exist_ok=True)
        os.chmod(root + p, mode)
    sys.exit(0)
src, dest = paths
# The real install reads a pipe on /dev/stdin as any file; a path it cannot read fails it.
try:
    with open(src, "rb") as handle:
        data = handle.read()
except OSError as exc:
    sys.stderr.write(f"install: cannot open {{src!r}} for reading: {{exc.strerror}}\\n")
    sys.exit(1)
os.makedirs(os.path.dirname(root + dest), exist_ok=True)
with open(root + dest, "wb") as out:
    out.write(data)
os.chmod(root + dest, mode)
"""

# grep -qxE, test -e, rm -f and mv -f on files under /etc, performed under `sysroot` (the
# engine's guarded drop-in steps); any other path is refused, so no test touches the real /etc.
ETC_TOOL = """import json, os, re, sys
log, root = {log!r}, {root!r}
tool, argv = os.path.basename(sys.argv[0]), sys.argv[1:]
with open(log, "a", encoding="utf-8") as out:
    out.write(json.dumps({{"tool": tool, "argv": argv, "pid": os.getpid(), "env": {{}},
                          "env_names": []}}) + "\\n")
def at(path):
    if not path.startswith("/etc/"):
        sys.stderr.write(f"fake {{tool}}: {{path}} is not under /etc\\n")
        sys.exit(99)
    return root + path
if tool == "grep":
    try:
        with open(at(argv[-1]), encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except OSError:
        sys.exit(2)
    sys.exit(0 if any(re.fullmatch(argv[-2], line) for line in lines) else 1)
if tool == "test":  # -L: a link, dangling or not; -e: exists, a link followed
    path = at(argv[-1])
    sys.exit(0 if (os.path.islink(path) if argv[0] == "-L" else os.path.exists(path)) else 1)
if tool == "rm":
    try:
        os.unlink(at(argv[-1]))
    except FileNotFoundError:
        pass
    sys.exit(0)
if tool == "mv":
    os.replace(at(argv[-2]), at(argv[-1]))
    sys.exit(0)
sys.exit(98)
"""

# apt-get as strict as the real one where the engine's source line decides: `install` of
# Docker's packages finds no candidate unless a source under `sysroot` serves this machine's
# dpkg architecture (an unknown name in [arch=...] is ignored by apt), for this release's
# codename, component `stable`, with its signed-by keyring present. Then the scripted answer.
APT_GET = """import glob, json, os, sys
sys.path.insert(0, {fakes!r})
import fake_tool
log, root, codename, machine = {log!r}, {root!r}, {codename!r}, {machine!r}
KNOWN = {known!r}
argv = sys.argv[1:]

def entries():
    for name in sorted(glob.glob(root + "/etc/apt/sources.list.d/*.list")):
        for line in open(name, encoding="utf-8").read().splitlines():
            words = line.split("#", 1)[0].split()
            if not words or words[0] != "deb":
                continue
            options = {{}}
            if words[1].startswith("["):
                end = next(i for i, w in enumerate(words) if w.endswith("]"))
                for option in " ".join(words[1:end + 1]).strip("[]").split():
                    key, _, value = option.partition("=")
                    options[key] = value
                words = [words[0], *words[end + 1:]]
            yield options, words[1], words[2], words[3:]
    for name in sorted(glob.glob(root + "/etc/apt/sources.list.d/*.sources")):
        fields = dict(line.split(":", 1) for line in open(name, encoding="utf-8").read().splitlines()
                      if ":" in line and not line.startswith("#"))
        fields = {{k.strip().lower(): v.strip() for k, v in fields.items()}}
        options = {{"signed-by": fields.get("signed-by", "")}}
        if "architectures" in fields:
            options["arch"] = ",".join(fields["architectures"].split())
        for suite in fields.get("suites", "").split():
            yield options, fields.get("uris", ""), suite, fields.get("components", "").split()

def candidate():
    for options, uri, suite, components in entries():
        arches = [a for a in options.get("arch", machine).split(",") if a in KNOWN]
        key = options.get("signed-by", "")
        if machine in arches and suite == codename and "stable" in components and \\
                uri.startswith(("https://", "http://")) and (not key or os.path.isfile(root + key)):
            return True
    return False

if "install" in argv and "docker-ce" in argv and not candidate():
    with open(log, "a", encoding="utf-8") as out:
        out.write(json.dumps({{"tool": "apt-get", "argv": argv, "pid": os.getpid(), "env": {{}},
                              "env_names": []}}) + "\\n")
    sys.stderr.write("E: Package 'docker-ce' has no installation candidate\\n")
    sys.exit(100)
sys.exit(fake_tool.main("apt-get", {scenario!r}, log))
"""

# dnf as strict as the real one where a repository file decides: `install docker-ce` finds
# no match unless a .repo file under `sysroot` has an enabled section with a baseurl (dnf
# fills in $releasever and $basearch itself); with gpgcheck=1 a gpgkey=file:// that is no
# armored key under `sysroot` fails the signature check. Then the scripted answer.
DNF = """import configparser, glob, json, os, sys
sys.path.insert(0, {fakes!r})
import fake_tool
log, root, tool = {log!r}, {root!r}, os.path.basename(sys.argv[0])
argv = sys.argv[1:]

def served():
    for name in sorted(glob.glob(root + "/etc/yum.repos.d/*.repo")):
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(name, encoding="utf-8")
        except configparser.Error:
            continue
        for section in parser.sections():
            if parser[section].get("enabled", "1") == "1" and parser[section].get("baseurl", ""):
                return section, parser[section]
    return None

def key_ok(repo):
    if repo[1].get("gpgcheck", "1") != "1":
        return True
    key = repo[1].get("gpgkey", "")
    if not key.startswith("file:///"):
        return True  # fetched by dnf itself over the network
    try:
        text = open(root + key[len("file://"):], encoding="utf-8").read()
    except OSError:
        return False
    return "-----BEGIN PGP PUBLIC KEY BLOCK-----" in text

repo = served() if "install" in argv and "docker-ce" in argv else ("", {{}})
if repo is None or not key_ok(repo):
    with open(log, "a", encoding="utf-8") as out:
        out.write(json.dumps({{"tool": tool, "argv": argv, "pid": os.getpid(), "env": {{}},
                              "env_names": []}}) + "\\n")
    sys.stderr.write("Error: Unable to find a match: docker-ce docker-ce-cli containerd.io\\n"
                     if repo is None else "Error: GPG check FAILED (the repository's key file)\\n")
    sys.exit(1)
sys.exit(fake_tool.main(tool, {scenario!r}, log))
"""

SG = """import json, os, subprocess, sys
log, marks = {log!r}, {marks!r}
argv = sys.argv[1:]
with open(log, "a", encoding="utf-8") as out:
    out.write(json.dumps({{"tool": "sg", "argv": argv, "pid": os.getpid(), "env": {{}},
                          "env_names": []}}) + "\\n")
env = dict(os.environ)
if os.path.exists(os.path.join(marks, {granted!r})):
    env["FAKE_IN_GROUP"] = argv[0]
sys.exit(subprocess.call(["/bin/sh", "-c", argv[2]], env=env))
"""


def sysroot(cluster: FakeCluster) -> Path:
    return cluster.root / "sysroot"


def linux_host(
    cluster: FakeCluster,
    distro: str,
    *,
    docker: str = "missing",
    sudo: str = "pw",
    password_ok: bool = True,
    etc_tools: bool = True,
) -> dict[str, str]:
    """Script the machine; returns the environment the engine runs with. `etc_tools`:
    grep, test, rm and mv act under `sysroot` (the bash twin's side runs without them).

    `docker`: missing (installed by the package manager), stopped (started by
    systemctl), denied (running, this user not in the group: usermod then sg), running."""
    marks = str(cluster.root / "marks")
    log = str(cluster.log_path)
    release = cluster.root / "os-release"
    release.write_text(OS_RELEASES[distro], encoding="utf-8")
    make_executable(
        cluster.bin / "sudo",
        SUDO.format(log=log, marks=marks, nopw=sudo == "nopw", password_ok=password_ok),
    )
    make_executable(cluster.bin / "install", INSTALL.format(log=log, root=str(sysroot(cluster))))
    env_program = cluster.bin / "env"
    if not env_program.exists():
        env_program.symlink_to(shutil.which("env") or "/usr/bin/env")
    make_executable(cluster.bin / "sg", SG.format(log=log, marks=marks, granted=GRANTED))
    for tool in ("grep", "test", "rm", "mv") if etc_tools else ():
        make_executable(cluster.bin / tool, ETC_TOOL.format(log=log, root=str(sysroot(cluster))))
    for tool in ("systemctl", "usermod", "modprobe", "cmp", PACKAGE_MANAGER[distro]):
        cluster.install(tool)
    if PACKAGE_MANAGER[distro] == "apt-get":
        named = parse_os_release(OS_RELEASES[distro])
        make_executable(
            cluster.bin / "apt-get",
            APT_GET.format(
                fakes=str(Path(__file__).parent),
                log=log,
                root=str(sysroot(cluster)),
                codename=named.get("UBUNTU_CODENAME") or named.get("VERSION_CODENAME", ""),
                machine=MACHINE_DPKG_ARCH,
                known=DPKG_ARCHES,
                scenario=str(cluster.scenario_path),
            ),
        )
    if PACKAGE_MANAGER[distro] == "dnf" and distro != "amzn2023":  # Amazon's docker is its own
        make_executable(
            cluster.bin / "dnf",
            DNF.format(
                fakes=str(Path(__file__).parent),
                log=log,
                root=str(sysroot(cluster)),
                scenario=str(cluster.scenario_path),
            ),
        )
    for tool in ("systemctl", "modprobe", PACKAGE_MANAGER[distro]):
        cluster.on(tool, stdout="")
    cluster.on("cmp", rc=1)  # nothing in place yet
    cluster.on("systemctl", "is-active", rc=3)
    cluster.on("systemctl", "start", "docker", mark=STARTED)
    # usermod as strict as the real one: an account it does not know is exit 6.
    cluster.on("usermod", rc=6, stderr="usermod: user does not exist\n")
    for name in (USER, GRANTEE):
        cluster.on("usermod", "-aG", "docker", name, mark=GRANTED)
    # `id -nG -- NAME` reads the account database: the docker group once usermod granted it.
    cluster.install("id")
    cluster.on("id", "-nG", stdout="users\n")
    cluster.on("id", "-nG", stdout="users docker\n", after=GRANTED)
    docker_program = f"#!{sys.executable}\n" + cluster.program("docker")
    if docker == "missing":
        cluster.remove("docker")
        installs = [
            ("dnf", "install"),
            ("dnf", "-y"),
            ("yum", "install"),
            ("apt-get", "install", "docker-ce"),
            ("pacman", "-S"),
            ("zypper", "install"),
        ]
        for tool, *match in installs:
            if tool == PACKAGE_MANAGER[distro] or (tool == "yum" and distro == "amzn2023"):
                cluster.on(
                    tool,
                    *match,
                    mark=INSTALLED,
                    write=[(str(cluster.bin / "docker"), docker_program, "755")],
                )
    else:
        cluster.install("docker")
    if docker == "denied":
        cluster.on("docker", "info", stdout=DENIED, rc=1)
        cluster.on("docker", "info", stdout=RUNNING, env_has="FAKE_IN_GROUP")
        cluster.on("systemctl", "is-active", rc=0)
    elif docker == "running":
        cluster.on("docker", "info", stdout=RUNNING)
    else:
        # Started by systemctl; then root reaches it, and the user does when in the group
        # (a fresh install: only through the group granted in this run, sg).
        cluster.on("docker", "info", stdout=STOPPED, rc=1)
        cluster.on(
            "docker",
            "info",
            stdout=DENIED if docker == "missing" else RUNNING,
            rc=1 if docker == "missing" else 0,
            after=STARTED,
        )
        cluster.on("docker", "info", stdout=RUNNING, after=STARTED, env_has="FAKE_IN_GROUP")
        cluster.on("docker", "info", stdout=RUNNING, after=STARTED, env_has="FAKE_ROOT")
    mirror = cluster.root / "mirror" / "download.docker.com" / "linux"
    for base in ("debian", "ubuntu"):
        (mirror / base).mkdir(parents=True, exist_ok=True)
        (mirror / base / "gpg").write_bytes(TEST_KEY.read_bytes())
    for repo in ("fedora", "rhel", "centos"):
        (mirror / repo).mkdir(parents=True, exist_ok=True)
        (mirror / repo / "gpg").write_bytes(TEST_KEY.read_bytes())
        (mirror / repo / "docker-ce.repo").write_text(
            f"[docker-ce-stable]\nname={repo}\ngpgcheck=1\n", encoding="utf-8"
        )
    return {
        "TB_OS_RELEASE_FILE": str(release),
        "TB_TEST_RUNTIME_USER": f"{USER}:{UID}",
        "TB_TEST_SYSROOT": str(sysroot(cluster)),
        "USER": USER,
        "TRACEBLOC_TOOLS_MIRROR": str(cluster.root / "mirror"),
        "TB_TEST_DOCKER_APT_KEY_FPR": TEST_KEY_FPR,
    }


def root_calls(cluster: FakeCluster) -> list[list[str]]:
    """Each command run through sudo (the wrapped argv), in order; `sudo -v` as itself."""
    out = []
    for entry in cluster.call_log():
        if entry["tool"] != "sudo":
            continue
        argv = entry["argv"]
        if argv == ["-v"]:
            out.append(["sudo", "-v"])
        elif argv[:1] == ["-n"] and argv[1:] != ["true"]:
            out.append(argv[1:])
        elif argv[:1] not in (["-n"], ["-v"]):  # the twin's bare `sudo COMMAND`
            out.append(argv)
    return out
