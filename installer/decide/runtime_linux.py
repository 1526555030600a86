"""The Linux privileged flow as a list of steps: Docker, kernel modules, proxy. Pure.

Docker comes from its signed package repository: apt with Docker's signing key, installed only
when its fingerprint is the published one; dnf with a repository file the engine writes.
Amazon Linux, Arch and openSUSE use their own packages.
"""

from __future__ import annotations

from installer.decide.arch import apt_arch
from installer.decide.runtime import (
    APT_ENV,
    APT_KEY,
    APT_LOCKS,
    APT_OPTS,
    APT_SOURCE,
    APT_SOURCE_DEB822,
    CA_DIR,
    CA_DROPIN,
    DOCKER_APT_KEY_FPR,
    DOCKER_DOWNLOAD,
    DOCKER_GROUP,
    DOCKER_RPM_KEY_FPR,
    DOCKER_RPM_REPOS,
    DROPIN_DIR,
    KERNEL_MODULES,
    LOCK_WAIT_S,
    MARKER,
    MODULES_FILE,
    PACKAGE_TIMEOUT_S,
    PREPARE_HOST,
    PRIVILEGED,
    PROXY_DROPIN,
    RHEL_REBUILDS,
    RPM_KEY,
    RPM_KEY_DIR,
    RPM_REPO,
    STAGED,
    START_WAIT_S,
    STDIN,
    Facts,
    RuntimePlan,
    Step,
    ca_dropin,
    distro,
    no_sudo,
    proxy_dropin,
    streamed,
    sudo_prime,
)

DOCKER_CE = ("docker-ce", "docker-ce-cli", "containerd.io")
BOOT_STEP = Step(("systemctl", "enable", "docker"), "start Docker at boot", optional=True)


def decide_linux(facts: Facts, *, mode: str, target_user: str) -> RuntimePlan:
    refusal = no_sudo(facts)
    if refusal is not None:
        return RuntimePlan(PRIVILEGED, "no-sudo", refusal=refusal)
    if "systemctl" not in facts.tools:
        return RuntimePlan(
            PRIVILEGED,
            "no-systemd",
            refusal=(
                "Docker is not usable here and this machine has no systemd to start it with",
                "install Docker Engine yourself (https://docs.docker.com/engine/install/), start "
                "it, then run the installer again",
            ),
        )
    grant = (target_user.strip() if mode == PREPARE_HOST else facts.user).strip()
    if grant == "root":
        grant = ""
    install: tuple[Step, ...] = ()
    kept: list[str] = []
    reason = "docker-stopped"
    if not facts.docker_cli:
        reason = "docker-missing"
        found = install_steps(facts)
        if found is None:
            ident = distro(facts.os_release)[0] or "unknown"
            return RuntimePlan(
                PRIVILEGED,
                "unsupported-distribution",
                refusal=(
                    f"cannot install Docker on this distribution ({ident}) by itself",
                    "install Docker Engine (https://docs.docker.com/engine/install/), then run "
                    "the installer again",
                ),
            )
        install = found
        source = admins_file(facts, *repository_files(facts))
        if source is not None and source[1] == "dangling":
            return RuntimePlan(
                PRIVILEGED,
                "dangling-link",
                refusal=dangling(
                    source[0], "the package repository Docker should be installed from"
                ),
            )
        if source is not None:
            kept.append(
                f"{source[0]} ({described(source[1])}): Docker is installed from the "
                "repository it names"
            )
        key = None if source is not None else admins_file(facts, *key_files(facts))
        if key is not None and key[1] == "dangling":
            return RuntimePlan(
                PRIVILEGED, "dangling-link", refusal=dangling(key[0], "Docker's signing key")
            )
        if key is not None:
            kept.append(
                f"{key[0]} ({described(key[1])}): Docker's packages are checked "
                "against the key it holds"
            )
    elif facts.docker == "stopped" and "permission denied" in facts.docker_reason.lower():
        reason = "no-socket-access"
    for path in written_dropins(facts):
        mine = admins_file(facts, path)
        if mine is not None and mine[1] == "dangling":
            return RuntimePlan(
                PRIVILEGED,
                "dangling-link",
                refusal=dangling(path, "the settings Docker's daemon should use"),
            )
        if mine is not None:
            kept.append(
                f"{path} ({described(mine[1])}): Docker's daemon keeps its settings; "
                "tracebloc's are not written"
            )
    steps: list[Step] = [*sudo_prime(facts), *install]
    # A Docker the engine installs or starts is enabled at boot (scripts/lib/cluster.sh's
    # ensure_cluster_autostart did both): a rebooted machine brings the client back.
    if install or (
        mode != PREPARE_HOST and not facts.no_autostart and facts.boot_enabled != "enabled"
    ):
        steps.append(BOOT_STEP)
    needs_grant = grant and (mode == PREPARE_HOST or facts.in_docker_group is not True)
    if needs_grant:
        # `--`: a name is never read as an option. A grant that fails, or that the account
        # database does not show afterwards, is the run's failure, never announced.
        steps += [
            Step(
                ("usermod", "-aG", DOCKER_GROUP, "--", grant),
                f"let {grant} use Docker (the docker group)",
            ),
            Step(
                ("id", "-nG", "--", grant),
                f"check that {grant} is in the docker group",
                root=False,
                kind="member",
                content=DOCKER_GROUP,
                timeout=30,
            ),
        ]
    # Every privileged run loads the modules and lists them for boot, a running daemon this
    # user cannot reach too: the daemon may be restarted in this run, or after a reboot.
    steps += module_steps(facts)
    steps += daemon_config_steps(facts)
    steps += [
        Step(
            ("systemctl", "reset-failed", "docker"),
            "clear a failed start of an earlier try",
            optional=True,
        ),
        Step(
            ("systemctl", "start", "docker"), "start the Docker daemon", timeout=120, optional=True
        ),
    ]
    if mode == PREPARE_HOST:
        steps += [
            Step(
                ("docker", "info", "--format", "{{.ServerVersion}}"),
                "check that the daemon answers",
                kind="wait-docker",
                timeout=START_WAIT_S,
            ),
            BOOT_STEP,
        ]
    else:
        steps.append(
            Step(
                ("docker", "info", "--format", "{{json .}}"),
                "check that Docker answers as you",
                root=False,
                kind="wait-docker",
                timeout=START_WAIT_S,
            )
        )
    notes: tuple[str, ...] = ()
    if mode == PREPARE_HOST and not grant:
        notes = (
            "no user was named (TB_PREPARE_USER): nobody was added to the docker group; "
            "add one with: sudo usermod -aG docker <user>",
        )
    return RuntimePlan(
        PRIVILEGED,
        reason,
        tuple(map(streamed, steps)),
        grant_user=grant if needs_grant else "",
        notes=notes,
        kept=tuple(kept),
    )


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


