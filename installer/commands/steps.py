"""The changes one install makes, for the question and for `plan` (present/changes.py):
built from the same settings, survey and plan the install runs from, so what is asked
about is what is done."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from installer.decide.settings import DEFAULT_REPO_NAME, DEFAULT_REPO_URL, PlanConfig
from installer.present.changes import Change, changes

if TYPE_CHECKING:
    from installer.commands.plan import Plan
    from installer.decide.judge import Verdict
    from installer.decide.localstate import Local


def steps(cfg: PlanConfig, env: Mapping[str, str], *, set_context_namespace: bool,
          local: Local | None, verdict: Verdict | None = None,
          plan: Plan | None = None,
          links: Sequence[tuple[str, str]] = ()) -> list[Change]:  # fmt: skip
    """Before the local cluster exists there is no plan yet (no recovery, no device plugin
    to adopt: the cluster is new or has not been read); after it, the plan's own. `links`:
    the fetched tools linked where the person's shell looks (commands/shellpath.py), last."""
    repo = (DEFAULT_REPO_NAME, DEFAULT_REPO_URL) if cfg.chart_is_default else None
    from installer.commands import shellpath

    return [*changes(
        local=local, release=cfg.probe.release, namespace=cfg.probe.namespace, chart=cfg.chart,
        values_path=cfg.values_path, conn=cfg.probe.conn, repo=repo,
        ca_file=cfg.ca_bundle if repo else None,
        set_context_namespace=set_context_namespace,
        recovery=verdict.recovery if verdict is not None else None,
        adopt=plan.site.gpu.adopt if plan is not None else None,
    ), *shellpath.changes(links, env)]  # fmt: skip
