"""A held-out redaction corpus: values written from the public formats of each kind, by someone who had not read
tracegym's rules, the other corpus (redact_corpus.py) or the rule lists of docs/redaction.md.

Each case is a value generated from its format's published description (the source is cited beside each
generator), written the way real carriers hold it (an env file, docker-compose YAML, a Kubernetes Secret's
`stringData`, a JSON config, a CLI invocation in a bash tool call, a stack trace, an HTTP request log, a CSV row,
a support chat, a markdown table), then carried the way a store holds it: message or tool-result text, or inside
the JSON text of tool-call arguments or metadata. `secret` is the part that must not survive, as written in `text`.

Out of scope on purpose: base64-encoded values (a Secret's `data:`, basic-auth headers are encoded forms of the
value, not the value), names and street addresses, dates of birth, passwords outside connection URLs.

`generate_negatives()` gives near misses written in the same carriers (UUIDs, git SHAs, digests, version strings,
order ids, timestamps, file paths, prices, ISBNs, card numbers that fail Luhn): a finding on them is a false
positive.

Deterministic for a seed. This file is the held-out half of issue 40's benchmark: never change it and the rules
in one commit, and never tune the rules to it without replacing it by a fresh one.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import json
import random
import string
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from benchmarks.corpus_formats import b64url, bban, digits, group, iban_check, luhn_digit, pick

Rng = random.Random
_ALNUM = string.ascii_letters + string.digits
_URLSAFE = _ALNUM + "_-"
_B64 = _ALNUM + "+/"
_HEX = "0123456789abcdef"
_UPPER_ALNUM = string.ascii_uppercase + string.digits


@dataclass(frozen=True)
class Case:
    kind: str
    text: str
    """The value with the context it sits in, before it is carried."""
    secret: str
    """What must not survive, as written in `text`."""
    carrier: str
    """message | tool_result | tool_arguments | metadata"""
    carried: str
    """The text as the store holds it (`text` itself, or JSON text that holds it)."""
    form: str = ""
    """How `text` holds the value (`env`, `k8s`, `curl`, `prose/national`, ...): misses are reported by form."""

    @property
    def is_json(self) -> bool:
        return self.carrier in ("tool_arguments", "metadata")


def _private_ip(rng: Rng) -> str:
    return f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}"


def _clf_time(rng: Rng) -> str:
    return f"{rng.randrange(1, 29):02d}/May/2024:{rng.randrange(24):02d}:{rng.randrange(60):02d}:12 +0000"


# ---------------------------------------------------------------------------------------------------------------
# Placing a value in a carrier. A label is given as words ("aws secret access key") and rendered the way each
# format spells names: UPPER_SNAKE in env files, camelCase in JSON, kebab-case as CLI flags, words in prose.


def _upper(words: str) -> str:
    return words.upper().replace(" ", "_")


def _snake(words: str) -> str:
    return words.lower().replace(" ", "_")


def _camel(words: str) -> str:
    first, *rest = words.lower().split()
    return first + "".join(w.capitalize() for w in rest)


def _kebab(words: str) -> str:
    return words.lower().replace(" ", "-")


def _env(rng: Rng, label: str, v: str) -> str:
    line = rng.choice([f"{_upper(label)}={v}", f'{_upper(label)}="{v}"', f"export {_upper(label)}={v}"])
    return rng.choice(["", "NODE_ENV=production\nPORT=8080\n", "# prod, rotated 2024-04\n"]) + line


def _compose(rng: Rng, label: str, v: str) -> str:
    if rng.random() < 0.5:
        env = f"      - LOG_LEVEL=info\n      - {_upper(label)}={v}"
    else:
        env = f"      LOG_LEVEL: info\n      {_upper(label)}: " + rng.choice([f'"{v}"', v])
    return ("services:\n  api:\n    image: ghcr.io/acme/api:1.4.2\n    environment:\n"
            f"{env}\n    ports:\n      - \"8080:8080\"")


def _k8s(rng: Rng, label: str, v: str) -> str:
    """A Secret written with `stringData` (plain text); `data:` holds base64, out of this corpus's scope."""
    key = rng.choice([_snake(label), _kebab(label), _upper(label)])
    return ("apiVersion: v1\nkind: Secret\nmetadata:\n  name: api-credentials\n  namespace: prod\ntype: Opaque\n"
            f"stringData:\n  {key}: \"{v}\"")


def _json(rng: Rng, label: str, v: str) -> str:
    key = rng.choice([_camel(label), _snake(label)])
    return json.dumps({"service": "billing", "region": "eu-west-1", key: v, "retries": 3}, indent=2,
                      ensure_ascii=False)


def _cli(rng: Rng, label: str, v: str) -> str:
    flag = _kebab(label)
    return rng.choice([f"./bin/sync --env prod --{flag} {v}", f"acme-cli login --{flag}={v} --region eu-west-1",
                       f"docker run --rm -e {_upper(label)}={v} ghcr.io/acme/worker:2.3.0"])


def _code_trace(rng: Rng, label: str, v: str) -> str:
    return ("Traceback (most recent call last):\n  File \"/srv/app/jobs/sync.py\", line 41, in <module>\n"
            f"    client = Client({_snake(label)}=\"{v}\", timeout=30)\n  File \"/srv/app/client.py\", line 88, in "
            "__init__\n    raise AuthError(\"401 Unauthorized\")\nclient.errors.AuthError: 401 Unauthorized")


def _http_log(rng: Rng, label: str, v: str) -> str:
    return (f'{_private_ip(rng)} - - [{_clf_time(rng)}] "GET /api/v2/export?format=csv&{_snake(label)}={v} '
            f'HTTP/1.1" 401 87 "-" "python-requests/2.31.0"')


def _csv(rng: Rng, label: str, v: str) -> str:
    return f"environment,{_snake(label)},created\nstaging,{v},2024-03-02"


def _markdown(rng: Rng, label: str, v: str) -> str:
    return f"| setting | value |\n|---|---|\n| region | eu-west-1 |\n| {label} | `{v}` |"


def _chat(rng: Rng, label: str, v: str) -> str:
    return rng.choice([f"here's the {label}: {v}", f"my {label} is {v} if that helps",
                       f"ok I rotated it, the new {label} = {v}", f"{label} {v} — still getting 401 with it"])


GENERIC: dict[str, Callable[[Rng, str, str], str]] = {
    "env": _env, "compose": _compose, "k8s": _k8s, "json": _json, "cli": _cli, "stacktrace": _code_trace,
    "http_log": _http_log, "csv": _csv, "markdown": _markdown, "chat": _chat}


def _fill(template: str, v: str, rng: Rng) -> str:
    return (template.replace("$IP", _private_ip(rng)).replace("$CLF", _clf_time(rng))
            .replace("$V", v))


