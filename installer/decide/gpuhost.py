"""An NVIDIA GPU made usable by Docker on Linux, as RuntimePlan steps. Pure.

The driver where nvidia-smi cannot list the GPU, NVIDIA's container toolkit from its signed
repository (key checked by fingerprint), Docker's default runtime `nvidia` (restarting
Docker only when it changed), and a Docker-level GPU check. A driver that needs a reboot
stops the run with the "run me again after the reboot" code.
"""

from __future__ import annotations

from dataclasses import dataclass

from installer.decide.docker_packages import package_manager
from installer.decide.runtime import (
    APT_ENV,
    APT_LOCKS,
    APT_OPTS,
    LOCK_WAIT_S,
    PACKAGE_TIMEOUT_S,
    PRIVILEGED,
    RHEL_REBUILDS,
    STAGED,
    Facts,
    RuntimePlan,
    Step,
    distro,
    no_sudo,
    sudo_prime,
)

# NVIDIA's container toolkit signing key: installed only when the download has this fingerprint.
NVIDIA_KEY_FPR = "C95B321B61E88C1809C4F759DDCAE044F796ECB0"
NVIDIA_REPO = "https://nvidia.github.io/libnvidia-container"
APT_KEY = "/etc/apt/keyrings/nvidia-container-toolkit.asc"
APT_LIST = "/etc/apt/sources.list.d/nvidia-container-toolkit.list"
RPM_KEY = "/etc/pki/rpm-gpg/nvidia-container-toolkit.asc"
RPM_REPO = "/etc/yum.repos.d/nvidia-container-toolkit.repo"
TOOLKIT = "nvidia-container-toolkit"
CUDA_REPOS = "https://developer.download.nvidia.com/compute/cuda/repos"
# The scripts' smoke-test image. NVIDIA_DISABLE_REQUIRE: the image's CUDA floor is not the
# question (a slightly older driver is fine for the node); whether Docker passes the GPU is.
CHECK_IMAGE = "nvidia/cuda:12.3.1-base-ubuntu22.04"
CHECK_ARGV = (
    "docker",
    "run",
    "--rm",
    "--gpus",
    "all",
    "-e",
    "NVIDIA_DISABLE_REQUIRE=1",
    CHECK_IMAGE,
    "nvidia-smi",
)
CHECK_TIMEOUT_S = 300.0  # a first run pulls the image

# The step kinds edges/gpuhost.py carries out itself (the rest are the runtime's own).
DEFAULT_RUNTIME = "gpu-default"  # nvidia-ctk runtime configure, unless nvidia is the default
RESTART = "gpu-restart"  # only after DEFAULT_RUNTIME changed the configuration
REBOOT = "gpu-reboot"  # nvidia-smi after the driver: no GPU listed is the reboot hand-off
CHECK = "gpu-check"  # docker run --gpus all: failure means a CPU cluster, said
# A plan with one of these reasons has no steps: the install is for CPU, and says why.
CPU_REASONS = ("gpu-no-driver", "gpu-no-toolkit", "gpu-no-sudo")


@dataclass(frozen=True)
class GpuFacts:
    """What edges/gpuhost.py read. `hardware`: an NVIDIA GPU is in this machine (nvidia-smi
    lists one, or lspci names one); `driver`: nvidia-smi lists it."""

    hardware: bool
    driver: bool = False
    toolkit: bool = False  # nvidia-ctk --version answers
    default_runtime: str | None = None  # Docker's DefaultRuntime; None: Docker not up yet
    wsl: bool = False  # a WSL2 kernel: the GPU comes from the Windows driver


@dataclass(frozen=True)
class Checked:
    """What the Docker-level GPU check saw: `ran` False, it did not run this time."""

    ran: bool
    failed: str = ""  # why Docker could not give a container the GPU; "" passed


def _apt_install(*packages: str) -> tuple[str, ...]:
    return (*APT_ENV, "apt-get", "install", "-y", "-q", *APT_OPTS, *packages)


def _apt_prelude() -> tuple[Step, ...]:
    return (
        Step(
            ("fuser", *APT_LOCKS),
            "wait for background system updates to release the package lock",
            kind="wait-lock",
            timeout=LOCK_WAIT_S,
        ),
        Step(("apt-get", "update", "-qq", *APT_OPTS), "refresh the package index", timeout=300),
    )


