"""Docker Desktop on a Mac: the chips its executable is built for, whether that is this
Mac's, and the steps that set aside one built for the other chip or quit a wedged one. Pure."""

from __future__ import annotations

from installer.decide.runtime import Facts, Step

# Mach-O CPU types (mach/machine.h) by the engine's names.
_CPU_TYPES = {0x01000007: "x86_64", 0x0100000C: "arm64"}
CHIP = {"arm64": "Apple Silicon", "x86_64": "Intel"}


def macho_archs(head: bytes) -> frozenset[str]:
    """The chips a Mach-O executable (thin or universal) is built for, from its first
    bytes; empty when they are not a Mach-O header this knows."""
    if head[:4] in (b"\xca\xfe\xba\xbe", b"\xca\xfe\xba\xbf"):  # universal, big-endian
        size = 20 if head[3] == 0xBE else 32
        count = int.from_bytes(head[4:8], "big")
        types = [int.from_bytes(head[8 + i * size : 12 + i * size], "big") for i in range(count)]
        if count > 30 or len(head) < 8 + count * size:
            return frozenset()
    elif head[:4] in (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe") and len(head) >= 8:
        types = [int.from_bytes(head[4:8], "little")]
    else:
        return frozenset()
    return frozenset(_CPU_TYPES[t] for t in types if t in _CPU_TYPES)


def wrong_chip(facts: Facts) -> bool:
    """Docker.app is built only for the other chip (positive evidence: its header read)."""
    return bool(facts.docker_app_archs) and facts.arch not in facts.docker_app_archs


def quit_wedged(facts: Facts) -> tuple[Step, ...]:
    """A Docker Desktop whose process runs while Docker does not answer is quit first (a
    second start would only bring its window forward)."""
    if not facts.docker_desktop_alive:
        return ()
    return (
        Step(
            ("osascript", "-e", 'quit app "Docker"'),
            "quit the Docker Desktop that does not answer",
            root=False,
            optional=True,
            timeout=30,
        ),
        Step(
            ("pkill", "-x", "Docker Desktop"),
            "end its process if it did not quit",
            root=False,
            optional=True,
            timeout=30,
        ),
    )


def replace_steps(facts: Facts) -> tuple[Step, ...]:
    """A Docker.app for the other chip goes to the Trash (recoverable: Docker's data in
    ~/Library stays), before this chip's is installed."""
    if not wrong_chip(facts) or not facts.trash_target:
        return ()
    built = " and ".join(sorted(CHIP.get(a, a) for a in facts.docker_app_archs))
    return (
        *quit_wedged(facts),
        Step(
            ("mv", facts.docker_app_path, facts.trash_target),
            f"move {facts.docker_app_path} (built for {built}, not this "
            f"{CHIP.get(facts.arch, facts.arch)} Mac) to your Trash",
        ),
    )