def place(rng: Rng, value: str, labels: list[str], own: dict[str, str], generic: tuple[str, ...] = tuple(GENERIC)
          ) -> tuple[str, str, str]:
    """(text, secret as written, form): the value under one of `labels` in one of the `generic` carriers, or in
    one of the kind's own templates (`$V` is the value)."""
    forms = list(generic) + list(own)
    form = rng.choice(forms)
    if form in own:
        text = _fill(own[form], value, rng)
    else:
        text = GENERIC[form](rng, rng.choice(labels), value)
    secret = value if value in text else json.dumps(value, ensure_ascii=False)[1:-1]
    assert secret in text, (form, value)
    return text, secret, form


# ---------------------------------------------------------------------------------------------------------------
# Secrets. Formats from the providers' documentation and their secret-scanning partner listings.


def aws_access_key(rng: Rng) -> tuple[str, str, str]:
    """AWS IAM user guide, "Unique identifier prefixes": AKIA (long-term) and ASIA (temporary) key ids, 20
    characters, the 16 after the prefix from the base32 alphabet."""
    v = rng.choice(["AKIA", "AKIA", "ASIA"]) + pick(rng, string.ascii_uppercase + "234567", 16)
    return place(rng, v, ["aws access key id", "access key id", "aws access key"], {
        "ini": "[default]\naws_access_key_id = $V\nregion = us-east-1",
        "boto3": "s3 = boto3.client('s3', aws_access_key_id='$V', region_name='us-east-1')",
        "aws_cli": "aws configure set aws_access_key_id $V --profile ci"})


def aws_secret_key(rng: Rng) -> tuple[str, str, str]:
    """AWS IAM user guide, "Managing access keys": a 40-character secret access key (base64 alphabet), shown
    with its key id; the forms are ~/.aws/credentials, `aws sts assume-role` output and credentials.csv."""
    v = pick(rng, _B64, 40)
    kid = rng.choice(["AKIA", "ASIA"]) + pick(rng, string.ascii_uppercase + "234567", 16)
    return place(rng, v, ["aws secret access key", "secret access key", "aws secret key"], {
        "ini": f"[prod]\naws_access_key_id = {kid}\naws_secret_access_key = $V",
        "sts_json": json.dumps({"Credentials": {"AccessKeyId": kid, "SecretAccessKey": "$V",
                                                "Expiration": "2024-05-02T11:11:12+00:00"}}, indent=4),
        "credentials_csv": f"Access key ID,Secret access key\n{kid},$V",
        "boto3": f"boto3.Session(aws_access_key_id=\"{kid}\", aws_secret_access_key=\"$V\")",
        "env_pair": f"AWS_ACCESS_KEY_ID={kid}\nAWS_SECRET_ACCESS_KEY=$V\nAWS_DEFAULT_REGION=eu-central-1"})


def github_token(rng: Rng) -> tuple[str, str, str]:
    """GitHub blog, "Behind GitHub's new authentication token formats" (2021): ghp_ (personal), gho_ (OAuth),
    ghu_ (user-to-server), ghs_ (server-to-server), ghr_ (refresh), then 36 base62 characters."""
    v = rng.choice(["ghp_", "ghp_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_"]) + pick(rng, _ALNUM, 36)
    return place(rng, v, ["github token", "gh token", "github pat"], {
        "git_clone": "git clone https://x-access-token:$V@github.com/acme/infra.git",
        "curl": "curl -H \"Authorization: token $V\" https://api.github.com/user/repos",
        "gh_login": "echo $V | gh auth login --with-token"})


def github_pat(rng: Rng) -> tuple[str, str, str]:
    """GitHub docs, fine-grained personal access tokens: `github_pat_`, 22 base62 characters, `_`, 59 more."""
    v = f"github_pat_11{pick(rng, _UPPER_ALNUM, 20)}_{pick(rng, _ALNUM, 59)}"
    return place(rng, v, ["github token", "github pat", "gh token"], {
        "git_remote": "git remote set-url origin https://acme-bot:$V@github.com/acme/web.git",
        "curl": "curl -L -H \"Authorization: Bearer $V\" -H \"X-GitHub-Api-Version: 2022-11-28\" "
                "https://api.github.com/repos/acme/web/actions/runs"})


def gitlab_token(rng: Rng) -> tuple[str, str, str]:
    """GitLab docs, "Token prefixes": glpat- personal access tokens (20 characters), gldt- deploy tokens,
    glrt- runner authentication tokens."""
    v = rng.choice(["glpat-", "glpat-", "glpat-", "glpat-", "gldt-", "glrt-"]) + pick(rng, _URLSAFE, 20)
    return place(rng, v, ["gitlab token", "private token", "ci job token"], {
        "curl": "curl --header \"PRIVATE-TOKEN: $V\" \"https://gitlab.com/api/v4/projects?owned=true\"",
        "git_clone": "git clone https://oauth2:$V@gitlab.example-corp.com/platform/deploy.git"})


def slack_token(rng: Rng) -> tuple[str, str, str]:
    """Slack API docs, "Token types": xoxb- bot tokens, xoxp- user tokens, xapp- app-level tokens."""
    team, user = digits(rng, rng.choice([10, 11, 12, 13])), digits(rng, rng.choice([10, 11, 12, 13]))
    v = rng.choice([f"xoxb-{team}-{user}-{pick(rng, _ALNUM, 24)}",
                    f"xoxp-{team}-{user}-{digits(rng, 13)}-{pick(rng, _HEX, 32)}",
                    f"xapp-1-A{pick(rng, _UPPER_ALNUM, 10)}-{digits(rng, 13)}-{pick(rng, _HEX, 64)}"])
    return place(rng, v, ["slack bot token", "slack token", "slack app token"], {
        "curl": "curl -H \"Authorization: Bearer $V\" -d channel=C024BE91L -d text=deployed "
                "https://slack.com/api/chat.postMessage",
        "python": "app = App(token=\"$V\", signing_secret=os.environ[\"SLACK_SIGNING_SECRET\"])"})


def _url_secret(path: str, text: str, _url: str, form: str) -> tuple[str, str, str]:
    """A webhook URL's secret is its path (ids and token); the provider's host is public, like PEM armour."""
    return text, path, form


def slack_webhook(rng: Rng) -> tuple[str, str, str]:
    """Slack API docs, "Sending messages using incoming webhooks": hooks.slack.com/services/T…/B…/… ."""
    path = f"T{pick(rng, _UPPER_ALNUM, 8)}/B{pick(rng, _UPPER_ALNUM, 10)}/{pick(rng, _ALNUM, 24)}"
    v = f"https://hooks.slack.com/services/{path}"
    return _url_secret(path, *place(rng, v, ["slack webhook url", "webhook url", "alerts webhook"], {
        "curl": "curl -X POST -H 'Content-type: application/json' --data '{\"text\":\"deploy ok\"}' $V",
        "alertmanager": "receivers:\n  - name: ops\n    slack_configs:\n      - api_url: '$V'\n"
                        "        channel: '#ops'"}))