def driver_steps(facts: Facts) -> tuple[Step, ...] | None:
    """The driver with the distribution's own tooling, as the scripts chose it; None where
    the engine knows no way (the plan says so and the install is for CPU)."""
    ident, like = distro(facts.os_release)
    family = {ident, *like}
    pm = package_manager(facts.tools)
    why = "install the NVIDIA driver"
    if pm == "apt-get" and (ident == "ubuntu" or "ubuntu" in like):
        return (
            *_apt_prelude(),
            Step(
                _apt_install("ubuntu-drivers-common"),
                "Ubuntu's driver tool",
                timeout=PACKAGE_TIMEOUT_S,
            ),
            Step(
                ("ubuntu-drivers", "install", "--gpgpu"),
                why + " Ubuntu recommends (ubuntu-drivers)",
                timeout=PACKAGE_TIMEOUT_S,
            ),
        )
    if pm == "apt-get" and "debian" in family:
        return (
            *_apt_prelude(),
            Step(
                _apt_install("nvidia-driver"),
                why + " (Debian's nvidia-driver; its non-free component must be enabled)",
                timeout=PACKAGE_TIMEOUT_S,
            ),
        )
    if pm in ("dnf", "yum") and family & {"rhel", *RHEL_REBUILDS} and ident != "fedora":
        major = facts.os_release.get("VERSION_ID", "").split(".")[0]
        if not major.isdigit():
            return None
        arch = "sbsa" if facts.arch == "arm64" else "x86_64"
        repo = f"cuda-rhel{major}.repo"
        install = (
            (pm, "-y", "module", "install", "nvidia-driver:latest-dkms")
            if int(major) <= 9
            else (pm, "-y", "install", "cuda-drivers")
        )
        return (
            Step(
                (pm, "-y", "-q", "install", "epel-release"),
                "EPEL, for dkms",
                timeout=PACKAGE_TIMEOUT_S,
                optional=True,
            ),
            Step(
                ("install", "-m", "0644", STAGED, f"/etc/yum.repos.d/{repo}"),
                "NVIDIA's CUDA repository (packages checked against its gpgkey)",
                kind="fetch",
                url=f"{CUDA_REPOS}/rhel{major}/{arch}/{repo}",
            ),
            Step(install, why + " from NVIDIA's repository", timeout=PACKAGE_TIMEOUT_S),
        )
    return None


def toolkit_steps(facts: Facts) -> tuple[Step, ...] | None:
    """NVIDIA's container toolkit from NVIDIA's repository, its key pinned; None where the
    engine knows no way."""
    ident, like = distro(facts.os_release)
    family = {ident, *like}
    pm = package_manager(facts.tools)
    key_why = f"NVIDIA's signing key (fingerprint {NVIDIA_KEY_FPR} checked)"
    if pm == "apt-get" and family & {"debian", "ubuntu"}:
        source = f"deb [signed-by={APT_KEY}] {NVIDIA_REPO}/stable/deb/$(ARCH) /\n"
        return (
            *_apt_prelude(),
            Step(("install", "-m", "0755", "-d", "/etc/apt/keyrings"), "a directory for apt keys"),
            Step(
                ("install", "-m", "0644", STAGED, APT_KEY),
                key_why,
                kind="fetch",
                url=f"{NVIDIA_REPO}/gpgkey",
                check=f"openpgp:{NVIDIA_KEY_FPR}",
            ),
            Step(
                ("install", "-m", "0644", STAGED, APT_LIST),
                "NVIDIA's apt repository",
                kind="stage",
                content=source,
            ),
            Step(("apt-get", "update", "-qq", *APT_OPTS), "read NVIDIA's repository", timeout=300),
            Step(
                _apt_install(TOOLKIT),
                "install the NVIDIA container toolkit",
                timeout=PACKAGE_TIMEOUT_S,
            ),
        )
    if pm in ("dnf", "yum") and family & {"fedora", "rhel", "centos", "amzn", *RHEL_REBUILDS}:
        return (
            Step(
                ("install", "-m", "0755", "-d", "/etc/pki/rpm-gpg"), "a directory for package keys"
            ),
            Step(
                ("install", "-m", "0644", STAGED, RPM_KEY),
                key_why,
                kind="fetch",
                url=f"{NVIDIA_REPO}/gpgkey",
                check=f"openpgp:{NVIDIA_KEY_FPR}",
            ),
            Step(
                ("install", "-m", "0644", STAGED, RPM_REPO),
                "NVIDIA's package repository (its metadata checked against that key)",
                kind="stage",
                content=rpm_repo(),
            ),
            Step(
                (pm, "-y", "-q", "install", TOOLKIT),
                "install the NVIDIA container toolkit",
                timeout=PACKAGE_TIMEOUT_S,
            ),
        )
    return None


