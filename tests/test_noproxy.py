"""NO_PROXY as Go's httpproxy reads it (decide/noproxy.py), as properties: what kubectl,
helm, k3d and Docker connect to directly is what the engine's clients and preflight do."""

from __future__ import annotations

import ipaddress

from hypothesis import given
from hypothesis import strategies as st

from installer.decide.noproxy import bypassed

label = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?", fullmatch=True)
domain = st.lists(label, min_size=1, max_size=3).map(".".join)
port = st.integers(min_value=1, max_value=65535)
entry = st.one_of(
    domain,
    domain.map(lambda d: "." + d),
    domain.map(lambda d: "*." + d),
    st.just("*"),
    st.ip_addresses().map(str),
)
non_loopback = st.ip_addresses(v=4).filter(lambda a: not a.is_loopback)


@given(name=domain, sub=label, p=port)
def test_a_leading_dot_matches_subdomains_only(name: str, sub: str, p: int) -> None:
    for form in ("." + name, "*." + name):
        assert bypassed(f"{sub}.{name}", p, form)
        assert not bypassed(name, p, form)


@given(name=domain, sub=label, p=port)
def test_a_bare_domain_matches_itself_and_its_subdomains(name: str, sub: str, p: int) -> None:
    assert bypassed(name, p, name) and bypassed(f"{sub}.{name}", p, name)
    assert not bypassed(f"{sub}{name}", p, name)  # only on a label boundary


@given(name=domain, p=port, q=port)
def test_an_entry_with_a_port_matches_that_port_only(name: str, p: int, q: int) -> None:
    assert bypassed(name, p, f"{name}:{q}") is (p == q)


@given(
    host=st.one_of(domain, st.ip_addresses().map(str)), p=port, entries=st.lists(entry, max_size=4)
)
def test_star_matches_everything_and_a_list_is_any_of_its_entries(
    host: str, p: int, entries: list[str]
) -> None:
    assert bypassed(host, p, ",".join([*entries, "*"]))
    # Loopback is bypassed whatever the list says (test_loopback_is_never_proxied).
    loopback = bypassed(host, p, "")
    assert bypassed(host, p, " , ".join(entries)) is (
        loopback or any(bypassed(host, p, e) for e in entries)
    )


@given(
    address=st.one_of(
        st.ip_addresses(v=4, network="127.0.0.0/8"), st.just(ipaddress.ip_address("::1"))
    ),
    p=port,
    entries=st.lists(entry, max_size=3),
)
def test_loopback_is_never_proxied(
    address: ipaddress.IPv4Address, p: int, entries: list[str]
) -> None:
    assert bypassed(str(address), p, ",".join(entries))
    assert bypassed("localhost", p, "")


@given(
    address=non_loopback, prefix=st.integers(min_value=8, max_value=32), p=port, other=non_loopback
)
def test_a_cidr_matches_exactly_the_addresses_in_it(
    address: ipaddress.IPv4Address, prefix: int, p: int, other: ipaddress.IPv4Address
) -> None:
    network = ipaddress.ip_network(f"{address}/{prefix}", strict=False)
    assert bypassed(str(address), p, f"{address}/{prefix}")
    assert bypassed(str(other), p, str(network)) is (other in network)
