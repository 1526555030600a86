"""The container-runtime step's decisions (decide/runtime*.py): tiers, the root commands per
distribution and situation, exact argv, and the files written under /etc. Pure: no process."""

from __future__ import annotations

import plistlib
from pathlib import Path
from typing import Any

import pytest

from installer.decide import openpgp
from installer.decide import runtime as rt
from installer.decide import runtime_macos as mac
from installer.decide.arch import apt_arch, engine_arch, go_arch
from installer.decide.docker_packages import DOCKER_CE
from installer.decide.runtime_route import decide
from tests.fakes.runtime_host import OS_RELEASES, TEST_KEY, TEST_KEY_FPR

APT_INSTALL = (
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
)
PMS = {
    "debian": "apt-get",
    "ubuntu": "apt-get",
    "fedora": "dnf",
    "rhel9": "dnf",
    "rocky9": "dnf",
    "amzn2023": "dnf",
    "arch": "pacman",
    "opensuse": "zypper",
}


def linux(distro: str = "ubuntu", **over: Any) -> rt.Facts:
    base: dict[str, Any] = dict(
        os="linux",
        docker="missing",
        docker_cli=False,
        uid=1000,
        user="ana",
        sudo="pw",
        in_docker_group=False,
        os_release=rt.parse_os_release(OS_RELEASES[distro]),
        tools=frozenset({PMS[distro], "systemctl"}),
        arch="x86_64",
    )
    base.update(over)
    return rt.Facts(**base)


def root_argv(plan: rt.RuntimePlan) -> list[tuple[str, ...]]:
    return [s.argv for s in plan.steps if s.root]


# --- tiers -----------------------------------------------------------------------------------


@pytest.mark.parametrize("os_", ["linux", "darwin"])
def test_a_runtime_that_answers_as_this_user_is_tier_0_with_no_privileged_step(os_: str) -> None:
    plan = decide(rt.Facts(os=os_, docker="running", uid=1000, sudo="none", admin=False))
    assert (plan.tier, plan.reason, plan.steps, plan.refusal) == (0, "runtime-usable", (), None)


def test_a_sudo_wrapped_run_is_refused_naming_the_daily_user_and_prepare_host() -> None:
    plan = decide(linux(uid=0, sudo="root", sudo_user="ana", docker="running"))
    assert plan.refusal is not None and plan.steps == ()
    message, remedy = plan.refusal
    assert "sudo" in message and "ana" in remedy and "prepare-host" in remedy


def test_a_root_login_without_sudo_user_runs_root_steps_directly() -> None:
    plan = decide(linux(uid=0, sudo="root", user="root"))
    assert plan.refusal is None and plan.as_root is False  # set by commands/runtime
    assert rt.shown(plan.steps[0], as_root=True).startswith("fuser ")
    assert not any(s.argv == ("sudo", "-v") for s in plan.steps)  # nothing to prime
    assert not any(s.argv[:1] == ("usermod",) for s in plan.steps)  # root is not granted


def test_a_user_who_cannot_sudo_is_told_to_ask_an_administrator_for_prepare_host() -> None:
    plan = decide(linux(sudo="none"))
    assert plan.refusal is not None and "prepare-host" in plan.refusal[1]


def test_the_password_is_asked_once_before_the_first_root_command() -> None:
    steps = decide(linux()).steps
    assert steps[0].argv == ("sudo", "-v") and steps[0].kind == "prime"
    assert [s for s in steps if s.kind == "prime"] == [steps[0]]
    assert decide(linux(sudo="nopw")).steps[0].argv != ("sudo", "-v")


def test_the_scripts_rootless_tier_is_not_carried_a_rootless_capable_host_gets_the_privileged_flow() -> (
    None
):
    assert decide(linux()).tier == rt.PRIVILEGED


# --- Docker installed per distribution ---------------------------------------------------------


RPM_KEY_STEPS = [
    ("install", "-m", "0755", "-d", "/etc/pki/rpm-gpg"),
    ("install", "-m", "0644", rt.STDIN, "/etc/pki/rpm-gpg/docker-ce.asc"),
]


