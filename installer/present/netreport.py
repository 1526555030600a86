"""The network preflight's report, as lines for a person and as data for `--json`.

Nothing here holds a secret: the report carries the proxy's host:port only.
"""

from __future__ import annotations

from typing import Any

from installer.decide.network import Report, Status, failure_words

SKIPPED_LINE = "network checks skipped (TRACEBLOC_SKIP_PREFLIGHT)"


def text_lines(report: Report) -> list[str]:
    if report.skipped:
        return [SKIPPED_LINE]
    p = report.profile
    inspection = p.inspection + (f" (issuer: {p.issuer})" if p.issuer else "")
    ca = f"{p.ca_path} ({p.ca_variable})" if p.ca_variable else "none configured"
    origin = "from PF_CRITICALS" if report.source == "PF_CRITICALS" else "this install needs"
    lines = [
        "network:",
        f"  proxy:          {p.proxy or 'none'}",
        f"  TLS inspection: {inspection}",
        f"  CA bundle:      {ca}",
        f"  hosts ({origin}):",
    ]
    if not report.probes:
        lines.append("    (none)")
    for probe in report.probes:
        e = probe.endpoint
        if probe.status is Status.OK:
            lines.append(f"    OK    {e.hostport}  {e.label}")
        elif probe.status is Status.UNCHECKED:
            lines.append(f"    ?     {e.hostport}  {e.label}: not checked ({probe.detail})")
        else:
            lines.append(f"    FAIL  {e.hostport}  {e.label}: {failure_words(probe)}")
    lines += [f"  hint: {hint}" for hint in report.hints]
    # "result", not "verdict": `plan` prints one verdict line, and a stop is that verdict.
    lines.append(
        "  result: " + stop_line(report)
        if report.stop
        else "  result: every host this install needs answered"
    )
    return lines


def stop_line(report: Report) -> str:
    first = report.failures[0] if report.failures else "a needed host"
    more = f" (and {len(report.failures) - 1} more)" if len(report.failures) > 1 else ""
    return f"stop: this network does not let the install reach {first}{more}"


def as_json(report: Report) -> dict[str, Any]:
    if report.skipped:
        return {"skipped": True, "stop": False}
    p = report.profile
    return {
        "skipped": False,
        "stop": report.stop,
        "source": report.source,
        "proxy": p.proxy or None,
        "tls_inspection": p.inspection,
        "issuer": p.issuer or None,
        "ca_bundle": {"variable": p.ca_variable, "path": p.ca_path} if p.ca_variable else None,
        "hosts": [
            {
                "label": probe.endpoint.label,
                "url": probe.endpoint.url,
                "host": probe.endpoint.hostport,
                "kind": probe.endpoint.kind.value,
                "strict": probe.endpoint.strict,
                "status": probe.status.value,
                "ok": probe.status is Status.OK,
                "failure": None
                if probe.status in (Status.OK, Status.UNCHECKED)
                else failure_words(probe),
                "http_status": probe.http_status,
                "issuer": probe.issuer or None,
                "trusted_by": probe.trusted_by or None,
                "via_proxy": probe.via_proxy or None,
                "attempts": probe.attempts,
                "seconds": round(probe.seconds, 3),
            }
            for probe in report.probes
        ],
        "failures": list(report.failures),
        "hints": list(report.hints),
    }
