"""Provider key formats at first sight: does the detector know each documented format with no label beside it?

The list of providers is gitleaks' rule set (github.com/gitleaks/gitleaks, config/gitleaks.toml, MIT), read as a
catalogue only: no pattern of it is copied. Kept are the formats with a literal prefix or a fixed structure
(`ghp_`, `glpat-`, `xoxb-`, `dop_v1_`, `AKIA`, `SG.`, a base64 JSON head, 22 `A`s, ...); its keyword-only rules (a
provider's name beside a bare hex or alphanumeric run) are left out. Each value here is written from the format
its provider documents: length, alphabet, and the checksum where there is one (GitHub's and npm's CRC32 in base62,
age's bech32), the base64 of the JSON or binary head where the token is one (Grafana's `eyJrIjoi`, Sentry's
`sntrys_eyJ`, 1Password's `ops_eyJ`, PyPI's macaroon).

Every value is written in three carriers: a log line with no label, a JSON config under the neutral key `value`,
and a shell `export NAME=…` where NAME is the variable the provider's tools read. A value counts as found when,
redacted as ingest redacts a text, no 8 of its characters in a row survive (as every corpus is judged).

Deterministic. Kept apart from the rules on purpose: this file and tracegym/redact/rules.py are never changed in
the same commit. `python benchmarks/redact_providers.py` prints recall per provider, then one JSON line.
"""

from __future__ import annotations

import base64
import json
import random
import string
import sys
import zlib
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.corpus_formats import bech32, crc_token, pick  # noqa: E402

A62 = string.ascii_letters + string.digits
LOW36 = string.ascii_lowercase + string.digits
UP36 = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
UHEX = HEX.upper()
URL = A62 + "_-"
B64 = A62 + "+/"
LETTERS = string.ascii_letters

Rng = random.Random
Make = Callable[[Rng], str]


@dataclass(frozen=True)
class Format:
    provider: str
    name: str
    env: str
    """The variable the provider's CLI or SDK reads the value from."""
    make: Make
    shape: str
    """What the value is, as a regular expression written from the documented format (for the shape test)."""


def run(alphabet: str, n: int) -> Callable[[Rng], str]:
    return lambda rng: pick(rng, alphabet, n)


def parts(*pieces: str | tuple[str, int]) -> Make:
    """A value of literal pieces and (alphabet, n) random runs, in order."""
    def make(rng: Rng) -> str:
        return "".join(p if isinstance(p, str) else pick(rng, p[0], p[1]) for p in pieces)
    return make


def b64(data: bytes, url: bool = False, pad: bool = False) -> str:
    text = (base64.urlsafe_b64encode(data) if url else base64.b64encode(data)).decode()
    return text if pad else text.rstrip("=")


def age_identity(rng: Rng) -> str:
    """An age X25519 identity: bech32 of 32 random bytes under `age-secret-key-`, upper case."""
    return bech32("age-secret-key-", rng.randbytes(32)).upper()


def github(prefix: str) -> Make:
    """GitHub's 2021 format: prefix, 30 base62, CRC32 of them in 6 base62."""
    return lambda rng: crc_token(rng, prefix)


def atlassian(rng: Rng) -> str:
    """An Atlassian API token: `ATATT3xFfGF0`, a base64url body, `=` and a CRC32 of it in 8 upper hex (192)."""
    head = "ATATT3xFfGF0" + pick(rng, URL, 171)
    return f"{head}={zlib.crc32(head.encode()):08X}"


def onepassword_service(rng: Rng) -> str:
    """A 1Password service account token: `ops_` and base64 of its JSON (sign-in address, SRP parameters, keys)."""
    doc = {"signInAddress": "my.1password.com", "userAuth": {"method": "SRPg-4096", "alg": "PBES2g-HS256",
           "iterations": 650000, "salt": b64(rng.randbytes(16), url=True)},
           "email": pick(rng, LOW36, 13) + "@1passwordserviceaccounts.com", "srpX": rng.randbytes(32).hex(),
           "muk": {"alg": "A256GCM", "ext": True, "k": b64(rng.randbytes(32), url=True), "key_ops": ["encrypt",
                   "decrypt"], "kty": "oct", "kid": "mp"}, "secretKey": "A3-" + pick(rng, UP36, 6) + "-"
           + pick(rng, UP36, 6) + "-" + "-".join(pick(rng, UP36, 5) for _ in range(4)),
           "throttleSecret": {"seed": rng.randbytes(32).hex(), "uuid": pick(rng, UP36, 26)},
           "deviceUuid": pick(rng, LOW36, 26)}
    return "ops_" + b64(json.dumps(doc, separators=(",", ":")).encode())


