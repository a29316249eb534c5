"""Where probes (and drift webhooks) may connect: the server-side request forgery guard.

The name is resolved once and every address it resolves to is checked; the caller then
connects to the checked address (keeping the name for the Host header and TLS SNI), so
a second DNS answer cannot swap in another destination. Link-local, cloud metadata,
broadcast, multicast and reserved addresses are always refused, also when IPv6 wraps
them (IPv4-mapped, -compatible, NAT64, 6to4, Teredo); private and loopback ranges
only when the deployment allows them (local model servers are a real use case).
"""

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from pi_dashboard.lib.errors import DomainError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Instance metadata services, by address (some are outside link-local) and by name.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean …
        "169.254.170.2",  # AWS ECS task metadata
        "fd00:ec2::254",  # AWS IMDS over IPv6 (a ULA, so not link-local)
        "100.100.100.200",  # Alibaba Cloud
        "192.0.0.192",  # Oracle Cloud (legacy)
    )
)
METADATA_NAMES = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "metadata.azure.internal",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.tencentyun.com",
    }
)


class OutboundRefused(DomainError):
    code = "outbound_refused"


@dataclass(frozen=True)
class Destination:
    """A checked destination: connect to `ip`, but speak to `host`."""

    scheme: str
    host: str
    port: int
    ip: IPAddress
    base_path: str
    query: str = ""

    @property
    def host_header(self) -> str:
        default = 443 if self.scheme == "https" else 80
        name = f"[{self.host}]" if ":" in self.host else self.host
        return name if self.port == default else f"{name}:{self.port}"

    def url(self, path: str) -> str:
        """URL addressed to the checked IP (the Host header carries the name)."""
        ip = f"[{self.ip}]" if self.ip.version == 6 else str(self.ip)
        query = f"?{self.query}" if self.query else ""
        return f"{self.scheme}://{ip}:{self.port}{self.base_path}{path}{query}"

    def display_url(self, path: str) -> str:
        # No query string: it may carry a token.
        return f"{self.scheme}://{self.host_header}{self.base_path}{path}"


# What "private probing" opens: loopback, RFC 1918, carrier-grade NAT and unique-local
# addresses (local model servers). Everything else that is not globally routable
# (broadcast, reserved, documentation, benchmarking, "this network") stays refused.
LOCAL_NETWORKS = tuple(
    ipaddress.ip_network(n)
    for n in (
        "127.0.0.0/8",
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "100.64.0.0/10",
        "::1/128",
        "fc00::/7",
    )
)
IPV4_MAPPED = ipaddress.ip_network("::ffff:0:0/96")
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
NAT64_WELL_KNOWN = ipaddress.ip_network("64:ff9b::/96")
NAT64_LOCAL_USE = ipaddress.ip_network("64:ff9b:1::/48")
# RFC 6052 prefix lengths a local-use NAT64 prefix inside 64:ff9b:1::/48 may have.
NAT64_LOCAL_LENGTHS = (48, 56, 64, 96)


def nat64_embedded(ip: ipaddress.IPv6Address, prefix_length: int) -> IPAddress:
    """The IPv4 address RFC 6052 embeds after a prefix of `prefix_length` bits.

    Bits 64-71 (the "u" octet) never carry address bits, so they are skipped.
    """
    value = int(ip)
    without_u = (value >> 64 << 56) | (value & (2**56 - 1))  # 120 bits
    start = prefix_length if prefix_length <= 64 else prefix_length - 8
    return ipaddress.IPv4Address((without_u >> (120 - start - 32)) & 0xFFFFFFFF)