@pytest.mark.parametrize(
    ("distro", "install"),
    [
        pytest.param("amzn2023", [("dnf", "install", "-y", "docker")], id="amazon-linux-2023"),
        pytest.param("arch", [("pacman", "-S", "--noconfirm", "docker")], id="arch"),
        pytest.param("opensuse", [("zypper", "install", "-y", "docker")], id="opensuse"),
        pytest.param(
            "fedora",
            [
                *RPM_KEY_STEPS,
                ("install", "-m", "0644", rt.STDIN, "/etc/yum.repos.d/docker-ce.repo"),
                ("dnf", "-y", "-q", "install", *DOCKER_CE),
            ],
            id="fedora",
        ),
        pytest.param(
            "rhel9",
            [
                *RPM_KEY_STEPS,
                ("install", "-m", "0644", rt.STDIN, "/etc/yum.repos.d/docker-ce.repo"),
                ("dnf", "-y", "-q", "install", *DOCKER_CE),
            ],
            id="rhel-9",
        ),
        pytest.param(
            "rocky9",
            [
                *RPM_KEY_STEPS,
                ("install", "-m", "0644", rt.STDIN, "/etc/yum.repos.d/docker-ce.repo"),
                ("dnf", "-y", "-q", "install", *DOCKER_CE),
            ],
            id="rocky-9",
        ),
    ],
)
def test_docker_is_installed_the_way_the_scripts_chose_for_the_distribution(
    distro: str, install: list[tuple[str, ...]]
) -> None:
    plan = decide(linux(distro))
    argv = root_argv(plan)
    assert argv[: len(install)] == install
    assert ("systemctl", "enable", "docker") in argv and ("systemctl", "start", "docker") in argv


@pytest.mark.parametrize(
    ("distro", "repo"),
    [
        pytest.param("fedora", "fedora", id="fedora"),
        pytest.param("rhel9", "rhel", id="rhel-9"),
        pytest.param("rocky9", "centos", id="rocky-9-uses-dockers-centos-repo-as-the-twin"),
    ],
)
def test_rpm_distributions_get_dockers_repository_file(distro: str, repo: str) -> None:
    steps = decide(linux(distro)).steps
    written = next(s for s in steps if s.argv[-1] == rt.RPM_REPO)
    assert written.kind == "stage" and written.guard == "ours" and not written.url
    assert written.content == (
        "# Managed by tracebloc installer\n[docker-ce-stable]\nname=Docker CE Stable - $basearch\n"
        f"baseurl=https://download.docker.com/linux/{repo}/$releasever/$basearch/stable\n"
        "enabled=1\ngpgcheck=1\ngpgkey=file:///etc/pki/rpm-gpg/docker-ce.asc\n"
    )
    # The one download is Docker's rpm key, installed only with its published fingerprint.
    key = next(s for s in steps if s.kind == "fetch")
    assert key.url == f"https://download.docker.com/linux/{repo}/gpg"
    assert key.check == f"openpgp:{rt.DOCKER_RPM_KEY_FPR}" and key.guard == "ours"
    assert key.argv == ("install", "-m", "0644", rt.STDIN, rt.RPM_KEY)
    assert steps.index(key) < steps.index(written)


@pytest.mark.parametrize(
    ("distro", "base", "codename"),
    [
        pytest.param("debian", "debian", "bookworm", id="debian-12"),
        pytest.param("ubuntu", "ubuntu", "noble", id="ubuntu-24.04"),
    ],
)
def test_debian_and_ubuntu_use_dockers_signed_apt_repository_not_get_docker_com(
    distro: str, base: str, codename: str
) -> None:
    steps = decide(linux(distro)).steps
    key = next(s for s in steps if s.kind == "fetch")
    assert key.url == f"https://download.docker.com/linux/{base}/gpg"
    assert key.check == f"openpgp:{rt.DOCKER_APT_KEY_FPR}"
    assert key.argv == ("install", "-m", "0644", rt.STDIN, "/etc/apt/keyrings/docker.asc")
    assert key.guard == "ours"
    source = next(s for s in steps if s.argv[-1] == "/etc/apt/sources.list.d/docker.list")
    assert source.content == (
        "# Managed by tracebloc installer\n"
        "deb [arch=amd64 signed-by=/etc/apt/keyrings/docker.asc] "
        f"https://download.docker.com/linux/{base} {codename} stable\n"
    )
    assert source.guard == "ours"
    assert (*APT_INSTALL, *DOCKER_CE) in root_argv(decide(linux(distro)))
    assert not any("get.docker.com" in " ".join(s.argv) + s.url for s in steps)
    lock = next(s for s in steps if s.kind == "wait-lock")
    assert lock.timeout == 600 and lock.argv[0] == "fuser"


