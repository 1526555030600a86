"""Every setting the replaced scripts accepted, and what became of it. Pure data.

Each environment variable or flag a user could set is listed once with its fate: honoured
(same meaning), replaced (`note` names the replacement) or dropped (`note` says why). The
scripts' internal state and test hooks were never settings and are not listed.
MIGRATION.md's tables are generated from this module (tests/tools/migration_tables.py).
How a run meets the old settings (flags translated, notices): decide/old_settings.py.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Fate(str, enum.Enum):
    HONOURED = "honoured"
    REPLACED = "replaced"
    DROPPED = "dropped"


ENGINE = "engine"
LOCAL_CLUSTER = "local cluster"  # the path that creates or adopts the local k3d cluster


@dataclass(frozen=True)
class Upstream:
    name: str
    fate: Fate
    note: str  # honoured: what it does; replaced: the replacement; dropped: why
    by: str = ENGINE  # who honours it (honoured only)
    scripts: str = "both"  # "bash", "powershell" or "both": which scripts accepted it


H, R, D = Fate.HONOURED, Fate.REPLACED, Fate.DROPPED

VARIABLES: tuple[Upstream, ...] = (
    # --- the client and its values -------------------------------------------------------
    Upstream("TRACEBLOC_CLIENT_ID", H, "the client id, written as `clientId`"),
    Upstream("TRACEBLOC_CLIENT_PASSWORD", H, "the client password, written as `clientPassword`"),
    Upstream(
        "TRACEBLOC_TRAINING_RESOURCES", H, "the training size; replaces the size decision only"
    ),
    Upstream("TB_NAMESPACE", H, "namespace and release name"),
    Upstream("CLIENT_ENV", H, "the backend, written as `env.CLIENT_ENV`"),
    Upstream("HOST_DATA_DIR", H, "the data directory, checked before anything changes"),
    Upstream(
        "HOST_DATASET_DIR",
        H,
        "datasets on their own mount: `hostPath.datasetPath`, `env.HOST_UID`/`env.HOST_GID`",
    ),
    Upstream("TB_STORAGE_MODE", H, "`hostpath` or `node-local`", scripts="bash"),
    Upstream("TB_MYSQL_ENGINE", H, "`auto`, `5.7` or `8.4`", scripts="bash"),
    Upstream("TRACEBLOC_VALUES_FILE", H, "use this values file as it is", scripts="bash"),
    Upstream("TRACEBLOC_CHART_PATH", H, "install a local chart directory"),
    Upstream("TRACEBLOC_IMAGE_REGISTRY", H, "image mirror, written as `global.imageRegistry`"),
    Upstream("TRACEBLOC_REGISTRY_USERNAME", H, "mirror pull secret"),
    Upstream("TRACEBLOC_REGISTRY_PASSWORD", H, "mirror pull secret"),
    Upstream("TRACEBLOC_REGISTRY_SERVER", H, "mirror pull secret"),
    Upstream("TRACEBLOC_REGISTRY_EMAIL", H, "mirror pull secret"),
    Upstream(
        "TRACEBLOC_CA_BUNDLE",
        H,
        "an extra CA for every HTTPS client of the engine, "
        "`helm repo` and the local cluster's nodes",
    ),
    Upstream("CURL_CA_BUNDLE", H, "as TRACEBLOC_CA_BUNDLE, when that is unset"),
    Upstream("HTTP_PROXY", H, "proxy, split into `env.HTTP_PROXY_*`"),
    Upstream("HTTPS_PROXY", H, "proxy, split into `env.HTTP_PROXY_*`"),
    Upstream("http_proxy", H, "proxy, split into `env.HTTP_PROXY_*`"),
    Upstream("https_proxy", H, "proxy, split into `env.HTTP_PROXY_*`"),
    Upstream("NO_PROXY", H, "hosts reached directly, written as `env.NO_PROXY`"),
    Upstream("no_proxy", H, "hosts reached directly, written as `env.NO_PROXY`"),
    Upstream("KUBECONFIG", H, "passed to kubectl and helm"),
    # --- waits and checks ----------------------------------------------------------------
    Upstream(
        "TB_HELM_TIMEOUT_MIN", H, "deadline of `helm upgrade --install`, minutes", scripts="bash"
    ),
    Upstream("TB_METRICS_WAIT_S", H, "wait for the metrics API, seconds (default 120)"),
    Upstream(
        "READY_TIMEOUT", H, "wait after helm for the client to be ready, seconds (default 600)"
    ),
    Upstream("TRACEBLOC_SKIP_PREFLIGHT", H, "skip the machine and network checks"),
    Upstream(
        "TRACEBLOC_ALLOW_NETWORK_FS", H, "allow HOST_DATA_DIR on a network or FUSE filesystem"
    ),
    Upstream("PF_MIN_MEM_GB", H, "memory floor"),
    Upstream("PF_WARN_MEM_GB", H, "memory warning"),
    Upstream("PF_MIN_CPU", H, "CPU floor"),
    Upstream("PF_MIN_DISK_GB", H, "disk floor"),
    Upstream(
        "PF_WARN_DISK_GB",
        D,
        "the disk warning is fixed at 20 GiB; PF_MIN_DISK_GB sets the floor that matters",
    ),
    Upstream(
        "PF_REC_MEM_GB", D, "the recommendation is a fixed note; PF_WARN_MEM_GB sets the warning"
    ),
    Upstream("PF_REC_CPU", D, "the recommendation is a fixed note; PF_MIN_CPU sets the floor"),
    Upstream("PF_VM_MEM_GRACE_MIB", D, "the 512 MiB grace for VM-reported memory is fixed"),
    Upstream("PF_OS_RESERVE_GB", D, "the engine does not size a Docker Desktop VM", scripts="bash"),
    Upstream("NO_COLOR", H, "plain output", scripts="bash"),
    Upstream("TB_PLAIN", H, "plain output", scripts="bash"),
    # --- the local cluster (created or adopted on this machine) ---------------------------
    Upstream("CLUSTER_NAME", H, "name of the local k3d cluster", by=LOCAL_CLUSTER),
    Upstream("SERVERS", H, "server nodes of the local cluster", by=LOCAL_CLUSTER),
    Upstream(
        "AGENTS",
        H,
        "agent nodes of the local cluster (none when it is created with a GPU)",
        by=LOCAL_CLUSTER,
    ),
    Upstream(
        "TB_LEFTOVER_ACTION", H, "`reuse` or `wipe` data a previous install left", by=LOCAL_CLUSTER
    ),
    Upstream("TRACEBLOC_SKIP_LEFTOVER_GUARD", H, "do not stop for leftover data", by=LOCAL_CLUSTER),
    Upstream(
        "TRACEBLOC_K3S_CUDA_IMAGE",
        D,
        "the engine builds and uses no CUDA node image; "
        "on Windows the local cluster is created for CPU, and said",
        scripts="powershell",
    ),
    Upstream("TRACEBLOC_CUDA_BASE_TAG", D, "as TRACEBLOC_K3S_CUDA_IMAGE", scripts="powershell"),
    Upstream(
        "K8S_VERSION", H, "the k3s version of a new local cluster's node image", by=LOCAL_CLUSTER
    ),
    Upstream(
        "K3D_VERSION",
        D,
        "the engine brings the k3d it verified; a version variable would fetch one nobody checked",
    ),
    Upstream("HELM_VERSION", D, "the engine brings the helm it verified"),
    Upstream(
        "TB_CREATE_TIMEOUT_MIN", H, "deadline of `k3d cluster create --wait`", by=LOCAL_CLUSTER
    ),
    Upstream(
        "TB_CLUSTER_START_TIMEOUT_MIN", D, "cluster start has its own deadline", scripts="bash"
    ),
    Upstream(
        "TB_API_WAIT_S",
        H,
        "how long to wait for a new local cluster's API",
        by=LOCAL_CLUSTER,
        scripts="bash",
    ),
    Upstream("TB_PULL_TIMEOUT", D, "image pulls happen inside the cluster", scripts="bash"),
    Upstream(
        "TB_PREPARE_USER",
        H,
        "with `prepare-host`: the user granted the docker group "
        "(never the administrator running it)",
        scripts="bash",
    ),
    Upstream(
        "COLIMA_MEMORY",
        H,
        "memory (GiB) of the colima VM the engine starts on a "
        "headless Mac; default half the Mac's memory, bounded",
        scripts="bash",
    ),
    Upstream("COLIMA_CPU", H, "CPUs of the colima VM (default 4)", scripts="bash"),
    Upstream("COLIMA_DISK", H, "disk (GiB) of the colima VM (default 60)", scripts="bash"),
    Upstream(
        "TB_DOCKER_WAIT_MIN",
        H,
        "Windows: how long Docker Desktop's first start is waited for (minutes)",
        by=LOCAL_CLUSTER,
        scripts="powershell",
    ),
    Upstream(
        "TB_GPU_BUILD_TIMEOUT_MIN", D, "the engine builds no node image", scripts="powershell"
    ),
    Upstream(
        "TB_WSL_MIN_VERSION",
        H,
        "Windows: the WSL version below which WSL is updated",
        by=LOCAL_CLUSTER,
        scripts="powershell",
    ),
    # --- what the engine no longer does --------------------------------------------------
    Upstream(
        "TRACEBLOC_FORCE_REINSTALL",
        H,
        "re-apply even when the client is installed, "
        "up to date and healthy (a healthy re-run otherwise changes nothing)",
        scripts="bash",
    ),
    Upstream("TB_FORCE_REINSTALL", H, "as TRACEBLOC_FORCE_REINSTALL", scripts="bash"),
    Upstream(
        "TRACEBLOC_SKIP_REBOOT_PROMPT",
        D,
        "never asks `Reboot now?` on Linux: after the NVIDIA driver it exits 2 "
        "asking for a reboot and a re-run (what the variable did)",
        scripts="bash",
    ),
    Upstream(
        "TRACEBLOC_ALLOW_ARM64",
        D,
        "the MySQL engine follows the nodes' architecture; "
        "where a release keeps the amd64-only 5.7 image on an arm64 Mac, amd64 "
        "emulation is checked, with no skip",
    ),
    Upstream(
        "TRACEBLOC_NO_AUTOSTART",
        H,
        "no restart policy on the local cluster's node "
        "containers, no macOS/Windows autostart, and a Docker the engine only starts is "
        "not enabled at boot",
        by=LOCAL_CLUSTER,
    ),
    Upstream(
        "TRACEBLOC_CLIENT_NAME",
        H,
        "the name browser sign-in registers this machine "
        "under (`tracebloc client create --name`); else asked on the terminal",
    ),
    Upstream(
        "TRACEBLOC_CLIENT_LOCATION",
        H,
        "the carbon zone sign-in registers "
        "(`--location`); else from the system time zone; else none",
    ),
    Upstream("TRACEBLOC_INSTALL_REF", R, "TRACEBLOC_INSTALLER_VERSION (bootstrap scripts)"),
    Upstream("BRANCH", R, "TRACEBLOC_INSTALLER_VERSION (bootstrap scripts)"),
    Upstream("REF", R, "TRACEBLOC_INSTALLER_VERSION (bootstrap scripts)"),
    Upstream(
        "TRACEBLOC_ALLOW_UNVERIFIED",
        D,
        "the binary is always verified against the release's SHA256SUMS; there is no opt-out",
    ),
    Upstream(
        "TRACEBLOC_SKIP_DAILY_USER",
        H,
        "Windows: the daily user is not added to docker-users",
        by=LOCAL_CLUSTER,
        scripts="powershell",
    ),
    Upstream("TRACEBLOC_TELEMETRY_DEBUG", D, "the engine sends no telemetry", scripts="powershell"),
    Upstream(
        "TRACEBLOC_NO_TELEMETRY",
        D,
        "tracebloc-installer sends no telemetry, so there is nothing to turn off",
    ),
    Upstream(
        "DO_NOT_TRACK", D, "tracebloc-installer sends no telemetry, so there is nothing to turn off"
    ),
    Upstream("TB_PROBE_VERIFY", R, "`tracebloc-installer probe` (reads only)", scripts="bash"),
    Upstream("TRACEBLOC_DOCTOR_TIMEOUT", R, "`tracebloc-installer diagnose`", scripts="bash"),
)

FLAGS: tuple[Upstream, ...] = (
    Upstream("--help", H, "`--help` (also `-h`)"),
    Upstream(
        "--force",
        H,
        "same as TRACEBLOC_FORCE_REINSTALL=1: re-apply even when nothing would change",
        scripts="bash",
    ),
    Upstream("--reinstall", H, "as `--force`", scripts="bash"),
    Upstream(
        "--reuse-data", H, "same as TB_LEFTOVER_ACTION=reuse", by=LOCAL_CLUSTER, scripts="bash"
    ),
    Upstream("--wipe-data", H, "same as TB_LEFTOVER_ACTION=wipe", by=LOCAL_CLUSTER, scripts="bash"),
    Upstream("--data-dir=PATH", H, "same as HOST_DATA_DIR=PATH", scripts="bash"),
    Upstream("--diagnose", R, "`tracebloc-installer diagnose`", scripts="bash"),
    Upstream(
        "prepare-host",
        H,
        "`tracebloc-installer prepare-host` (also `--prepare-host`): "
        "the privileged half only, Docker installed, started and enabled, TB_PREPARE_USER "
        "granted the docker group",
        scripts="bash",
    ),
    Upstream("-Help", H, "`--help`", scripts="powershell"),
    Upstream("-Diagnose", R, "`tracebloc-installer diagnose`", scripts="powershell"),
    Upstream(
        "-NoReboot",
        H,
        "Windows: never reboot; the install resumes at the next sign-in (also `--no-reboot`)",
        by=LOCAL_CLUSTER,
        scripts="powershell",
    ),
    Upstream(
        "-Resume",
        H,
        "Windows: continue the host preparation after the reboot (the "
        "engine registers it itself; also `--resume`)",
        by=LOCAL_CLUSTER,
        scripts="powershell",
    ),
    Upstream(
        "-DailyUser",
        H,
        "Windows: the account granted docker-users, a sized .wslconfig and a Startup shortcut "
        "in the elevated window, also when Docker Desktop already works for the account running "
        "it (also `--daily-user`)",
        by=LOCAL_CLUSTER,
        scripts="powershell",
    ),
)


@dataclass(frozen=True)
class Setting:
    """A variable the engine (or its bootstrap script) reads that the scripts did not."""

    name: str
    note: str  # what it does, in a few words


ENGINE_SETTINGS: tuple[Setting, ...] = (
    Setting(
        "TB_SET_CONTEXT_NAMESPACE",
        "`0`: leave the kube context's default namespace as it is (`--keep-context-namespace`)",
    ),
    Setting("TB_PROBE_TIMEOUT_S", "deadline of each read of the cluster, seconds"),
    Setting("TRACEBLOC_BACKEND_URL", "the backend the credentials are checked against"),
    Setting("TRACEBLOC_CLI", "the `tracebloc` CLI used for browser sign-in"),
    Setting("TRACEBLOC_KUBECTL", "the `kubectl` binary to use"),
    Setting("TRACEBLOC_HELM", "the `helm` binary to use"),
    Setting("TRACEBLOC_K3D", "the `k3d` binary to use (local cluster)"),
    Setting("TRACEBLOC_DOCKER", "the `docker` binary to use (local cluster)"),
    Setting("TRACEBLOC_NVIDIA_SMI", "the `nvidia-smi` used to find a GPU"),
    Setting("TRACEBLOC_ICACLS", "Windows: the `icacls` used to narrow file permissions"),
    Setting("TRACEBLOC_TOOLS_DIR", "where the pinned kubectl, helm, k3d and CLI are kept"),
    Setting("TRACEBLOC_TOOLS_MIRROR", "where the pinned tools are downloaded from (no internet)"),
    Setting("TRACEBLOC_DOWNLOAD_TIMEOUT_S", "deadline of each tool download, seconds"),
    Setting("TRACEBLOC_DAILY_USER", "Windows: the account granted docker-users (`--daily-user`)"),
    Setting("TRACEBLOC_NO_REBOOT", "Windows: never reboot (`--no-reboot`)"),
    Setting("TRACEBLOC_RESUME", "Windows: continue the host preparation after a reboot"),
    Setting(
        "TRACEBLOC_RECREATE_CLUSTER",
        "recreate the engine's local cluster made without GPU access, for the GPU, when no "
        "helm release is installed in it (its data under HOST_DATA_DIR kept)",
    ),
    Setting("TRACEBLOC_INSTALLER_VERSION", "install.sh/install.ps1: the release to install"),
    Setting("TRACEBLOC_INSTALLER_INSTALL_DIR", "install.sh/install.ps1: where the binary goes"),
    Setting("TRACEBLOC_INSTALLER_DOWNLOAD_URL", "install.sh/install.ps1: a mirror of the releases"),
    Setting("TRACEBLOC_INSTALLER_NO_RUN", "install.sh/install.ps1: `1`: install, do not run"),
    Setting("CI", "set by CI systems: plain output"),
    Setting("TERM", "`dumb`: plain output"),
    Setting("COLUMNS", "the terminal's width the output fits"),
    Setting("SHELL", "the shell the PATH line after a sign-in is written for"),
    Setting("TZ", "the time zone a sign-in's location is derived from"),
    Setting("SUDO_USER", "set by sudo: whose home the data directory is in"),
    Setting("HOME", "the default data directory's base (Linux, macOS)"),
    Setting("USERPROFILE", "the default data directory's base (Windows)"),
    Setting("LOCALAPPDATA", "Windows: the default tools directory's base"),
    Setting("PATH", "where the tools are looked for when not named"),
    Setting("TB_GPU_WAIT_S", "seconds to wait for a node to advertise the GPU (default 90)"),
    Setting("SystemRoot", "Windows: a system directory the data may not be in"),
    Setting("SYSTEMROOT", "Windows: as `SystemRoot`"),
    Setting("ProgramFiles", "Windows: a system directory; also where Docker Desktop is"),
    Setting("ProgramFiles(x86)", "Windows: a system directory the data may not be in"),
    Setting("ProgramData", "Windows: a system directory the data may not be in"),
    Setting("SystemDrive", "Windows: where another account's profile is looked for"),
    Setting("USERNAME", "Windows: the account made the values file's sole owner"),
    Setting("USERDOMAIN", "Windows: that account's domain"),
    Setting("WSL_DISTRO_NAME", "set by WSL: this Linux is WSL"),
    Setting("WSL_INTEROP", "set by WSL: this Linux is WSL"),
)

# The tests' seams: each honoured only in the conditions its note names (a loopback mirror,
# a fake os-release), so a real install never meets one.
TEST_SEAMS: tuple[Setting, ...] = (
    Setting("PF_CRITICALS", "the hosts the network check probes (loopback URLs only)"),
    Setting("TB_OS_RELEASE_FILE", "the file read instead of `/etc/os-release`"),
    Setting("TB_LAUNCHDAEMONS_DIR", "where a headless Mac's boot LaunchDaemon is written"),
    Setting("TB_TEST_TOOLS_MANIFEST", "a tools manifest, only with a local mirror"),
    Setting("TB_TEST_PROXY_LOOPBACK", "loopback addresses go through the proxy"),
    Setting("TB_TEST_API_PORT_PROBE", "the `HOST:PORT` the free-port check probes"),
    Setting("TB_TEST_RUNTIME_USER", "`NAME:UID` the runtime step decides as"),
    Setting("TB_TEST_SYSROOT", "the root the runtime step reads its files under"),
    Setting("TB_TEST_DOCKER_APT_KEY_FPR", "the fingerprint Docker's signing keys must have"),
    Setting("TB_TEST_NVIDIA_KEY_FPR", "the fingerprint NVIDIA's signing key must have"),
)

# Read by the engine but not settings: its own tests' seams and what it passes to a child.
NOT_SETTINGS = (
    "PF_CRITICALS",
    "TB_OS_RELEASE_FILE",
    "TRACEBLOC_CLIENT_ADOPTED",
    "TRACEBLOC_INSTALLER",
)


def by_name(name: str) -> Upstream | None:
    return next((v for v in VARIABLES if v.name == name), None)