def embedded_ipv4(ip: IPAddress) -> tuple[bool, list[IPAddress]]:
    """(is a translation, IPv4 addresses `ip` carries) for IPv6 wrappers of IPv4.

    A translation (IPv4-mapped, IPv4-compatible, NAT64) reaches the IPv4 address
    itself, so that address alone decides. 6to4 and Teredo are real IPv6 addresses
    whose relays deliver to the embedded IPv4 (Teredo: the complemented client).
    """
    if not isinstance(ip, ipaddress.IPv6Address):
        return False, []
    if ip in IPV4_MAPPED:
        return True, [ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)]
    if ip in NAT64_WELL_KNOWN:
        return True, [nat64_embedded(ip, 96)]
    if ip in NAT64_LOCAL_USE:
        return True, [nat64_embedded(ip, n) for n in NAT64_LOCAL_LENGTHS]
    if ip in IPV4_COMPATIBLE and int(ip) > 1:  # :: and ::1 are not IPv4-compatible
        return True, [ipaddress.IPv4Address(int(ip))]
    if ip.sixtofour is not None:
        return False, [ip.sixtofour]
    if ip.teredo is not None:
        server, client = ip.teredo
        return False, [server, client]
    return False, []


def address_refusal(ip: IPAddress, *, allow_private: bool) -> str | None:
    """Why `ip` may not be contacted, or None when it may."""
    is_translation, carried = embedded_ipv4(ip)
    refusals = [
        (inner, reason)
        for inner in carried
        if (reason := address_refusal(inner, allow_private=allow_private))
    ]
    if refusals:
        # A local-use NAT64 address has several readings; name the metadata one.
        inner, reason = min(refusals, key=lambda r: r[0] not in METADATA_ADDRESSES)
        return f"{ip} carries {inner}: {reason}"
    if is_translation:
        return None
    if ip in METADATA_ADDRESSES:
        return f"{ip} is a cloud metadata address"
    if ip.is_link_local:
        return f"{ip} is a link-local address"
    if any(ip in network for network in LOCAL_NETWORKS):
        if allow_private:
            return None
        return (
            f"{ip} is a private or loopback address "
            "(allowed only with PI_PROBES_ALLOW_PRIVATE)"
        )
    # Broadcast, multicast, reserved, documentation …: never a model server.
    if ip.is_multicast or ip.is_reserved or not ip.is_global:
        return f"{ip} is not a routable unicast address"
    return None


def resolve(host: str, port: int) -> list[IPAddress]:
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise OutboundRefused(f"Cannot resolve {host}: {exc.strerror}.") from exc
    seen: list[IPAddress] = []
    for info in infos:
        ip = ipaddress.ip_address(str(info[4][0]).split("%")[0])
        if ip not in seen:
            seen.append(ip)
    return seen


def _url_split(url: str) -> tuple[str, str, int, str, str]:
    """(scheme, host, port, path, query) of a URL a probe may use; refuses the rest."""
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"}:
        raise OutboundRefused(f"Only http and https URLs are allowed, not {url!r}.")
    host = (parts.hostname or "").rstrip(".").lower()
    if not host:
        raise OutboundRefused(f"{url!r} has no host.")
    if parts.username or parts.password:
        raise OutboundRefused(
            "Credentials in the URL are not allowed; use the API key."
        )
    if host in METADATA_NAMES:
        raise OutboundRefused(f"Refused {host}: it is a cloud metadata name.")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise OutboundRefused(f"Bad port in {url!r}.") from exc
    return parts.scheme, host, port, parts.path, parts.query


def url_check(url: str) -> None:
    """Refuse, when a URL is saved, what could never be contacted.

    No name is resolved here (DNS answers change; every probe checks again): only
    the URL's form and an address written in it. Private addresses pass, since
    PI_PROBES_ALLOW_PRIVATE may change after the save; the probe decides on those.
    """
    _, host, _, _, _ = _url_split(url)
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return
    reason = address_refusal(ip, allow_private=True)
    if reason is not None:
        raise OutboundRefused(f"Refused {host}: {reason}.")


def destination_check(url: str, *, allow_private: bool) -> Destination:
    """Resolve `url`'s host once and check every address; raise OutboundRefused."""
    scheme, host, port, path, query = _url_split(url)
    addresses = resolve(host, port)
    if not addresses:
        raise OutboundRefused(f"{host} resolves to no address.")
    for ip in addresses:
        reason = address_refusal(ip, allow_private=allow_private)
        if reason is not None:
            raise OutboundRefused(f"Refused {host}: {reason}.")
    return Destination(
        scheme=scheme,
        host=host,
        port=port,
        ip=addresses[0],
        base_path=path.rstrip("/"),
        query=query,
    )
