"""Preflight decisions: machine facts + free disk + floors → findings, for each OS."""

from __future__ import annotations

import pytest

from installer.decide.errors import BadInput
from installer.decide.model import MachineFacts
from installer.decide.preflight import (
    VM_GRACE_BYTES,
    Finding,
    check,
    failed,
    skipped,
)
from installer.decide.settings import Thresholds, thresholds

GiB = 2**30
MiB = 2**20
DATA_DIR = "/home/ada/.tracebloc"
PLENTY = 100 * GiB


def machine(
    os_: str = "linux", total: float = 16 * GiB, available: float | None = None, cpus: int = 8
) -> MachineFacts:
    return MachineFacts(
        os=os_,
        arch="x86_64",
        cpu_count=cpus,
        memory_total_bytes=int(total),
        memory_available_bytes=int(total * 0.75 if available is None else available),
        wsl=False,
    )


def summary(findings: list[Finding]) -> list[tuple[str, str]]:
    """(level, what) per finding: what = the measurement the message is about."""
    return [(f.level, f.message.split(":", 1)[0]) for f in findings]


DEFAULT = Thresholds()


@pytest.mark.parametrize(
    ("facts", "disk", "limits", "expected"),
    [
        pytest.param(machine(), PLENTY, DEFAULT, [], id="linux-16gb-8cpu-plenty-of-disk"),
        # memory total
        pytest.param(
            machine(total=4 * GiB), PLENTY, DEFAULT, [("fail", "memory")], id="linux-4gb-vm-fails"
        ),
        pytest.param(
            machine("darwin", total=4 * GiB),
            PLENTY,
            DEFAULT,
            [("warn", "memory")],
            id="macos-4gb-warns",
        ),
        pytest.param(
            machine("windows", total=4 * GiB),
            PLENTY,
            DEFAULT,
            [("warn", "memory")],
            id="windows-4gb-warns",
        ),
        pytest.param(
            machine(total=5 * GiB - VM_GRACE_BYTES, available=4 * GiB),
            PLENTY,
            DEFAULT,
            [("warn", "memory"), ("warn", "memory")],
            id="linux-exactly-at-grace-passes-floor-warns-recommended-and-available",
        ),
        pytest.param(
            machine(total=5 * GiB - VM_GRACE_BYTES - 1),
            PLENTY,
            DEFAULT,
            [("fail", "memory")],
            id="linux-one-byte-under-grace-fails",
        ),
        pytest.param(
            machine(total=4.7 * GiB, available=4.6 * GiB),
            PLENTY,
            DEFAULT,
            [("warn", "memory"), ("warn", "memory")],
            id="linux-5gb-vm-reporting-4.7gib",
        ),
        pytest.param(
            machine(total=7 * GiB, available=6 * GiB),
            PLENTY,
            DEFAULT,
            [("warn", "memory")],
            id="linux-7gb-warns-training-wants-more",
        ),
        pytest.param(
            machine(total=7.6 * GiB, available=6 * GiB),
            PLENTY,
            DEFAULT,
            [],
            id="linux-8gb-vm-reporting-7.6gib-within-grace",
        ),
        pytest.param(
            machine(total=8 * GiB - VM_GRACE_BYTES - 1, available=6 * GiB),
            PLENTY,
            DEFAULT,
            [("warn", "memory")],
            id="linux-just-under-recommended-with-grace",
        ),
        pytest.param(
            machine("darwin", total=7 * GiB),
            PLENTY,
            DEFAULT,
            [("warn", "memory")],
            id="macos-7gb-warns",
        ),
        # memory available: Linux only
        pytest.param(
            machine(total=16 * GiB, available=3 * GiB),
            PLENTY,
            DEFAULT,
            [("warn", "memory")],
            id="linux-busy-machine-little-available-warns",
        ),
        pytest.param(
            machine(total=16 * GiB, available=5 * GiB),
            PLENTY,
            DEFAULT,
            [],
            id="linux-available-exactly-at-floor",
        ),
        pytest.param(
            machine("darwin", total=16 * GiB, available=1 * GiB),
            PLENTY,
            DEFAULT,
            [],
            id="macos-little-available-not-checked",
        ),
        pytest.param(
            machine("windows", total=16 * GiB, available=1 * GiB),
            PLENTY,
            DEFAULT,
            [],
            id="windows-little-available-not-checked",
        ),
        # CPU
        pytest.param(machine(cpus=1), PLENTY, DEFAULT, [("warn", "CPU")], id="one-cpu-warns"),
        pytest.param(
            machine(cpus=2),
            PLENTY,
            DEFAULT,
            [("note", "CPU")],
            id="two-cpus-notes-training-wants-more",
        ),
        pytest.param(machine(cpus=3), PLENTY, DEFAULT, [("note", "CPU")], id="three-cpus-notes"),
        pytest.param(machine(cpus=4), PLENTY, DEFAULT, [], id="four-cpus-clear"),
        pytest.param(
            machine("windows", cpus=1),
            PLENTY,
            DEFAULT,
            [("warn", "CPU")],
            id="windows-one-cpu-warns-never-fails",
        ),
        # disk
        pytest.param(machine(), None, DEFAULT, [("warn", "disk")], id="disk-unreadable-warns"),
        pytest.param(machine(), 9 * GiB, DEFAULT, [("fail", "disk")], id="linux-9gb-disk-fails"),
        pytest.param(
            machine(),
            10 * GiB - 1,
            DEFAULT,
            [("fail", "disk")],
            id="linux-one-byte-under-10gib-fails",
        ),
        pytest.param(
            machine(),
            10 * GiB,
            DEFAULT,
            [("warn", "disk")],
            id="linux-exactly-10gib-warns-below-20",
        ),
        pytest.param(
            machine(), 20 * GiB - 1, DEFAULT, [("warn", "disk")], id="linux-just-under-20gib-warns"
        ),
        pytest.param(machine(), 20 * GiB, DEFAULT, [], id="linux-exactly-20gib-clear"),
        pytest.param(
            machine("darwin"), 9 * GiB, DEFAULT, [("warn", "disk")], id="macos-9gb-disk-warns"
        ),
        pytest.param(
            machine("windows"), 9 * GiB, DEFAULT, [("warn", "disk")], id="windows-9gb-disk-warns"
        ),
        pytest.param(machine(), 0, DEFAULT, [("fail", "disk")], id="linux-full-disk-fails"),
        # everything at once: every problem is reported, in a stable order
        pytest.param(
            machine(total=3 * GiB, cpus=1),
            2 * GiB,
            DEFAULT,
            [("fail", "memory"), ("warn", "CPU"), ("fail", "disk")],
            id="linux-tiny-machine-reports-everything",
        ),
        pytest.param(
            machine("darwin", total=3 * GiB, cpus=1),
            None,
            DEFAULT,
            [("warn", "memory"), ("warn", "CPU"), ("warn", "disk")],
            id="macos-tiny-machine-only-warns",
        ),
        # PF_* floors lowered
        pytest.param(
            machine(total=4 * GiB, available=3 * GiB),
            PLENTY,
            Thresholds(min_mem_gib=2),
            [("warn", "memory")],
            id="linux-4gb-with-lowered-min-only-warns",
        ),
        pytest.param(
            machine(total=4 * GiB, available=3 * GiB),
            PLENTY,
            Thresholds(min_mem_gib=2, warn_mem_gib=4),
            [],
            id="linux-4gb-with-lowered-min-and-warn-clear",
        ),
        pytest.param(
            machine(total=16 * GiB, available=3 * GiB),
            PLENTY,
            Thresholds(min_mem_gib=2),
            [],
            id="lowered-min-also-lowers-available-floor",
        ),
        pytest.param(
            machine(cpus=1),
            PLENTY,
            Thresholds(min_cpu=1),
            [("note", "CPU")],
            id="one-cpu-with-lowered-floor-notes",
        ),
        pytest.param(
            machine(),
            8 * GiB,
            Thresholds(min_disk_gib=5),
            [("warn", "disk")],
            id="linux-8gb-disk-with-lowered-floor-warns",
        ),
        pytest.param(
            machine(total=1 * GiB, available=GiB // 2, cpus=1),
            0,
            Thresholds(min_mem_gib=0, warn_mem_gib=0, min_cpu=0, min_disk_gib=0),
            [("note", "CPU"), ("warn", "disk")],
            id="all-floors-zero",
        ),
    ],
)
def test_check(
    facts: MachineFacts, disk: int | None, limits: Thresholds, expected: list[tuple[str, str]]
) -> None:
    findings = check(facts, disk, DATA_DIR, limits)
    assert summary(findings) == expected
    assert failed(findings) is any(level == "fail" for level, _ in expected)
    for finding in findings:
        assert "\n" not in finding.message


def test_memory_message_says_measured_and_wanted() -> None:
    [finding] = check(machine(total=4 * GiB), PLENTY, DATA_DIR, DEFAULT)
    assert "4.0 GiB total" in finding.message
    assert "5 GiB" in finding.message
    assert "PF_MIN_MEM_GB" in finding.message


def test_recommended_memory_message_mentions_training() -> None:
    [finding] = check(machine(total=7 * GiB, available=6 * GiB), PLENTY, DATA_DIR, DEFAULT)
    assert "7.0 GiB total" in finding.message
    assert "8 GiB" in finding.message and "16 GiB" in finding.message


def test_available_message_names_both_numbers() -> None:
    [finding] = check(machine(total=16 * GiB, available=3 * GiB), PLENTY, DATA_DIR, DEFAULT)
    assert "3.0 GiB available of 16.0 GiB" in finding.message


def test_measurements_round_down_never_up_to_the_floor() -> None:
    [finding] = check(machine(), 10 * GiB - MiB, DATA_DIR, DEFAULT)
    assert finding.level == "fail"
    assert "9.9 GiB free" in finding.message
    assert DATA_DIR in finding.message and "10 GiB" in finding.message


def test_fractional_floor_rendered_as_given() -> None:
    [finding] = check(machine(), 3 * GiB, DATA_DIR, Thresholds(min_disk_gib=4.5))
    assert "at least 4.5 GiB" in finding.message


def test_unreadable_disk_is_not_a_confident_claim() -> None:
    [finding] = check(machine(), None, DATA_DIR, DEFAULT)
    assert finding.level == "warn"
    assert "could not measure" in finding.message
    assert DATA_DIR in finding.message
    assert "free for" not in finding.message


def test_cpu_message() -> None:
    [finding] = check(machine(cpus=1), PLENTY, DATA_DIR, DEFAULT)
    assert "1 logical CPUs" in finding.message and "at least 2" in finding.message


def test_failed() -> None:
    assert failed([]) is False
    assert failed([Finding("warn", "a"), Finding("note", "b")]) is False
    assert failed([Finding("warn", "a"), Finding("fail", "b")]) is True


# --- the floors from the environment -----------------------------------------------------


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        pytest.param({}, Thresholds(5, 8, 2, 10), id="defaults"),
        pytest.param(
            {"PF_MIN_MEM_GB": "", "PF_MIN_CPU": "  "},
            Thresholds(5, 8, 2, 10),
            id="empty-means-default",
        ),
        pytest.param(
            {"PF_MIN_MEM_GB": "3", "PF_WARN_MEM_GB": "4", "PF_MIN_CPU": "1", "PF_MIN_DISK_GB": "5"},
            Thresholds(3, 4, 1, 5),
            id="all-lowered",
        ),
        pytest.param(
            {"PF_MIN_MEM_GB": " 4.5 "},
            Thresholds(4.5, 8, 2, 10),
            id="fractional-memory-with-spaces",
        ),
        pytest.param(
            {"PF_MIN_DISK_GB": "0", "PF_MIN_CPU": "0"},
            Thresholds(5, 8, 0, 0),
            id="zero-disables-a-floor",
        ),
        pytest.param({"PF_MIN_DISK_GB": "50"}, Thresholds(5, 8, 2, 50), id="raised-floor"),
    ],
)
def test_thresholds(env: dict[str, str], expected: Thresholds) -> None:
    assert thresholds(env) == expected