@pytest.mark.parametrize(
    ("machine", "dpkg_says", "apt"),
    [
        pytest.param("x86_64", "", "amd64", id="x86_64-is-amd64-to-apt"),
        pytest.param("arm64", "", "arm64", id="arm64"),
        pytest.param("armv7l", "", "armhf", id="32-bit-arm-is-armhf"),
        pytest.param("arm64", "armhf", "armhf", id="dpkg-knows-its-userland-best"),
        pytest.param("x86_64", "not an arch!", "amd64", id="a-garbled-answer-falls-back"),
    ],
)
def test_the_apt_source_names_the_architecture_as_dpkg_does(
    machine: str, dpkg_says: str, apt: str
) -> None:
    steps = decide(linux("debian", arch=machine, dpkg_arch=dpkg_says)).steps
    source = next(s for s in steps if s.argv[-1] == rt.APT_SOURCE)
    assert f"deb [arch={apt} signed-by=" in source.content


def test_each_tool_gets_its_own_architecture_name() -> None:
    assert [engine_arch(a) for a in ("x86_64", "AMD64", "aarch64", "arm64")] == [
        "x86_64",
        "x86_64",
        "arm64",
        "arm64",
    ]
    assert [apt_arch(a) for a in ("x86_64", "arm64")] == ["amd64", "arm64"]
    assert [go_arch(a) for a in ("x86_64", "arm64")] == ["amd64", "arm64"]
    assert apt_arch("sparc") == "" and go_arch("sparc") == ""


def test_an_architecture_apt_has_no_name_for_gets_no_guessed_source() -> None:
    plan = decide(linux("debian", arch="sparc"))
    assert plan.refusal is not None and "cannot install Docker" in plan.refusal[0]


@pytest.mark.parametrize(
    ("distro", "path", "state"),
    [
        pytest.param("debian", rt.APT_SOURCE, "foreign", id="an-admins-docker-list"),
        pytest.param("ubuntu", rt.APT_SOURCE_DEB822, "foreign", id="dockers-deb822-docker-sources"),
        pytest.param("debian", rt.APT_SOURCE, "link", id="a-linked-docker-list"),
        pytest.param("fedora", rt.RPM_REPO, "foreign", id="an-admins-docker-ce-repo"),
    ],
)
def test_an_administrators_repository_is_kept_and_used(distro: str, path: str, state: str) -> None:
    plan = decide(linux(distro, files={path: state}))
    assert plan.refusal is None
    assert not any(
        s.argv[-1] in (rt.APT_SOURCE, rt.APT_KEY, rt.RPM_REPO, rt.RPM_KEY) for s in plan.steps
    )
    assert any("docker-ce" in s.argv and "install" in s.argv for s in plan.steps)
    assert rt.plan_lines(plan)[0].startswith(f"# kept: {path} (")
    assert "Docker is installed from the repository it names" in rt.plan_lines(plan)[0]


@pytest.mark.parametrize(
    ("distro", "key", "repository", "state"),
    [
        pytest.param("debian", rt.APT_KEY, rt.APT_SOURCE, "foreign", id="an-admins-docker-asc"),
        pytest.param("ubuntu", rt.APT_KEY, rt.APT_SOURCE, "link", id="a-linked-docker-asc"),
        pytest.param("fedora", rt.RPM_KEY, rt.RPM_REPO, "foreign", id="an-admins-rpm-key"),
    ],
)
def test_a_signing_key_the_engine_did_not_write_is_kept_and_its_repository_still_written(
    distro: str, key: str, repository: str, state: str
) -> None:
    plan = decide(linux(distro, files={key: state}))
    assert plan.refusal is None
    assert not any(s.argv[-1] == key for s in plan.steps)
    assert any(s.argv[-1] == repository and s.guard == "ours" for s in plan.steps)
    assert rt.plan_lines(plan)[0].startswith(f"# kept: {key} (")
    assert "checked against the key it holds" in rt.plan_lines(plan)[0]


