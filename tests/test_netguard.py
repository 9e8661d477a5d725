"""netguard: only http(s) URLs whose every resolved address is public are fetched."""
import socket

import pytest

from citecheck.config import Settings
from citecheck.web import netguard
from citecheck.web.netguard import BlockedURL, check_url

PUBLIC = "93.184.215.14"
FAKE_DNS = {
    "public.test": [PUBLIC],
    "public6.test": ["2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
    "intranet.test": ["10.1.2.3"],
    "metadata.test": ["169.254.169.254"],
    "rebind.test": [PUBLIC, "192.168.0.7"],   # one private answer is enough to refuse
    "scoped.test": ["fe80::1%eth0"],
    "empty.test": [],
}


@pytest.fixture(autouse=True)
def fake_dns(monkeypatch):
    """A resolver that never touches the network; unknown names fail like NXDOMAIN."""
    def resolve(host, port):
        if host in FAKE_DNS:
            return FAKE_DNS[host]
        if host == "localhost":
            return ["127.0.0.1", "::1"]
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    monkeypatch.setattr(netguard, "resolver", resolve)


def reason_for(url, **kwargs):
    with pytest.raises(BlockedURL) as caught:
        check_url(url, **kwargs)
    return caught.value.reason


@pytest.mark.parametrize("url", ["https://public.test/a/b?q=1", "http://public.test:8080/", "http://PUBLIC.test./",
                                 "http://public6.test/", f"http://{PUBLIC}/", "http://[2606:4700::1111]/",
                                 "http://user:pw@public.test/"])
def test_public_addresses_pass(url):
    assert check_url(url) is None


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://public.test/x", "gopher://public.test/",
                                 "data:text/plain,hi", "javascript:alert(1)", "public.test/page", "//public.test/"])
def test_non_http_schemes_are_refused(url):
    assert reason_for(url) == "scheme"


def test_scheme_is_refused_even_when_private_addresses_are_allowed():
    assert reason_for("file:///etc/passwd", allow_private=True) == "scheme"


@pytest.mark.parametrize("url, reason", [
    ("http://127.0.0.1/", "loopback"),
    ("http://127.8.9.10:8000/", "loopback"),
    ("http://localhost:8731/", "loopback"),
    ("http://[::1]/", "loopback"),
    ("http://10.0.0.1/", "private"),
    ("http://172.16.5.4/", "private"),
    ("http://192.168.1.1/", "private"),
    ("http://[fc00::1]/", "private"),
    ("http://169.254.169.254/latest/meta-data/", "metadata"),
    ("http://[fd00:ec2::254]/", "metadata"),
    ("http://169.254.1.1/", "link_local"),
    ("http://[fe80::1]/", "link_local"),
    ("http://0.0.0.0/", "unspecified"),
    ("http://[::]/", "unspecified"),
    ("http://224.0.0.1/", "multicast"),
    ("http://240.0.0.1/", "reserved"),
    ("http://100.64.0.1/", "not_global"),            # carrier-grade NAT
    ("http://[::ffff:127.0.0.1]/", "loopback"),      # IPv4-mapped IPv6
    ("http://[::ffff:a00:1]/", "private"),
    ("http://[64:ff9b::a9fe:a9fe]/", "metadata"),    # NAT64 of 169.254.169.254
    ("http://[2002:7f00:1::]/", "loopback"),         # 6to4 of 127.0.0.1
    ("http://intranet.test/", "private"),
    ("http://metadata.test/", "metadata"),
    ("http://rebind.test/", "private"),
    ("http://scoped.test/", "link_local"),
])
def test_private_and_special_addresses_are_refused(url, reason):
    assert reason_for(url) == reason


@pytest.mark.parametrize("url", ["http://2130706433/", "http://0x7f.1/", "http://127.1/", "http://017700000001/"])
def test_numeric_spellings_of_loopback_are_refused_after_resolution(monkeypatch, url):
    """The real resolver turns these into 127.0.0.1 (inet_aton forms); no network is needed."""
    monkeypatch.setattr(netguard, "resolver", netguard._system_resolver)
    assert reason_for(url) == "loopback"


def test_unresolvable_host_is_refused_with_dns_reason():
    assert reason_for("http://nowhere.test/") == "dns"
    assert reason_for("http://empty.test/") == "dns"


@pytest.mark.parametrize("url", ["http://public.test:99999/", "http://[::1/", "http:///path-only"])
def test_malformed_urls_are_refused(url):
    assert reason_for(url) == "bad_url"


def test_message_names_the_address_and_the_setting():
    with pytest.raises(BlockedURL, match=r"intranet.test resolves to 10.1.2.3.*private.*CITECHECK_ALLOW_PRIVATE"):
        check_url("http://intranet.test/")


def test_allow_private_setting_lifts_the_address_check():
    assert reason_for("http://127.0.0.1:8731/") == "loopback"
    allow = Settings.from_env({"CITECHECK_ALLOW_PRIVATE": "1"}).allow_private
    assert check_url("http://127.0.0.1:8731/", allow_private=allow) is None
    assert check_url("http://intranet.test/", allow_private=allow) is None
    assert reason_for("http://127.0.0.1/", allow_private=False) == "loopback"


def test_allow_private_argument_overrides_the_setting():
    assert check_url("http://10.0.0.1/", allow_private=True) is None


def test_allow_hosts_lifts_only_the_exact_origin():
    allowed = Settings.from_env({"CITECHECK_ALLOW_HOSTS": "127.0.0.1:8731, [::1]:9000"}).allow_hosts
    assert check_url("http://127.0.0.1:8731/page", allowed=allowed) is None
    assert check_url("http://[::1]:9000/", allowed=allowed) is None
    assert reason_for("http://127.0.0.1:8732/", allowed=allowed) == "loopback"
    assert reason_for("http://127.0.0.1/", allowed=allowed) == "loopback"
    assert reason_for("http://10.0.0.1:8731/", allowed=allowed) == "private"


def test_malformed_allow_hosts_is_an_error_naming_the_variable():
    with pytest.raises(ValueError, match="CITECHECK_ALLOW_HOSTS"):
        Settings.from_env({"CITECHECK_ALLOW_HOSTS": "127.0.0.1"})


def test_blocked_url_is_a_value_error_with_a_reason():
    error = BlockedURL("private", "detail")
    assert isinstance(error, ValueError) and error.reason == "private" and "detail" in str(error)


def test_vet_returns_the_addresses_to_connect_to_or_none_when_lifted():
    assert netguard.vet("https://public.test/a") == [PUBLIC]
    assert netguard.vet(f"http://{PUBLIC}:8080/") == [PUBLIC]
    assert netguard.vet("http://public6.test/") == ["2606:2800:21f:cb07:6820:80da:af6b:8b2c"]
    assert netguard.vet("http://intranet.test/", allow_private=True) is None
    with pytest.raises(BlockedURL):
        netguard.vet("http://rebind.test/")
