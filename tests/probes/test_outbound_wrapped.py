"""The guard sees through IPv6 wrappers of IPv4 and refuses non-unicast addresses.

All in-process: IP literals are never resolved and nothing is connected to, so the
tables below can name metadata and broadcast addresses safely.
"""

from typing import Any

import pytest

from pi_dashboard.probes import outbound
from pi_dashboard.probes.models import Endpoint
from tests.probes.conftest import logged_in

# Each wraps 169.254.169.254 (the metadata address) in a different IPv6 form.
METADATA_WRAPPED = [
    ("2002:a9fe:a9fe::1", "6to4"),
    ("64:ff9b::a9fe:a9fe", "NAT64 well-known prefix"),
    ("64:ff9b::169.254.169.254", "NAT64, dotted"),
    ("64:ff9b:1:a9fe:a9:fe00::", "NAT64 local-use /48 (RFC 6052 layout)"),
    ("64:ff9b:1::a9fe:a9fe", "NAT64 local-use /96 layout"),
    # Teredo: the client address is the complement of the last 32 bits.
    ("2001:0:4136:e378:8000:63bf:5601:5601", "Teredo client"),
    ("::ffff:169.254.169.254", "IPv4-mapped"),
    ("::ffff:a9fe:a9fe", "IPv4-mapped, hex"),
    ("::169.254.169.254", "IPv4-compatible"),
]


@pytest.mark.parametrize(("address", "form"), METADATA_WRAPPED)
@pytest.mark.parametrize("allow_private", [True, False])
def test_metadata_wrapped_in_ipv6_is_refused(
    address: str, form: str, allow_private: bool
) -> None:
    with pytest.raises(outbound.OutboundRefused) as exc:
        outbound.destination_check(
            f"http://[{address}]/latest/meta-data/", allow_private=allow_private
        )
    assert "169.254.169.254 is a cloud metadata address" in exc.value.detail, form


# Private or loopback IPv4 behind a wrapper needs the setting like the bare address.
PRIVATE_WRAPPED = [
    "2002:7f00:1::1",  # 6to4 of 127.0.0.1
    "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
    "::ffff:192.168.1.5",
    "2001:0:4136:e378:8000:63bf:f5ff:fffe",  # Teredo client 10.0.0.1
]


@pytest.mark.parametrize("address", PRIVATE_WRAPPED)
def test_private_wrapped_in_ipv6_needs_the_setting(address: str) -> None:
    with pytest.raises(outbound.OutboundRefused, match="PI_PROBES_ALLOW_PRIVATE"):
        outbound.destination_check(f"http://[{address}]/v1", allow_private=False)


ALWAYS_REFUSED = [
    ("255.255.255.255", "limited broadcast"),
    ("240.0.0.1", "reserved (class E)"),
    ("224.0.0.1", "IPv4 multicast"),
    ("239.255.255.250", "IPv4 multicast (SSDP)"),
    ("0.1.2.3", "this network"),
    ("192.0.2.10", "documentation"),
    ("198.18.0.1", "benchmarking"),
    ("[ff02::1]", "IPv6 multicast"),
    ("[ff05::2]", "IPv6 site multicast"),
    ("[2001:db8::1]", "IPv6 documentation"),
    ("[::]", "unspecified"),
    ("[::ffff:255.255.255.255]", "mapped broadcast"),
    ("[64:ff9b::ffff:ffff]", "NAT64 of broadcast"),
    ("[2002:ffff:ffff::1]", "6to4 of broadcast"),
]


@pytest.mark.parametrize(("host", "kind"), ALWAYS_REFUSED)
def test_non_unicast_is_refused_even_with_private_probing(host: str, kind: str) -> None:
    with pytest.raises(outbound.OutboundRefused) as exc:
        outbound.destination_check(f"http://{host}/v1", allow_private=True)
    assert "not a routable unicast address" in exc.value.detail, kind


PUBLIC = [
    "93.184.215.14",
    "[2606:4700::1111]",
    "[::ffff:93.184.215.14]",  # mapped public IPv4
    "[64:ff9b::5db8:d70e]",  # NAT64 of a public IPv4
    "[2002:5db8:d70e::1]",  # 6to4 of a public IPv4
]


@pytest.mark.parametrize("host", PUBLIC)
def test_public_addresses_pass_without_the_setting(host: str) -> None:
    assert outbound.destination_check(f"https://{host}/v1", allow_private=False).ip


@pytest.mark.parametrize(
    ("prefix_length", "address"),
    [
        (48, "64:ff9b:1:c000:2:2100::"),
        (56, "64:ff9b:1:ffc0:0:221::"),
        (64, "64:ff9b:1:ffff:c0:2:2100:0"),
        (96, "64:ff9b:1::c000:221"),
    ],
)
def test_rfc6052_embeddings_decode(prefix_length: int, address: str) -> None:
    # RFC 6052 §2.4's table, moved under the local-use prefix: 192.0.2.33 each time.
    import ipaddress

    ip = ipaddress.IPv6Address(address)
    assert str(outbound.nat64_embedded(ip, prefix_length)) == "192.0.2.33"


ENDPOINT = {
    "name": "metadata",
    "server_model": "m",
    "model_key": "openai/m",
}
REFUSED_AT_SAVE = [
    "http://169.254.169.254/",
    "http://[2002:a9fe:a9fe::1]/v1",
    "http://[64:ff9b::a9fe:a9fe]/v1",
    "http://255.255.255.255/v1",
    "http://metadata.google.internal/v1",
]


@pytest.mark.django_db
@pytest.mark.parametrize("url", REFUSED_AT_SAVE)
def test_api_refuses_the_url_at_save(operator: Any, url: str) -> None:
    client = logged_in(operator)
    response = client.post(
        "/api/v1/endpoints",
        {**ENDPOINT, "base_url": url},
        content_type="application/json",
    )
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "outbound_refused"
    assert "Refused" in response.json()["detail"]
    assert not Endpoint.objects.exists()


@pytest.mark.django_db
def test_api_refuses_changing_the_url_to_metadata(operator: Any) -> None:
    client = logged_in(operator)
    created = client.post(
        "/api/v1/endpoints",
        {**ENDPOINT, "base_url": "http://127.0.0.1:9/v1"},
        content_type="application/json",
    )
    assert created.status_code == 201
    response = client.put(
        f"/api/v1/endpoints/{created.json()['id']}",
        {**ENDPOINT, "base_url": "http://169.254.169.254/"},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert response.json()["code"] == "outbound_refused"
    assert Endpoint.objects.get().base_url == "http://127.0.0.1:9/v1"


@pytest.mark.django_db
def test_form_refuses_the_metadata_url_at_save(operator: Any) -> None:
    response = logged_in(operator).post(
        "/probes/endpoints/new/",
        {
            **ENDPOINT,
            "base_url": "http://169.254.169.254/",
            "timeout_seconds": "60",
            "token_param": "max_completion_tokens",
            "trials": "1",
        },
    )
    assert response.status_code == 400
    assert "169.254.169.254 is a cloud metadata address" in response.content.decode()
    assert not Endpoint.objects.exists()


@pytest.mark.django_db
def test_save_does_not_resolve_names_or_judge_private_addresses(
    operator: Any, settings: Any
) -> None:
    # Private probing may be switched on later; the probe decides on those.
    settings.PI_PROBES_ALLOW_PRIVATE = False
    response = logged_in(operator).post(
        "/api/v1/endpoints",
        {**ENDPOINT, "base_url": "http://10.0.0.7:8000/v1"},
        content_type="application/json",
    )
    assert response.status_code == 201