def grafana_api_key(rng: Rng) -> str:
    """A Grafana API key (before service accounts): base64 of `{"k":…,"n":…,"id":…}`."""
    doc = {"k": pick(rng, A62, 32), "n": rng.choice(["deploy", "ci-reader", "alerts"]), "id": rng.randint(1, 99)}
    return b64(json.dumps(doc, separators=(",", ":")).encode(), pad=True)


def grafana_cloud(rng: Rng) -> str:
    """A Grafana Cloud access policy token: `glc_` and base64 of `{"o":…,"n":…,"k":…,"m":{"r":…}}`."""
    doc = {"o": str(rng.randint(100000, 999999)), "n": "stack-" + str(rng.randint(100000, 999999)) + "-hm-read",
           "k": pick(rng, A62, 24), "m": {"r": rng.choice(["prod-us-east-0", "prod-eu-west-2"])}}
    return "glc_" + b64(json.dumps(doc, separators=(",", ":")).encode(), pad=True)


def sentry_org(rng: Rng) -> str:
    """A Sentry organization token: `sntrys_`, base64 of its JSON claims, `_`, a 43-character secret."""
    doc = {"iat": rng.randint(1_700_000_000, 1_760_000_000), "url": "https://sentry.io",
           "region_url": "https://us.sentry.io", "org": rng.choice(["acme", "northwind", "globex"])}
    return "sntrys_" + b64(json.dumps(doc, separators=(",", ":")).encode()) + "_" + pick(rng, B64, 43)


def pypi(rng: Rng) -> str:
    """A PyPI API token: `pypi-` and a macaroon (location pypi.org, identifier, caveats, signature) in base64url."""
    ident = json.dumps({"version": 1, "permissions": "user"}).encode()
    body = (b"\x02\x01\x08pypi.org\x02\x01" + bytes([len(ident)]) + ident + b"\x00\x02\x06"
            + rng.randbytes(6) + b"\x00\x00\x06\x20" + rng.randbytes(32))
    return "pypi-" + b64(body, url=True)


def mapbox_secret(rng: Rng) -> str:
    """A Mapbox secret token: `sk.`, base64url of `{"u":user,"a":id}`, `.`, 22 characters."""
    doc = {"u": rng.choice(["acme-maps", "fleetview", "northwind"]), "a": pick(rng, LOW36, 25)}
    return "sk." + b64(json.dumps(doc, separators=(",", ":")).encode(), url=True) + "." + pick(rng, URL, 22)


def jfrog_reference(rng: Rng) -> str:
    """A JFrog reference token: base64 of `reftkn:01:<expiry>:<random>`, no `+` or `/` (64 characters)."""
    while True:
        text = f"reftkn:01:{rng.randint(1_800_000_000, 2_000_000_000)}:" + pick(rng, A62, 27)
        out = b64(text.encode())
        if "+" not in out and "/" not in out:
            return out


def authress(rng: Rng) -> str:
    """An Authress service client access key: client id, key id, account, then an Ed25519 PKCS#8 key in base64."""
    key = bytes.fromhex("302e020100300506032b657004220420") + rng.randbytes(32)
    return (f"sc_{pick(rng, LOW36, 22)}.{pick(rng, LOW36, 4)}.acc_{pick(rng, LOW36, 15)}."
            + b64(key, pad=True))


def vault_service(rng: Rng) -> str:
    """A Vault 1.10+ service token: `hvs.` and base64url of its protobuf (`CAES…`), about 95 characters."""
    return "hvs.CAESI" + pick(rng, URL, 86)


def dropbox_long(rng: Rng) -> str:
    """A Dropbox long-lived token: 11 characters, ten `A`s (its zero bytes in base64), 43 more."""
    return pick(rng, A62, 11) + "A" * 10 + pick(rng, URL, 43)