def described(state: str) -> str:
    return "a symbolic link" if state == "link" else "not written by tracebloc"


def dangling(path: str, what: str) -> tuple[str, str]:
    return (
        f"{path} is a symbolic link to a file that does not exist; tracebloc does not "
        "replace a file it did not write",
        f"remove the link (sudo rm {path}) for tracebloc to write its own, or point it at "
        f"{what}, then run again",
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


def written_dropins(facts: Facts) -> tuple[str, ...]:
    """The daemon's drop-ins this run writes (a removal of the engine's own is no write)."""
    return ((PROXY_DROPIN,) if proxy_dropin(facts.proxy) is not None else ()) + (
        (CA_DROPIN,) if facts.ca_pem else ()
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


def module_steps(facts: Facts) -> tuple[Step, ...]:
    """The kernel modules Docker's bridge and k3s need:
    loaded now, kernel-modules-extra on dnf hosts when one does not load, and listed for
    boot."""
    extra = ("dnf", "install", "-y", "-q", "kernel-modules-extra") if "dnf" in facts.tools else ()
    return (
        Step(
            ("modprobe", "-a", *KERNEL_MODULES),
            "load the kernel modules Docker and k3s need"
            + (" (kernel-modules-extra when one is missing)" if extra else ""),
            kind="modules",
            content=" ".join(extra),
            optional=True,
        ),
        Step(
            ("install", "-m", "0644", STAGED, MODULES_FILE),
            "load them at boot too",
            kind="stage",
            content="".join(f"{m}\n" for m in KERNEL_MODULES),
            optional=True,
        ),
    )


def daemon_config_steps(facts: Facts) -> tuple[Step, ...]:
    """The daemon's proxy (owner-only: it may hold the proxy password) and the corporate
    CA, each a systemd drop-in, then daemon-reload. A running daemon is restarted by the
    start step only if it was stopped; a changed file restarts it."""
    steps: list[Step] = []
    dropin = proxy_dropin(facts.proxy)
    if dropin is not None or facts.ca_pem:
        steps.append(
            Step(
                ("install", "-m", "0755", "-d", DROPIN_DIR),
                "a directory for Docker's systemd settings",
            )
        )
    if dropin is not None:
        steps.append(
            Step(
                ("install", "-m", "0600", STAGED, PROXY_DROPIN),
                "the proxy for Docker's image pulls (owner-only: it may hold the proxy password)",
                kind="stage",
                content=dropin,
                secret=True,
                guard="ours",
            )
        )
    else:
        # No proxy set: a drop-in an earlier run
        # wrote would keep dockerd pulling through a proxy that is gone.
        steps.append(
            Step(
                ("rm", "-f", PROXY_DROPIN),
                "remove the proxy an earlier run gave Docker (no proxy is set now)",
                optional=True,
                guard="ours",
            )
        )
        if not facts.ca_pem:
            return (*steps, *_reload(when=f"changed:{PROXY_DROPIN}"))
    if facts.ca_pem:
        steps += [
            Step(("install", "-m", "0755", "-d", CA_DIR), "a directory for the corporate CA"),
            Step(
                ("install", "-m", "0644", STAGED, f"{CA_DIR}/ca.crt"),
                "the corporate CA (TRACEBLOC_CA_BUNDLE's certificates, as you read them), "
                "for Docker's image pulls only",
                kind="stage",
                content=facts.ca_pem,
            ),
            Step(
                ("install", "-m", "0644", STAGED, CA_DROPIN),
                "Docker trusts it",
                kind="stage",
                content=ca_dropin(),
                guard="ours",
            ),
        ]
    return (*steps, *_reload())


def _reload(when: str = "") -> tuple[Step, ...]:
    """daemon-reload (always, or `when`), then a running daemon restarted only when a file
    changed (`when` names which, else any)."""
    return (
        Step(
            ("systemctl", "daemon-reload"),
            "systemd reads the new settings",
            optional=True,
            when=when,
        ),
        Step(
            ("systemctl", "try-restart", "docker"),
            "a running daemon takes them",
            timeout=120,
            optional=True,
            when=when or "changed",
        ),
    )


__all__ = ["decide_linux"]