def rpm_repo() -> str:
    """NVIDIA's published .repo, with the key it names read from the file checked above
    (not fetched again by dnf on first use)."""
    return (
        f"[{TOOLKIT}]\nname={TOOLKIT}\nbaseurl={NVIDIA_REPO}/stable/rpm/$basearch\n"
        f"repo_gpgcheck=1\ngpgcheck=0\nenabled=1\ngpgkey=file://{RPM_KEY}\nsslverify=1\n"
    )


def runtime_steps() -> tuple[Step, ...]:
    return (
        Step(
            ("nvidia-ctk", "runtime", "configure", "--runtime=docker", "--set-as-default"),
            "make nvidia Docker's default runtime (only when it is not already)",
            kind=DEFAULT_RUNTIME,
        ),
        Step(
            ("systemctl", "restart", "docker"),
            "Docker takes the NVIDIA runtime (only when "
            "the default changed; a running local cluster is started again after it)",
            kind=RESTART,
            timeout=120,
        ),
        Step(
            ("docker", "info", "--format", "{{json .}}"),
            "check that Docker answers again",
            root=False,
            kind="wait-docker",
            timeout=60,
        ),
    )


def check_step() -> Step:
    return Step(
        CHECK_ARGV,
        "check that Docker gives a container the GPU (a failure: the "
        "cluster is made or kept for CPU, and said)",
        root=False,
        kind=CHECK,
        timeout=CHECK_TIMEOUT_S,
        optional=True,
    )


def decide(gpu: GpuFacts, facts: Facts, *, creating: bool, primed: bool) -> RuntimePlan | None:
    """The GPU steps for this machine, or None when there is nothing to do. `creating`: a
    new cluster will be made (then the Docker-level check comes before it); `primed`: the
    runtime's plan already asks for the password."""
    if not gpu.hardware:
        return None
    if gpu.wsl:
        # The driver is Windows' and Docker is Docker Desktop's: nothing to set up here.
        return RuntimePlan(PRIVILEGED, "gpu-wsl", steps=(check_step(),) if creating else ())
    steps: list[Step] = []
    notes: list[str] = []
    reason = "gpu-ready"
    if not gpu.driver:
        found = driver_steps(facts)
        if found is None:
            ident = distro(facts.os_release)[0] or "unknown"
            return RuntimePlan(
                PRIVILEGED,
                "gpu-no-driver",
                notes=(
                    f"this machine has an NVIDIA GPU without a working driver, and the engine "
                    f"cannot install one on this distribution ({ident}): install the NVIDIA "
                    "driver (https://www.nvidia.com/Download/index.aspx), reboot, and run the "
                    "installer again; this install is for CPU",
                ),
            )
        steps += found
        steps.append(
            Step(
                ("nvidia-smi", "-L"),
                "the driver answers; if it does not, restart "
                "this machine and run the installer again (it goes on from here)",
                root=False,
                kind=REBOOT,
                timeout=30,
            )
        )
        reason = "gpu-driver-missing"
    if not gpu.toolkit:
        found = toolkit_steps(facts)
        if found is None:
            ident = distro(facts.os_release)[0] or "unknown"
            notes.append(
                f"the engine cannot install NVIDIA's container toolkit on this "
                f"distribution ({ident}): install it "
                "(https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/"
                "latest/install-guide.html) and run the installer again; this "
                "install is for CPU"
            )
            return RuntimePlan(PRIVILEGED, "gpu-no-toolkit", notes=tuple(notes))
        steps += found
        reason = reason if not gpu.driver else "gpu-toolkit-missing"
    if gpu.default_runtime != "nvidia":
        steps += runtime_steps()
        reason = reason if reason != "gpu-ready" else "gpu-runtime-not-default"
    if creating:
        steps.append(check_step())
    if not steps:
        return None
    if any(s.root for s in steps) and not primed:
        refusal = no_sudo(facts)
        if refusal is not None:
            return RuntimePlan(
                PRIVILEGED,
                "gpu-no-sudo",
                notes=(
                    "this machine's NVIDIA GPU needs administrator rights to set up (the driver, "
                    "NVIDIA's container toolkit, Docker's runtime); you cannot use sudo, so this "
                    "install is for CPU",
                ),
            )
        steps[:0] = sudo_prime(facts)
    return RuntimePlan(PRIVILEGED, reason, tuple(steps), notes=tuple(notes))
