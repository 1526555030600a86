"""NO_PROXY as Go reads it (golang.org/x/net/http/httpproxy, used by kubectl, helm, k3d and
Docker), so the engine's own clients take the route those tools take. Pure.

Comma-separated; `*` all; a CIDR its addresses; an IP that address (on its port if given);
`example.com` the host and subdomains, `.example.com`/`*.example.com` subdomains only.
`localhost` and loopback never go through a proxy.
"""

from __future__ import annotations

import ipaddress

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def bypassed(host: str, port: int | str, no_proxy: str, *, loopback_direct: bool = True) -> bool:
    """Does Go connect to `host`:`port` directly (True), or through the proxy (False)?
    `host` as a URL names it (brackets around an IPv6 address optional). `loopback_direct`
    False only for tests whose loopback servers stand in for remote hosts."""
    host = host.strip().lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    port = str(port)
    address = _ip(host)
    if loopback_direct and (host == "localhost" or (address is not None and address.is_loopback)):
        return True
    for raw in no_proxy.split(","):
        entry = raw.strip().lower()
        if not entry:
            continue
        if entry == "*":
            return True
        if _matches(entry, host, port, address):
            return True
    return False


def _matches(entry: str, host: str, port: str, address: Address | None) -> bool:
    network = _cidr(entry)
    if network is not None:
        return address is not None and address.version == network.version and address in network
    split = _split_host_port(entry)
    entry_host, entry_port = split if split is not None else (entry, "")
    if split is not None and not entry_host:
        return False  # `:80`: no host, ignored as Go ignores it
    if split is not None and entry_host.startswith("[") and entry_host.endswith("]"):
        entry_host = entry_host[1:-1]
    entry_ip = _ip(entry_host)
    if entry_ip is not None:
        return address is not None and _same(entry_ip, address) and entry_port in ("", port)
    if not entry_host:
        return False
    if entry_host.startswith("*."):
        entry_host = entry_host[1:]
    exact = not entry_host.startswith(".")
    suffix = _ascii("." + entry_host if exact else entry_host)
    # Go compares the text: a domain entry is matched against an address too.
    if host.endswith(suffix) or (exact and host == suffix[1:]):
        return entry_port in ("", port)
    return False


def _ip(text: str) -> Address | None:
    if "%" in text:  # Go's ParseIP takes no zone
        return None
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _same(a: Address, b: Address) -> bool:
    """Go's IP.Equal: an IPv4 address equals its IPv4-mapped IPv6 form."""

    def plain(x: Address) -> Address:
        mapped = getattr(x, "ipv4_mapped", None)
        return mapped if mapped is not None else x

    return plain(a) == plain(b)


def _cidr(entry: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    """Go's ParseCIDR: an address, a slash, a prefix length (the host bits may be set)."""
    if "/" not in entry or "%" in entry:
        return None
    try:
        return ipaddress.ip_network(entry, strict=False)
    except ValueError:
        return None


def _split_host_port(text: str) -> tuple[str, str] | None:
    """Go's net.SplitHostPort: `host:port` or `[host]:port`; None where Go reports an error
    (no port, too many colons, a stray bracket)."""
    colon = text.rfind(":")
    if colon < 0:
        return None
    if text.startswith("["):
        close = text.find("]")
        if close < 0 or close + 1 != colon:
            return None
        host = text[1:close]
    else:
        host = text[:colon]
        if ":" in host:
            return None
    port = text[colon + 1 :]
    if "[" in host or "]" in host or "[" in port or "]" in port:
        return None
    return host, port


def _ascii(name: str) -> str:
    """The entry's name in punycode, as Go's idnaASCII (unchanged when it cannot be)."""
    if name.isascii():
        return name
    try:
        return ".".join(
            label.encode("idna").decode("ascii") if label else "" for label in name.split(".")
        )
    except UnicodeError:
        return name
