"""The changes one install makes, for the question and for `plan` (present/changes.py):
built from the same settings, survey and plan the install runs from, so what is asked
about is what is done."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from installer.decide import remedy
from installer.decide.errors import InstallerError
from installer.decide.settings import DEFAULT_REPO_NAME, DEFAULT_REPO_URL, PlanConfig
from installer.present.changes import Change, changes

# Where a sign-in after the question will name the namespace (and the release): the list
# says so in its place, and the executor holds the minted name to it.
MINTED = "<namespace-named-by-the-sign-in>"

if TYPE_CHECKING:
    from installer.commands.install_plan import Plan
    from installer.decide.install_verdict import Verdict
    from installer.decide.localcluster_state import Local


def steps(
    cfg: PlanConfig,
    env: Mapping[str, str],
    *,
    set_context_namespace: bool,
    local: Local | None,
    verdict: Verdict | None = None,
    plan: Plan | None = None,
    links: Sequence[tuple[str, str]] = (),
) -> list[Change]:
    """Before the local cluster exists there is no plan yet (no recovery, no device plugin
    to adopt: the cluster is new or has not been read); after it, the plan's own. `links`:
    the fetched tools linked where the person's shell looks (commands/shellpath.py), last."""
    repo = (DEFAULT_REPO_NAME, DEFAULT_REPO_URL) if cfg.chart_is_default else None
    from installer.commands import shellpath

    return [
        *changes(
            local=local,
            release=cfg.probe.release,
            namespace=cfg.probe.namespace,
            chart=cfg.chart,
            values_path=cfg.values_path,
            conn=cfg.probe.conn,
            repo=repo,
            ca_file=cfg.ca_bundle if repo else None,
            set_context_namespace=set_context_namespace,
            recovery=verdict.recovery if verdict is not None else None,
            adopt=plan.site.gpu.adopt if plan is not None else None,
        ),
        *shellpath.changes(links, env),
    ]


def minted_later(cfg: PlanConfig) -> PlanConfig:
    """The configuration the question lists when a sign-in after it names the namespace."""
    return dataclasses.replace(
        cfg, probe=dataclasses.replace(cfg.probe, namespace=MINTED, release_name=None)
    )


def hold_to(
    approved: Sequence[Change], planned: Sequence[Change], *, minted: str | None = None
) -> None:
    """The changes about to be made are items of the list agreed to (the sign-in's namespace
    in MINTED's place): anything else means the state moved since, and nothing is done."""

    def agreed(argv: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(part.replace(MINTED, minted) for part in argv) if minted else argv

    allowed = {agreed(change.argv) for change in approved}
    for change in planned:
        if change.argv not in allowed:
            raise InstallerError(
                f"`{remedy.command(change.argv)}` ({change.why}) was not in the list you agreed "
                "to: the cluster's state changed since the question; only the changes listed "
                "before it were made",
                "run the installer again: its list then shows what is needed now",
            )