def twitter_bearer(rng: Rng) -> str:
    """An X (Twitter) app-only bearer token: 22 `A`s, then about 90 characters with `%` escapes."""
    body = pick(rng, A62, 40) + "%3D" + pick(rng, A62, 49)
    return "A" * 22 + body


def slack_bot(rng: Rng) -> str:
    return f"xoxb-{pick(rng, string.digits, 12)}-{pick(rng, string.digits, 13)}-{pick(rng, A62, 24)}"


def slack_app(rng: Rng) -> str:
    return f"xapp-1-A{pick(rng, UP36, 10)}-{pick(rng, string.digits, 13)}-{pick(rng, HEX, 64)}"


def openai(kind: str) -> Make:
    return parts(f"sk-{kind}-", (URL, 74), "T3BlbkFJ", (URL, 74))


def telegram(rng: Rng) -> str:
    return f"{rng.randint(10**9, 8 * 10**9)}:AA{pick(rng, URL, 33)}"


def _f(provider: str, name: str, env: str, make: Make, shape: str) -> Format:
    return Format(provider, name, env, make, shape)


FORMATS: tuple[Format, ...] = (
    _f("1password", "secret key", "OP_SECRET_KEY",
       parts("A3-", (UP36, 6), "-", (UP36, 6), "-", (UP36, 5), "-", (UP36, 5), "-", (UP36, 5), "-", (UP36, 5)),
       r"A3-[A-Z0-9]{6}-[A-Z0-9]{6}(?:-[A-Z0-9]{5}){4}"),
    _f("1password", "service account token", "OP_SERVICE_ACCOUNT_TOKEN", onepassword_service,
       r"ops_eyJ[A-Za-z0-9+/]{250,}"),
    _f("adobe", "client secret", "ADOBE_CLIENT_SECRET", parts("p8e-", (A62, 32)), r"p8e-[A-Za-z0-9]{32}"),
    _f("age", "identity", "SOPS_AGE_KEY", age_identity, r"AGE-SECRET-KEY-1[02-9AC-HJ-NP-Z]{58}"),
    _f("alibaba", "access key id", "ALIBABA_CLOUD_ACCESS_KEY_ID", parts("LTAI", (A62, 20)), r"LTAI[A-Za-z0-9]{20}"),
    _f("anthropic", "api key", "ANTHROPIC_API_KEY", parts("sk-ant-api03-", (URL, 93), "AA"),
       r"sk-ant-api03-[A-Za-z0-9_-]{93}AA"),
    _f("anthropic", "admin key", "ANTHROPIC_ADMIN_KEY", parts("sk-ant-admin01-", (URL, 93), "AA"),
       r"sk-ant-admin01-[A-Za-z0-9_-]{93}AA"),
    _f("artifactory", "api key", "ARTIFACTORY_API_KEY", parts("AKCp", (A62, 69)), r"AKCp[A-Za-z0-9]{69}"),
    _f("artifactory", "reference token", "JFROG_ACCESS_TOKEN", jfrog_reference, r"cmVmd[A-Za-z0-9]{59}"),
    _f("atlassian", "api token", "JIRA_API_TOKEN", atlassian, r"ATATT3xFfGF0[A-Za-z0-9_-]{171}=[0-9A-F]{8}"),
    _f("authress", "service client access key", "AUTHRESS_KEY", authress,
       r"sc_[a-z0-9]{22}\.[a-z0-9]{4}\.acc_[a-z0-9]{15}\.MC4CAQAwBQYDK2VwBCIEI[A-Za-z0-9+/]{43}"),
    _f("aws", "access key id", "AWS_ACCESS_KEY_ID", parts("AKIA", ("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)),
       r"AKIA[A-Z2-7]{16}"),
    _f("azure", "client secret", "AZURE_CLIENT_SECRET",
       parts((A62 + "_~.", 3), (string.digits, 1), "Q~", (A62 + "_~.-", 34)), r"[\w~.]{3}\dQ~[\w~.-]{34}"),
    _f("clickhouse", "cloud api secret", "CLICKHOUSE_TOKEN_SECRET", parts("4b1d", (A62, 38)),
       r"4b1d[A-Za-z0-9]{38}"),
    _f("clojars", "deploy token", "CLOJARS_PASSWORD", parts("CLOJARS_", (LOW36, 60)), r"CLOJARS_[a-z0-9]{60}"),
    _f("cloudflare", "origin ca key", "CLOUDFLARE_API_USER_SERVICE_KEY", parts("v1.0-", (HEX, 24), "-", (HEX, 146)),
       r"v1\.0-[0-9a-f]{24}-[0-9a-f]{146}"),
    _f("databricks", "personal access token", "DATABRICKS_TOKEN", parts("dapi", (HEX, 32)), r"dapi[0-9a-f]{32}"),
    _f("defined networking", "api key", "DN_API_KEY", parts("dnkey-", (UP36, 26), "-", (UP36, 52)),
       r"dnkey-[A-Z0-9]{26}-[A-Z0-9]{52}"),
    _f("digitalocean", "personal access token", "DIGITALOCEAN_ACCESS_TOKEN", parts("dop_v1_", (HEX, 64)),
       r"dop_v1_[0-9a-f]{64}"),
    _f("digitalocean", "oauth token", "DIGITALOCEAN_ACCESS_TOKEN", parts("doo_v1_", (HEX, 64)),
       r"doo_v1_[0-9a-f]{64}"),
    _f("digitalocean", "refresh token", "DIGITALOCEAN_REFRESH_TOKEN", parts("dor_v1_", (HEX, 64)),
       r"dor_v1_[0-9a-f]{64}"),
    _f("doppler", "personal token", "DOPPLER_TOKEN", parts("dp.pt.", (A62, 43)), r"dp\.pt\.[A-Za-z0-9]{43}"),
    _f("doppler", "service token", "DOPPLER_TOKEN", parts("dp.st.prd.", (A62, 43)),
       r"dp\.st\.prd\.[A-Za-z0-9]{43}"),
    _f("doppler", "service account token", "DOPPLER_TOKEN", parts("dp.sa.", (A62, 43)),
       r"dp\.sa\.[A-Za-z0-9]{43}"),
    _f("dropbox", "short-lived token", "DROPBOX_ACCESS_TOKEN", parts("sl.", (URL, 135)), r"sl\.[\w-]{135}"),
    _f("dropbox", "long-lived token", "DROPBOX_ACCESS_TOKEN", dropbox_long, r"[A-Za-z0-9]{11}A{10}[\w-]{43}"),
    _f("duffel", "live token", "DUFFEL_ACCESS_TOKEN", parts("duffel_live_", (URL, 43)), r"duffel_live_[\w-]{43}"),
    _f("duffel", "test token", "DUFFEL_ACCESS_TOKEN", parts("duffel_test_", (URL, 43)), r"duffel_test_[\w-]{43}"),
    _f("dynatrace", "api token", "DT_API_TOKEN", parts("dt0c01.", (UP36, 24), ".", (UP36, 64)),
       r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}"),
    _f("easypost", "production key", "EASYPOST_API_KEY", parts("EZAK", (LOW36, 54)), r"EZAK[a-z0-9]{54}"),
    _f("easypost", "test key", "EASYPOST_API_KEY", parts("EZTK", (LOW36, 54)), r"EZTK[a-z0-9]{54}"),
    _f("facebook", "page access token", "PAGE_ACCESS_TOKEN", parts("EAAC", (A62, 180)), r"EAAC[A-Za-z0-9]{180}"),
    _f("flutterwave", "secret key", "FLW_SECRET_KEY", parts("FLWSECK-", (HEX, 32), "-X"), r"FLWSECK-[0-9a-f]{32}-X"),
    _f("flutterwave", "test secret key", "FLW_SECRET_KEY", parts("FLWSECK_TEST-", (HEX, 32), "-X"),
       r"FLWSECK_TEST-[0-9a-f]{32}-X"),
    _f("flutterwave", "encryption key", "FLW_ENCRYPTION_KEY", parts("FLWSECK_TEST", (HEX, 12)),
       r"FLWSECK_TEST[0-9a-f]{12}"),
    _f("fly.io", "org token", "FLY_API_TOKEN", parts("fm2_", (B64, 220), "=="), r"fm2_[A-Za-z0-9+/]{220}=="),
    _f("fly.io", "oauth token", "FLY_API_TOKEN", parts("fo1_", (URL, 43)), r"fo1_[\w-]{43}"),
    _f("frame.io", "developer token", "FRAMEIO_TOKEN", parts("fio-u-", (URL, 64)), r"fio-u-[\w-]{64}"),
    _f("gcp", "api key", "GOOGLE_API_KEY", parts("AIza", (URL, 35)), r"AIza[\w-]{35}"),
    _f("github", "personal access token", "GITHUB_TOKEN", github("ghp_"), r"ghp_[A-Za-z0-9]{36}"),
    _f("github", "oauth token", "GH_TOKEN", github("gho_"), r"gho_[A-Za-z0-9]{36}"),
    _f("github", "app installation token", "GITHUB_TOKEN", github("ghs_"), r"ghs_[A-Za-z0-9]{36}"),
    _f("github", "fine-grained pat", "GITHUB_TOKEN", parts("github_pat_11", (UP36, 20), "_", (A62, 59)),
       r"github_pat_\w{82}"),
    _f("gitlab", "personal access token", "GITLAB_TOKEN", parts("glpat-", (URL, 20)), r"glpat-[\w-]{20}"),
    _f("gitlab", "routable personal access token", "GITLAB_TOKEN",
       parts("glpat-", (URL, 36), ".01", (LOW36, 7)), r"glpat-[\w-]{36}\.01[a-z0-9]{7}"),
    _f("gitlab", "pipeline trigger token", "GITLAB_TRIGGER_TOKEN", parts("glptt-", (HEX, 40)),
       r"glptt-[0-9a-f]{40}"),
    _f("gitlab", "runner token", "CI_SERVER_TOKEN", parts("glrt-", (URL, 20)), r"glrt-[\w-]{20}"),
    _f("gitlab", "runner registration token", "REGISTRATION_TOKEN", parts("GR1348941", (URL, 20)),
       r"GR1348941[\w-]{20}"),
    _f("gitlab", "agent token", "GITLAB_AGENT_TOKEN", parts("glagent-", (URL, 50)), r"glagent-[\w-]{50}"),
    _f("grafana", "service account token", "GRAFANA_SERVICE_ACCOUNT_TOKEN",
       parts("glsa_", (A62, 32), "_", (HEX, 8)), r"glsa_[A-Za-z0-9]{32}_[0-9a-f]{8}"),
    _f("grafana", "cloud access policy token", "GRAFANA_CLOUD_ACCESS_POLICY_TOKEN", grafana_cloud,
       r"glc_eyJ[A-Za-z0-9+/]{60,400}={0,2}"),
    _f("grafana", "api key", "GRAFANA_API_KEY", grafana_api_key, r"eyJrIjoi[A-Za-z0-9+/]{50,400}={0,2}"),
    _f("harness", "personal access token", "HARNESS_PLATFORM_API_KEY",
       parts("pat.", (URL, 22), ".", (A62, 24), ".", (A62, 20)), r"pat\.[\w-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}"),
    _f("harness", "service account token", "HARNESS_PLATFORM_API_KEY",
       parts("sat.", (URL, 22), ".", (A62, 24), ".", (A62, 20)), r"sat\.[\w-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}"),
    _f("hashicorp terraform", "api token", "TFE_TOKEN", parts((A62, 14), ".atlasv1.", (URL, 67)),
       r"[A-Za-z0-9]{14}\.atlasv1\.[\w-]{67}"),
    _f("heroku", "api key", "HEROKU_API_KEY", parts("HRKU-AA", (URL, 58)), r"HRKU-AA[\w-]{58}"),
    _f("huggingface", "access token", "HF_TOKEN", parts("hf_", (LETTERS, 34)), r"hf_[A-Za-z]{34}"),
    _f("huggingface", "organization token", "HF_TOKEN", parts("api_org_", (LETTERS, 34)), r"api_org_[A-Za-z]{34}"),
    _f("infracost", "api key", "INFRACOST_API_KEY", parts("ico-", (A62, 32)), r"ico-[A-Za-z0-9]{32}"),
    _f("intra42", "client secret", "INTRA_CLIENT_SECRET", parts("s-s4t2ud-", (HEX, 64)), r"s-s4t2ud-[0-9a-f]{64}"),
    _f("linear", "api key", "LINEAR_API_KEY", parts("lin_api_", (A62, 40)), r"lin_api_[A-Za-z0-9]{40}"),
    _f("mailchimp", "api key", "MAILCHIMP_API_KEY", parts((HEX, 32), "-us", (string.digits, 2)),
       r"[0-9a-f]{32}-us\d{2}"),
    _f("mailgun", "private api key", "MAILGUN_API_KEY", parts("key-", (HEX, 32)), r"key-[0-9a-f]{32}"),
    _f("mapbox", "secret token", "MAPBOX_DOWNLOADS_TOKEN", mapbox_secret, r"sk\.eyJ1Ijoi[\w-]{40,80}\.[\w-]{22}"),
    _f("maxmind", "license key", "MAXMIND_LICENSE_KEY", parts((A62, 6), "_", (A62, 29), "_mmk"),
       r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk"),
    _f("new relic", "user api key", "NEW_RELIC_API_KEY", parts("NRAK-", (UP36, 27)), r"NRAK-[A-Z0-9]{27}"),
    _f("notion", "integration token", "NOTION_TOKEN", parts("ntn_", (string.digits, 11), (A62, 35)),
       r"ntn_\d{11}[A-Za-z0-9]{35}"),
    _f("npm", "access token", "NPM_TOKEN", github("npm_"), r"npm_[A-Za-z0-9]{36}"),
    _f("octopus deploy", "api key", "OCTOPUS_API_KEY", parts("API-", (UP36, 26)), r"API-[A-Z0-9]{26}"),
    _f("openai", "project key", "OPENAI_API_KEY", openai("proj"), r"sk-proj-[\w-]{74}T3BlbkFJ[\w-]{74}"),
    _f("openai", "service account key", "OPENAI_API_KEY", openai("svcacct"), r"sk-svcacct-[\w-]{74}T3BlbkFJ[\w-]{74}"),
    _f("openai", "admin key", "OPENAI_ADMIN_KEY", openai("admin"), r"sk-admin-[\w-]{74}T3BlbkFJ[\w-]{74}"),
    _f("openshift", "user token", "K8S_AUTH_API_KEY", parts("sha256~", (URL, 43)), r"sha256~[\w-]{43}"),
    _f("perplexity", "api key", "PERPLEXITY_API_KEY", parts("pplx-", (A62, 48)), r"pplx-[A-Za-z0-9]{48}"),
    _f("planetscale", "service token", "PLANETSCALE_SERVICE_TOKEN", parts("pscale_tkn_", (URL, 43)),
       r"pscale_tkn_[\w-]{43}"),
    _f("planetscale", "password", "DATABASE_PASSWORD", parts("pscale_pw_", (URL, 43)), r"pscale_pw_[\w-]{43}"),
    _f("planetscale", "oauth token", "PLANETSCALE_TOKEN", parts("pscale_oauth_", (URL, 43)),
       r"pscale_oauth_[\w-]{43}"),
    _f("plaid", "access token", "PLAID_ACCESS_TOKEN",
       parts("access-production-", (HEX, 8), "-", (HEX, 4), "-4", (HEX, 3), "-a", (HEX, 3), "-", (HEX, 12)),
       r"access-production-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-a[0-9a-f]{3}-[0-9a-f]{12}"),
    _f("postman", "api key", "POSTMAN_API_KEY", parts("PMAK-", (HEX, 24), "-", (HEX, 34)),
       r"PMAK-[0-9a-f]{24}-[0-9a-f]{34}"),
    _f("prefect", "api key", "PREFECT_API_KEY", parts("pnu_", (A62, 36)), r"pnu_[A-Za-z0-9]{36}"),
    _f("pulumi", "access token", "PULUMI_ACCESS_TOKEN", parts("pul-", (HEX, 40)), r"pul-[0-9a-f]{40}"),
    _f("pypi", "api token", "TWINE_PASSWORD", pypi, r"pypi-AgEIcHlwaS5vcmc[\w-]{50,1000}"),
    _f("readme", "api key", "README_API_KEY", parts("rdme_", (LOW36, 70)), r"rdme_[a-z0-9]{70}"),
    _f("rubygems", "api key", "GEM_HOST_API_KEY", parts("rubygems_", (HEX, 48)), r"rubygems_[0-9a-f]{48}"),
    _f("scalingo", "api token", "SCALINGO_API_TOKEN", parts("tk-us-", (URL, 48)), r"tk-us-[\w-]{48}"),
    _f("sendgrid", "api key", "SENDGRID_API_KEY", parts("SG.", (URL, 22), ".", (URL, 43)),
       r"SG\.[\w-]{22}\.[\w-]{43}"),
    _f("brevo", "api key", "BREVO_API_KEY", parts("xkeysib-", (HEX, 64), "-", (A62, 16)),
       r"xkeysib-[0-9a-f]{64}-[A-Za-z0-9]{16}"),
    _f("brevo", "smtp key", "SMTP_PASSWORD", parts("xsmtpsib-", (HEX, 64), "-", (A62, 16)),
       r"xsmtpsib-[0-9a-f]{64}-[A-Za-z0-9]{16}"),
    _f("sentry", "user token", "SENTRY_AUTH_TOKEN", parts("sntryu_", (HEX, 64)), r"sntryu_[0-9a-f]{64}"),
    _f("sentry", "organization token", "SENTRY_AUTH_TOKEN", sentry_org,
       r"sntrys_eyJpYXQiO[A-Za-z0-9+/]{60,300}_[A-Za-z0-9+/]{43}"),
    _f("settlemint", "personal access token", "SETTLEMINT_ACCESS_TOKEN", parts("sm_pat_", (A62, 16)),
       r"sm_pat_[A-Za-z0-9]{16}"),
    _f("settlemint", "application access token", "SETTLEMINT_ACCESS_TOKEN", parts("sm_aat_", (A62, 16)),
       r"sm_aat_[A-Za-z0-9]{16}"),
    _f("shippo", "live token", "SHIPPO_API_KEY", parts("shippo_live_", (HEX, 40)), r"shippo_live_[0-9a-f]{40}"),
    _f("shopify", "admin access token", "SHOPIFY_ACCESS_TOKEN", parts("shpat_", (HEX, 32)), r"shpat_[0-9a-f]{32}"),
    _f("shopify", "shared secret", "SHOPIFY_API_SECRET", parts("shpss_", (HEX, 32)), r"shpss_[0-9a-f]{32}"),
    _f("shopify", "custom app token", "SHOPIFY_ACCESS_TOKEN", parts("shpca_", (HEX, 32)), r"shpca_[0-9a-f]{32}"),
    _f("slack", "bot token", "SLACK_BOT_TOKEN", slack_bot, r"xoxb-\d{12}-\d{13}-[A-Za-z0-9]{24}"),
    _f("slack", "app-level token", "SLACK_APP_TOKEN", slack_app, r"xapp-1-A[A-Z0-9]{10}-\d{13}-[0-9a-f]{64}"),
    _f("sourcegraph", "access token", "SRC_ACCESS_TOKEN", parts("sgp_", (HEX, 16), "_", (HEX, 40)),
       r"sgp_[0-9a-f]{16}_[0-9a-f]{40}"),
    _f("square", "access token", "SQUARE_ACCESS_TOKEN", parts("EAAA", (URL, 60)), r"EAAA[\w-]{60}"),
    _f("square", "application secret", "SQUARE_APPLICATION_SECRET", parts("sq0csp-", (URL, 43)),
       r"sq0csp-[\w-]{43}"),
    _f("stripe", "secret key", "STRIPE_SECRET_KEY", parts("sk_live_", (A62, 99)), r"sk_live_[A-Za-z0-9]{99}"),
    _f("stripe", "restricted key", "STRIPE_API_KEY", parts("rk_live_", (A62, 99)), r"rk_live_[A-Za-z0-9]{99}"),
    _f("telegram", "bot token", "TELEGRAM_BOT_TOKEN", telegram, r"\d{10}:AA[\w-]{33}"),
    _f("twilio", "api key sid", "TWILIO_API_KEY", parts("SK", (HEX, 32)), r"SK[0-9a-f]{32}"),
    _f("twitter", "bearer token", "TWITTER_BEARER_TOKEN", twitter_bearer, r"A{22}[A-Za-z0-9%]{90,100}"),
    _f("typeform", "personal token", "TYPEFORM_TOKEN", parts("tfp_", (URL, 44), "_", (A62, 14)),
       r"tfp_[\w-]{44}_[A-Za-z0-9]{14}"),
    _f("vault", "service token", "VAULT_TOKEN", vault_service, r"hvs\.CAESI[\w-]{86}"),
    _f("vault", "batch token", "VAULT_TOKEN", parts("hvb.AAAAAQ", (URL, 150)), r"hvb\.AAAAAQ[\w-]{150}"),
    _f("yandex", "api key", "YC_API_KEY", parts("AQVN", (URL, 36)), r"AQVN[\w-]{36}"),
    _f("yandex", "iam token", "YC_TOKEN", parts("t1.9euelZ", (URL, 100), ".", (URL, 86)),
       r"t1\.9euelZ[\w-]{100}\.[\w-]{86}"),
)


def _templates(value: str, env: str, i: int) -> list[tuple[str, str]]:
    """The value in three carriers: a log line with no label, a JSON config, a shell export."""
    ts = f"2025-06-1{i}T0{i}:4{i}:2{i}Z"
    line = (f"{ts} INFO sync worker-{i + 2} replayed batch {410 + i} with {value} in {180 + 7 * i} ms",
            f"{ts} DEBUG upstream accepted {value} (attempt {i + 1})",
            f"[{ts}] retry scheduled: {value} -> 503, backing off {2 ** i}s")[i % 3]
    config = json.dumps({"name": f"deploy-{i}", "value": value, "enabled": True}, indent=2)
    shell = f"$ export {env}={value}\n$ ./bin/sync --dry-run"
    return [("log", line), ("json", config), ("shell", shell)]


@dataclass(frozen=True)
class Case:
    provider: str
    format: str
    carrier: str
    value: str
    text: str


def generate(seed: int = 20250617) -> list[Case]:
    """Three values per format, each in three carriers."""
    cases = []
    for n, fmt in enumerate(FORMATS):
        rng = random.Random(seed * 1000 + n)
        for i in range(3):
            value = fmt.make(rng)
            cases += [Case(fmt.provider, fmt.name, carrier, value, text)
                      for carrier, text in _templates(value, fmt.env, i)]
    return cases


def score(cases: list[Case]) -> tuple[dict[str, tuple[int, int]], list[Case]]:
    """(found, written) per provider, and the cases missed: redacted as ingest redacts a text, a value missed where
    eight of its characters in a row survive (`benchmarks/redact.py`'s `survives`, as every corpus is judged)."""
    from benchmarks.redact import survives
    from tracegym.redact.detect import Detector
    from tracegym.redact.pseudonyms import Pseudonyms
    from tracegym.redact.tables import Redactor
    redactor = Redactor(Detector(), lambda _trace: Pseudonyms(), Pseudonyms, {})
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    missed = []
    for case in cases:
        per[case.provider][1] += 1
        if survives(case.value, case.text, redactor.text(case.text, is_json=case.carrier == "json")):
            missed.append(case)
        else:
            per[case.provider][0] += 1
    return {k: (v[0], v[1]) for k, v in per.items()}, missed


def main() -> None:
    cases = generate()
    per, missed = score(cases)
    by_format: dict[tuple[str, str], list[str]] = defaultdict(list)
    for case in missed:
        by_format[(case.provider, case.format)].append(case.carrier)
    for provider, (found, total) in sorted(per.items()):
        print(f"  {provider:22s} {found / total:6.3f} {found:3d}/{total}", flush=True)
    for (provider, name), carriers in sorted(by_format.items()):
        print(f"  missed {provider} {name}: {len(carriers)} ({', '.join(sorted(set(carriers)))})", flush=True)
    found = sum(f for f, _ in per.values())
    print(json.dumps({"providers": len(per), "values": len({c.value for c in cases}), "cases": len(cases),
                      "recall": round(found / len(cases), 4),
                      "missed_providers": sorted(p for p, (f, t) in per.items() if f < t)}))


if __name__ == "__main__":
    main()
