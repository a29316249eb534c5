"""Where probes (and drift webhooks) may connect: the server-side request forgery guard.

The name is resolved once and every address it resolves to is checked; the caller then
connects to the checked address (keeping the name for the Host header and TLS SNI), so
a second DNS answer cannot swap in another destination. Link-local and cloud metadata
addresses are always refused; private and loopback ranges only when the deployment
allows them (local model servers are a real use case).
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
CGNAT = ipaddress.ip_network("100.64.0.0/10")


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


def address_refusal(ip: IPAddress, *, allow_private: bool) -> str | None:
    """Why `ip` may not be contacted, or None when it may."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip in METADATA_ADDRESSES:
        return f"{ip} is a cloud metadata address"
    if ip.is_link_local:
        return f"{ip} is a link-local address"
    if ip.is_unspecified or ip.is_multicast:
        return f"{ip} is not a routable unicast address"
    # Loopback before reserved: Python counts ::1 as reserved (::/8).
    if ip.is_loopback or ip.is_private or (ip.version == 4 and ip in CGNAT):
        if allow_private:
            return None
        return (
            f"{ip} is a private or loopback address "
            "(allowed only with PI_PROBES_ALLOW_PRIVATE)"
        )
    if ip.is_reserved:
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


def destination_check(url: str, *, allow_private: bool) -> Destination:
    """Resolve `url`'s host once and check every address; raise OutboundRefused."""
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
    addresses = resolve(host, port)
    if not addresses:
        raise OutboundRefused(f"{host} resolves to no address.")
    for ip in addresses:
        reason = address_refusal(ip, allow_private=allow_private)
        if reason is not None:
            raise OutboundRefused(f"Refused {host}: {reason}.")
    return Destination(
        scheme=parts.scheme,
        host=host,
        port=port,
        ip=addresses[0],
        base_path=parts.path.rstrip("/"),
        query=parts.query,
    )