@pytest.mark.parametrize(
    ("distro", "path", "over"),
    [
        pytest.param("debian", rt.APT_KEY, {}, id="apt-key"),
        pytest.param("fedora", rt.RPM_KEY, {}, id="rpm-key"),
        pytest.param("debian", rt.APT_SOURCE, {}, id="apt-source"),
        pytest.param("fedora", rt.RPM_REPO, {}, id="dnf-repository"),
        pytest.param(
            "debian",
            rt.PROXY_DROPIN,
            {"docker_cli": True, "docker": "stopped", "proxy": {"HTTPS_PROXY": "http://p:3128"}},
            id="proxy-drop-in",
        ),
    ],
)
def test_a_dangling_link_where_the_engine_writes_stops_before_anything(
    distro: str, path: str, over: dict[str, Any]
) -> None:
    plan = decide(linux(distro, files={path: "dangling"}, **over))
    assert plan.refusal is not None and not plan.steps
    assert plan.refusal[0].startswith(f"{path} is a symbolic link to a file that does not exist")
    assert f"sudo rm {path}" in plan.refusal[1]


def test_the_engines_own_files_are_rewritten_guarded() -> None:
    plan = decide(linux("debian", files={rt.APT_SOURCE: "ours", rt.PROXY_DROPIN: "absent"}))
    assert plan.kept == () and any(
        s.argv[-1] == rt.APT_SOURCE and s.guard == "ours" for s in plan.steps
    )


def test_a_foreign_proxy_drop_in_is_kept_and_the_plan_says_so() -> None:
    plan = decide(
        linux(
            "debian",
            docker_cli=True,
            docker="stopped",
            proxy={"HTTPS_PROXY": "http://p:3128"},
            files={rt.PROXY_DROPIN: "link"},
        )
    )
    assert plan.refusal is None
    assert any(
        line.startswith(f"# kept: {rt.PROXY_DROPIN} (a symbolic link)")
        for line in rt.plan_lines(plan)
    )
    assert any(
        line.startswith(f"sudo -n test -L {rt.PROXY_DROPIN}") for line in rt.plan_lines(plan)
    )


def test_an_unknown_distribution_is_refused_with_the_manual_remedy() -> None:
    facts = linux("debian", os_release={"ID": "gentoo"}, tools=frozenset({"systemctl"}))
    plan = decide(facts)
    assert plan.refusal is not None and "gentoo" in plan.refusal[0]


# --- started, granted, configured ---------------------------------------------------------------


def test_docker_stopped_is_started_and_nothing_is_installed() -> None:
    plan = decide(linux(docker="stopped", docker_cli=True, in_docker_group=True))
    argv = root_argv(plan)
    assert ("systemctl", "start", "docker") in argv
    assert not any(a[0] in ("apt-get", "env", "dnf", "usermod") for a in argv)
    assert plan.grant_user == ""


def test_installed_but_not_in_the_group_grants_the_user_reads_it_back_and_loads_the_modules() -> (
    None
):
    facts = linux(
        docker="stopped",
        docker_cli=True,
        docker_reason="Docker is not running (permission denied while trying to connect)",
    )
    plan = decide(facts)
    assert plan.reason == "no-socket-access" and plan.grant_user == "ana"
    grant = next(s for s in plan.steps if s.argv[:1] == ("usermod",))
    assert grant.argv == ("usermod", "-aG", "docker", "--", "ana") and not grant.optional
    check = plan.steps[plan.steps.index(grant) + 1]
    assert (check.argv, check.kind, check.root) == (("id", "-nG", "--", "ana"), "member", False)
    # Docker may be restarted in this run, or after a reboot: the modules are loaded and
    # listed for boot here too.
    modules = next(s for s in plan.steps if s.kind == "modules")
    assert modules.argv == ("modprobe", "-a", *rt.KERNEL_MODULES)
    assert ("install", "-m", "0644", rt.STDIN, rt.MODULES_FILE) in root_argv(plan)


