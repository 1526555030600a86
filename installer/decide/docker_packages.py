"""Docker's packages, the way each Linux distribution needs them: Docker's signed apt or
rpm repository (its key checked by fingerprint) or the distribution's own package. Pure."""

from __future__ import annotations

from installer.decide.arch import apt_arch
from installer.decide.runtime import (
    APT_ENV,
    APT_KEY,
    APT_LOCKS,
    APT_OPTS,
    APT_SOURCE,
    APT_SOURCE_DEB822,
    DOCKER_APT_KEY_FPR,
    DOCKER_DOWNLOAD,
    DOCKER_RPM_KEY_FPR,
    DOCKER_RPM_REPOS,
    LOCK_WAIT_S,
    MARKER,
    PACKAGE_TIMEOUT_S,
    RHEL_REBUILDS,
    RPM_KEY,
    RPM_KEY_DIR,
    RPM_REPO,
    STAGED,
    STDIN,
    Facts,
    Step,
    distro,
)

DOCKER_CE = ("docker-ce", "docker-ce-cli", "containerd.io")


def admins_file(facts: Facts, *paths: str) -> tuple[str, str] | None:
    """(path, state) of the first of `paths` that is there and not the engine's own: a file
    without its marker line, or a symbolic link (followed by nobody: dangling or not, a link
    is an administrator's choice of where the content lives)."""
    return next(
        (
            (p, facts.files[p])
            for p in paths
            if facts.files.get(p) in ("foreign", "link", "dangling")
        ),
        None,
    )


def repository_files(facts: Facts) -> tuple[str, ...]:
    """Where the package manager this machine installs Docker with reads Docker's
    repository from (none for a distribution's own docker package)."""
    steps = install_steps(facts) or ()
    if any(s.argv[:1] == ("fuser",) for s in steps):
        return (APT_SOURCE, APT_SOURCE_DEB822)
    if any("docker-ce" in s.argv and s.argv[0] in ("dnf", "yum") for s in steps):
        return (RPM_REPO,)
    return ()


def key_files(facts: Facts) -> tuple[str, ...]:
    """The signing key the engine's repository file names (the package manager's)."""
    files = repository_files(facts)
    return (APT_KEY,) if APT_SOURCE in files else (RPM_KEY,) if RPM_REPO in files else ()


def key_step(dest: str, url: str, fpr: str) -> Step:
    """Docker's signing key: downloaded as you, installed only with its published
    fingerprint, marked as the engine's, read by root on stdin and put in place in one
    rename; a key file the engine did not write is kept (the guard)."""
    return Step(
        ("install", "-m", "0644", STDIN, dest),
        f"Docker's signing key (fingerprint {fpr} checked)",
        kind="fetch",
        url=url,
        check=f"openpgp:{fpr}",
        content=MARKER,
        guard="ours",
    )


def package_manager(tools: frozenset[str]) -> str:
    """The first package manager present, in this order."""
    return next((pm for pm in ("apt-get", "dnf", "yum", "zypper", "pacman") if pm in tools), "")


def install_steps(facts: Facts) -> tuple[Step, ...] | None:
    """Docker installed the way this distribution needs.
    None when this machine has no way the engine knows."""
    ident, like = distro(facts.os_release)
    family = {ident, *like}
    pm = package_manager(facts.tools)
    why = "install Docker"
    if ident == "amzn" or "amzn" in like:
        tool = "dnf" if "dnf" in facts.tools else "yum"
        return (Step((tool, "install", "-y", "docker"), why, timeout=PACKAGE_TIMEOUT_S),)
    if pm == "pacman":
        return (Step(("pacman", "-S", "--noconfirm", "docker"), why, timeout=PACKAGE_TIMEOUT_S),)
    if pm == "zypper":
        return (Step(("zypper", "install", "-y", "docker"), why, timeout=PACKAGE_TIMEOUT_S),)
    if pm == "apt-get" and family & {"debian", "ubuntu"} and apt_arch(facts.arch, facts.dpkg_arch):
        return apt_steps(facts)
    if pm in ("dnf", "yum") and family & {"fedora", "rhel", "centos", *RHEL_REBUILDS}:
        return rpm_steps(facts, pm)
    return None


