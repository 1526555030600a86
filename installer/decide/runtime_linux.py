"""The Linux privileged flow, as the twin runs it (scripts/lib/setup-linux.sh:
`install_docker_engine`, `_ensure_kernel_modules`, `_configure_docker_proxy`,
`run_prepare_host`), as a list of steps. Pure.

Where the twin ran get.docker.com (an unsigned script downloaded and run as root), the
engine uses Docker's signed package repository instead: apt with Docker's signing key,
installed only when its fingerprint is the published one; dnf with Docker's .repo file
(packages checked against its gpgkey). Distributions the twin served from their own
packages (Amazon Linux, Arch, openSUSE) are served the same way.
"""

from __future__ import annotations

from installer.decide.runtime import (
    APT_ENV,
    APT_LOCKS,
    APT_OPTS,
    CA_DIR,
    CA_DROPIN,
    DOCKER_APT_KEY_FPR,
    DOCKER_DOWNLOAD,
    DOCKER_GROUP,
    DOCKER_RPM_REPOS,
    DROPIN_DIR,
    KERNEL_MODULES,
    LOCK_WAIT_S,
    MODULES_FILE,
    PACKAGE_TIMEOUT_S,
    PREPARE_HOST,
    PRIVILEGED,
    PROXY_DROPIN,
    RHEL_REBUILDS,
    STAGED,
    START_WAIT_S,
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
        return RuntimePlan(PRIVILEGED, "no-systemd", refusal=(
            "Docker is not usable here and this machine has no systemd to start it with",
            "install Docker Engine yourself (https://docs.docker.com/engine/install/), start "
            "it, then run the installer again"))  # fmt: skip
    grant = (target_user.strip() if mode == PREPARE_HOST else facts.user).strip()
    if grant == "root":
        grant = ""
    install: tuple[Step, ...] = ()
    reason = "docker-stopped"
    if not facts.docker_cli:
        reason = "docker-missing"
        found = install_steps(facts)
        if found is None:
            ident = distro(facts.os_release)[0] or "unknown"
            return RuntimePlan(PRIVILEGED, "unsupported-distribution", refusal=(
                f"cannot install Docker on this distribution ({ident}) by itself",
                "install Docker Engine (https://docs.docker.com/engine/install/), then run "
                "the installer again"))  # fmt: skip
        install = found
    elif facts.docker == "stopped" and "permission denied" in facts.docker_reason.lower():
        reason = "no-socket-access"
    steps: list[Step] = [*sudo_prime(facts), *install]
    # A Docker the engine installs or starts is enabled at boot (scripts/lib/cluster.sh's
    # ensure_cluster_autostart did both): a rebooted machine brings the client back.
    if install or (mode != PREPARE_HOST and not facts.no_autostart
                   and facts.boot_enabled != "enabled"):  # fmt: skip
        steps.append(BOOT_STEP)
    needs_grant = grant and (mode == PREPARE_HOST or facts.in_docker_group is not True)
    if needs_grant:
        # `--`: a name is never read as an option. A grant that fails, or that the account
        # database does not show afterwards, is the run's failure, never announced.
        steps += [Step(("usermod", "-aG", DOCKER_GROUP, "--", grant),
                       f"let {grant} use Docker (the docker group)"),
                  Step(("id", "-nG", "--", grant), f"check that {grant} is in the docker group",
                       root=False, kind="member", content=DOCKER_GROUP, timeout=30)]  # fmt: skip
    # Every privileged run loads the modules and lists them for boot, a running daemon this
    # user cannot reach too: the daemon may be restarted in this run, or after a reboot.
    steps += module_steps(facts)
    steps += daemon_config_steps(facts)
    steps += [
        Step(("systemctl", "reset-failed", "docker"), "clear a failed start of an earlier try",
             optional=True),  # fmt: skip
        Step(("systemctl", "start", "docker"), "start the Docker daemon", timeout=120,
             optional=True),  # fmt: skip
    ]
    if mode == PREPARE_HOST:
        steps += [Step(("docker", "info", "--format", "{{.ServerVersion}}"),
                       "check that the daemon answers", kind="wait-docker",
                       timeout=START_WAIT_S),  # fmt: skip
                  BOOT_STEP]
    else:
        steps.append(Step(("docker", "info", "--format", "{{json .}}"),
                          "check that Docker answers as you", root=False,
                          kind="wait-docker", timeout=START_WAIT_S))  # fmt: skip
    notes: tuple[str, ...] = ()
    if mode == PREPARE_HOST and not grant:
        notes = ("no user was named (TB_PREPARE_USER): nobody was added to the docker group; "
                 "add one with: sudo usermod -aG docker <user>",)  # fmt: skip
    return RuntimePlan(PRIVILEGED, reason, tuple(map(streamed, steps)),
                       grant_user=grant if needs_grant else "", notes=notes)  # fmt: skip


def package_manager(tools: frozenset[str]) -> str:
    """The twin's order (setup_pm)."""
    return next((pm for pm in ("apt-get", "dnf", "yum", "zypper", "pacman") if pm in tools), "")


def install_steps(facts: Facts) -> tuple[Step, ...] | None:
    """Docker installed the way the twin's `install_docker_engine` chooses, by distribution.
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
    if pm == "apt-get" and family & {"debian", "ubuntu"}:
        return apt_steps(facts)
    if pm in ("dnf", "yum") and family & {"fedora", "rhel", "centos", *RHEL_REBUILDS}:
        return rpm_steps(facts, pm)
    return None


def apt_steps(facts: Facts) -> tuple[Step, ...]:
    ident, like = distro(facts.os_release)
    ubuntu = ident == "ubuntu" or "ubuntu" in like
    base = "ubuntu" if ubuntu else "debian"
    codename = (facts.os_release.get("UBUNTU_CODENAME") if ubuntu else "") or \
        facts.os_release.get("VERSION_CODENAME", "")  # fmt: skip
    key = "/etc/apt/keyrings/docker.asc"
    source = (f"deb [arch={facts.arch} signed-by={key}] {DOCKER_DOWNLOAD}/{base} "
              f"{codename or 'stable'} stable\n")  # fmt: skip
    install = (*APT_ENV, "apt-get", "install", "-y", "-q", *APT_OPTS,
               "-o", "Dpkg::Options::=--force-confdef", "-o", "Dpkg::Options::=--force-confold")
    return (
        Step(("fuser", *APT_LOCKS), "wait for background system updates to release the "
             "package lock", kind="wait-lock", timeout=LOCK_WAIT_S),  # fmt: skip
        Step(("apt-get", "update", "-qq", *APT_OPTS), "refresh the package index", timeout=300),
        Step((*install, "ca-certificates"), "certificates apt needs for https", timeout=300),
        Step(("install", "-m", "0755", "-d", "/etc/apt/keyrings"), "a directory for apt keys"),
        Step(("install", "-m", "0644", STAGED, key), "Docker's signing key (fingerprint "
             f"{DOCKER_APT_KEY_FPR} checked)", kind="fetch", url=f"{DOCKER_DOWNLOAD}/{base}/gpg",
             check=f"openpgp:{DOCKER_APT_KEY_FPR}"),  # fmt: skip
        Step(("install", "-m", "0644", STAGED, "/etc/apt/sources.list.d/docker.list"),
             "Docker's apt repository", kind="stage", content=source),  # fmt: skip
        Step(("apt-get", "update", "-qq", *APT_OPTS), "read Docker's repository", timeout=300),
        Step((*install, *DOCKER_CE), "install Docker", timeout=PACKAGE_TIMEOUT_S),
    )


def rpm_steps(facts: Facts, pm: str) -> tuple[Step, ...]:
    ident, like = distro(facts.os_release)
    repo = DOCKER_RPM_REPOS.get(ident) or ("fedora" if "fedora" in like and "rhel" not in like
                                           else "centos")  # fmt: skip
    if ident == "rhel":
        repo = "rhel"
    url = f"{DOCKER_DOWNLOAD}/{repo}/docker-ce.repo"
    return (
        Step(("install", "-m", "0644", STAGED, "/etc/yum.repos.d/docker-ce.repo"),
             "Docker's package repository (packages checked against its gpgkey)", kind="fetch",
             url=url),  # fmt: skip
        Step((pm, "-y", "-q", "install", *DOCKER_CE), "install Docker", timeout=PACKAGE_TIMEOUT_S),
    )


def module_steps(facts: Facts) -> tuple[Step, ...]:
    """The kernel modules Docker's bridge and k3s need (the twin's `_ensure_kernel_modules`):
    loaded now, kernel-modules-extra on dnf hosts when one does not load, and listed for
    boot."""
    extra = ("dnf", "install", "-y", "-q", "kernel-modules-extra") if "dnf" in facts.tools else ()
    return (
        Step(("modprobe", "-a", *KERNEL_MODULES), "load the kernel modules Docker and k3s need"
             + (" (kernel-modules-extra when one is missing)" if extra else ""),
             kind="modules", content=" ".join(extra), optional=True),  # fmt: skip
        Step(("install", "-m", "0644", STAGED, MODULES_FILE), "load them at boot too",
             kind="stage", content="".join(f"{m}\n" for m in KERNEL_MODULES), optional=True),
    )


def daemon_config_steps(facts: Facts) -> tuple[Step, ...]:
    """The daemon's proxy (owner-only: it may hold the proxy password) and the corporate
    CA, each a systemd drop-in, then daemon-reload. A running daemon is restarted by the
    start step only if it was stopped; a changed file restarts it."""
    steps: list[Step] = []
    dropin = proxy_dropin(facts.proxy)
    if dropin is not None or facts.ca_pem:
        steps.append(Step(("install", "-m", "0755", "-d", DROPIN_DIR), "a directory for "
                          "Docker's systemd settings"))  # fmt: skip
    if dropin is not None:
        steps.append(Step(("install", "-m", "0600", STAGED, PROXY_DROPIN),
                          "the proxy for Docker's image pulls (owner-only: it may hold the "
                          "proxy password)", kind="stage", content=dropin, secret=True,
                          guard="ours"))  # fmt: skip
    else:
        # The twin's `_configure_docker_proxy` with no proxy set: a drop-in an earlier run
        # wrote would keep dockerd pulling through a proxy that is gone.
        steps.append(Step(("rm", "-f", PROXY_DROPIN), "remove the proxy an earlier run gave "
                          "Docker (no proxy is set now)", optional=True, guard="ours"))  # fmt: skip
        if not facts.ca_pem:
            return (*steps, *_reload(when=f"changed:{PROXY_DROPIN}"))
    if facts.ca_pem:
        steps += [
            Step(("install", "-m", "0755", "-d", CA_DIR), "a directory for the corporate CA"),
            Step(("install", "-m", "0644", STAGED, f"{CA_DIR}/ca.crt"),
                 "the corporate CA (TRACEBLOC_CA_BUNDLE's certificates, as you read them), "
                 "for Docker's image pulls only", kind="stage", content=facts.ca_pem),
            Step(("install", "-m", "0644", STAGED, CA_DROPIN), "Docker trusts it",
                 kind="stage", content=ca_dropin()),  # fmt: skip
        ]
    return (*steps, *_reload())


def _reload(when: str = "") -> tuple[Step, ...]:
    """daemon-reload (always, or `when`), then a running daemon restarted only when a file
    changed (`when` names which, else any)."""
    return (Step(("systemctl", "daemon-reload"), "systemd reads the new settings",
                 optional=True, when=when),
            Step(("systemctl", "try-restart", "docker"), "a running daemon takes them",
                 timeout=120, optional=True, when=when or "changed"))  # fmt: skip


__all__ = ["decide_linux"]