def test_kernel_modules_are_loaded_and_listed_for_boot_with_kernel_modules_extra_on_dnf() -> None:
    steps = decide(linux("rocky9", tools=frozenset({"dnf", "systemctl"}))).steps
    modules = next(s for s in steps if s.kind == "modules")
    assert modules.argv == ("modprobe", "-a", *rt.KERNEL_MODULES)
    assert modules.content == "dnf install -y -q kernel-modules-extra"
    boot = next(s for s in steps if s.argv[-1] == rt.MODULES_FILE)
    assert boot.content.split() == list(rt.KERNEL_MODULES)


def test_the_proxy_drop_in_is_owner_only_and_keeps_a_password_with_quotes_and_percent() -> None:
    proxy = {"HTTPS_PROXY": 'http://ana:p"a%s@proxy:3128', "NO_PROXY": "localhost,.corp"}
    steps = decide(linux(proxy=proxy)).steps
    dropin = next(s for s in steps if s.argv[-1] == rt.PROXY_DROPIN)
    assert dropin.argv[:3] == ("install", "-m", "0600") and dropin.secret
    assert dropin.content == (
        f"{rt.MARKER}\n[Service]\n"
        'Environment="HTTP_PROXY=http://ana:p\\"a%%s@proxy:3128"\n'
        'Environment="HTTPS_PROXY=http://ana:p\\"a%%s@proxy:3128"\n'
        'Environment="NO_PROXY=localhost,.corp"\n'
    )
    assert not any('p"a' in part for s in steps for part in s.argv)  # never on a command line
    restart = next(s for s in steps if s.argv == ("systemctl", "try-restart", "docker"))
    assert restart.when == "changed"


def test_no_proxy_means_no_drop_in_and_an_earlier_one_of_ours_is_removed() -> None:
    steps = decide(linux()).steps
    assert [s.argv for s in steps if s.argv[-1] == rt.PROXY_DROPIN] == [
        ("rm", "-f", rt.PROXY_DROPIN)
    ]
    removal = next(s for s in steps if s.argv[-1] == rt.PROXY_DROPIN)
    assert removal.guard == "ours" and removal.optional
    # Reloaded and restarted only when that removal happened, not for another file.
    reload = [
        s
        for s in steps
        if s.argv[:1] == ("systemctl",) and s.argv[1] in ("daemon-reload", "try-restart")
    ]
    assert [s.when for s in reload] == [f"changed:{rt.PROXY_DROPIN}"] * 2


def test_the_proxy_drop_in_is_only_ever_written_over_our_own_in_one_rename() -> None:
    plan = decide(linux(proxy={"HTTPS_PROXY": "http://proxy:3128"}))
    dropin = next(s for s in plan.steps if s.argv[-1] == rt.PROXY_DROPIN)
    assert dropin.guard == "ours"
    lines = [line.split("    #")[0] for line in rt.plan_lines(plan)]
    new = rt.PROXY_DROPIN + rt.NEW_SUFFIX
    at = lines.index(
        f"sudo -n grep -qxE '# Managed by tracebloc installer( \\(#244\\))?' {rt.PROXY_DROPIN}"
    )
    assert lines[at + 1 : at + 5] == [
        f"sudo -n cmp -s - {rt.PROXY_DROPIN}",
        f"sudo -n install -m 0600 /dev/stdin {new}",
        f"sudo -n mv -f {new} {rt.PROXY_DROPIN}",
        f"sudo -n rm -f -- {new}",
    ]  # only when either failed


def test_a_corporate_ca_is_given_to_the_daemon_only_as_content_never_a_path() -> None:
    pem = "-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n"
    steps = decide(linux(ca_pem=pem)).steps
    argv = [s.argv for s in steps]
    ca = next(s for s in steps if s.argv[-1] == f"{rt.CA_DIR}/ca.crt")
    assert (ca.argv, ca.kind, ca.content) == (
        ("install", "-m", "0644", rt.STDIN, f"{rt.CA_DIR}/ca.crt"),
        "stage",
        pem,
    )
    assert not any("/home" in a for a in sum(argv, ()))
    dropin = next(s for s in steps if s.argv[-1] == rt.CA_DROPIN)
    assert f":{rt.CA_DIR}" in dropin.content and "SSL_CERT_DIR=/etc/ssl/certs" in dropin.content


