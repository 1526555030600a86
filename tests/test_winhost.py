"""Windows host preparation: the decisions over probed facts, the exact argv, and the flow against
fake powershell/wsl/dism/winget/net/reg/cmd/shutdown/docker executables that log every call.

The decisions and argv run on every OS; the flow runs here with the fakes found on PATH (the
engine looks tools up the same way on Windows, as `<name>.exe`)."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from installer.commands import winhost as flow
from installer.decide import elevation, wslconfig
from installer.decide import winhost as wh
from installer.decide.errors import InstallerError
from installer.decide.redact import Redactor
from installer.edges import winhost as edge
from installer.present.winhost import host_json, host_lines
from tests.fakes.executables import make_executable

PASSWORD = "pw-Secret-'9\"$x"

ALL_OFF = {wh.WSL_FEATURE: "Disabled", wh.VM_PLATFORM: "Disabled", wh.HYPER_V: "Disabled"}


def facts(**overrides: object) -> wh.WinFacts:
    base: dict[str, object] = dict(
        readable=True,
        admin=False,
        edition="Microsoft Windows 11 Pro",
        features=dict(ALL_OFF),
        virtualization=True,
        wsl_version="",
        winget=True,
        docker_desktop=False,
        docker_usable=False,
        port_busy=False,
        our_cluster_running=False,
        host_memory_gib=16,
        user="nurse",
        in_docker_users=False,
    )
    base.update(overrides)
    return wh.WinFacts(**base)  # type: ignore[arg-type]


def keys(plan: wh.HostPlan) -> list[str]:
    return [s.key for s in plan.steps]


# --- tiers -------------------------------------------------------------------------------


def test_a_working_docker_desktop_means_nothing_as_administrator() -> None:
    plan = wh.plan_host(facts(docker_usable=True, docker_desktop=True), wh.Options())
    assert plan.tier == 0 and plan.steps == () and plan.privileged == ()
    assert host_lines(plan) == [
        "host:     Docker Desktop answers: nothing to prepare, no administrator rights needed"
    ]


def test_a_working_docker_desktop_still_lets_another_daily_user_in_once() -> None:
    # IT runs the installer for a nurse on a machine where Docker Desktop already works (for IT).
    it = facts(docker_usable=True, docker_desktop=True, user="it-admin", in_docker_users=False)
    plan = wh.plan_host(it, wh.Options(daily_user="nurse"))
    assert plan.tier == 1 and plan.user == "nurse"
    assert keys(plan) == ["docker-users", "wslconfig", "autostart"]
    assert all(step.privileged for step in plan.steps)  # the nurse's profile: elevated
    assert plan.steps[0].argv == ("net.exe", "localgroup", "docker-users", "nurse", "/add")
    assert plan.wslconfig_gib == 14
    # Once the membership reads back, a re-run prepares nothing again.
    member = dataclasses.replace(it, in_docker_users=True)
    assert wh.plan_host(member, wh.Options(daily_user="nurse")).steps == ()
    # The same account, or TRACEBLOC_SKIP_DAILY_USER: nothing as administrator.
    assert wh.plan_host(it, wh.Options(daily_user="IT-Admin")).steps == ()
    assert wh.plan_host(it, wh.Options(daily_user="nurse", skip_daily_user=True)).steps == ()
    assert keys(wh.plan_host(it, wh.Options(daily_user="nurse", no_autostart=True))) == [
        "docker-users",
        "wslconfig",
    ]


def test_an_unread_membership_is_no_reason_to_ask_for_administrator_rights() -> None:
    it = facts(docker_usable=True, docker_desktop=True, user="it-admin", in_docker_users=None)
    plan = wh.plan_host(it, wh.Options(daily_user="nurse"))
    assert plan.tier == 0 and plan.steps == ()
    assert any("net localgroup docker-users nurse /add" in note for note in plan.notes)


def test_a_daily_user_given_by_upn_is_the_account_name() -> None:
    assert wh.bare_user("nurse@clinic.example") == "nurse"
    it = facts(docker_usable=True, docker_desktop=True, user="it-admin", in_docker_users=False)
    assert wh.plan_host(it, wh.options({}, daily_user="it-admin@clinic.example")).steps == ()
    plan = wh.plan_host(it, wh.options({}, daily_user="CLINIC\\nurse"))
    assert plan.steps[0].argv == ("net.exe", "localgroup", "docker-users", "nurse", "/add")


def test_a_bare_windows_11_pro_laptop_gets_every_step_with_a_reboot_announced() -> None:
    plan = wh.plan_host(facts(), wh.Options())
    assert plan.tier == 1
    assert keys(plan) == [
        f"feature:{wh.WSL_FEATURE}",
        f"feature:{wh.VM_PLATFORM}",
        f"feature:{wh.HYPER_V}",
        "wsl-update",
        "wsl-default",
        "docker-desktop",
        "docker-users",
        "wslconfig",
        "autostart",
        "docker-start",
    ]
    assert plan.reboot_expected
    assert [s.key for s in plan.privileged][-1] == "docker-users"
    assert {s.key for s in plan.as_user} == {"wslconfig", "autostart", "docker-start"}
    wsl = plan.steps[0]
    assert wsl.argv == (
        "dism.exe",
        "/online",
        "/enable-feature",
        f"/featurename:{wh.WSL_FEATURE}",
        "/all",
        "/norestart",
    )
    lines = host_lines(plan)
    assert lines[0].startswith(
        "host:     7 step(s) as administrator (one Windows prompt), 3 as nurse"
    )
    assert any("a reboot is needed" in line for line in lines)
    assert any("winget.exe install -e --id Docker.DockerDesktop" in line for line in lines)


def test_windows_home_has_no_hyper_v_to_enable() -> None:
    plan = wh.plan_host(facts(edition="Microsoft Windows 11 Home"), wh.Options())
    assert f"feature:{wh.HYPER_V}" not in keys(plan)


def test_a_feature_this_edition_lacks_is_skipped_with_a_note() -> None:
    plan = wh.plan_host(facts(features={**ALL_OFF, wh.HYPER_V: None}), wh.Options())
    assert f"feature:{wh.HYPER_V}" not in keys(plan)
    assert any("Hyper-V is not available on this Windows edition" in n for n in plan.notes)


def test_features_already_on_need_no_reboot() -> None:
    on = {name: "Enabled" for name in ALL_OFF}
    plan = wh.plan_host(facts(features=on, wsl_version="WSL version: 2.3.26.0"), wh.Options())
    assert not plan.reboot_expected
    assert keys(plan)[:2] == ["wsl-default", "docker-desktop"]


def test_an_unreadable_feature_state_is_enabled_not_assumed_on() -> None:
    plan = wh.plan_host(facts(features={**ALL_OFF, wh.WSL_FEATURE: ""}), wh.Options())
    assert f"feature:{wh.WSL_FEATURE}" in keys(plan)


def test_without_winget_or_a_temp_directory_the_plan_stops_with_the_manual_remedy() -> None:
    plan = wh.plan_host(facts(winget=False), wh.Options())  # tests/test_winget.py: with TEMP
    assert "docker-desktop" not in keys(plan) and "winget-download" not in keys(plan)
    [(message, remedy)] = plan.blockers
    assert "winget" in message and "docker.com" in remedy


def test_without_winget_an_installed_docker_desktop_needs_no_winget() -> None:
    plan = wh.plan_host(facts(winget=False, docker_desktop=True), wh.Options())
    assert plan.blockers == () and "docker-start" in keys(plan)


# --- blockers ----------------------------------------------------------------------------


def test_virtualization_off_in_firmware_stops_before_anything_changes() -> None:
    plan = wh.plan_host(facts(virtualization=False), wh.Options())
    [(message, remedy)] = plan.blockers
    assert "virtualization is disabled in firmware" in message
    assert "VT-x" in remedy and "BIOS/UEFI" in remedy
    with pytest.raises(InstallerError, match="virtualization is disabled"):
        flow.refuse_blockers(plan)


@pytest.mark.parametrize(
    ("ours", "blocked", "noted"),
    [
        pytest.param(False, True, False, id="port-held-by-another-process"),
        pytest.param(True, False, False, id="port-held-by-our-own-cluster"),
        pytest.param(None, False, True, id="port-held-cluster-state-unknown"),
    ],
)
def test_port_6550(ours: bool | None, blocked: bool, noted: bool) -> None:
    plan = wh.plan_host(
        facts(port_busy=True, our_cluster_running=ours, port_owner=wh.Listener(4242, "vmmem")),
        wh.Options(),
    )
    assert bool(plan.blockers) is blocked
    if blocked:
        assert "port 6550 is already in use by vmmem (pid 4242)" in plan.blockers[0][0]
        assert "Get-Process -Id 4242" in plan.blockers[0][1]
    assert any("port 6550" in n for n in plan.notes) is noted


def test_an_unreadable_machine_is_a_blocker_not_a_guess() -> None:
    plan = wh.plan_host(wh.WinFacts(False, reason="powershell.exe was not found"), wh.Options())
    assert plan.blockers and "powershell.exe was not found" in plan.blockers[0][0]
    assert plan.steps == ()


# --- WSL and the Docker VM -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "minimum", "current"),
    [
        pytest.param(
            "WSL version: 2.3.26.0\nKernel version: 5.15.153.1-2", "2.1.5", True, id="current"
        ),
        pytest.param("WSL バージョン: 2.1.5.0", "2.1.5", True, id="localised-label-at-the-floor"),
        pytest.param("WSL version: 2.0.9.0", "2.1.5", False, id="stale-modern-wsl"),
        pytest.param("", "2.1.5", False, id="legacy-or-absent"),
        pytest.param("WSL version: 2.3.26.0", "2.4.0", False, id="TB_WSL_MIN_VERSION-raised"),
    ],
)
def test_wsl_current(output: str, minimum: str, current: bool) -> None:
    assert wh.wsl_current(output, minimum) is current


def test_tb_wsl_min_version_must_be_a_version() -> None:
    assert flow.options({"TB_WSL_MIN_VERSION": "2.4.0"}).wsl_min == "2.4.0"
    assert flow.options({"TB_WSL_MIN_VERSION": " "}).wsl_min == wh.WSL_MIN_VERSION
    with pytest.raises(InstallerError, match="TB_WSL_MIN_VERSION='latest' is not a version"):
        flow.options({"TB_WSL_MIN_VERSION": "latest"})


@pytest.mark.parametrize(
    ("host", "memory"),
    [
        pytest.param(32, 16, id="large-host-gets-the-training-budget"),
        pytest.param(8, 6, id="8-GiB-host-keeps-2-for-windows"),
        pytest.param(7, 5, id="exactly-the-floor"),
        pytest.param(6, 0, id="too-small-is-left-alone"),
        pytest.param(None, 0, id="memory-unknown"),
    ],
)
def test_wslconfig_memory(host: int | None, memory: int) -> None:
    assert wslconfig.wslconfig_gib(host, 5, 16) == memory


def test_a_host_too_small_says_so_and_writes_no_budget() -> None:
    plan = wh.plan_host(facts(host_memory_gib=6), wh.Options())
    assert "wslconfig" not in keys(plan)
    assert any("too little" in n for n in plan.notes)


@pytest.mark.parametrize(
    ("existing", "merged"),
    [
        pytest.param("", "[wsl2]\r\nmemory=6GB\r\n", id="no-file"),
        pytest.param(
            "[wsl2]\nprocessors=4\n",
            "[wsl2]\r\nmemory=6GB\nprocessors=4\n",
            id="under-the-existing-section",
        ),
        pytest.param(
            "[experimental]\nsparseVhd=true",
            "[experimental]\nsparseVhd=true\r\n[wsl2]\r\nmemory=6GB\r\n",
            id="another-section-only",
        ),
        pytest.param("[wsl2]\nmemory=12GB\n", None, id="the-operators-memory-is-kept"),
    ],
)
def test_merge_wslconfig(existing: str, merged: str | None) -> None:
    assert wslconfig.merge_wslconfig(existing, 6) == merged


# --- elevation, resume, quoting --------------------------------------------------------------


def command_line_to_argv(line: str) -> list[str]:
    """CommandLineToArgvW's rules (2n backslashes + quote → n and a toggle; 2n+1 → n and a
    literal quote), written from Microsoft's documentation as an oracle for win_quote."""
    args: list[str] = []
    current, quoted, started, i = [], False, False, 0
    while i < len(line):
        char = line[i]
        if char == "\\":
            j = i
            while j < len(line) and line[j] == "\\":
                j += 1
            count = j - i
            if j < len(line) and line[j] == '"':
                current.append("\\" * (count // 2))
                if count % 2:
                    current.append('"')
                    i = j + 1
                else:
                    i = j
                started = True
                continue
            current.append("\\" * count)
            i, started = j, True
            continue
        if char == '"':
            quoted, started = not quoted, True
        elif char in " \t" and not quoted:
            if started:
                args.append("".join(current))
            current, started = [], False
        else:
            current.append(char)
            started = True
        i += 1
    if started:
        args.append("".join(current))
    return args


@given(
    st.lists(
        st.text(
            alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
            min_size=0,
        ),
        min_size=1,
        max_size=4,
    )
)
def test_win_quote_round_trips_through_commandlinetoargvw(args: list[str]) -> None:
    assert command_line_to_argv(" ".join(elevation.win_quote(a) for a in args)) == args


def test_ps_quote_expands_nothing() -> None:
    assert elevation.ps_quote("C:\\it's $env:USERNAME") == "'C:\\it''s $env:USERNAME'"


def test_one_elevation_of_the_engine_itself_for_the_privileged_half() -> None:
    exe = r"C:\Users\Jo O'Neil\AppData\Local\Programs\tracebloc\tracebloc-installer.exe"
    opts = wh.Options(daily_user="nurse", no_reboot=True)
    argv = elevation.elevate_argv(
        exe,
        elevation.engine_args("prepare-host", opts, ("--windows-elevated", "--client-password=x")),
    )
    assert argv[:4] == ["powershell.exe", "-NoProfile", "-NonInteractive", "-Command"]
    script = argv[4]
    assert "-Verb RunAs -Wait -PassThru" in script and "exit $p.ExitCode" in script
    assert elevation.ps_quote(exe) in script
    assert "prepare-host --daily-user nurse --no-reboot" in script
    assert "--windows-elevated" not in script  # not a SAFE_FLAG: the caller adds it knowingly
    assert "client-password" not in script


def test_the_resume_carries_no_secret_and_resumes_install() -> None:
    exe = r"C:\Program Files\tracebloc\tracebloc-installer.exe"
    argv = elevation.resume_argv(exe, wh.Options(daily_user="nurse"))
    assert argv[:3] == ["reg.exe", "add", elevation.RESUME_KEY]
    value = argv[argv.index("/d") + 1]
    assert command_line_to_argv(value) == [exe, "install", "--daily-user", "nurse", "--resume"]
    assert elevation.unresume_argv() == [
        "reg.exe",
        "delete",
        elevation.RESUME_KEY,
        "/v",
        elevation.RESUME_VALUE,
        "/f",
    ]


def test_the_plan_as_json_lists_every_step_with_its_privilege() -> None:
    document = host_json(wh.plan_host(facts(), wh.Options()))
    assert document["reboot_expected"] is True
    steps = document["steps"]
    assert isinstance(steps, list) and all("administrator" in s for s in steps)


@pytest.mark.parametrize(
    ("raw", "user"),
    [("CONTOSO\\jdoe", "jdoe"), ("\x1b[200~nurse\x1b[201~", "nurse"), ("  ward7 \n", "ward7")],
)
def test_the_daily_user_name_is_bare(raw: str, user: str) -> None:
    assert wh.bare_user(raw) == user


# --- the probe ---------------------------------------------------------------------------------


def test_the_probe_reads_what_windows_said_and_nothing_more() -> None:
    out = json.dumps(
        {
            "features": {wh.WSL_FEATURE: 1, wh.VM_PLATFORM: 2, wh.HYPER_V: 3},
            "admin": False,
            "user": "nurse",
            "edition": "Microsoft Windows 11 Pro",
            "memory_kib": 16 * 2**20,
            "virtualization": True,
            "winget": True,
            "docker_desktop": False,
            "port_busy": True,
            "port_pid": 77,
            "port_process": "java",
        }
    )
    got = edge.parse_probe(
        out, wsl_version="", docker_usable=False, our_cluster_running=False, in_docker_users=None
    )
    assert got.features == {wh.WSL_FEATURE: "Enabled", wh.VM_PLATFORM: "Disabled", wh.HYPER_V: None}
    assert got.host_memory_gib == 16 and got.port_owner == wh.Listener(77, "java")
    assert got.in_docker_users is None


def test_a_probe_that_is_not_json_is_unreadable() -> None:
    got = edge.parse_probe(
        "Access denied",
        wsl_version="",
        docker_usable=False,
        our_cluster_running=None,
        in_docker_users=None,
    )
    assert not got.readable and "not JSON" in got.reason


def test_wsl_writes_utf16_to_a_pipe() -> None:
    assert edge.decode_wsl("WSL version: 2.3.26.0\r\n".encode("utf-16-le")).startswith(
        "WSL version: 2.3.26.0"
    )


# --- the flow, against fake Windows tools -------------------------------------------------------

FAKE = r"""
import json, os, sys
name = os.path.basename(sys.argv[0]).removesuffix(".exe")
log = os.environ["TB_FAKE_LOG"]
with open(log, "a", encoding="utf-8") as f:
    f.write(json.dumps([name, *sys.argv[1:]]) + "\n")
state = json.load(open(os.environ["TB_FAKE_STATE"], encoding="utf-8"))
if name == "powershell":
    script = sys.argv[-1]
    if "Get-AuthenticodeSignature" in script:
        print(json.dumps(state.get("signature", {"status": "Valid", "subject": "CN=Microsoft "
              "Corporation, O=Microsoft Corporation, L=Redmond, S=Washington, C=US"})))
        sys.exit(0)
    if "Add-AppxPackage" in script:
        if state.get("appx_rc"):
            print("Deployment failed with HRESULT: 0x80073CF3", file=sys.stderr)
            sys.exit(state["appx_rc"])
        if state.get("appx_installs"):  # winget.exe among the account's app execution aliases
            import shutil
            os.makedirs(os.path.dirname(state["appx_installs"]), exist_ok=True)
            shutil.copy(sys.argv[0], state["appx_installs"])
        sys.exit(0)
    if "ConvertTo-Json" in script:
        print(json.dumps(state["probe"]))
    elif "Get-LocalGroupMember" in script:
        if state.get("group") is None:
            sys.exit(3)
        print("\n".join(state["group"]))
    elif "-Verb RunAs" in script:
        child = state.get("child_records")  # what the elevated engine would record
        if child is not None:
            with open(state["child_state_path"], "w", encoding="utf-8") as f:
                json.dump({"schema": 1, "consented": True, "failed": [], **child}, f)
        sys.exit(state.get("elevated_rc", 0))
    sys.exit(0)
if name == "docker":
    up = state.get("docker_up_after", 10**9)
    state["docker_calls"] = state.get("docker_calls", 0) + 1
    json.dump(state, open(os.environ["TB_FAKE_STATE"], "w", encoding="utf-8"))
    if state["docker_calls"] > up:
        print(json.dumps({"MemTotal": 8 * 2**30, "NCPU": 4, "OperatingSystem": "Docker Desktop"}))
        sys.exit(0)
    print("error during connect: open //./pipe/docker_engine", file=sys.stderr)
    sys.exit(1)
if name == "wsl" and sys.argv[1:] == ["--version"]:
    sys.exit(state.get("wsl_version_rc", 1))
rc = state.get("rc", {}).get(" ".join([name, *sys.argv[1:]]), 0)
sys.exit(rc)
"""
TOOLS = ("powershell", "wsl", "dism", "winget", "net", "reg", "cmd", "shutdown", "docker")


@pytest.fixture
def fake_windows(tmp_path: Path) -> dict[str, object]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in TOOLS:
        make_executable(bin_dir / tool, FAKE)
    log, state = tmp_path / "calls.jsonl", tmp_path / "state.json"
    profile = tmp_path / "profile"
    profile.mkdir()
    env = {
        "PATH": str(bin_dir),
        "TB_FAKE_LOG": str(log),
        "TB_FAKE_STATE": str(state),
        "USERNAME": "nurse",
        "USERPROFILE": str(profile),
        "SYSTEMROOT": os.environ.get("SYSTEMROOT", ""),
        "TRACEBLOC_CLIENT_PASSWORD": PASSWORD,
        "TB_DOCKER_WAIT_MIN": "0.1",
    }
    return {"env": env, "log": log, "state": state, "profile": profile, "data": tmp_path / "data"}


def scenario(fake: dict[str, object], **state: object) -> None:
    probe = {
        "features": {wh.WSL_FEATURE: 2, wh.VM_PLATFORM: 2, wh.HYPER_V: 2},
        "admin": False,
        "user": "nurse",
        "edition": "Microsoft Windows 11 Pro",
        "memory_kib": 16 * 2**20,
        "virtualization": True,
        "winget": True,
        "docker_desktop": False,
        "port_busy": False,
        "docker_desktop_exe": r"C:\Program Files\Docker\Docker\Docker Desktop.exe",
    }
    probe.update(state.pop("probe", {}))  # type: ignore[arg-type]
    child_state = str(Path(str(fake["data"])) / flow.STATE_FILE)
    Path(str(fake["state"])).write_text(
        json.dumps({"probe": probe, "group": None, "child_state_path": child_state, **state})
    )


def calls(fake: dict[str, object]) -> list[list[str]]:
    path = Path(str(fake["log"]))
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def run(fake: dict[str, object], **kwargs: object) -> tuple[wh.HostPlan, list[str]]:
    said: list[str] = []
    env = fake["env"]
    assert isinstance(env, dict)
    opts = wh.options(env, **kwargs.pop("opts", {}))  # type: ignore[arg-type]
    plan = flow.prepare(
        r"C:\tb\tracebloc-installer.exe",
        env,
        opts,
        Redactor([PASSWORD]),
        str(fake["data"]),
        ask=kwargs.pop("ask", None),
        say=said.append,
        our_cluster_running=False,
        **kwargs,
    )  # type: ignore[arg-type]
    return plan, said


def mutating(fake: dict[str, object]) -> list[list[str]]:
    reads = (["wsl", "--version"],)
    return [c for c in calls(fake) if c[0] not in ("powershell", "docker") and c[:2] not in reads]


def test_a_working_docker_desktop_makes_no_call_beyond_the_reads(
    fake_windows: dict[str, object],
) -> None:
    scenario(fake_windows, docker_up_after=0, probe={"docker_desktop": True})
    plan, said = run(fake_windows)
    assert plan.tier == 0 and said == []
    assert mutating(fake_windows) == []
    assert not any("RunAs" in c[-1] for c in calls(fake_windows) if c[0] == "powershell")


def test_a_bare_laptop_elevates_once_and_hands_off_for_the_reboot(
    fake_windows: dict[str, object],
) -> None:
    # What the elevated child records (a real one enables the features: DISM's 3010).
    scenario(
        fake_windows,
        elevated_rc=2,
        child_records={"done": ["feature:VirtualMachinePlatform"], "reboot_pending": True},
    )
    with pytest.raises(flow.RebootPending) as stopped:
        run(fake_windows, opts={"no_reboot": True}, ask=lambda _: "y")
    assert stopped.value.exit_code == wh.REBOOT_EXIT
    assert "reboot when ready; the install continues at your next sign-in" in (
        stopped.value.remedy or ""
    )
    made = calls(fake_windows)
    elevations = [c for c in made if c[0] == "powershell" and "-Verb RunAs" in c[-1]]
    assert len(elevations) == 1
    assert "prepare-host --no-reboot" in elevations[0][-1]
    resume = [c for c in made if c[:2] == ["reg", "add"]]
    assert resume and elevation.RESUME_VALUE in resume[0]
    assert ["shutdown", "/r", "/t", "0"] not in made  # --no-reboot: never rebooted
    assert all(PASSWORD not in " ".join(c) for c in made)


def test_the_reboot_happens_only_on_a_yes(fake_windows: dict[str, object]) -> None:
    scenario(fake_windows, elevated_rc=2, child_records={"done": [], "reboot_pending": True})
    with pytest.raises(flow.RebootPending):
        run(fake_windows, ask=lambda _: "")
    assert ["shutdown", "/r", "/t", "0"] not in calls(fake_windows)
    with pytest.raises(flow.RebootPending):
        run(fake_windows, ask=lambda _: "y")
    assert ["shutdown", "/r", "/t", "0"] in calls(fake_windows)


def test_the_end_of_input_at_the_reboot_question_is_a_no_and_the_hand_off(
    fake_windows: dict[str, object],
) -> None:
    def gone(prompt: str) -> str:
        assert prompt == "Reboot now? [y/N] "
        raise EOFError

    scenario(fake_windows, elevated_rc=2, child_records={"done": [], "reboot_pending": True})
    with pytest.raises(flow.RebootPending) as stopped:
        run(fake_windows, ask=gone)
    assert stopped.value.exit_code == wh.REBOOT_EXIT
    assert ["shutdown", "/r", "/t", "0"] not in calls(fake_windows)


def test_a_declined_windows_prompt_installs_nothing(fake_windows: dict[str, object]) -> None:
    scenario(fake_windows, elevated_rc=elevation.DECLINED_RC)
    with pytest.raises(InstallerError, match="administrator rights were not given"):
        run(fake_windows)
    assert mutating(fake_windows) == []


def test_the_elevated_child_runs_the_privileged_half_and_records_it(
    fake_windows: dict[str, object],
) -> None:
    scenario(
        fake_windows,
        probe={"admin": True, "features": {wh.WSL_FEATURE: 1, wh.VM_PLATFORM: 1, wh.HYPER_V: 1}},
        rc={"wsl --update --web-download": 1},
        group=["nurse-old"],
    )
    plan, said = run(fake_windows, elevated_child=True)
    made = mutating(fake_windows)
    assert made == [
        ["wsl", "--update", "--web-download"],
        ["wsl", "--update"],  # the twin's second rung
        ["wsl", "--set-default-version", "2"],
        [
            "winget",
            "install",
            "-e",
            "--id",
            "Docker.DockerDesktop",
            "--accept-package-agreements",
            "--accept-source-agreements",
            "--silent",
            "--override",
            wh.DOCKER_DESKTOP_ARGS,
        ],
        ["net", "localgroup", "docker-users", "nurse", "/add"],
    ]
    recorded = flow.load_state(str(Path(str(fake_windows["data"])) / flow.STATE_FILE))
    assert recorded.done == ["wsl-update", "wsl-default", "docker-desktop", "docker-users"]
    assert not recorded.reboot_pending
    assert not (Path(str(fake_windows["profile"])) / ".wslconfig").exists()  # the user's half


def test_a_docker_desktop_install_failure_stops_with_the_manual_remedy(
    fake_windows: dict[str, object],
) -> None:
    scenario(
        fake_windows,
        probe={"admin": True, "features": {wh.WSL_FEATURE: 1, wh.VM_PLATFORM: 1, wh.HYPER_V: 1}},
        rc={
            "winget install -e --id Docker.DockerDesktop --accept-package-agreements "
            "--accept-source-agreements --silent --override " + wh.DOCKER_DESKTOP_ARGS: 5
        },
    )
    with pytest.raises(InstallerError, match=r"Docker Desktop could not be installed \(exit 5\)"):
        run(fake_windows, elevated_child=True)
    # What was done before the stop stays recorded, and the stop with its remedy is there for
    # the parent (the elevated child's output does not cross the UAC boundary).
    recorded = flow.load_state(str(Path(str(fake_windows["data"])) / flow.STATE_FILE))
    assert recorded.done == ["wsl-update", "wsl-default"]
    assert recorded.stopped == ["Docker Desktop could not be installed (exit 5)", wh.DOCKER_MANUAL]


def test_a_failed_elevated_half_is_a_failure_even_after_an_earlier_partial_run(
    fake_windows: dict[str, object],
) -> None:
    """Steps an earlier run did (resumed after a reboot) do not turn this run's failure into
    a success; the parent says the child's stop and its remedy."""
    scenario(
        fake_windows,
        elevated_rc=1,
        child_records={
            "done": ["feature:VirtualMachinePlatform", "wsl-update"],
            "stopped": ["Docker Desktop could not be installed (exit 5)", wh.DOCKER_MANUAL],
        },
    )
    with pytest.raises(InstallerError, match=r"Docker Desktop could not be installed") as caught:
        run(fake_windows, resume=True)
    assert caught.value.remedy == wh.DOCKER_MANUAL
    assert not any(c[:2] == ["cmd", "/d"] for c in mutating(fake_windows))  # never started


def test_a_failed_elevated_half_without_a_record_says_the_exit(
    fake_windows: dict[str, object],
) -> None:
    scenario(
        fake_windows, elevated_rc=1, child_records={"done": ["feature:VirtualMachinePlatform"]}
    )
    with pytest.raises(InstallerError, match=r"the elevated preparation failed \(exit 1\)"):
        run(fake_windows, resume=True)


def test_the_daily_users_half_sizes_the_vm_starts_docker_and_waits(
    fake_windows: dict[str, object],
) -> None:
    scenario(
        fake_windows,
        probe={
            "features": {wh.WSL_FEATURE: 1, wh.VM_PLATFORM: 1, wh.HYPER_V: 1},
            "docker_desktop": True,
        },
        docker_up_after=2,
        elevated_rc=0,
    )
    wslconfig = Path(str(fake_windows["profile"])) / ".wslconfig"
    wslconfig.write_text("[wsl2]\nprocessors=4\n")
    plan, said = run(fake_windows)
    assert wslconfig.read_bytes() == b"[wsl2]\r\nmemory=14GB\nprocessors=4\n"
    made = mutating(fake_windows)
    assert [
        "cmd",
        "/d",
        "/c",
        "start",
        '""',
        r"C:\Program Files\Docker\Docker\Docker Desktop.exe",
    ] in made
    assert any(c[:2] == ["reg", "add"] and "Docker Desktop" in c for c in made)  # autostart
    assert "Docker Desktop is running" in said


def test_docker_desktop_that_never_comes_up_says_what_to_do(
    fake_windows: dict[str, object],
) -> None:
    scenario(fake_windows, probe={"docker_desktop": True}, docker_up_after=10**6)
    facts_ = wh.WinFacts(True, docker_desktop=True)
    clock = iter(float(t) for t in range(0, 10_000, 60))
    with pytest.raises(InstallerError, match="did not come up within 2 minutes") as stopped:
        flow.wait_for_docker(
            facts_,
            wh.Options(docker_wait_s=120),
            fake_windows["env"],  # type: ignore[arg-type]
            Redactor([]),
            lambda _: None,
            clock=lambda: next(clock),
            sleep=lambda _: None,
        )
    assert "TB_DOCKER_WAIT_MIN" in (stopped.value.remedy or "")


def test_a_linked_wslconfig_is_left_alone(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("mine")
    (tmp_path / ".wslconfig").symlink_to(target)
    assert "symbolic link" in edge.write_wslconfig(str(tmp_path), 6)
    assert target.read_text() == "mine"