@pytest.mark.parametrize(
    ("name", "raw"),
    [
        pytest.param("PF_MIN_MEM_GB", "five", id="memory-word"),
        pytest.param("PF_MIN_MEM_GB", "5GB", id="memory-with-unit"),
        pytest.param("PF_WARN_MEM_GB", "-1", id="negative-warn"),
        pytest.param("PF_WARN_MEM_GB", "nan", id="nan"),
        pytest.param("PF_MIN_DISK_GB", "inf", id="infinite-disk"),
        pytest.param("PF_MIN_DISK_GB", "1e400", id="overflowing-disk"),
        pytest.param("PF_MIN_CPU", "1.5", id="fractional-cpu"),
        pytest.param("PF_MIN_CPU", "-1", id="negative-cpu"),
        pytest.param("PF_MIN_CPU", "two", id="cpu-word"),
        pytest.param("PF_MIN_CPU", "²", id="cpu-superscript-digit"),
    ],
)
def test_bad_threshold_names_the_variable(name: str, raw: str) -> None:
    with pytest.raises(BadInput) as caught:
        thresholds({name: raw})
    assert caught.value.exit_code == 2
    assert name in caught.value.message and repr(raw) in caught.value.message
    assert name in caught.value.remedy


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param(None, False, id="unset"),
        pytest.param("", False, id="empty"),
        pytest.param("1", True, id="one"),
        pytest.param("true", True, id="true"),
        pytest.param("TRUE", True, id="upper-true"),
        pytest.param(" yes ", True, id="yes-with-spaces"),
        pytest.param("on", True, id="on"),
        pytest.param("0", False, id="zero"),
        pytest.param("false", False, id="false"),
        pytest.param("No", False, id="no"),
        pytest.param("off", False, id="off"),
    ],
)
def test_skipped(raw: str | None, expected: bool) -> None:
    env = {} if raw is None else {"TRACEBLOC_SKIP_PREFLIGHT": raw}
    assert skipped(env) is expected


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param("2", id="two"),
        pytest.param("skip", id="word"),
        pytest.param("y", id="single-letter"),
    ],
)
def test_skipped_not_understood(raw: str) -> None:
    with pytest.raises(BadInput, match="TRACEBLOC_SKIP_PREFLIGHT"):
        skipped({"TRACEBLOC_SKIP_PREFLIGHT": raw})
