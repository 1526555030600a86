"""From one read of the cluster, the verdict `plan` shows and `install` acts on.

Unreachable (exit 1) → the guard (refused: exit 3) → the state of the target release (a
state that cannot be read is refused; a wedged one names its recovery). The same function
for both commands, so `plan` cannot promise what `install` would refuse.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from installer.decide import guard, reachability, remedy
from installer.decide.cluster_reads import ClusterRead
from installer.decide.errors import InstallerError, Refused
from installer.decide.model import ReleaseRead, ReleaseState
from installer.decide.recovery import manual_commands, recovery_for
from installer.decide.settings import PlanConfig


class Unreachable(InstallerError):
    """No API server answered: nothing was read, so nothing can be decided."""


@dataclass(frozen=True)
class Verdict:
    action: str  # install | upgrade | upgrade-elsewhere | refused | unreachable
    # (plan alone also answers missing-tools and fetch-tools-first: nothing read yet)
    reason: str
    error: InstallerError | None = None  # what install raises; None: it goes ahead
    target: guard.Target | None = None
    recovery: str | None = None  # "rollback" / "uninstall" before the upgrade
    status: str | None = None  # the target release's state, when it exists
    installed_chart: str | None = None  # the target's chart as `helm list` shows it
    dry_run: str | None = None  # plan only: what helm's server-side dry run said (helm_dry_run.py)

    @property
    def exit_code(self) -> int:
        return self.error.exit_code if self.error else 0


def unreachable_error(cfg: PlanConfig, cluster: ClusterRead) -> Unreachable:
    conn, target = cfg.probe.conn, cluster.target
    where = (
        f"context {target.context!r}, API server {target.server or 'unknown'}"
        if target.readable
        else f"no usable kube context: {target.reason}"
    )
    return Unreachable(
        f"cannot reach the cluster ({where}): {cluster.listing.reason}",
        "nothing was changed and no credentials were sent. Check: the kube context "
        f"(--context, or {remedy.kubectl(['config', 'current-context'], conn)}); the "
        "kubeconfig (--kubeconfig or KUBECONFIG); a VPN or proxy between you and the API "
        f"server (HTTPS_PROXY, NO_PROXY). Then: {remedy.kubectl(['get', 'nodes'], conn)}",
    )


def verdict_for(cfg: PlanConfig, cluster: ClusterRead, client_id: str | None) -> Verdict:
    probe = cfg.probe
    listing = cluster.listing
    if not listing.readable and reachability.unreachable(listing.reason, cluster.nodes):
        cut_off = unreachable_error(cfg, cluster)
        return Verdict("unreachable", cut_off.message, cut_off)
    try:
        target = guard.decide(
            listing,
            cluster.values,
            name=probe.release,
            namespace=probe.namespace,
            client_id=client_id,
            conn=probe.conn,
        )
    except Refused as exc:
        return Verdict("refused", exc.message, exc)
    if target.release.state is not ReleaseState.PRESENT:
        return Verdict(
            "install",
            f"no release {target.name} in namespace {target.namespace}: a new install",
            target=target,
        )
    key = (target.name, target.namespace)
    read = cluster.statuses.get(key)
    if read is None or read.error is not None:
        why = read.error.message if read is not None and read.error else "not read"
        error = Refused(
            f"could not read the state of release {target.name}: {why}",
            "nothing was changed\n" + manual_commands(target.name, target.namespace, probe.conn),
        )
        return Verdict("refused", error.message, error, target)
    recovery = recovery_for(read.status)
    action = "upgrade-elsewhere" if target.moved else "upgrade"
    reason = (
        f"this client is installed as release {target.name} in namespace "
        f"{target.namespace}: upgrading it there"
        if target.moved
        else f"release {target.name} in namespace {target.namespace} is this client: upgrading it"
    )
    if recovery:
        reason += f" (its state is {read.status}: helm {recovery} first)"
    chart = next((r.chart for r in listing.releases if (r.name, r.namespace) == key), None)
    return Verdict(
        action, reason, target=target, recovery=recovery, status=read.status, installed_chart=chart
    )


def before_credentials(
    cfg: PlanConfig, cluster: ClusterRead, client_id: str | None
) -> Verdict | None:
    """The guard's refusal known before any credential is typed or sent, else None. Without
    `client_id`, only a refusal no id could lift stops the run here."""
    verdict = verdict_for(cfg, cluster, client_id)
    if verdict.error is None or verdict.action != "refused":
        return None
    if client_id is not None:
        return verdict
    ids = {guard.installed_id(read) for read in cluster.values.values()} - {None}
    if any(verdict_for(cfg, cluster, other).error is None for other in ids):
        return None
    return verdict


def release_for_sizing(cfg: PlanConfig, cluster: ClusterRead, verdict: Verdict) -> ReleaseRead:
    """The read the sizing uses: the target's; when there is no target (refused or
    unreachable), what was seen of the requested release, never a guess at absence."""
    if verdict.target is not None:
        return verdict.target.release
    name, namespace = cfg.probe.release, cfg.probe.namespace
    seen = cluster.values.get((name, namespace))
    if seen is not None:
        return seen
    if cluster.listing.readable and not any(
        (r.name, r.namespace) == (name, namespace) for r in cluster.listing.releases
    ):
        return ReleaseRead(name, namespace, ReleaseState.ABSENT)
    reason = cluster.listing.reason or "the guard refused it"
    return ReleaseRead(name, namespace, ReleaseState.UNREADABLE, reason=reason)


def moved(cfg: PlanConfig, verdict: Verdict) -> PlanConfig:
    """The configuration aimed at the release the guard chose."""
    target = verdict.target
    if target is None or not target.moved:
        return cfg
    probe = dataclasses.replace(cfg.probe, namespace=target.namespace, release_name=target.name)
    return dataclasses.replace(cfg, probe=probe)