def discord_webhook(rng: Rng) -> tuple[str, str, str]:
    """Discord developer docs, "Execute Webhook": /api/webhooks/{webhook.id}/{webhook.token}; the id is a
    snowflake (17–19 digits), the token 68 URL-safe characters."""
    host = rng.choice(["discord.com", "discord.com", "discordapp.com", "ptb.discord.com"])
    path = f"{digits(rng, rng.choice([18, 19]))}/{pick(rng, _URLSAFE, 68)}"
    v = f"https://{host}/api/webhooks/{path}"
    return _url_secret(path, *place(rng, v, ["discord webhook url", "webhook url", "discord webhook"], {
        "curl": "curl -H \"Content-Type: application/json\" -d '{\"content\": \"build failed\"}' \"$V\""}))


def stripe_key(rng: Rng) -> tuple[str, str, str]:
    """Stripe docs, "API keys": sk_live_ secret and rk_live_ restricted keys (24 characters in older accounts,
    99 in newer ones)."""
    v = rng.choice(["sk_live_", "sk_live_", "rk_live_"]) + pick(rng, _ALNUM, rng.choice([24, 99]))
    return place(rng, v, ["stripe secret key", "stripe api key", "stripe key"], {
        "curl": "curl https://api.stripe.com/v1/charges -u $V: -d amount=2000 -d currency=eur",
        "python": "stripe.api_key = \"$V\""})


def stripe_webhook_secret(rng: Rng) -> tuple[str, str, str]:
    """Stripe docs, "Check the webhook signatures": endpoint signing secrets start whsec_."""
    v = "whsec_" + pick(rng, _ALNUM, 32)
    return place(rng, v, ["stripe webhook secret", "webhook signing secret", "endpoint secret"], {
        "stripe_cli": "> Ready! Your webhook signing secret is $V (^C to quit)"})


def openai_key(rng: Rng) -> tuple[str, str, str]:
    """OpenAI API reference, "Authentication", and GitHub's secret-scanning patterns: legacy sk- keys, sk-proj-
    project keys and sk-svcacct- service-account keys, each holding `T3BlbkFJ` (base64 of "OpenAI")."""
    v = rng.choice([f"sk-{pick(rng, _ALNUM, 20)}T3BlbkFJ{pick(rng, _ALNUM, 20)}",
                    f"sk-proj-{pick(rng, _URLSAFE, 74)}T3BlbkFJ{pick(rng, _URLSAFE, 74)}",
                    f"sk-svcacct-{pick(rng, _URLSAFE, 74)}T3BlbkFJ{pick(rng, _URLSAFE, 74)}"])
    return place(rng, v, ["openai api key", "openai key", "llm api key"], {
        "curl": "curl https://api.openai.com/v1/chat/completions -H \"Content-Type: application/json\" "
                "-H \"Authorization: Bearer $V\" -d '{\"model\": \"gpt-4o-mini\"}'",
        "error": "openai.AuthenticationError: Error code: 401 - {'error': {'message': 'Incorrect API key provided: "
                 "$V.', 'type': 'invalid_request_error', 'code': 'invalid_api_key'}}"})


def anthropic_key(rng: Rng) -> tuple[str, str, str]:
    """Anthropic API docs and GitHub's secret-scanning patterns: sk-ant-api03- keys (93 URL-safe characters
    and `AA`) and sk-ant-admin01- admin keys."""
    v = rng.choice(["sk-ant-api03-", "sk-ant-api03-", "sk-ant-admin01-"]) + pick(rng, _URLSAFE, 93) + "AA"
    return place(rng, v, ["anthropic api key", "claude api key", "anthropic key"], {
        "curl": "curl https://api.anthropic.com/v1/messages -H \"x-api-key: $V\" "
                "-H \"anthropic-version: 2023-06-01\" -H \"content-type: application/json\""})


def google_api_key(rng: Rng) -> tuple[str, str, str]:
    """Google Cloud docs, "Manage API keys": 39 characters, `AIza` and 35 URL-safe characters."""
    v = "AIza" + pick(rng, _URLSAFE, 35)
    return place(rng, v, ["google api key", "maps api key", "firebase api key"], {
        "url": "curl \"https://maps.googleapis.com/maps/api/geocode/json?address=Berlin&key=$V\"",
        "firebase": "const firebaseConfig = {\n  apiKey: \"$V\",\n  authDomain: \"acme-prod.firebaseapp.com\",\n};"})


def twilio(rng: Rng) -> tuple[str, str, str]:
    """Twilio docs, "Auth tokens and how to change them" and "API keys": the 32-hex auth token beside the AC…
    account SID, or an SK… API key SID with its 32-character secret."""
    sid = "AC" + pick(rng, _HEX, 32)
    if rng.random() < 0.7:
        v = pick(rng, _HEX, 32)
        return place(rng, v, ["twilio auth token", "auth token"], {
            "curl": f"curl -X POST https://api.twilio.com/2010-04-01/Accounts/{sid}/Messages.json "
                    f"--data-urlencode \"Body=hi\" -u {sid}:$V",
            "env_pair": f"TWILIO_ACCOUNT_SID={sid}\nTWILIO_AUTH_TOKEN=$V",
            "python": f"client = Client(\"{sid}\", \"$V\")"})
    v = pick(rng, _ALNUM, 32)
    key = "SK" + pick(rng, _HEX, 32)
    return place(rng, v, ["twilio api secret", "api key secret"], {
        "curl": f"curl https://api.twilio.com/2010-04-01/Accounts/{sid}/Calls.json -u {key}:$V",
        "env_pair": f"TWILIO_API_KEY={key}\nTWILIO_API_SECRET=$V"})


def sendgrid_key(rng: Rng) -> tuple[str, str, str]:
    """Twilio SendGrid docs, "API Keys": `SG.`, a 22-character id, `.`, a 43-character secret (69 in all)."""
    v = f"SG.{pick(rng, _URLSAFE, 22)}.{pick(rng, _URLSAFE, 43)}"
    return place(rng, v, ["sendgrid api key", "sendgrid key", "smtp password"], {
        "curl": "curl --request POST --url https://api.sendgrid.com/v3/mail/send "
                "--header 'Authorization: Bearer $V' --header 'Content-Type: application/json'"})


def npm_token(rng: Rng) -> tuple[str, str, str]:
    """GitHub changelog, "New npm access token format" (2021): npm_ and 36 base62 characters."""
    v = "npm_" + pick(rng, _ALNUM, 36)
    return place(rng, v, ["npm token", "npm auth token", "node auth token"], {
        "npmrc": "registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken=$V",
        "npm_config": "npm config set //registry.npmjs.org/:_authToken $V"})