def apt_steps(facts: Facts) -> tuple[Step, ...]:
    ident, like = distro(facts.os_release)
    ubuntu = ident == "ubuntu" or "ubuntu" in like
    base = "ubuntu" if ubuntu else "debian"
    codename = (facts.os_release.get("UBUNTU_CODENAME") if ubuntu else "") or facts.os_release.get(
        "VERSION_CODENAME", ""
    )
    source = (
        f"{MARKER}\ndeb [arch={apt_arch(facts.arch, facts.dpkg_arch)} signed-by={APT_KEY}] "
        f"{DOCKER_DOWNLOAD}/{base} {codename or 'stable'} stable\n"
    )
    install = (
        *APT_ENV,
        "apt-get",
        "install",
        "-y",
        "-q",
        *APT_OPTS,
        "-o",
        "Dpkg::Options::=--force-confdef",
        "-o",
        "Dpkg::Options::=--force-confold",
    )
    # An administrator's Docker source is used as it is: neither it nor the key it names
    # is replaced (decide_linux says so in the plan).
    repository = (
        ()
        if admins_file(facts, APT_SOURCE, APT_SOURCE_DEB822)
        else (
            Step(("install", "-m", "0755", "-d", "/etc/apt/keyrings"), "a directory for apt keys"),
            *(
                ()
                if admins_file(facts, APT_KEY)
                else (key_step(APT_KEY, f"{DOCKER_DOWNLOAD}/{base}/gpg", DOCKER_APT_KEY_FPR),)
            ),
            Step(
                ("install", "-m", "0644", STAGED, APT_SOURCE),
                "Docker's apt repository",
                kind="stage",
                content=source,
                guard="ours",
            ),
        )
    )
    return (
        Step(
            ("fuser", *APT_LOCKS),
            "wait for background system updates to release the package lock",
            kind="wait-lock",
            timeout=LOCK_WAIT_S,
        ),
        Step(("apt-get", "update", "-qq", *APT_OPTS), "refresh the package index", timeout=300),
        Step((*install, "ca-certificates"), "certificates apt needs for https", timeout=300),
        *repository,
        Step(("apt-get", "update", "-qq", *APT_OPTS), "read Docker's repository", timeout=300),
        Step((*install, *DOCKER_CE), "install Docker", timeout=PACKAGE_TIMEOUT_S),
    )


def rpm_repository(repo: str) -> str:
    """Docker's stable dnf repository, pinned here: https only, every package checked against
    the key whose fingerprint the engine checked (RPM_KEY), never one dnf fetches."""
    base = f"{DOCKER_DOWNLOAD}/{repo}"
    return (
        f"{MARKER}\n[docker-ce-stable]\nname=Docker CE Stable - $basearch\n"
        f"baseurl={base}/$releasever/$basearch/stable\nenabled=1\ngpgcheck=1\n"
        f"gpgkey=file://{RPM_KEY}\n"
    )


def rpm_steps(facts: Facts, pm: str) -> tuple[Step, ...]:
    ident, like = distro(facts.os_release)
    repo = DOCKER_RPM_REPOS.get(ident) or (
        "fedora" if "fedora" in like and "rhel" not in like else "centos"
    )
    if ident == "rhel":
        repo = "rhel"
    repository = (
        ()
        if admins_file(facts, RPM_REPO)
        else (
            *(
                ()
                if admins_file(facts, RPM_KEY)
                else (
                    Step(("install", "-m", "0755", "-d", RPM_KEY_DIR), "a directory for rpm keys"),
                    key_step(RPM_KEY, f"{DOCKER_DOWNLOAD}/{repo}/gpg", DOCKER_RPM_KEY_FPR),
                )
            ),
            Step(
                ("install", "-m", "0644", STAGED, RPM_REPO),
                "Docker's package repository (https, packages checked against Docker's key)",
                kind="stage",
                content=rpm_repository(repo),
                guard="ours",
            ),
        )
    )
    return (
        *repository,
        Step((pm, "-y", "-q", "install", *DOCKER_CE), "install Docker", timeout=PACKAGE_TIMEOUT_S),
    )