def test_prepare_host_grants_the_named_user_never_the_administrator() -> None:
    facts = linux(
        uid=0, sudo="root", user="root", sudo_user="admin", docker="running", docker_cli=True
    )
    plan = decide(facts, mode=rt.PREPARE_HOST, target_user=" bob ")
    assert ("usermod", "-aG", "docker", "--", "bob") in root_argv(plan)
    assert not any("admin" in a for s in plan.steps for a in s.argv)
    assert plan.steps[-1].argv == ("systemctl", "enable", "docker")
    check = next(s for s in plan.steps if s.kind == "wait-docker")
    assert check.root  # the administrator checks the daemon through sudo, not the socket


def test_prepare_host_without_a_user_grants_nobody_and_says_how() -> None:
    plan = decide(linux(docker="stopped", docker_cli=True), mode=rt.PREPARE_HOST)
    assert not any(s.argv[0] == "usermod" for s in plan.steps)
    assert plan.notes and "usermod -aG docker" in plan.notes[0]


def test_plan_lines_show_sudo_the_compare_and_the_download_check() -> None:
    plan = decide(linux("debian"))
    lines = rt.plan_lines(plan)
    assert lines[0].startswith("sudo -v")
    assert any(
        line.startswith("download https://download.docker.com/linux/debian/gpg")
        and rt.DOCKER_APT_KEY_FPR in line
        for line in lines
    )
    key = "/etc/apt/keyrings/docker.asc"
    at = lines.index(f"sudo -n test -L {key}    # a symbolic link is left as it is")
    assert lines[at + 2].startswith(f"sudo -n cmp -s - {key}    # unchanged")
    assert lines[at + 3].startswith(f"sudo -n install -m 0644 /dev/stdin {key}.tracebloc-new    #")
    assert lines[at + 4].startswith(f"sudo -n mv -f {key}.tracebloc-new {key}    # put in place")
    assert any(line.startswith("sudo -n systemctl start docker") for line in lines)


def test_os_release_parsing_tolerates_quotes_comments_and_junk() -> None:
    assert rt.parse_os_release(
        '# c\nID="rocky"\nID_LIKE="rhel centos fedora"\nbad line\nX=\'a\n'
    ) == {"ID": "rocky", "ID_LIKE": "rhel centos fedora"}


# --- OpenPGP fingerprint -------------------------------------------------------------------------


def test_the_fingerprint_of_an_armored_key_is_gpgs() -> None:
    assert openpgp.fingerprint(TEST_KEY.read_bytes()) == TEST_KEY_FPR


def test_the_fingerprint_of_a_binary_key_is_the_same() -> None:
    binary = openpgp.dearmor(TEST_KEY.read_bytes())
    assert openpgp.fingerprint(binary) == TEST_KEY_FPR


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"<html>proxy error</html>",
        b"\x99\x00",
        b"-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n!!!\n",
    ],
)
def test_what_is_not_a_key_has_no_fingerprint(data: bytes) -> None:
    assert openpgp.fingerprint(data) is None


# --- macOS ----------------------------------------------------------------------------------------


def darwin(**over: Any) -> rt.Facts:
    base: dict[str, Any] = dict(
        os="darwin",
        docker="missing",
        uid=501,
        user="ana",
        sudo="pw",
        admin=True,
        gui=True,
        arch="arm64",
        macos_version="14.5",
        tools=frozenset({"brew"}),
        memory_gib=16.0,
    )
    base.update(over)
    return rt.Facts(**base)


def test_macos_docker_desktop_stopped_is_opened_with_no_administrator_check() -> None:
    plan = decide(darwin(docker="stopped", docker_cli=True, docker_app=True, admin=False))
    assert [s.argv[:3] for s in plan.steps] == [
        ("open", "-a", "Docker"),
        ("docker", "info", "--format"),
    ]
    assert not plan.privileged


def test_macos_colima_stopped_is_started_as_the_user() -> None:
    plan = decide(
        darwin(
            docker="stopped",
            docker_cli=True,
            colima_instance=True,
            tools=frozenset({"brew", "colima"}),
            admin=False,
        )
    )
    assert plan.steps[0].argv == ("colima", "start") and not plan.privileged