def jwt(rng: Rng) -> tuple[str, str, str]:
    """RFC 7519 / RFC 7515 compact serialisation: base64url(header).base64url(claims).signature; HS256
    signed with HMAC-SHA256, RS256 with a 256-byte signature."""
    alg = rng.choice(["HS256", "RS256"])
    header = {"alg": alg, "typ": "JWT"} | ({"kid": pick(rng, _HEX, 8)} if alg == "RS256" else {})
    iat = 1714600000 + rng.randrange(10**6)
    claims = {"sub": str(uuid.UUID(int=rng.getrandbits(128), version=4)), "iat": iat, "exp": iat + 3600,
              "scope": rng.choice(["read:orders", "openid profile", "admin"])}
    signing = f"{b64url(json.dumps(header).encode())}.{b64url(json.dumps(claims).encode())}"
    if alg == "HS256":
        sig = hmac.new(pick(rng, _ALNUM, 32).encode(), signing.encode(), hashlib.sha256).digest()
    else:
        sig = rng.randbytes(256)
    v = f"{signing}.{b64url(sig)}"
    return place(rng, v, ["access token", "id token", "session token"], {
        "curl": "curl -H \"Authorization: Bearer $V\" https://api.acme.io/v1/orders",
        "cookie": "Set-Cookie: session=$V; Path=/; HttpOnly; Secure; SameSite=Lax",
        "http_log": "$IP - - [$CLF] \"GET /v1/me HTTP/1.1\" 200 512 \"-\" \"okhttp/4.12.0\" auth=\"Bearer $V\""})


_PEM_TYPES = {  # RFC 7468 labels, and the first bytes such keys really begin with (DER / openssh-key-v1)
    "RSA PRIVATE KEY": ("MIIEpAIBAAKCAQEA", 1560, 64),
    "PRIVATE KEY": ("MIIEvgIBADANBgkqhkiG9w0BAQEFAASC", 1590, 64),
    "EC PRIVATE KEY": ("MHcCAQEEI", 220, 64),
    "OPENSSH PRIVATE KEY": ("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAA", 340, 70),
}


