"""What the Windows host preparation will do, in the plan's words: each step with its argv and
whether it runs as administrator, the reboot announced before anything changes."""

from __future__ import annotations

from installer.decide import elevation
from installer.decide import winhost as wh


def host_lines(plan: wh.HostPlan) -> list[str]:
    if plan.tier == 0:
        return [
            "host:     Docker Desktop answers: nothing to prepare, no administrator rights needed"
        ]
    lines = [
        f"host:     {len(plan.privileged)} step(s) as administrator (one Windows prompt), "
        f"{len(plan.as_user)} as {plan.user or 'you'}:"
    ]
    for step in plan.steps:
        who = "admin" if step.privileged else "user "
        argv = f": {' '.join(elevation.win_quote(a) for a in step.argv)}" if step.argv else ""
        fallback = (
            f" (if that fails: {' '.join(elevation.win_quote(a) for a in step.fallback)})"
            if step.fallback
            else ""
        )
        lines.append(f"  [{who}] {step.title}{argv}{fallback}")
    if plan.reboot_expected:
        lines.append(
            "  a reboot is needed after the Windows features are enabled; the install "
            "then continues at the next sign-in"
        )
    lines += [f"  note: {note}" for note in plan.notes]
    lines += [f"  blocked: {message}: {remedy}" for message, remedy in plan.blockers]
    return lines


def host_json(plan: wh.HostPlan) -> dict[str, object]:
    return {
        "tier": plan.tier,
        "user": plan.user,
        "reboot_expected": plan.reboot_expected,
        "steps": [
            {
                "key": s.key,
                "title": s.title,
                "argv": list(s.argv),
                "fallback": list(s.fallback),
                "administrator": s.privileged,
            }
            for s in plan.steps
        ],
        "blockers": [{"message": m, "remedy": r} for m, r in plan.blockers],
        "notes": list(plan.notes),
    }