def test_a_mac_account_that_is_not_admin_gets_the_scripts_remedy() -> None:
    plan = decide(darwin(admin=False))
    assert plan.refusal is not None and "administrator" in plan.refusal[1]
    assert "Users & Groups" in plan.refusal[1] and plan.steps == ()


def test_a_mac_with_a_desktop_gets_docker_desktop_from_its_dmg_checked_against_dockers_sha256() -> (
    None
):
    plan = decide(darwin(tools=frozenset()))
    assert plan.steps[0].argv == ("sudo", "-v")
    brew = plan.steps[1]
    assert brew.url == mac.HOMEBREW_URL and brew.timeout == 1800
    dmg = next(s for s in plan.steps if s.url.endswith("Docker.dmg"))
    assert dmg.url == "https://desktop.docker.com/mac/main/arm64/Docker.dmg"
    assert dmg.check == "sha256-from:https://desktop.docker.com/mac/main/arm64/checksums.txt"
    argv = [s.argv for s in plan.steps]
    assert ("cp", "-R", "/Volumes/Docker/Docker.app", "/Applications/") in argv
    assert ("open", "-a", "Docker") in argv
    assert plan.steps[-1].kind == "wait-docker" and plan.steps[-1].timeout == mac.FIRST_START_WAIT_S


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        pytest.param(
            dict(),
            (
                "colima",
                "start",
                "--cpu",
                "4",
                "--memory",
                "8",
                "--disk",
                "60",
                "--vm-type",
                "vz",
                "--vz-rosetta",
            ),
            id="apple-silicon-macos-14-fresh",
        ),
        pytest.param(
            dict(colima_instance=True, docker_cli=False),
            ("colima", "start", "--cpu", "4", "--memory", "8", "--disk", "60"),
            id="existing-vm-keeps-its-type",
        ),
        pytest.param(
            dict(macos_version="12.7"),
            ("colima", "start", "--cpu", "4", "--memory", "8", "--disk", "60"),
            id="macos-12-has-no-vz",
        ),
        pytest.param(
            dict(
                colima={"COLIMA_MEMORY": "12", "COLIMA_CPU": "6", "COLIMA_DISK": "100"},
                arch="amd64",
            ),
            ("colima", "start", "--cpu", "6", "--memory", "12", "--disk", "100"),
            id="colima-variables-honoured",
        ),
        pytest.param(
            dict(memory_gib=8.0),
            (
                "colima",
                "start",
                "--cpu",
                "4",
                "--memory",
                "6",
                "--disk",
                "60",
                "--vm-type",
                "vz",
                "--vz-rosetta",
            ),
            id="8-gib-mac-floor-plus-one",
        ),
    ],
)
def test_a_headless_mac_gets_colima_sized_as_the_scripts(
    facts: dict[str, Any], expected: tuple[str, ...]
) -> None:
    plan = decide(darwin(gui=False, **facts))
    start = next(s for s in plan.steps if s.argv[:2] == ("colima", "start"))
    assert start.argv == expected
    assert ("brew", "install", "colima") in [s.argv for s in plan.steps]


@pytest.mark.parametrize(
    ("arch", "engine", "needed"),
    [("arm64", "5.7", True), ("arm64", "8.4", False), ("amd64", "5.7", False)],
)
def test_amd64_emulation_is_checked_only_where_the_amd64_only_mysql_needs_it(
    arch: str, engine: str, needed: bool
) -> None:
    assert mac.needs_amd64_check(arch, engine) is needed
    assert mac.AMD64_SMOKE == (
        "docker",
        "run",
        "--rm",
        "--platform",
        "linux/amd64",
        "busybox:1.36",
        "true",
    )


def test_the_login_autostart_opens_docker_desktop(tmp_path: Path) -> None:
    steps = mac.autostart_steps("/Users/ana", 501)
    staged = next(s for s in steps if s.kind == "stage")
    doc = plistlib.loads(staged.content.encode())
    assert doc["Label"] == "io.tracebloc.runtime" and doc["RunAtLoad"] is True
    assert doc["ProgramArguments"] == ["/usr/bin/open", "-a", "Docker"]
    assert staged.argv[-1] == "/Users/ana/Library/LaunchAgents/io.tracebloc.runtime.plist"
    assert steps[-1].argv == ("launchctl", "bootstrap", "gui/501", staged.argv[-1])
    assert not any(s.root for s in steps)