def private_key(rng: Rng) -> tuple[str, str, str]:
    """RFC 7468 textual encoding (PKCS#1, PKCS#8, SEC 1 EC keys) and OpenSSH's PROTOCOL.key format: base64 in
    64- (70-) character lines between BEGIN/END armour. `secret` is the body; the armour is not secret."""
    label, (start, length, width) = rng.choice(list(_PEM_TYPES.items()))
    body64 = start + pick(rng, _B64, length - len(start))
    body64 = body64[: len(body64) // 4 * 4 - 2] + "=="
    lines = [body64[i:i + width] for i in range(0, len(body64), width)]
    begin, end = f"-----BEGIN {label}-----", f"-----END {label}-----"
    form = rng.choice(["cat", "env_escaped", "service_account", "k8s_block", "chat"])
    if form == "cat":
        body = "\n".join(lines)
        text = f"$ cat ~/.ssh/id_deploy\n{begin}\n{body}\n{end}\n"
    elif form == "env_escaped":  # dotenv files hold one line with literal \n
        body = "\\n".join(lines)
        text = f'JWT_SIGNING_KEY="{begin}\\n{body}\\n{end}\\n"'
    elif form == "service_account":  # a Google Cloud service-account key file
        body = "\\n".join(lines)
        text = ('{\n  "type": "service_account",\n  "project_id": "acme-prod-4411",\n  "private_key_id": "'
                f'{pick(rng, _HEX, 40)}",\n  "private_key": "{begin}\\n{body}\\n{end}\\n",\n'
                '  "client_email": "deployer@acme-prod-4411.iam.gserviceaccount.com"\n}')
    elif form == "k8s_block":
        body = "\n    ".join(lines)
        text = (f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: tls-key\nstringData:\n  tls.key: |\n    {begin}\n"
                f"    {body}\n    {end}")
    else:
        body = "\n".join(lines)
        text = f"this is the key the vendor sent, does it look right?\n\n```\n{begin}\n{body}\n{end}\n```"
    return text, body, form


def azure_storage(rng: Rng) -> tuple[str, str, str]:
    """Microsoft Learn, "Configure Azure Storage connection strings": AccountKey= holds the 512-bit key in
    base64 (88 characters); Service Bus / Event Hubs strings hold SharedAccessKey= (256-bit, 44 characters)."""
    if rng.random() < 0.7:
        key = base64.b64encode(rng.randbytes(64)).decode()
        account = "st" + pick(rng, string.ascii_lowercase + string.digits, 10)
        v_full = (f"DefaultEndpointsProtocol=https;AccountName={account};AccountKey={key};"
                  "EndpointSuffix=core.windows.net")
    else:
        key = base64.b64encode(rng.randbytes(32)).decode()
        v_full = (f"Endpoint=sb://acme-{pick(rng, string.ascii_lowercase, 6)}.servicebus.windows.net/;"
                  f"SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={key}")
    text, _, form = place(rng, v_full, ["azure storage connection string", "connection string",
                                        "storage connection string"], {
        "az_cli": "az storage blob list --container-name backups --connection-string \"$V\"",
        "appsettings": json.dumps({"ConnectionStrings": {"Storage": "$V"}, "Logging": {"LogLevel": "Warning"}},
                                  indent=2)})
    secret = key if key in text else json.dumps(key)[1:-1]
    return text, secret, form


def _password(rng: Rng) -> str:
    """Passwords as people and generators make them; characters reserved in a URL's userinfo percent-encoded
    (RFC 3986 section 3.2.1)."""
    style = rng.random()
    if style < 0.4:
        return pick(rng, _ALNUM, rng.randrange(16, 33))
    if style < 0.7:
        word = rng.choice(["Sunshine", "hunter", "Kangaroo", "tractor", "Marmelade", "Soleil", "Baltimore"])
        return word + digits(rng, rng.choice([2, 4])) + rng.choice(["!", "%23", "%40", "$", "*"])
    return pick(rng, _ALNUM, 6) + "%2F" + pick(rng, _ALNUM, 6) + "%3D"


def db_url(rng: Rng) -> tuple[str, str, str]:
    """PostgreSQL docs, "Connection URIs" (libpq 34.1.1); MySQL Connector/J and SQLAlchemy URLs; MongoDB
    "Connection String Formats" (mongodb://, mongodb+srv://); the IANA redis:// and rediss:// schemes."""
    pw = _password(rng)
    user = rng.choice(["app", "postgres", "admin", "svc_orders", "root", "default", "reporting"])
    host = rng.choice(["db.internal", "prod-db-1.cxk2a9.eu-west-1.rds.amazonaws.com", "mysql", "localhost",
                       "cluster0.ab1cd.mongodb.net", "redis-14523.c12.us-east-1-2.ec2.cloud.redislabs.com"])
    url = rng.choice([f"postgres://{user}:{pw}@{host}:5432/orders", f"postgresql://{user}:{pw}@{host}/app?sslmode=require",
                      f"postgresql+psycopg2://{user}:{pw}@{host}:5432/analytics",
                      f"mysql://{user}:{pw}@{host}:3306/shop", f"mysql+pymysql://{user}:{pw}@{host}/shop",
                      f"mongodb+srv://{user}:{pw}@{host}/prod?retryWrites=true&w=majority",
                      f"mongodb://{user}:{pw}@{host}:27017/admin?authSource=admin",
                      f"redis://:{pw}@{host}:6379/0", f"rediss://default:{pw}@{host}:6380"])
    text, _, form = place(rng, url, ["database url", "db url", "connection uri", "redis url"], {
        "psql": "psql \"$V\" -c 'select count(*) from orders'",
        "sqlalchemy_error": "sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection to server "
                            "failed: FATAL:  password authentication failed\n  engine = create_engine('$V')",
        "mongosh": "mongosh \"$V\" --eval 'db.users.countDocuments()'",
        "redis_cli": "redis-cli -u $V ping"})
    return text, pw, form


# ---------------------------------------------------------------------------------------------------------------
# Personal data.

_FIRST = ["ana", "jonas", "priya", "liam", "chloe", "mehmet", "olivia", "rahul", "sophie", "tomas", "wei", "fatima"]
_LAST = ["ruiz", "schmidt", "sharma", "oconnor", "dubois", "yilmaz", "brown", "iyer", "martin", "silva", "zhang"]
_DOMAINS = ["gmail.com", "outlook.com", "yahoo.co.uk", "web.de", "orange.fr", "mail.acme-corp.io",
            "eu.support.example.com", "students.uni-heidelberg.de", "company.com.au", "uol.com.br", "proton.me"]
_IDN = ["zoë.müller@bücherei.de", "josé.garcía@correo.españa.es", "用户@例子.广告", "δοκιμή@παράδειγμα.δοκιμή",
        "пользователь@пример.рф", "anaïs@société.fr", "müller@straße.example", "rahul@डाकघर.भारत"]


def _local(rng: Rng) -> str:
    f, last = rng.choice(_FIRST), rng.choice(_LAST)
    return rng.choice([f"{f}.{last}", f"{f[0]}{last}", f"{f}{last}{digits(rng, 2)}", f"{f}_{last}",
                       f"{f}.{last}+orders",
                       f"{f}+{rng.choice(['amazon', 'news', 'billing'])}"])


def email(rng: Rng) -> tuple[str, str, str]:
    """RFC 5322 addr-spec, plus-addressing (RFC 5233 subaddressing), RFC 6531 internationalised addresses
    (IANA's example 用户@例子.广告), case-insensitive domains; in text percent-encoded (RFC 3986) or JSON-escaped
    (RFC 8259 \\u0040) as URLs and serialised payloads inside log lines hold them."""
    style = rng.choice(["plain", "plain", "upper", "idn", "pct", "json_escaped", "subdomain"])
    if style == "idn":
        v = rng.choice(_IDN)
    else:
        v = f"{_local(rng)}@{rng.choice(_DOMAINS)}"
    if style == "upper":
        v = rng.choice([v.upper(), v.title(), v.split("@")[0] + "@" + v.split("@")[1].upper()])
    if style == "subdomain":
        v = f"{_local(rng)}@{rng.choice(['mail', 'eu', 'corp', 'alumni'])}.{rng.choice(_DOMAINS)}"
    if style == "pct":
        v = v.replace("+", "%2B").replace("@", "%40")
        text = rng.choice([f'{_private_ip(rng)} - - [{_clf_time(rng)}] "GET /account/unsubscribe?email={v}&list=7 '
                           'HTTP/1.1" 302 0', f"redirecting to https://app.acme.io/reset?user={v}&t=9f2c",
                           f"mailto link in the footer: mailto:{v}?subject=Refund"])
        return text, v, f"pct/{style}"
    if style == "json_escaped":
        v = v.replace("@", "\\u0040")
        text = rng.choice([f'DEBUG payload={{"customer": {{"email": "{v}", "tier": "gold"}}}}',
                           f"ERROR 422 body: {{\"errors\": [{{\"field\": \"email\", \"value\": \"{v}\"}}]}}"])
        return text, v, f"json_escaped/{style}"
    text, secret, form = _personal(rng, v, ["email", "contact email", "billing email", "e-mail"], [
        "hi, can you send the invoice to $V instead?", "my account is under $V", "$V — that's my login",
        "From: Support <$V>", "please update my address to $V thanks", "Kontakt: $V"])
    return text, secret, f"{form}/{style}"


def _personal(rng: Rng, v: str, labels: list[str], prose: list[str]) -> tuple[str, str, str]:
    """A personal value in a record (a JSON object, a CSV row, a markdown table, a query string: under a label) or
    in a chat sentence (`$V`)."""
    own = {f"chat{i}": p for i, p in enumerate(prose)}
    text, secret, form = place(rng, v, labels, own, ("json", "csv", "markdown", "http_log"))
    return text, secret, "chat" if form.startswith("chat") else form


# Phones: written as people write them. `_phone` places a number with a context word (a label, "call me on")
# or without one (a bare number in a sentence or a CSV cell under an unnamed column).

_PHONE_LABELS = ["phone", "mobile", "phone number", "tel", "contact number", "cell"]
_WITH_CONTEXT = ["call me on $V", "my number is $V", "you can reach me at $V after 5pm", "WhatsApp: $V",
                 "text me on $V please", "ring me: $V", "Tel. $V", "mobile $V — ask for Sam"]
_BARE = ["I'm on $V all afternoon", "it's $V, the office line", "$V (after 6 please)",
         "customer gave $V at checkout", "try $V or my partner's"]


def _phone(rng: Rng, v: str, local: list[str]) -> tuple[str, str, str]:
    if rng.random() < 0.3:
        text = _fill(rng.choice(_BARE), v, rng)
        return text, v, "bare"
    text, secret, form = _personal(rng, v, _PHONE_LABELS, _WITH_CONTEXT + local)
    return text, secret, form


def _nanp_number(rng: Rng) -> tuple[str, str, str]:
    npa = str(rng.randrange(2, 10)) + digits(rng, 2)
    while npa[1:] == "11" or npa[1] == "9":
        npa = str(rng.randrange(2, 10)) + digits(rng, 2)
    nxx = str(rng.randrange(2, 10)) + digits(rng, 2)
    while nxx[1:] == "11":
        nxx = str(rng.randrange(2, 10)) + digits(rng, 2)
    return npa, nxx, digits(rng, 4)


def phone_us_ca(rng: Rng) -> tuple[str, str, str]:
    """NANPA, the North American Numbering Plan: NPA-NXX-XXXX, N = 2–9, no N11 codes; written (415) 555-0132,
    415-555-0132, 415.555.0132, +1 415 555 0132, 1-800-…"""
    a, b, c = _nanp_number(rng)
    style = rng.randrange(8)
    v = [f"({a}) {b}-{c}", f"{a}-{b}-{c}", f"{a}.{b}.{c}", f"{a} {b} {c}", f"{a}{b}{c}", f"+1 {a} {b} {c}",
         f"1-{a}-{b}-{c}", f"+1 ({a}) {b}-{c}"][style]
    text, secret, form = _phone(rng, v, ["call me at $V", "cell: $V"])
    return text, secret, f"{form}/{'intl' if v.startswith('+') else 'national'}{style}"


def phone_uk(rng: Rng) -> tuple[str, str, str]:
    """Ofcom, the National Telephone Numbering Plan: 020 + 8 digits (London), 01xx/011x geographic codes, 07x
    mobiles (071–075, 077–079) with 6-digit subscriber parts; +44 drops the trunk 0, sometimes written (0)."""
    kind = rng.randrange(3)
    if kind == 0:
        n = rng.choice("378") + digits(rng, 7)
        nat, intl = f"020 {n[:4]} {n[4:]}", f"+44 20 {n[:4]} {n[4:]}"
    elif kind == 1:
        code = rng.choice(["0113", "0114", "0115", "0116", "0117", "0118", "0121", "0131", "0141", "0151", "0161"])
        n = str(rng.randrange(2, 10)) + digits(rng, 6)
        nat, intl = f"{code} {n[:3]} {n[3:]}", f"+44 {code[1:]} {n[:3]} {n[3:]}"
    else:
        p = "7" + rng.choice("1234789") + digits(rng, 2)
        n = digits(rng, 6)
        nat, intl = f"0{p} {n}", f"+44 {p} {n}"
    style = rng.randrange(5)
    v = [nat, nat.replace(" ", ""), intl, intl.replace("+44 ", "+44 (0)"), intl.replace(" ", "")][style]
    text, secret, form = _phone(rng, v, ["mob: $V", "give us a bell on $V"])
    return text, secret, f"{form}/{['london', 'geo', 'mobile'][kind]}{style}"


def phone_fr(rng: Rng) -> tuple[str, str, str]:
    """ARCEP, plan national de numérotation: ten digits, 01–05 geographic, 06/07 mobile, 09 non-geographic,
    written in pairs (06 12 34 56 78, 06.12.34.56.78); +33 drops the 0, sometimes kept as (0)."""
    first = rng.choice(["1", "2", "3", "4", "5", "6", "6", "7", "9"])
    second = rng.choice("3456789") if first == "7" else str(rng.randrange(10))
    national = first + second + digits(rng, 7)
    pairs = [national[i:i + 2] for i in range(1, 9, 2)]
    style = rng.randrange(6)
    v = [f"0{first} " + " ".join(pairs), f"0{first}." + ".".join(pairs), f"0{national}",
         f"+33 {first} " + " ".join(pairs), f"+33 (0){first} " + " ".join(pairs), f"0{first}-" + "-".join(pairs)][style]
    text, secret, form = _phone(rng, v, ["Tél. : $V", "mon portable : $V", "appelez-moi au $V"])
    return text, secret, f"{form}/{'mobile' if first in '67' else 'fixe'}{style}"


def phone_de(rng: Rng) -> tuple[str, str, str]:
    """BNetzA Nummernplan: mobiles 015x/016x/017x with 7–8 digits, area codes (030 Berlin, 089 München, 040
    Hamburg, 0221 Köln, 0711 Stuttgart); written per DIN 5008 (030 12345678, +49 30 12345678) and the older
    030/1234567, 0171-1234567 forms."""
    if rng.random() < 0.5:
        code = rng.choice(["151", "152", "157", "160", "162", "170", "171", "172", "175", "176", "177", "179"])
        sub = digits(rng, 7 if code.startswith("17") and rng.random() < 0.5 else 8)
        what = "mobile"
    else:
        code = rng.choice(["30", "89", "40", "221", "711", "69", "351", "511"])
        sub = str(rng.randrange(2, 10)) + digits(rng, rng.choice([6, 7]))
        what = "fest"
    style = rng.randrange(6)
    v = [f"0{code} {sub}", f"0{code}/{sub}", f"0{code}-{sub}", f"+49 {code} {sub}", f"+49 (0){code} {sub}",
         f"0{code} {sub[:3]} {sub[3:]}"][style]
    text, secret, form = _phone(rng, v, ["Telefon: $V", "Handy $V", "Rückruf bitte unter $V"])
    return text, secret, f"{form}/{what}{style}"


def phone_in(rng: Rng) -> tuple[str, str, str]:
    """DoT/TRAI National Numbering Plan: ten-digit mobiles starting 6–9 (written 98765 43210, +91-9876543210,
    098765 43210), landlines with STD codes (011 Delhi, 022 Mumbai, 080 Bengaluru) and 8-digit numbers."""
    if rng.random() < 0.7:
        n = rng.choice("6789") + digits(rng, 9)
        style = rng.randrange(5)
        v = [f"{n[:5]} {n[5:]}", f"+91 {n[:5]} {n[5:]}", f"+91-{n}", f"0{n[:5]} {n[5:]}", n][style]
        what = "mobile"
    else:
        std = rng.choice(["11", "22", "80", "44", "33"])
        n = rng.choice("2345") + digits(rng, 7)
        style = rng.randrange(3)
        v = [f"0{std}-{n[:4]} {n[4:]}", f"+91 {std} {n}", f"0{std} {n}"][style]
        what = "landline"
    text, secret, form = _phone(rng, v, ["my mobile no. is $V", "contact: $V"])
    return text, secret, f"{form}/{what}{style}"


def phone_au(rng: Rng) -> tuple[str, str, str]:
    """ACMA, Telecommunications Numbering Plan 2015: mobiles 04xx xxx xxx, geographic (02|03|07|08) xxxx xxxx;
    +61 drops the 0."""
    if rng.random() < 0.6:
        n = "4" + digits(rng, 8)
        style = rng.randrange(4)
        v = [f"0{n[:3]} {n[3:6]} {n[6:]}", f"0{n}", f"+61 {n[:3]} {n[3:6]} {n[6:]}", f"+61{n}"][style]
        what = "mobile"
    else:
        area, n = rng.choice("2378"), str(rng.randrange(3, 10)) + digits(rng, 7)
        style = rng.randrange(3)
        v = [f"(0{area}) {n[:4]} {n[4:]}", f"0{area} {n[:4]} {n[4:]}", f"+61 {area} {n[:4]} {n[4:]}"][style]
        what = "landline"
    text, secret, form = _phone(rng, v, ["mob: $V", "give us a call on $V"])
    return text, secret, f"{form}/{what}{style}"


def phone_br(rng: Rng) -> tuple[str, str, str]:
    """Anatel numbering plan: two-digit DDD area codes (11 São Paulo, 21 Rio, 31, 41, 51, 61, 71, 81), mobiles
    of nine digits starting 9, landlines of eight starting 2–5; written (11) 91234-5678, +55 11 91234-5678."""
    ddd = rng.choice(["11", "21", "31", "41", "51", "61", "71", "81", "85", "19"])
    if rng.random() < 0.6:
        n, what = "9" + digits(rng, 8), "celular"
        a, b = n[:5], n[5:]
    else:
        n, what = rng.choice("2345") + digits(rng, 7), "fixo"
        a, b = n[:4], n[4:]
    style = rng.randrange(5)
    v = [f"({ddd}) {a}-{b}", f"+55 {ddd} {a}-{b}", f"+55 ({ddd}) {a}-{b}", f"{ddd} {a}{b}", f"+55{ddd}{n}"][style]
    text, secret, form = _phone(rng, v, ["meu celular é $V", "WhatsApp $V", "telefone: $V"])
    return text, secret, f"{form}/{what}{style}"


def ssn(rng: Rng) -> tuple[str, str, str]:
    """SSA, "Social Security Number Randomization" and POMS RM 10201.035: area 001–899 but 666, group 01–99,
    serial 0001–9999; written 123-45-6789, 123 45 6789, 123456789."""
    area = rng.randrange(1, 900)
    while area == 666:
        area = rng.randrange(1, 900)
    a, g, s = f"{area:03d}", f"{rng.randrange(1, 100):02d}", f"{rng.randrange(1, 10000):04d}"
    style = rng.choice(["dash", "dash", "space", "compact"])
    v = {"dash": f"{a}-{g}-{s}", "space": f"{a} {g} {s}", "compact": f"{a}{g}{s}"}[style]
    text, secret, form = _personal(rng, v, ["ssn", "social security number", "ss number", "tax id"], [
        "my SSN is $V", "social security # $V", "SSN: $V, DOB on file", "the last form had $V on it",
        "W-9 attached, TIN $V"])
    return text, secret, f"{form}/{style}"


_BRANDS = [  # (IIN prefixes, lengths, grouping): ISO/IEC 7812 issuer ranges as the networks publish them
    (["4"], [16], [4, 4, 4, 4]), (["51", "52", "53", "54", "55", "2221", "2500", "2720"], [16], [4, 4, 4, 4]),
    (["34", "37"], [15], [4, 6, 5]), (["6011", "644", "65"], [16], [4, 4, 4, 4]),
    (["3528", "3540", "3589"], [16], [4, 4, 4, 4]), (["36", "300", "305"], [14], [4, 6, 4]),
    (["62"], [16, 19], [4, 4, 4, 4, 3]), (["6759", "5018", "6304"], [16], [4, 4, 4, 4]),
]


def card(rng: Rng) -> tuple[str, str, str]:
    """ISO/IEC 7812 numbers with the Luhn check digit; brands Visa, Mastercard (51–55, 2221–2720), Amex
    (34/37, 4-6-5), Discover, JCB (3528–3589), Diners (14 digits, 4-6-4), UnionPay (16–19), Maestro; separated
    by spaces, dashes, dots or nothing."""
    prefixes, lengths, groups = rng.choice(_BRANDS)
    prefix, length = rng.choice(prefixes), rng.choice(lengths)
    body = prefix + digits(rng, length - len(prefix) - 1)
    number = body + luhn_digit(body)
    sep = rng.choice([" ", " ", "-", ".", ""])
    parts, at = [], 0
    for g in groups:
        if at < length:
            parts.append(number[at:at + g])
            at += g
    v = sep.join(parts)
    text, secret, form = _personal(rng, v, ["card number", "credit card", "cc number", "pan"], [
        "charged twice on my card $V, please refund", "Visa $V exp 04/27", "card no. $V",
        "PaymentError: card $V was declined (insufficient_funds)", "can you remove $V from my account?"])
    return text, secret, f"{form}/{'sep' if sep else 'compact'}"


# SWIFT IBAN Registry: country, BBAN structure (n digits, a upper-case letters, c alphanumerics).
_IBAN = {"DE": "8n10n", "GB": "4a6n8n", "FR": "5n5n11c2n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c", "NL": "4a10n",
         "BE": "3n7n2n", "CH": "5n12c", "PL": "8n16n", "AT": "5n11n", "SE": "3n16n1n", "NO": "4n6n1n",
         "IE": "4a6n8n", "PT": "4n4n11n2n", "BR": "8n5n10n1a1c", "TR": "5n1n16c", "AE": "3n16n"}


def iban(rng: Rng) -> tuple[str, str, str]:
    """ISO 13616 with ISO 7064 MOD 97-10 check digits: the BBAN, the country code and 00 rearranged, letters
    as 10–35, check = 98 − n mod 97; printed in groups of four or compact, upper or lower case."""
    cc = rng.choice(list(_IBAN))
    body = bban(rng, _IBAN[cc])
    value = f"{cc}{iban_check(cc, body)}{body}"
    style = rng.choice(["grouped", "grouped", "compact", "lower_compact", "lower_grouped"])
    if "grouped" in style:
        value = group(value, 4, " ")
    if "lower" in style:
        value = value.lower()
    text, secret, form = _personal(rng, value, ["iban", "bank account", "account number", "payout iban"], [
        "please refund to $V", "IBAN: $V (Sparkasse)", "bank details for the transfer: $V", "Kontonummer $V",
        "RIB / IBAN : $V", "payout failed for $V, account closed"])
    return text, secret, f"{form}/{style}"


def _public_ipv4(rng: Rng) -> str:
    """An address outside IANA's special-purpose registries (RFC 6890; `ipaddress`'s `is_global`) and multicast."""
    while True:
        address = ipaddress.IPv4Address(rng.getrandbits(32))
        if address.is_global and not address.is_multicast:
            return str(address)


def ipv4(rng: Rng) -> tuple[str, str, str]:
    """Public IPv4 addresses (docs/redaction.md lists public IPs among the redacted kinds)."""
    v = _public_ipv4(rng)
    return place(rng, v, ["client ip", "remote addr", "source ip"], {
        "nginx": "$V - - [$CLF] \"POST /login HTTP/1.1\" 200 1532 \"-\" \"Mozilla/5.0\"",
        "xff": "X-Forwarded-For: $V, 10.0.0.12",
        "sshd": "sshd[1123]: Failed publickey for deploy from $V port 52144 ssh2",
        "chat_ip": "my home IP is $V, can you whitelist it?"})


def ipv6(rng: Rng) -> tuple[str, str, str]:
    """Global unicast IPv6 (2000::/3, RFC 4291; outside 2001:db8::/32 documentation space), full and RFC 5952
    compressed forms."""
    first = rng.choice(["2a02", "2a01", "2600", "2607", "2804", "2001", "2a00", "2400", "240e", "2c0f"])
    groups = [first] + [f"{rng.getrandbits(16):x}" for _ in range(7)]
    if first == "2001":
        groups[1] = rng.choice(["4860", "67c", "41d0", "1c00"])
    style = rng.choice(["full", "compressed", "compressed", "bracketed"])
    if style != "full":
        groups[3:6] = ["0", "0", "0"]
        v = ":".join(groups[:3]) + "::" + ":".join(groups[6:])
    else:
        v = ":".join(groups)
    if style == "bracketed":
        text = f"curl -v https://[{v}]:8443/health\n*   Trying [{v}]:8443..."
        return text, v, "bracketed"
    text, secret, form = place(rng, v, ["client ip", "remote addr", "peer address"], {
        "nginx": "$V - - [$CLF] \"GET /api/v1/cart HTTP/2.0\" 200 87 \"-\" \"curl/8.5.0\"",
        "sshd": "sshd[998]: Accepted publickey for ops from $V port 60112 ssh2"})
    return text, secret, f"{form}/{style}"


GENERATORS: dict[str, Callable[[Rng], tuple[str, str, str]]] = {
    "aws_access_key": aws_access_key, "aws_secret_key": aws_secret_key, "github_token": github_token,
    "github_pat": github_pat, "gitlab_token": gitlab_token, "slack_token": slack_token,
    "slack_webhook": slack_webhook, "discord_webhook": discord_webhook, "stripe_key": stripe_key,
    "stripe_webhook_secret": stripe_webhook_secret, "openai_key": openai_key, "anthropic_key": anthropic_key,
    "google_api_key": google_api_key, "twilio": twilio, "sendgrid_key": sendgrid_key, "npm_token": npm_token,
    "jwt": jwt, "private_key": private_key, "azure_storage": azure_storage, "db_url_password": db_url,
    "email": email, "phone_us_ca": phone_us_ca, "phone_uk": phone_uk, "phone_fr": phone_fr, "phone_de": phone_de,
    "phone_in": phone_in, "phone_au": phone_au, "phone_br": phone_br, "ssn": ssn, "card": card, "iban": iban,
    "ipv4": ipv4, "ipv6": ipv6,
}
KINDS = tuple(GENERATORS)


# ---------------------------------------------------------------------------------------------------------------
# Near misses: values that look like the kinds above and are none of them.


def _isbn13(rng: Rng) -> str:
    body = "978" + digits(rng, 9)
    check = -sum(int(c) * (3 if i % 2 else 1) for i, c in enumerate(body)) % 10
    return f"{body[:3]}-{body[3]}-{body[4:7]}-{body[7:]}-{check}"


def _bad_luhn_card(rng: Rng) -> str:
    body = rng.choice(["4111", "4242", "5555", "4000"]) + digits(rng, 11)
    bad = str((int(luhn_digit(body)) + rng.randrange(1, 10)) % 10)
    n = body + bad
    return group(n, 4, rng.choice([" ", "-", ""]))


def negatives(rng: Rng) -> list[str]:
    """One of each near miss, in a line a log, config or chat would hold."""
    uid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    sha = pick(rng, _HEX, 40)
    ts = 1714600000 + rng.randrange(10**7)
    return [
        f"request_id={uid} status=200 duration_ms={rng.randrange(5, 900)}",
        f"trace id {uid.replace('-', '')}",
        f"commit {sha}\nDate:   Thu May 2 10:11:12 2024 +0000\n\n    bump deps",
        f"HEAD is now at {sha[:7]} fix flaky test",
        f"image: ghcr.io/acme/api@sha256:{pick(rng, _HEX, 64)}",
        f"{pick(rng, _HEX, 32)}  dist/acme-{rng.randrange(1, 9)}.{rng.randrange(30)}.{rng.randrange(9)}.tar.gz",
        f"torch=={rng.randrange(1, 3)}.{rng.randrange(20)}.{rng.randrange(5)}+cpu, numpy {rng.randrange(1, 3)}."
        f"{rng.randrange(30)}.{rng.randrange(9)}",
        f"Order #{rng.randrange(1000, 99999)} confirmed; Amazon order "
        f"{digits(rng, 3)}-{digits(rng, 7)}-{digits(rng, 7)}",
        f"order_id: ORD-2024-{digits(rng, 6)}, invoice INV-{digits(rng, 8)}",
        f"2024-05-{rng.randrange(1, 29):02d}T{rng.randrange(24):02d}:{rng.randrange(60):02d}:31.{digits(rng, 6)}Z "
        f"ts={ts} ts_ms={ts * 1000 + rng.randrange(1000)}",
        f"  File \"/home/runner/work/acme/acme/src/{pick(rng, string.ascii_lowercase, 6)}/handlers.py\", line "
        f"{rng.randrange(10, 900)}, in post",
        f"C:\\Users\\build\\AppData\\Local\\Temp\\pip-req-build-{pick(rng, string.ascii_lowercase + '0123456789', 8)}",
        f"Total: ${rng.randrange(1, 99)},{digits(rng, 3)}.{digits(rng, 2)} "
        f"(was € {rng.randrange(100, 999)},{digits(rng, 2)})",
        f"ISBN {_isbn13(rng)}",
        f"test card {_bad_luhn_card(rng)} exp 12/30",
    ]


# ---------------------------------------------------------------------------------------------------------------
# Carrying: the text as the store holds it.

CARRIERS = ("message", "tool_result", "tool_arguments", "metadata")


def carry(text: str, carrier: str, rng: Rng) -> str:
    """`text` as a message or tool result among other lines, or inside the JSON of tool arguments (a bash call)
    or of trace metadata."""
    before = rng.choice(["", "Sure — ", "[tool] ", "2024-05-02 10:11:12,345 WARNING ", "> "])
    after = rng.choice(["", "\n", "\nexit status 1", " (ticket 48213)"])
    body = before + text + after
    if carrier in ("message", "tool_result"):
        return body
    if carrier == "tool_arguments":
        return json.dumps({"cmd": body, "cwd": "/srv/app", "timeout_s": 60}, ensure_ascii=False)
    return json.dumps({"source": "zendesk", "ticket": {"id": 48213, "body": body}}, ensure_ascii=rng.random() < 0.5)


def generate(per_kind: int = 120, seed: int = 0) -> list[Case]:
    rng = Rng(f"holdout:{seed}")
    cases = []
    for kind, make in GENERATORS.items():
        for n in range(per_kind):
            text, secret, form = make(rng)
            assert secret in text, (kind, text, secret)
            carrier = CARRIERS[n % len(CARRIERS)]
            cases.append(Case(kind, text, secret, carrier, carry(text, carrier, rng), form))
    return cases


def generate_negatives(seed: int = 0, rounds: int = 20) -> list[tuple[str, str]]:
    """(carrier, carried text) of near misses."""
    rng = Rng(f"holdout-negatives:{seed}")
    out = []
    for n in range(rounds):
        for text in negatives(rng):
            carrier = CARRIERS[n % len(CARRIERS)]
            out.append((carrier, carry(text, carrier, rng)))
    return out