@pytest.mark.parametrize(
    ("arch", "found", "colima"),
    [
        pytest.param("arm64", "", "/opt/homebrew/bin/colima", id="apple-silicon-homebrew"),
        pytest.param("amd64", "", "/usr/local/bin/colima", id="intel-homebrew"),
        pytest.param("arm64", "/opt/tools/colima", "/opt/tools/colima", id="colima-found-on-path"),
    ],
)
def test_a_headless_mac_gets_a_launch_daemon_with_colimas_absolute_path(
    arch: str, found: str, colima: str
) -> None:
    path = mac.colima_path(darwin(arch=arch, colima_path=found))
    assert path == colima
    steps = mac.autostart_steps("/Users/ci", 501, path, headless=True, user="ci")
    staged = next(s for s in steps if s.kind == "stage")
    assert staged.root and staged.argv[-1] == "/Library/LaunchDaemons/io.tracebloc.runtime.plist"
    doc = plistlib.loads(staged.content.encode())
    assert doc["UserName"] == "ci" and doc["EnvironmentVariables"]["HOME"] == "/Users/ci"
    assert doc["ProgramArguments"][:2] == ["/bin/bash", "-c"]
    assert f"until {colima} start" in doc["ProgramArguments"][2]
    assert (
        steps[-1].argv == ("launchctl", "bootstrap", "system", staged.argv[-1]) and steps[-1].root
    )
    assert not any("LaunchAgents" in " ".join(s.argv) for s in steps)


@pytest.mark.parametrize(
    ("facts", "enabled"),
    [
        pytest.param(
            dict(docker="stopped", docker_cli=True), True, id="installed-stopped-is-enabled"
        ),
        pytest.param(
            dict(docker="stopped", docker_cli=True, boot_enabled="disabled"),
            True,
            id="installed-disabled-is-enabled",
        ),
        pytest.param(
            dict(docker="stopped", docker_cli=True, boot_enabled="enabled"),
            False,
            id="already-enabled-left-alone",
        ),
        pytest.param(
            dict(docker="stopped", docker_cli=True, no_autostart=True),
            False,
            id="no-autostart-opt-out",
        ),
        pytest.param(
            dict(docker="stopped", docker_cli=True, docker_reason="permission denied"),
            True,
            id="running-but-not-in-the-group",
        ),
        pytest.param(dict(), True, id="fresh-install"),
    ],
)
def test_a_docker_the_engine_starts_is_enabled_at_boot_before_the_question(
    facts: dict[str, Any], enabled: bool
) -> None:
    plan = decide(linux(**facts))
    boot = ("systemctl", "enable", "docker")
    assert (boot in root_argv(plan)) is enabled
    if enabled:
        assert any(
            line.startswith("sudo -n systemctl enable docker") for line in rt.plan_lines(plan)
        )
        assert root_argv(plan).count(boot) == 1


def test_prepare_host_on_macos_is_refused_as_the_scripts() -> None:
    plan = decide(darwin(), mode=rt.PREPARE_HOST)
    assert plan.refusal is not None and "Linux" in plan.refusal[0]


@pytest.mark.parametrize(
    ("arch", "brew"), [("arm64", "/opt/homebrew/bin/brew"), ("amd64", "/usr/local/bin/brew")]
)
def test_a_homebrew_this_plan_installs_is_run_by_its_path_and_put_on_path_by_shellenv(
    arch: str, brew: str
) -> None:
    plan = decide(darwin(arch=arch, gui=False, tools=frozenset()))
    installs = [s.argv for s in plan.steps if s.argv[1:2] == ("install",) and "brew" in s.argv[0]]
    assert installs and all(argv[0] == brew for argv in installs)
    assert any(f'eval "$({brew} shellenv)"' in note for note in plan.notes)
    # Homebrew already there: found on PATH, no note.
    there = decide(darwin(arch=arch, gui=False, tools=frozenset({"brew"})))
    assert (
        all(s.argv[0] == "brew" for s in there.steps if "install" in s.argv[1:2])
        and not there.notes
    )
