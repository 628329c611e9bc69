"""The twenty-fourth blind redaction corpus: agent runtimes and the sandboxes they drive, what a team's own agent
logs hold when the agent runs tools. Written from the formats' public specifications by someone who read neither
the detection rules nor the other corpora's values.

Carriers (the `form` head): run logs and event streams of the OpenAI Agents SDK (stream events, function_call items
whose `arguments` is a JSON string inside JSON, Chat Completions `tool_calls`), CrewAI (console and event bus),
AutoGen (console and message JSON), LangGraph (debug stream and checkpoints), smolagents (step panels and memory);
MCP servers' stdio JSON-RPC (`tools/call` requests and results); sandbox output (E2B execution JSON, Modal app
logs, `docker exec`, `docker inspect` Env arrays); coding agents' shell sessions (`printenv`, `cat .env`,
`kubectl get secret -o yaml` with base64 data, `git config -l`, `aws configure`); Jupyter cell outputs (console and
.ipynb JSON); tracebacks that print locals; SQL results as psql prints them; HTTP client debug logs (http.client
`send: b'...'`, httpx, `curl -v`); server-sent event streams; and the agent's final messages to its user in 31
languages, labels in the user's language. About a third is JSON carried (`is_json`).

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37,
Discover 6011/644-649/65, JCB 3528-3589, Diners 36, UnionPay 62) with the Luhn digit; IBANs, ISO 13616 and the
SWIFT IBAN registry's BBAN structures (MOD 97-10); SSNs, the SSA's rules (area not 000/666/9xx, group not 00,
serial not 0000); phones, the national numbering plans (NANP without N11 or 555, Ofcom outside its drama ranges,
ARCEP, BNetzA, TRAI/DoT) with each country's context words; AWS keys, IAM's AKIA/ASIA ids (base32) and
40-character secrets, also as `aws sts` prints them; Slack, Discord, Teams (Office 365 connector and Power Automate
`sig=`), Google Chat, Zapier, Mattermost, Rocket.Chat, DingTalk, Feishu and WeCom webhook URLs as their docs print
them (the secret is the token segment or query value only); Stripe `whsec_` secrets (dashboard and `stripe listen`
forms); URI, ADO.NET, JDBC, ODBC, Azure Storage and Service Bus connection strings (the secret is the password or
key only); JWT (RFC 7519/7515), HTTP Basic (RFC 7617), Bearer (RFC 6750); session cookies as Django, Express,
PHP, Java EE, Flask, Rails, NextAuth (JWE, RFC 7516) and ASP.NET Core set them; OAuth tokens (Google `ya29.` and
`1//`, Dropbox `sl.`, GitHub `gho_`); GitHub `ghp_`/`ghs_`/`github_pat_` (CRC32 checksum); Slack `xoxb-`/`xoxp-`/
`xapp-`; npm `npm_` and PyPI `pypi-` macaroons; OpenAI `sk-proj-`/`sk-svcacct-` (with the `T3BlbkFJ` marker),
Anthropic `sk-ant-api03-`; other providers by their documented prefixes (Groq `gsk_`, Hugging Face `hf_`,
OpenRouter `sk-or-v1-`, xAI `xai-`, Perplexity `pplx-`, Google `AIza`, Replicate `r8_`, LangSmith `lsv2_pt_`,
E2B `e2b_`, Tavily `tvly-`, Firecrawl `fc-`); PEM PKCS#8 and OpenSSH private keys (RFC 7468, OpenSSH
PROTOCOL.key), also inside a GCP service-account JSON; TOTP seeds (RFC 4226/6238 base32, Google's Key Uri Format);
recovery codes (GitHub, Google backup codes, Microsoft 25-character codes, BitLocker's 48 digits in groups that
are multiples of 11, 1Password Secret Keys). National ids (outside the target): French NIR (key 97 - n mod 97),
Italian codice fiscale (odd/even tables), Swedish personnummer (Luhn), Finnish HETU (mod 31), Chinese resident id
(ISO 7064 MOD 11-2), Norwegian fodselsnummer (two mod 11 digits), Indian Aadhaar (Verhoeff).

Judgements: a case's `secret` is only what must not survive (a webhook's token segment, a connection string's
password, a cookie's value, a header's credential, a PEM block's base64 body, a Kubernetes Secret's base64 data
value: decoding it gives the password). A disguised secret is written as the log holds it (zero-width characters,
full-width forms, %-encoding or JSON `\\u` escapes inside) and so is its `secret`. Near misses are what agent
logs hold that is neither secret nor personal: element refs, CSS selectors, XPath, click coordinates, viewport
sizes, timestamps, request/trace/call ids, container and sandbox ids, cache-busting hashes, CSRF field names
without values, placeholders, values the tools themselves mask (`aws configure list`, `gh auth status`,
`npm config list`), version strings, businesses' published service numbers, Luhn-invalid numbers, order and
tracking numbers, git SHAs, pod names, token counts and the AWS docs' EXAMPLE keys.
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import quote

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from benchmarks.corpus_formats import (
    b64url,
    bban,
    crc_token,
    digits,
    group,
    group_card,
    iban_check,
    luhn_digit,
    openssh_ed25519_blob,
    pick,
)

SEED = 24
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"fr_nir", "it_codice_fiscale", "se_personnummer", "fi_hetu", "cn_resident_id",
                            "no_fodselsnummer", "in_aadhaar"})
"""National ids: written and reported, not held to the recall target."""

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
ALNUM = string.ascii_letters + string.digits
LOWNUM = string.ascii_lowercase + string.digits
B32 = string.ascii_uppercase + "234567"
URLSAFE = string.ascii_letters + string.digits + "-_"
HEX = "0123456789abcdef"
PUNCT = "!#$%&*+-.:=?@^_~"


@dataclass(frozen=True)
class Case:
    """One planted value: its kind, `carrier/style` form, the value as written, and the text carrying it."""

    kind: str
    form: str
    secret: str
    text: str
    is_json: bool

    @property
    def carried(self) -> str:
        """The text as it reaches redaction (the carrier already is the stored string)."""
        return self.text


Value = tuple[str, str, str, bool]
"""(style, secret, snippet holding the secret, raw_only: the snippet must not be re-escaped in JSON)."""

Carrier = Callable[[random.Random, str, str], str]
"""(rng, snippet, secret) -> the text that carries the snippet."""


# ---- small draws ----------------------------------------------------------------------------------------------

def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _call_id(rng: random.Random) -> str:
    return "call_" + pick(rng, ALNUM, 24)


def _ts(rng: random.Random) -> str:
    return (f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
            f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}Z")


def _host(rng: random.Random) -> str:
    return rng.choice(["db-primary.internal", "pg.prod.svc.cluster.local", "10.0.3.17", "mysql-0.mysql",
                       "acme-prod.c9xk2lq1.eu-west-1.rds.amazonaws.com", "cache.internal", "rabbitmq.default.svc"])


def _password(rng: random.Random, uri_safe: bool = False) -> str:
    """A password as people and generators write them: word+digits+symbol, random 16-24, or a passphrase."""
    sym = "-_.~" if uri_safe else PUNCT
    style = rng.randrange(3)
    if style == 0:
        word = rng.choice(["Sunflower", "Kestrel", "Marmalade", "Tiramisu", "Falcon", "Orchidee", "Lighthouse",
                           "Papagei", "Quokka", "Nebula", "Zitrone", "Cormorant"])
        return f"{word}{rng.choice(sym)}{digits(rng, 4)}{rng.choice(sym)}"
    if style == 1:
        return pick(rng, ALNUM + sym, rng.randint(16, 24))
    words = ["copper", "violet", "harbor", "juniper", "rocket", "pebble", "saffron", "glacier", "tundra", "walnut"]
    return "-".join(rng.sample(words, 4)) + digits(rng, 2)


# ---- languages: the agent's final message in the user's language ------------------------------------------------

LANGS: dict[str, tuple[str, str, dict[str, str]]] = {}
"""lang -> (opening sentence, label separator, labels by concept)."""

_CONCEPTS = ("password", "key", "phone", "email", "card", "iban", "token", "code")
for _code, _open, _sep, _labels in [
    ("en", "Done - here is what you asked for.", ": ",
     "Password|API key|Phone|Email|Card number|IBAN|Token|Code"),
    ("fr", "C'est fait, voici ce que vous avez demandé.", " : ",
     "Mot de passe|Clé API|Téléphone|E-mail|Numéro de carte|IBAN|Jeton|Code"),
    ("de", "Erledigt, hier ist das Gewünschte.", ": ",
     "Passwort|API-Schlüssel|Telefon|E-Mail|Kartennummer|IBAN|Token|Code"),
    ("es", "Listo, aquí tienes lo que pediste.", ": ",
     "Contraseña|Clave de API|Teléfono|Correo electrónico|Número de tarjeta|IBAN|Token|Código"),
    ("pt", "Pronto, aqui está o que você pediu.", ": ",
     "Senha|Chave de API|Telefone|E-mail|Número do cartão|IBAN|Token|Código"),
    ("it", "Fatto, ecco quanto richiesto.", ": ",
     "Password|Chiave API|Telefono|E-mail|Numero di carta|IBAN|Token|Codice"),
    ("nl", "Klaar, hier is wat je vroeg.", ": ",
     "Wachtwoord|API-sleutel|Telefoon|E-mail|Kaartnummer|IBAN|Token|Code"),
    ("pl", "Gotowe, oto o co prosiłeś.", ": ", "Hasło|Klucz API|Telefon|E-mail|Numer karty|IBAN|Token|Kod"),
    ("sv", "Klart, här är det du bad om.", ": ", "Lösenord|API-nyckel|Telefon|E-post|Kortnummer|IBAN|Token|Kod"),
    ("da", "Færdig, her er det, du bad om.", ": ",
     "Adgangskode|API-nøgle|Telefon|E-mail|Kortnummer|IBAN|Token|Kode"),
    ("nb", "Ferdig, her er det du ba om.", ": ", "Passord|API-nøkkel|Telefon|E-post|Kortnummer|IBAN|Token|Kode"),
    ("fi", "Valmis, tässä pyytämäsi tiedot.", ": ",
     "Salasana|API-avain|Puhelin|Sähköposti|Kortin numero|IBAN|Tunniste|Koodi"),
    ("cs", "Hotovo, tady je, co jste chtěli.", ": ", "Heslo|Klíč API|Telefon|E-mail|Číslo karty|IBAN|Token|Kód"),
    ("hu", "Kész, itt van, amit kért.", ": ", "Jelszó|API-kulcs|Telefon|E-mail|Kártyaszám|IBAN|Token|Kód"),
    ("ro", "Gata, iată ce ați cerut.", ": ", "Parolă|Cheie API|Telefon|E-mail|Număr card|IBAN|Token|Cod"),
    ("tr", "Tamam, istediğiniz bilgiler burada.", ": ",
     "Şifre|API anahtarı|Telefon|E-posta|Kart numarası|IBAN|Token|Kod"),
    ("el", "Έτοιμο, ορίστε αυτό που ζητήσατε.", ": ",
     "Κωδικός πρόσβασης|Κλειδί API|Τηλέφωνο|Email|Αριθμός κάρτας|IBAN|Token|Κωδικός"),
    ("ru", "Готово, вот что вы просили.", ": ", "Пароль|API-ключ|Телефон|Эл. почта|Номер карты|IBAN|Токен|Код"),
    ("uk", "Готово, ось що ви просили.", ": ",
     "Пароль|API-ключ|Телефон|Ел. пошта|Номер картки|IBAN|Токен|Код"),
    ("ja", "完了しました。ご依頼の情報です。", "：",
     "パスワード|APIキー|電話番号|メールアドレス|カード番号|IBAN|トークン|コード"),
    ("ko", "완료했습니다. 요청하신 정보입니다.", ": ", "비밀번호|API 키|전화번호|이메일|카드 번호|IBAN|토큰|코드"),
    ("zh", "已完成，以下是您要的信息。", "：", "密码|API 密钥|电话|邮箱|卡号|IBAN|令牌|代码"),
    ("zh-TW", "完成了，以下是您要的資訊。", "：", "密碼|API 金鑰|電話|電子郵件|卡號|IBAN|權杖|代碼"),
    ("ar", "تم، إليك ما طلبته.", ": ",
     "كلمة المرور|مفتاح API|الهاتف|البريد الإلكتروني|رقم البطاقة|IBAN|الرمز المميز|الرمز"),
    ("he", "בוצע, הנה מה שביקשת.", ": ", "סיסמה|מפתח API|טלפון|אימייל|מספר כרטיס|IBAN|טוקן|קוד"),
    ("hi", "हो गया, यह रही आपकी मांगी गई जानकारी।", ": ", "पासवर्ड|API कुंजी|फ़ोन|ईमेल|कार्ड नंबर|IBAN|टोकन|कोड"),
    ("th", "เรียบร้อยแล้ว นี่คือข้อมูลที่คุณขอ", ": ", "รหัสผ่าน|คีย์ API|โทรศัพท์|อีเมล|หมายเลขบัตร|IBAN|โทเค็น|รหัส"),
    ("vi", "Xong rồi, đây là thông tin bạn cần.", ": ", "Mật khẩu|Khóa API|Điện thoại|Email|Số thẻ|IBAN|Token|Mã"),
    ("id", "Selesai, ini yang Anda minta.", ": ", "Kata sandi|Kunci API|Telepon|Email|Nomor kartu|IBAN|Token|Kode"),
    ("ms", "Siap, ini yang anda minta.", ": ", "Kata laluan|Kunci API|Telefon|E-mel|Nombor kad|IBAN|Token|Kod"),
    ("sw", "Imekamilika, hiki ndicho ulichoomba.", ": ",
     "Nenosiri|Ufunguo wa API|Simu|Barua pepe|Nambari ya kadi|IBAN|Tokeni|Msimbo"),
]:
    LANGS[_code] = (_open, _sep, dict(zip(_CONCEPTS, _labels.split("|"), strict=True)))


def _say(i: int, concept: str, value: str) -> str:
    """The agent's final answer in the language picked by `i`: an opening sentence, then `label: value`."""
    opening, sep, labels = LANGS[list(LANGS)[i % len(LANGS)]]
    return f"{opening}\n{labels[concept]}{sep}{value}"


def _lang(i: int) -> str:
    return list(LANGS)[i % len(LANGS)]


# ---- carriers -------------------------------------------------------------------------------------------------

def _shell(rng: random.Random, snip: str, _s: str) -> str:
    prompt = "agent@sandbox:/workspace$ "
    if snip.startswith("$ "):
        return f"{prompt}{snip[2:]}\n{prompt}"
    cmd = rng.choice(["cat .env", "printenv | sort", "cat config/settings.local", "tail -n 20 deploy.log"])
    home = "HOME=/home/agent\n" if cmd.startswith("printenv") else ""
    return f"{prompt}{cmd}\n{home}{snip}\n{prompt}"


def _e2b_log(rng: random.Random, snip: str, _s: str) -> str:
    return (f"[e2b] sandbox i{pick(rng, LOWNUM, 19)} started (template base, 2 vCPU)\n"
            f"[e2b] commands.run pid={rng.randint(100, 9999)} stdout:\n{snip}\n[e2b] exit_code=0")


def _modal_log(rng: random.Random, snip: str, _s: str) -> str:
    return (f"✓ Initialized. View run at https://modal.com/apps/acme/main/ap-{pick(rng, ALNUM, 22)}\n"
            f"✓ Created objects.\n{snip}\nStopping app - local entrypoint completed.")


def _docker_exec(rng: random.Random, snip: str, _s: str) -> str:
    return (f"$ docker exec -it {rng.choice(['api-1', 'worker-2', 'tools_runner'])} sh -c 'cat /app/.env'\n"
            f"{snip}\n$ echo $?\n0")


def _jupyter(rng: random.Random, snip: str, _s: str) -> str:
    n = rng.randint(2, 40)
    return f"In [{n}]: print(result)\n{snip}\n\nIn [{n + 1}]: "


def _traceback(rng: random.Random, snip: str, _s: str) -> str:
    return ("Traceback (most recent call last):\n"
            f'  File "/workspace/agent/tools.py", line {rng.randint(20, 400)}, in call_tool\n'
            "    return await handler(**arguments)\n"
            "ToolError: upstream returned 401\n"
            f"Locals at frame call_tool:\n    tool_name = 'http_request'\n    observation = '''{snip}'''")


def _http_client(rng: random.Random, snip: str, _s: str) -> str:
    return (f"send: b'POST /v1/{rng.choice(['sync', 'jobs', 'events'])} HTTP/1.1\\r\\nHost: api.internal\\r\\n"
            f"Content-Type: text/plain\\r\\n\\r\\n'\nsend: b'{snip}'\nreply: 'HTTP/1.1 200 OK\\r\\n'")


def _curl(rng: random.Random, snip: str, _s: str) -> str:
    return (f"*   Trying 10.0.{rng.randint(0, 9)}.{rng.randint(2, 250)}:443...\n> POST /hooks HTTP/2\n"
            f"> user-agent: curl/8.5.0\n> content-type: text/plain\n>\n{snip}\n< HTTP/2 204")


def _psql(rng: random.Random, snip: str, _s: str) -> str:
    return (" id  |  kind   | note\n-----+---------+------------------------------\n"
            f" {rng.randint(100, 999)} | config  | {snip}\n(1 row)")


def _crewai(rng: random.Random, snip: str, _s: str) -> str:
    role = rng.choice(["DevOps Engineer", "Research Analyst", "Support Agent"])
    return f"# Agent: {role}\n## Using tool: read_file\n## Tool Input: \n\"{{}}\"\n## Tool Output: \n{snip}"


def _autogen(rng: random.Random, snip: str, _s: str) -> str:
    return ("---------- ToolCallExecutionEvent (assistant) ----------\n"
            f"[FunctionExecutionResult(content='{snip}', name='read_config', call_id='{_call_id(rng)}', "
            "is_error=False)]")


def _smolagents(rng: random.Random, snip: str, _s: str) -> str:
    n = rng.randint(1, 9)
    return (f"━━━━━━━━━━━━━━━━━━━━━━━━ Step {n} ━━━━━━━━━━━━━━━━━━━━━━━━\nExecution logs:\n{snip}\n"
            f"[Step {n}: Duration {rng.uniform(0.5, 9):.2f} seconds| Input tokens: {rng.randint(900, 9000):,}]")


def _langgraph(rng: random.Random, snip: str, _s: str) -> str:
    return (f"[{rng.randint(1, 9)}:tasks] Starting 1 task for step {rng.randint(1, 9)}:\n- tools -> "
            f"{{'messages': [ToolMessage(content='{snip}', tool_call_id='{_call_id(rng)}')]}}")


def _reply(rng: random.Random, snip: str, _s: str) -> str:
    return f"[{_ts(rng)}] assistant (final_output):\n{snip}"


def _sse(rng: random.Random, snip: str, _s: str) -> str:
    return ("event: response.output_text.delta\n"
            f"data: {_dump({'type': 'response.output_text.delta', 'item_id': 'msg_' + pick(rng, HEX, 32)})}\n\n"
            f"event: response.output_text.done\ndata: {snip}\n\n")


def _kubectl_logs(rng: random.Random, snip: str, _s: str) -> str:
    pod = f"agent-runner-{pick(rng, LOWNUM, 9)}-{pick(rng, LOWNUM, 5)}"
    return f"$ kubectl logs {pod} -c sandbox --tail=5\n{snip}\n$ "


TEXT_CARRIERS: dict[str, Carrier] = {
    "shell": _shell, "e2b_log": _e2b_log, "modal_log": _modal_log, "docker_exec": _docker_exec,
    "jupyter": _jupyter, "traceback": _traceback, "http_client": _http_client, "curl_v": _curl, "psql": _psql,
    "crewai_console": _crewai, "autogen_console": _autogen, "smolagents": _smolagents, "langgraph_debug": _langgraph,
    "agent_reply": _reply, "sse_stream": _sse, "kubectl_logs": _kubectl_logs,
}


def _agents_event(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"type": "run_item_stream_event", "name": "tool_output",
                  "item": {"type": "tool_call_output_item", "output": snip,
                           "raw_item": {"type": "function_call_output", "call_id": _call_id(rng)}}})


def _function_call(rng: random.Random, snip: str, _s: str) -> str:
    args = _dump({"path": "notes/handoff.md", "content": snip})
    return _dump({"type": "function_call", "name": "write_file", "call_id": _call_id(rng), "arguments": args,
                  "id": "fc_" + pick(rng, HEX, 40), "status": "completed"})


def _chat_tool_calls(rng: random.Random, snip: str, _s: str) -> str:
    args = _dump({"text": snip, "channel": "#ops"})
    return _dump({"id": "chatcmpl-" + pick(rng, ALNUM, 29), "object": "chat.completion",
                  "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
                               "tool_calls": [{"id": _call_id(rng), "type": "function",
                                               "function": {"name": "post_message", "arguments": args}}]}}]})


def _mcp_result(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"jsonrpc": "2.0", "id": rng.randint(1, 500),
                  "result": {"content": [{"type": "text", "text": snip}], "isError": False}})


def _mcp_request(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"jsonrpc": "2.0", "id": rng.randint(1, 500), "method": "tools/call",
                  "params": {"name": rng.choice(["write_note", "save_memory", "create_issue"]),
                             "arguments": {"body": snip}}})


def _e2b_json(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"results": [], "logs": {"stdout": [snip + "\n"], "stderr": []}, "error": None,
                  "execution_count": rng.randint(1, 30)})


def _docker_inspect(rng: random.Random, snip: str, _s: str) -> str:
    return _dump([{"Id": pick(rng, HEX, 64), "Name": "/api-1",
                   "Config": {"Env": ["PATH=/usr/local/bin:/usr/bin:/bin", snip, "LANG=C.UTF-8"]}}])


def _ipynb(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"cell_type": "code", "execution_count": rng.randint(1, 60), "metadata": {},
                  "outputs": [{"output_type": "stream", "name": "stdout", "text": [snip + "\n"]}],
                  "source": ["print(settings)"]})


def _checkpoint(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"v": 1, "ts": _ts(rng), "id": _uuid(rng),
                  "channel_values": {"messages": [{"type": "tool", "content": snip, "tool_call_id": _call_id(rng)}]}})


def _crewai_event(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"type": "tool_usage_finished", "agent_role": "Ops Engineer", "tool_name": "read_file",
                  "output": snip, "timestamp": _ts(rng)})


def _autogen_json(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"type": "ToolCallExecutionEvent", "source": "assistant",
                  "content": [{"content": snip, "name": "shell", "call_id": _call_id(rng), "is_error": False}]})


def _smol_memory(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"step_number": rng.randint(1, 12), "observations": snip, "error": None,
                  "duration": round(rng.uniform(0.4, 8), 2)})


def _reply_json(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"id": "msg_" + pick(rng, HEX, 48), "type": "message", "role": "assistant",
                  "content": [{"type": "output_text", "text": snip, "annotations": []}]})


JSON_CARRIERS: dict[str, Carrier] = {
    "agents_sdk_event": _agents_event, "function_call": _function_call, "chat_tool_calls": _chat_tool_calls,
    "mcp_result": _mcp_result, "mcp_request": _mcp_request, "e2b_execution": _e2b_json,
    "docker_inspect": _docker_inspect, "ipynb": _ipynb, "langgraph_checkpoint": _checkpoint,
    "crewai_event": _crewai_event, "autogen_json": _autogen_json, "smolagents_memory": _smol_memory,
    "reply_json": _reply_json,
}
NESTED = frozenset({"function_call", "chat_tool_calls"})
"""Carriers that hold the snippet in a JSON string inside JSON: only for secrets JSON writes unescaped."""


# ---- card, IBAN, SSN ------------------------------------------------------------------------------------------

PUBLISHED_TEST_CARDS = frozenset({"4242424242424242", "4111111111111111", "5555555555554444", "378282246310005",
                                  "6011111111111117", "3530111333300000", "5105105105105100", "4012888888881881"})


def _card_number(rng: random.Random) -> str:
    """A number in an ISO/IEC 7812 IIN range with the scheme's length and its Luhn digit."""
    while True:
        prefix, length = rng.choice([
            ("4", 16), (str(rng.randint(51, 55)), 16), (str(rng.randint(2221, 2720)), 16),
            (rng.choice(["34", "37"]), 15), ("6011", 16), (str(rng.randint(644, 649)), 16), ("65", 16),
            (str(rng.randint(3528, 3589)), 16), ("36", 14), ("62", rng.choice([16, 19]))])
        body = prefix + digits(rng, length - len(prefix) - 1)
        number = body + luhn_digit(body)
        if number not in PUBLISHED_TEST_CARDS:
            return number


def card(rng: random.Random, i: int) -> Value:
    number = _card_number(rng)
    printed = group_card(number, rng.choice([" ", "-", ""])) if len(number) <= 16 else number
    exp = f"{rng.randint(1, 12):02d}/{rng.randint(27, 32)}"
    styles = [
        ("browser_type", _dump({"element": "Card number textbox", "ref": f"e{rng.randint(10, 99)}", "text": printed})),
        ("form_fill", f"page.fill('#cardnumber', '{printed}'); page.fill('#exp-date', '{exp}')"),
        ("sql_row", f"customer_id={rng.randint(1000, 99999)} card_number={printed} exp={exp}"),
        ("reply", _say(i, "card", f"{printed} ({exp})")),
        ("ocr_result", f"OCR text from receipt.jpg: VISA/MC {printed} EXP {exp} AUTH OK"),
    ]
    style, snip = styles[i % len(styles)]
    return style, printed, snip, False


IBAN_STRUCTURES = {"DE": "18n", "GB": "4a14n", "FR": "10n11c2n", "ES": "20n", "IT": "1a10n12c", "NL": "4a10n",
                   "BE": "12n", "AT": "16n", "CH": "5n12c", "PL": "24n", "PT": "21n", "IE": "4a14n", "SE": "20n",
                   "NO": "11n", "DK": "14n", "FI": "14n", "CZ": "20n", "RO": "4a16c", "GR": "7n16c", "TR": "5n1n16c"}


def iban(rng: random.Random, i: int) -> Value:
    country = rng.choice(sorted(IBAN_STRUCTURES))
    body = bban(rng, IBAN_STRUCTURES[country])
    compact = country + iban_check(country, body) + body
    printed = group(compact, 4, " ") if i % 2 else compact
    styles = [
        ("payout_args", _dump({"beneficiary_name": "Account holder", "iban": printed, "currency": "EUR"})),
        ("reply", _say(i, "iban", printed)),
        ("invoice_extract", f"Extracted from invoice.pdf -> Bankverbindung / bank details: IBAN {printed}"),
        ("sql_row", f"vendor_id={rng.randint(10, 9999)} iban={printed} bic=DEUTDEFFXXX"),
        ("env", f"PAYOUT_IBAN={compact}"),
    ]
    style, snip = styles[i % len(styles)]
    return style, printed if style != "env" else compact, snip, False


def _ssn(rng: random.Random) -> str:
    while True:
        area = rng.randint(1, 899)
        if area != 666:
            return f"{area:03d}-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}"


def ssn(rng: random.Random, i: int) -> Value:
    value = _ssn(rng)
    written = [value, value.replace("-", " "), value.replace("-", "")][i % 3]
    styles = [
        ("w2_extract", _dump({"employee_ssn": written, "box1_wages": f"{rng.randint(30000, 190000)}.00"})),
        ("form_fill", f"browser_type(ref='e{rng.randint(10, 99)}', element='SSN field', text='{written}')"),
        ("label", f"SSN: {written}"),
        ("sql_row", f"applicant_id={rng.randint(1000, 99999)} ssn={written} state=OH"),
        ("reply", f"I've filed the form for you. Social Security number on file: {written}."),
        ("locals", f"ssn = '{written}'"),
    ]
    style, snip = styles[i % len(styles)]
    return style, written, snip, False


# ---- phones ---------------------------------------------------------------------------------------------------

def _phone_style(written: str) -> str:
    return "international" if written.startswith("+") else "national"


NANP_AREAS = ["212", "312", "415", "617", "206", "303", "404", "512", "503", "702", "713", "305", "202", "718",
              "647", "604", "514", "416", "403", "613", "778", "905"]


def _nxx(rng: random.Random) -> str:
    while True:
        nxx = f"{rng.randint(2, 9)}{digits(rng, 2)}"
        if nxx[1:] != "11" and nxx != "555":
            return nxx


def phone_us_ca(rng: random.Random, i: int) -> Value:
    npa, nxx, line = rng.choice(NANP_AREAS), _nxx(rng), digits(rng, 4)
    written = [f"({npa}) {nxx}-{line}", f"{npa}-{nxx}-{line}", f"+1 {npa} {nxx} {line}", f"{npa}.{nxx}.{line}",
               f"+1-{npa}-{nxx}-{line}"][i % 5]
    word = ["Phone", "Cell", "Mobile", "Tel", "call back at", "Téléphone cellulaire"][i % 6]
    return _phone_style(written), written, f"{word}: {written}", False


def phone_uk(rng: random.Random, i: int) -> Value:
    kind = i % 3
    if kind == 0:
        head, tail = f"07{rng.choice('1234589')}{digits(rng, 2)}", digits(rng, 6)
        written = [f"{head} {tail}", f"+44 {head[1:]} {tail}", f"{head}{tail}"][i % 3]
    elif kind == 1:
        written = rng.choice([f"020 {rng.choice('378')}{digits(rng, 3)} {digits(rng, 4)}",
                              f"+44 20 {rng.choice('378')}{digits(rng, 3)} {digits(rng, 4)}"])
    else:
        written = f"{rng.choice(['0121', '0131', '0113', '0117', '0141', '0151'])} {rng.randint(2, 8)}{digits(rng, 2)} "
        written += digits(rng, 4)
    word = (["Mobile", "Mob", "Mobile number", "text me on"] if kind == 0 else
            ["Tel", "Phone", "Contact number", "Home phone"])[i // 3 % 4]
    return _phone_style(written), written, f"{word}: {written}", False


def phone_fr(rng: random.Random, i: int) -> Value:
    first = rng.choice(["6", "7", "1", "2", "3", "4", "5"])
    rest = f"{rng.randint(10, 99)}" if first != "7" else f"{rng.randint(30, 89)}"
    pairs = [rest] + [digits(rng, 2) for _ in range(3)]
    written = [f"0{first} " + " ".join(pairs), f"0{first}." + ".".join(pairs), f"+33 {first} " + " ".join(pairs),
               f"+33 (0){first} " + " ".join(pairs), f"0{first}" + "".join(pairs)][i % 5]
    word = (["Portable", "Mobile", "Tél. portable", "joignable au"] if first in "67" else
            ["Téléphone", "Tél.", "Fixe", "N° de téléphone"])[i % 4]
    return _phone_style(written), written, f"{word} : {written}", False


def phone_de(rng: random.Random, i: int) -> Value:
    if i % 2 == 0:
        prefix = rng.choice(["151", "152", "157", "160", "162", "170", "171", "172", "173", "175", "176", "177"])
        sub = digits(rng, 7 if prefix.startswith("17") or prefix == "160" else 8)
        written = [f"0{prefix} {sub}", f"+49 {prefix} {sub}", f"0{prefix}/{sub}", f"+49 (0){prefix} {sub}"][i // 2 % 4]
    else:
        area = rng.choice(["30", "40", "89", "69", "221", "211", "711", "351"])
        sub = f"{rng.randint(2, 9)}{digits(rng, 6 if len(area) == 2 else 5)}"
        written = [f"0{area} {sub}", f"+49 {area} {sub}", f"(0{area}) {sub}", f"0{area}-{sub}"][i // 2 % 4]
    word = (["Handy", "Mobil", "Mobilnummer", "Telefon"] if i % 2 == 0 else
            ["Telefon", "Tel.", "Festnetz", "Rückruf unter"])[i // 2 % 4]
    return _phone_style(written), written, f"{word}: {written}", False


def phone_in(rng: random.Random, i: int) -> Value:
    if i % 3:
        head, tail = f"{rng.randint(6, 9)}{digits(rng, 4)}", digits(rng, 5)
        written = [f"+91 {head} {tail}", f"0{head}{tail}", f"{head} {tail}", f"+91-{head}{tail}"][i % 4]
    else:
        area, width = rng.choice([("11", 8), ("22", 8), ("80", 8), ("44", 8), ("40", 8), ("33", 8)])
        written = f"0{area}-{rng.randint(2, 6)}{digits(rng, width - 1)}"
    word = (["Mobile no.", "मोबाइल नंबर", "WhatsApp", "Contact no."] if i % 3 else
            ["Ph", "फ़ोन", "Landline", "Office tel."])[i % 4]
    return _phone_style(written), written, f"{word}: {written}", False


# ---- secrets --------------------------------------------------------------------------------------------------

def password(rng: random.Random, i: int) -> Value:
    pw = _password(rng, uri_safe=i % 8 == 5)
    user = rng.choice(["admin", "svc_agent", "deploy", "root", "analytics"])
    styles: list[tuple[str, str, str]] = [
        ("env", pw, f"DB_PASSWORD={pw}"),
        ("docker_env", pw, f"POSTGRES_PASSWORD={pw}"),
        ("reply", pw, _say(i, "password", pw)),
        ("mysql_cli", pw, f"mysql -h {_host(rng)} -u {user} -p'{pw}' -e 'SHOW TABLES'"),
        ("netrc", pw, f"machine api.internal.acme.io login {user} password {pw}"),
        ("pip_index", pw, f"global.index-url='https://{user}:{pw}@pypi.acme.internal/simple'"),
        ("locals", pw, f"password = '{pw}'"),
    ]
    if i % 8 == 7:
        b64 = base64.b64encode(pw.encode()).decode()
        return "k8s_secret_b64", b64, (f"apiVersion: v1\ndata:\n  password: {b64}\n  username: "
                                       f"{base64.b64encode(user.encode()).decode()}\nkind: Secret"), False
    style, secret, snip = styles[i % len(styles)]
    return style, secret, snip, False


def _akia(rng: random.Random, temp: bool = False) -> str:
    return ("ASIA" if temp else "AKIA") + pick(rng, UPPER + "234567", 16)


def aws_secret(rng: random.Random, i: int) -> Value:
    secret = pick(rng, ALNUM + "+/", 40)
    akia = _akia(rng, temp=i % 5 == 2)
    styles = [
        ("credentials_file", f"[default]\naws_access_key_id = {akia}\naws_secret_access_key = {secret}"),
        ("env", f"AWS_ACCESS_KEY_ID={akia}\nAWS_SECRET_ACCESS_KEY={secret}"),
        ("sts", _dump({"Credentials": {"AccessKeyId": akia, "SecretAccessKey": secret,
                                       "Expiration": _ts(rng)}})),
        ("configure_prompt", f"AWS Access Key ID [None]: {akia}\nAWS Secret Access Key [None]: {secret}"),
        ("pair", f"{akia}:{secret}"),
        ("boto_locals", f"aws_access_key_id='{akia}', aws_secret_access_key='{secret}'"),
    ]
    style, snip = styles[i % len(styles)]
    return style, secret, snip, False


def webhook(rng: random.Random, i: int) -> Value:
    k = i % 10
    if k == 0:
        token = pick(rng, ALNUM, 24)
        team, bot = pick(rng, UPPER + string.digits, 10), pick(rng, UPPER + string.digits, 10)
        url = f"https://hooks.slack.com/services/T{team}/B{bot}/{token}"
    elif k == 1:
        token = pick(rng, URLSAFE, 68)
        url = f"https://discord.com/api/webhooks/{rng.randint(10 ** 17, 10 ** 19 - 1)}/{token}"
    elif k == 2:
        token = pick(rng, HEX, 32)
        url = (f"https://acme.webhook.office.com/webhookb2/{_uuid(rng)}@{_uuid(rng)}/IncomingWebhook/{token}/"
               f"{_uuid(rng)}")
    elif k == 3:
        token = pick(rng, URLSAFE, 43)
        url = (f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/{pick(rng, HEX, 32)}/"
               f"triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={token}")
    elif k == 4:
        token = pick(rng, URLSAFE, 43) + "%3D"
        url = (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?key=AIzaSy"
               f"{pick(rng, URLSAFE, 33)}&token={token}")
    elif k == 5:
        token = pick(rng, LOWNUM, 7)
        url = f"https://hooks.zapier.com/hooks/catch/{rng.randint(10 ** 6, 10 ** 8)}/{token}/"
    elif k == 6:
        token = pick(rng, LOWNUM, 26)
        url = f"https://chat.acme-corp.io/hooks/{token}"
    elif k == 7:
        token = pick(rng, ALNUM, 48)
        url = f"https://rocket.acme-corp.io/hooks/{pick(rng, ALNUM, 17)}/{token}"
    elif k == 8:
        token = pick(rng, HEX, 64)
        url = f"https://oapi.dingtalk.com/robot/send?access_token={token}"
    else:
        token = _uuid(rng)
        url = rng.choice([f"https://open.feishu.cn/open-apis/bot/v2/hook/{token}",
                          f"https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key={token}"])
    snip = [f"SLACK_WEBHOOK_URL={url}", f"curl -X POST -H 'Content-Type: application/json' -d @msg.json {url}",
            f"notify: posting build status to {url}", f"webhook_url: {url}"][i % 4]
    return ["slack", "discord", "teams", "power_automate", "google_chat", "zapier", "mattermost", "rocketchat",
            "dingtalk", "feishu_wecom"][k], token, snip, False


def stripe_whsec(rng: random.Random, i: int) -> Value:
    secret = "whsec_" + (pick(rng, HEX, 64) if i % 3 == 0 else pick(rng, ALNUM, 32))
    styles = [
        ("stripe_listen", f"> Ready! You are using Stripe API Version [2025-03-31]. Your webhook signing secret is "
                          f"{secret} (^C to quit)"),
        ("env", f"STRIPE_WEBHOOK_SECRET={secret}"),
        ("endpoint_json", _dump({"id": "we_" + pick(rng, ALNUM, 24), "object": "webhook_endpoint",
                                 "secret": secret, "status": "enabled"})),
        ("code", f"event = stripe.Webhook.construct_event(payload, sig_header, '{secret}')"),
        ("reply", _say(i, "key", secret)),
    ]
    style, snip = styles[i % len(styles)]
    return style, secret, snip, False


def connection_string(rng: random.Random, i: int) -> Value:
    k = i % 10
    pw = _password(rng, uri_safe=True)
    user, host = rng.choice(["app", "agent_rw", "reporter", "svc"]), _host(rng)
    if k == 0:
        snip = f"DATABASE_URL=postgresql://{user}:{pw}@{host}:5432/app?sslmode=require"
    elif k == 1:
        snip = f"mongodb+srv://{user}:{pw}@cluster0.{pick(rng, LOWNUM, 5)}.mongodb.net/?retryWrites=true"
    elif k == 2:
        snip = f"REDIS_URL=rediss://default:{pw}@{host}:6380/0"
    elif k == 3:
        snip = f"amqp://{user}:{pw}@{host}:5672/agents"
    elif k == 4:
        pw = base64.b64encode(rng.randbytes(64)).decode()
        snip = (f"DefaultEndpointsProtocol=https;AccountName=acmeagents{rng.randint(1, 99)};AccountKey={pw};"
                "EndpointSuffix=core.windows.net")
    elif k == 5:
        pw = base64.b64encode(rng.randbytes(32)).decode()
        snip = (f"Endpoint=sb://acme-bus.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
                f"SharedAccessKey={pw}")
    elif k == 6:
        pw = _password(rng)
        while ";" in pw:
            pw = _password(rng)
        snip = (f"Server=tcp:acme-sql.database.windows.net,1433;Initial Catalog=agents;User ID={user};"
                f"Password={pw};Encrypt=True;")
    elif k == 7:
        snip = f"jdbc:postgresql://{host}:5432/warehouse?user={user}&password={pw}&ssl=true"
    elif k == 8:
        snip = f"Driver={{ODBC Driver 18 for SQL Server}};Server={host};Database=crm;Uid={user};Pwd={pw};"
    else:
        snip = f"mysql://{user}:{pw}@{host}:3306/shop"
    style = ["postgres", "mongodb", "redis", "amqp", "azure_storage", "service_bus", "adonet", "jdbc", "odbc",
             "mysql"][k]
    return style, pw, snip, False


def labelled_key(rng: random.Random, i: int) -> Value:
    key = [pick(rng, HEX, 32), pick(rng, ALNUM, 40), pick(rng, ALNUM, 32), pick(rng, HEX, 40)][i % 4]
    styles = [
        ("label", f"API key: {key}"),
        ("header", f"X-API-Key: {key}"),
        ("azure_header", f"api-key: {key}"),
        ("env", f"MISTRAL_API_KEY={key}"),
        ("reply", _say(i, "key", key)),
        ("yaml", f"search:\n  provider: serper\n  api_key: {key}"),
        ("kwargs", f"client = Client(api_key=\"{key}\", timeout=30)"),
    ]
    style, snip = styles[i % len(styles)]
    return style, key, snip, False


def _disguise(rng: random.Random, value: str, how: int) -> str:
    if how == 0:
        cut = rng.randint(3, len(value) - 3)
        return value[:cut] + rng.choice(["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]) + value[cut:]
    if how == 1:
        return "".join(chr(ord(ch) + 0xFEE0) if "!" <= ch <= "~" else ch for ch in value)
    if how == 2:
        return "".join(f"%{ord(ch):02X}" if ch in "-_" or rng.random() < 0.3 else ch for ch in value)
    return "".join(f"\\u{ord(ch):04x}" if rng.random() < 0.5 else ch for ch in value)


def disguised(rng: random.Random, i: int) -> Value:
    how = i % 4
    base = [lambda: "sk-proj-" + pick(rng, URLSAFE, 40) + "T3BlbkFJ" + pick(rng, URLSAFE, 40),
            lambda: crc_token(rng, "ghp_"), lambda: _password(rng), lambda: pick(rng, ALNUM + "+/", 40)][i // 4 % 4]()
    secret = _disguise(rng, base, how)
    label = ["OPENAI_API_KEY", "GITHUB_TOKEN", "password", "aws_secret_access_key"][i // 4 % 4]
    style = ["zero_width", "fullwidth", "percent", "json_u"][how]
    if how == 3:
        return style, secret, f'{{"{label}": "{secret}"}}', True
    if how == 2:
        return style, secret, f"GET /debug?{label.lower()}={secret} HTTP/1.1", False
    return style, secret, f"{label}={secret}" if i % 2 else f"{label}: {secret}", False


FIRST = ["maria", "jonas", "aiko", "priya", "olu", "sven", "camille", "mateo", "wei", "fatima", "lukas", "ines",
         "dmitri", "hana", "rahul", "chloe", "kofi", "zeynep", "elena", "tomasz"]
LAST = ["gonzalez", "schneider", "tanaka", "sharma", "adeyemi", "lindqvist", "dubois", "rossi", "zhang", "haddad",
        "novak", "ferreira", "ivanov", "kim", "patel", "martin", "mensah", "yilmaz", "popescu", "kowalski"]
MAILS = ["gmail.com", "outlook.com", "yahoo.co.jp", "web.de", "gmx.de", "orange.fr", "libero.it", "yandex.ru",
         "qq.com", "naver.com", "rediffmail.com", "proton.me", "icloud.com", "hotmail.co.uk", "t-online.de",
         "acme-robotics.com", "fastmail.fm", "seznam.cz", "wp.pl", "uol.com.br"]


def email(rng: random.Random, i: int) -> Value:
    first, last = rng.choice(FIRST), rng.choice(LAST)
    local = [f"{first}.{last}", f"{first}{last[0]}{rng.randint(1, 99)}", f"{first[0]}{last}", f"{first}_{last}",
             f"{last}.{first}+agents"][i % 5]
    addr = f"{local}@{rng.choice(MAILS)}"
    styles = [
        ("git_config", f"user.name={first.title()} {last.title()}\nuser.email={addr}"),
        ("send_email_args", _dump({"to": [addr], "subject": "Your report is ready", "body": "See attachment."})),
        ("reply", _say(i, "email", addr)),
        ("from_header", f"From: {first.title()} {last.title()} <{addr}>"),
        ("sql_row", f"user_id={rng.randint(1, 99999)} email={addr} plan=pro"),
        ("gh_api", _dump({"login": f"{first}{last[:3]}", "email": addr, "two_factor_authentication": True})),
        ("mailto", f"Contact the owner: mailto:{addr}"),
    ]
    style, snip = styles[i % len(styles)]
    return style, addr, snip, False


# ---- tokens and keys ------------------------------------------------------------------------------------------

def _jwt_value(rng: random.Random) -> str:
    alg, sig_len = rng.choice([("HS256", 32), ("RS256", 256), ("ES256", 64)])
    header = b64url(_dump({"alg": alg, "typ": "JWT", "kid": pick(rng, HEX, 8)}).encode())
    iat = rng.randint(1_760_000_000, 1_790_000_000)
    payload = b64url(_dump({"sub": _uuid(rng), "iss": "https://auth.acme.io/", "iat": iat, "exp": iat + 3600,
                            "scope": "agents:run tools:invoke"}).encode())
    return f"{header}.{payload}.{b64url(rng.randbytes(sig_len))}"


def jwt(rng: random.Random, i: int) -> Value:
    token = _jwt_value(rng)
    styles = [
        ("bearer", f"Authorization: Bearer {token}"),
        ("storage_state", _dump({"origins": [{"origin": "https://app.acme.io", "localStorage": [
            {"name": "access_token", "value": token}]}]})),
        ("env", f"AGENT_JWT={token}"),
        ("httpx", f"DEBUG:httpcore.http11:send_request_headers.started request=<Request [b'GET']> "
                  f"headers=[(b'Authorization', b'Bearer {token}')]"),
        ("reply", _say(i, "token", token)),
    ]
    style, snip = styles[i % len(styles)]
    return style, token, snip, False


def session_cookie(rng: random.Random, i: int) -> Value:
    k = i % 8
    name, value = [
        ("sessionid", pick(rng, LOWNUM, 32)),
        ("connect.sid", "s%3A" + pick(rng, URLSAFE, 32) + "." + pick(rng, ALNUM + "+/", 43)),
        ("PHPSESSID", pick(rng, string.digits + "abcdefghijklmnopqrstuv", 26)),
        ("JSESSIONID", pick(rng, "0123456789ABCDEF", 32)),
        ("session", "eyJ" + pick(rng, URLSAFE, 40) + "." + pick(rng, URLSAFE, 6) + "." + pick(rng, URLSAFE, 27)),
        ("_app_session", quote(base64.b64encode(rng.randbytes(90)).decode()) + "--" + pick(rng, HEX, 40)),
        ("__Secure-next-auth.session-token", "eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0.." + b64url(rng.randbytes(12))
         + "." + b64url(rng.randbytes(160)) + "." + b64url(rng.randbytes(16))),
        (".AspNetCore.Cookies", "CfDJ8" + pick(rng, URLSAFE, 180)),
    ][k]
    styles = [
        ("cookie_header", f"> Cookie: {name}={value}; theme=dark"),
        ("set_cookie", f"< set-cookie: {name}={value}; Path=/; HttpOnly; Secure; SameSite=Lax"),
        ("storage_state", _dump({"cookies": [{"name": name, "value": value, "domain": "app.acme.io", "path": "/",
                                              "httpOnly": True, "secure": True}]})),
        ("requests_jar", f"<RequestsCookieJar[<Cookie {name}={value} for app.acme.io/>]>"),
    ]
    style, snip = styles[i % len(styles)]
    return f"{style}_{['django', 'express', 'php', 'java', 'flask', 'rails', 'nextauth', 'aspnet'][k]}", value, \
        snip, False


def oauth_token(rng: random.Random, i: int) -> Value:
    token = [lambda: "ya29.a0" + pick(rng, URLSAFE, 150), lambda: "1//0" + pick(rng, URLSAFE, 99),
             lambda: "sl." + pick(rng, URLSAFE, 136), lambda: crc_token(rng, "gho_")][i % 4]()
    styles = [
        ("bearer", f"Authorization: Bearer {token}"),
        ("token_response", _dump({"access_token" if i % 4 != 1 else "refresh_token": token, "expires_in": 3599,
                                  "token_type": "Bearer"})),
        ("env", f"OAUTH_TOKEN={token}"),
        ("curl_header", f"curl -H \"Authorization: Bearer {token}\" https://www.googleapis.com/drive/v3/files"),
        ("reply", _say(i, "token", token)),
    ]
    style, snip = styles[i % len(styles)]
    return style, token, snip, False


def github_token(rng: random.Random, i: int) -> Value:
    k = i % 3
    token = [crc_token(rng, "ghp_"), "github_pat_" + pick(rng, ALNUM, 22) + "_" + pick(rng, ALNUM, 59),
             crc_token(rng, "ghs_")][k]
    styles = [
        ("git_config", f"remote.origin.url=https://x-access-token:{token}@github.com/acme/agent-tools.git"),
        ("env", f"GITHUB_TOKEN={token}"),
        ("gh_hosts", f"github.com:\n    oauth_token: {token}\n    user: acme-bot\n    git_protocol: https"),
        ("header", f"Authorization: token {token}"),
        ("reply", _say(i, "token", token)),
    ]
    style, snip = styles[i % len(styles)]
    return f"{style}_{['classic', 'fine_grained', 'app'][k]}", token, snip, False


def slack_token(rng: random.Random, i: int) -> Value:
    k = i % 3
    token = [f"xoxb-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, ALNUM, 24)}",
             f"xoxp-{digits(rng, 12)}-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, HEX, 32)}",
             f"xapp-1-A{pick(rng, UPPER + string.digits, 10)}-{digits(rng, 13)}-{pick(rng, HEX, 64)}"][k]
    styles = [("env", f"SLACK_BOT_TOKEN={token}"), ("sdk", f"WebClient(token=\"{token}\")"),
              ("bearer", f"Authorization: Bearer {token}"), ("reply", _say(i, "token", token))]
    style, snip = styles[i % len(styles)]
    return f"{style}_{['bot', 'user', 'app'][k]}", token, snip, False


def registry_token(rng: random.Random, i: int) -> Value:
    if i % 2:
        token = crc_token(rng, "npm_")
        snip = [f"//registry.npmjs.org/:_authToken={token}", f"NPM_TOKEN={token}"][i // 2 % 2]
        return "npm", token, snip, False
    macaroon = b"\x02\x01\x08pypi.org\x02" + rng.randbytes(rng.randint(120, 160))
    token = "pypi-" + b64url(macaroon)
    snip = [f"[pypi]\n  username = __token__\n  password = {token}", f"TWINE_PASSWORD={token}"][i // 2 % 2]
    return "pypi", token, snip, False


def openai_key(rng: random.Random, i: int) -> Value:
    prefix = ["sk-proj-", "sk-svcacct-", "sk-proj-", "sk-admin-"][i % 4]
    key = prefix + pick(rng, URLSAFE, 74) + "T3BlbkFJ" + pick(rng, URLSAFE, 74)
    styles = [("env", f"OPENAI_API_KEY={key}"), ("sdk", f"client = OpenAI(api_key='{key}')"),
              ("bearer", f"Authorization: Bearer {key}"), ("reply", _say(i, "key", key)),
              ("error", f"openai.AuthenticationError: Error code: 401 - Incorrect API key provided: {key}.")]
    style, snip = styles[i % len(styles)]
    return style, key, snip, False


def anthropic_key(rng: random.Random, i: int) -> Value:
    key = ("sk-ant-api03-" if i % 5 else "sk-ant-admin01-") + pick(rng, URLSAFE, 93) + "AA"
    styles = [("env", f"ANTHROPIC_API_KEY={key}"), ("header", f"x-api-key: {key}"),
              ("sdk", f"anthropic.Anthropic(api_key=\"{key}\")"), ("reply", _say(i, "key", key)),
              ("settings", _dump({"env": {"ANTHROPIC_API_KEY": key}, "permissions": {"allow": ["Bash(ls:*)"]}}))]
    style, snip = styles[i % len(styles)]
    return style, key, snip, False


PROVIDERS: list[tuple[str, str, Callable[[random.Random], str]]] = [
    ("groq", "GROQ_API_KEY", lambda r: "gsk_" + pick(r, ALNUM, 52)),
    ("huggingface", "HF_TOKEN", lambda r: "hf_" + pick(r, string.ascii_letters, 34)),
    ("openrouter", "OPENROUTER_API_KEY", lambda r: "sk-or-v1-" + pick(r, HEX, 64)),
    ("xai", "XAI_API_KEY", lambda r: "xai-" + pick(r, ALNUM, 80)),
    ("perplexity", "PPLX_API_KEY", lambda r: "pplx-" + pick(r, ALNUM, 48)),
    ("google", "GOOGLE_API_KEY", lambda r: "AIza" + pick(r, URLSAFE, 35)),
    ("replicate", "REPLICATE_API_TOKEN", lambda r: "r8_" + pick(r, ALNUM, 37)),
    ("langsmith", "LANGSMITH_API_KEY", lambda r: f"lsv2_pt_{pick(r, HEX, 32)}_{pick(r, HEX, 10)}"),
    ("e2b", "E2B_API_KEY", lambda r: "e2b_" + pick(r, HEX, 40)),
    ("tavily", "TAVILY_API_KEY", lambda r: "tvly-" + pick(r, ALNUM, 32)),
    ("firecrawl", "FIRECRAWL_API_KEY", lambda r: "fc-" + pick(r, HEX, 32)),
]


def provider_key(rng: random.Random, i: int) -> Value:
    name, env, make = PROVIDERS[i % len(PROVIDERS)]
    key = make(rng)
    snip = [f"{env}={key}", f"export {env}=\"{key}\"", _dump({env: key}), f"Authorization: Bearer {key}",
            _say(i, "key", key)][i // len(PROVIDERS) % 5]
    return name, key, snip, False


def _pem_body(der_bytes: bytes) -> str:
    """The base64 body of a PEM block (RFC 7468): lines of 64 characters."""
    return group(base64.b64encode(der_bytes).decode(), 64, "\n")


def private_key(rng: random.Random, i: int) -> Value:
    k = i % 4
    if k == 0:
        key = ed25519.Ed25519PrivateKey.from_private_bytes(rng.randbytes(32))
        body = _pem_body(key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
        label = "PRIVATE KEY"
    elif k in (1, 3):
        scalar = rng.randrange(1, 2 ** 255)
        key = ec.derive_private_key(scalar, ec.SECP256R1())
        body = _pem_body(key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
        label = "PRIVATE KEY"
    else:
        seed = rng.randbytes(32)
        public = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        blob = openssh_ed25519_blob(seed, public, rng.randbytes(4), b"agent@sandbox")
        body = group(base64.b64encode(blob).decode(), 70, "\n")
        label = "OPENSSH PRIVATE KEY"
    pem = f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"
    if k == 3:
        doc = _dump({"type": "service_account", "project_id": f"agents-{rng.randint(100, 999)}",
                     "private_key_id": pick(rng, HEX, 40), "private_key": pem + "\n",
                     "client_email": f"runner@agents-{rng.randint(100, 999)}.iam.gserviceaccount.com"})
        return "gcp_service_account", body, doc, True
    return ["pkcs8_ed25519", "pkcs8_ec", "openssh"][k], body, f"$ cat ~/.ssh/deploy_key\n{pem}", False


def totp_seed(rng: random.Random, i: int) -> Value:
    seed = pick(rng, B32, 32 if i % 2 else 16)
    issuer = rng.choice(["GitHub", "AWS", "Acme%20VPN", "Okta", "Stripe"])
    styles = [
        ("otpauth", seed, f"otpauth://totp/{issuer}:ops%40acme.io?secret={seed}&issuer={issuer}&digits=6&period=30"),
        ("setup_key", group(seed.lower(), 4, " "), f"Setup key: {group(seed.lower(), 4, ' ')}"),
        ("env", seed, f"TOTP_SECRET={seed}"),
        ("pyotp", seed, f"pyotp.TOTP('{seed}').now()"),
        ("reply", seed, _say(i, "code", seed)),
    ]
    style, secret, snip = styles[i % len(styles)]
    return style, secret, snip, False


def _bitlocker(rng: random.Random) -> str:
    return "-".join(f"{rng.randrange(0, 65536) * 11:06d}" for _ in range(8))


def recovery_code(rng: random.Random, i: int) -> Value:
    k = i % 5
    code = [lambda: f"{pick(rng, HEX, 5)}-{pick(rng, HEX, 5)}", lambda: f"{digits(rng, 4)} {digits(rng, 4)}",
            lambda: group(pick(rng, UPPER + string.digits, 25), 5, "-"), lambda: _bitlocker(rng),
            lambda: "A3-" + "-".join(pick(rng, "23456789ABCDEFGHJKLMNPQRSTVWXYZ", n) for n in (6, 6, 5, 5, 5, 5))][k]()
    label = ["GitHub recovery code", "Google backup code", "Microsoft account recovery code",
             "BitLocker recovery key", "1Password Secret Key"][k]
    snip = [f"{label}: {code}", _say(i, "code", code), _dump({"kind": label, "value": code})][i // 5 % 3]
    return ["github", "google", "microsoft", "bitlocker", "onepassword"][k], code, snip, False


def basic_auth(rng: random.Random, i: int) -> Value:
    user = rng.choice(["ci-bot", "admin", "elastic", "grafana", "jenkins"])
    cred = base64.b64encode(f"{user}:{_password(rng)}".encode()).decode()
    styles = [("curl_v", f"> Authorization: Basic {cred}"),
              ("http_client", f"Authorization: Basic {cred}\\r\\nAccept: */*"),
              ("headers_dict", _dump({"Authorization": f"Basic {cred}", "Accept": "application/json"})),
              ("npmrc", f"//npm.acme.internal/:_auth={cred}")]
    style, snip = styles[i % len(styles)]
    return style, cred, snip, False


# ---- national ids (outside the target) -------------------------------------------------------------------------

def fr_nir_key(number13: str) -> str:
    """The NIR key (INSEE): 97 - (the 13 digits mod 97), two digits."""
    return f"{97 - int(number13) % 97:02d}"


def fr_nir(rng: random.Random, i: int) -> Value:
    body = (f"{rng.randint(1, 2)}{rng.randint(40, 99):02d}{rng.randint(1, 12):02d}{rng.randint(1, 95):02d}"
            f"{rng.randint(1, 990):03d}{rng.randint(1, 999):03d}")
    nir = body + fr_nir_key(body)
    written = nir if i % 2 else f"{nir[0]} {nir[1:3]} {nir[3:5]} {nir[5:7]} {nir[7:10]} {nir[10:13]} {nir[13:]}"
    return "secu", written, f"N° de sécurité sociale : {written}", False


IT_ODD = dict(zip(string.digits + UPPER, [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4,
                                          18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23], strict=True))


def it_cf_check(first15: str) -> str:
    """The codice fiscale check letter (DM 23/12/1976): odd positions by the odd table, even by value, mod 26."""
    total = 0
    for pos, ch in enumerate(first15, start=1):
        total += IT_ODD[ch] if pos % 2 else (int(ch) if ch.isdigit() else ord(ch) - 65)
    return chr(65 + total % 26)


def it_codice_fiscale(rng: random.Random, i: int) -> Value:
    day = rng.randint(1, 28) + (40 if i % 2 else 0)
    first15 = (pick(rng, "BCDFGLMNPRSTVZ", 6) + f"{rng.randint(50, 99)}" + rng.choice("ABCDEHLMPRST")
               + f"{day:02d}" + rng.choice("ABCDEFGHL") + f"{rng.randint(1, 999):03d}")
    cf = first15 + it_cf_check(first15)
    return "cf", cf, f"Codice fiscale: {cf}", False


def se_personnummer(rng: random.Random, i: int) -> Value:
    body = f"{rng.randint(40, 99):02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{digits(rng, 3)}"
    pnr = f"{body[:6]}-{body[6:]}{luhn_digit(body)}"
    return "pnr", pnr, f"Personnummer: {pnr}", False


def fi_hetu_check(ddmmyy: str, individual: str) -> str:
    """The HETU control character: DDMMYYZZZ mod 31 in 0-9A-Y without G, I, O, Q, Z."""
    return "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(ddmmyy + individual) % 31]


def fi_hetu(rng: random.Random, i: int) -> Value:
    ddmmyy = f"{rng.randint(1, 28):02d}{rng.randint(1, 12):02d}{rng.randint(0, 99):02d}"
    individual = f"{rng.randint(2, 899):03d}"
    hetu = ddmmyy + rng.choice("-A") + individual + fi_hetu_check(ddmmyy, individual)
    return "hetu", hetu, f"Henkilötunnus: {hetu}", False


def cn_id_check(first17: str) -> str:
    """The resident id check character (GB 11643, ISO 7064 MOD 11-2)."""
    weights = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2]
    return "10X98765432"[sum(int(d) * w for d, w in zip(first17, weights, strict=True)) % 11]


def cn_resident_id(rng: random.Random, i: int) -> Value:
    first17 = (rng.choice(["110105", "310104", "440305", "510107", "330106"])
               + f"{rng.randint(1960, 2004)}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{digits(rng, 3)}")
    rid = first17 + cn_id_check(first17)
    return "rid", rid, f"身份证号：{rid}", False


def no_fnr_checks(nine: str) -> str | None:
    """The two fodselsnummer control digits (Skatteetaten, mod 11), or None when a digit would be 10."""
    w1, w2 = [3, 7, 6, 1, 8, 9, 4, 5, 2], [5, 4, 3, 2, 7, 6, 5, 4, 3, 2]
    k1 = (11 - sum(int(d) * w for d, w in zip(nine, w1, strict=True)) % 11) % 11
    if k1 == 10:
        return None
    k2 = (11 - sum(int(d) * w for d, w in zip(nine + str(k1), w2, strict=True)) % 11) % 11
    return None if k2 == 10 else f"{k1}{k2}"


def no_fodselsnummer(rng: random.Random, i: int) -> Value:
    while True:
        nine = f"{rng.randint(1, 28):02d}{rng.randint(1, 12):02d}{rng.randint(40, 99):02d}{rng.randint(0, 499):03d}"
        checks = no_fnr_checks(nine)
        if checks:
            return "fnr", nine + checks, f"Fødselsnummer: {nine + checks}", False


VERHOEFF_D = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 3, 4, 0, 6, 7, 8, 9, 5], [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
    [3, 4, 0, 1, 2, 8, 9, 5, 6, 7], [4, 0, 1, 2, 3, 9, 5, 6, 7, 8], [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
    [6, 5, 9, 8, 7, 1, 0, 4, 3, 2], [7, 6, 5, 9, 8, 2, 1, 0, 4, 3], [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
    [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]]
VERHOEFF_P = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 5, 7, 6, 2, 8, 3, 0, 9, 4], [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
    [8, 9, 1, 6, 0, 4, 3, 5, 2, 7], [9, 4, 5, 3, 1, 2, 6, 8, 7, 0], [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
    [2, 7, 9, 3, 8, 0, 6, 4, 1, 5], [7, 0, 4, 6, 9, 1, 3, 2, 5, 8]]
VERHOEFF_INV = [0, 4, 3, 2, 1, 5, 6, 7, 8, 9]


def verhoeff_digit(partial: str) -> str:
    """The Verhoeff check digit (dihedral group D5) that completes `partial`, as UIDAI uses it for Aadhaar."""
    c = 0
    for pos, ch in enumerate(reversed(partial)):
        c = VERHOEFF_D[c][VERHOEFF_P[(pos + 1) % 8][int(ch)]]
    return str(VERHOEFF_INV[c])


def in_aadhaar(rng: random.Random, i: int) -> Value:
    body = str(rng.randint(2, 9)) + digits(rng, 10)
    number = body + verhoeff_digit(body)
    written = group(number, 4, " ") if i % 2 else number
    return "aadhaar", written, f"Aadhaar No.: {written}", False


KINDS: dict[str, Callable[[random.Random, int], Value]] = {
    "password": password, "aws_secret": aws_secret, "webhook": webhook, "stripe_whsec": stripe_whsec,
    "connection_string": connection_string, "labelled_key": labelled_key, "disguised": disguised, "email": email,
    "phone_us_ca": phone_us_ca, "phone_uk": phone_uk, "phone_fr": phone_fr, "phone_de": phone_de,
    "phone_in": phone_in, "ssn": ssn, "card": card, "iban": iban, "jwt": jwt, "session_cookie": session_cookie,
    "oauth_token": oauth_token, "github_token": github_token, "slack_token": slack_token,
    "registry_token": registry_token, "openai_key": openai_key, "anthropic_key": anthropic_key,
    "provider_key": provider_key, "private_key": private_key, "totp_seed": totp_seed,
    "recovery_code": recovery_code, "basic_auth": basic_auth, "fr_nir": fr_nir,
    "it_codice_fiscale": it_codice_fiscale, "se_personnummer": se_personnummer, "fi_hetu": fi_hetu,
    "cn_resident_id": cn_resident_id, "no_fodselsnummer": no_fodselsnummer, "in_aadhaar": in_aadhaar,
}


def carry(rng: random.Random, i: int, value: Value) -> tuple[str, str, bool]:
    """Pick the carrier for case `i`: every third case in JSON (nested JSON only for secrets written unescaped),
    raw-only snippets and the rest in text."""
    _style, secret, snip, raw_only = value
    if i % 3 == 1 and not raw_only:
        names = list(JSON_CARRIERS)
        name = names[i // 3 % len(names)]
        if name in NESTED and _dump(secret)[1:-1] != secret:
            name = "mcp_result"
        return name, JSON_CARRIERS[name](rng, snip, secret), True
    name = list(TEXT_CARRIERS)[i % len(TEXT_CARRIERS)]
    return name, TEXT_CARRIERS[name](rng, snip, secret), False


def generate() -> Iterator[Case]:
    """PER_KIND cases of each kind, deterministic."""
    rng = random.Random(SEED)
    for kind, gen in KINDS.items():
        for i in range(PER_KIND):
            value = gen(rng, i)
            carrier, text, is_json = carry(rng, i, value)
            yield Case(kind, f"{carrier}/{value[0]}", value[1], text, is_json)


# ---- near misses ----------------------------------------------------------------------------------------------

def _luhn_bad(rng: random.Random) -> str:
    body = "5" + str(rng.randint(1, 5)) + digits(rng, 13)
    return group(body + str((int(luhn_digit(body)) + rng.randint(1, 9)) % 10), 4, " ")


NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "element_ref": lambda r: f"browser_click(element=\"Submit order button\", ref=\"e{r.randint(10, 999)}\") -> "
                             f"clicked <button id=\"btn-{pick(r, HEX, 6)}\" data-testid=\"checkout-submit\">",
    "css_selector": lambda r: f"page.wait_for_selector('div.{pick(r, LOWER, 6)}__list > li:nth-child({r.randint(1, 9)})"
                              f" a[href^=\"/orders/\"]', timeout={r.randint(1, 30) * 1000})",
    "xpath": lambda r: f"find_element(By.XPATH, \"//table[@id='results']/tbody/tr[{r.randint(1, 40)}]/"
                       f"td[{r.randint(1, 8)}]//span[contains(@class,'price')]\")",
    "coordinates": lambda r: f"computer.left_click(x={r.randint(0, 1919)}, y={r.randint(0, 1079)}); "
                             f"scroll(dx=0, dy={r.randint(-900, 900)})",
    "viewport": lambda r: f"screenshot saved: step_{r.randint(1, 99)}.png ({r.choice([1280, 1366, 1440, 1920])}x"
                          f"{r.choice([720, 768, 900, 1080])} px, {r.randint(40, 900)} KB, dpr=2)",
    "timestamp": lambda r: f"[{_ts(r)}] run_started run_id={_uuid(r)} elapsed_ms={r.randint(5, 90000)}",
    "request_id": lambda r: f"< x-request-id: req_{pick(r, HEX, 32)}\n< cf-ray: {pick(r, HEX, 16)}-FRA\n"
                            f"< openai-processing-ms: {r.randint(100, 9000)}",
    "call_id": lambda r: _dump({"type": "function_call_output", "call_id": _call_id(r),
                                "output": f"exit code {r.randint(0, 2)}; wrote {r.randint(1, 900)} lines"}),
    "container_id": lambda r: f"Container {pick(r, HEX, 12)} started; sandbox i{pick(r, LOWNUM, 19)} "
                              f"image sha256:{pick(r, HEX, 64)}",
    "cache_bust": lambda r: f"GET /static/js/main.{pick(r, HEX, 8)}.chunk.js?v={pick(r, HEX, 10)} 200 "
                            f"({r.randint(10, 900)} kB, etag W/\"{pick(r, HEX, 16)}\")",
    "csrf_field_name": lambda r: r.choice(['<input type="hidden" name="csrfmiddlewaretoken">',
                                           'meta[name="csrf-token"] not found on page',
                                           "form field authenticity_token is required",
                                           "header X-CSRF-Token missing (403)", "cookie XSRF-TOKEN not set"]),
    "placeholder": lambda r: r.choice(["OPENAI_API_KEY=<your-key-here>", "password: ********",
                                       "Email: you@example.com", "DATABASE_URL=postgres://user:password@localhost/db",
                                       "STRIPE_WEBHOOK_SECRET=whsec_...", "export GITHUB_TOKEN=${{ secrets.GH_PAT }}",
                                       "Mot de passe : ••••••••", "API-Schlüssel: <hier einfügen>"]),
    "tool_masked": lambda r: r.choice([f"access_key     ****************{pick(r, B32, 4)} shared-credentials-file",
                                       "  - Token: gho_************************************",
                                       "//registry.npmjs.org/:_authToken = (protected)",
                                       f"secret_key     ****************{pick(r, ALNUM, 4)} env",
                                       f"card ending in {digits(r, 4)}", f"SSN ***-**-{digits(r, 4)}"]),
    "version_string": lambda r: f"openai-agents=={r.randint(0, 1)}.{r.randint(0, 9)}.{r.randint(0, 20)} "
                                f"crewai {r.randint(0, 1)}.{r.randint(50, 200)}.{r.randint(0, 9)} "
                                f"Python 3.{r.randint(10, 13)}.{r.randint(0, 12)} "
                                f"node v{r.randint(18, 24)}.{r.randint(0, 12)}.0",
    "service_number": lambda r: r.choice(["Support: 1-800-275-2273 (toll-free)", "Hotline: 0800 330 1000",
                                          "Service client : 3639 (service gratuit + prix appel)",
                                          "Kundenservice: 0800 330 1000 (kostenlos)", "Toll free: 1800 11 2211",
                                          "Freephone 0800 800 150"]),
    "luhn_invalid": lambda r: f"reference {_luhn_bad(r)} (failed validation: not a card number)",
    "order_number": lambda r: f"Order #{r.randint(100, 999)}-{digits(r, 7)}-{digits(r, 7)} placed; "
                              f"invoice INV-{r.randint(2024, 2026)}-{digits(r, 6)}",
    "tracking_number": lambda r: r.choice([f"UPS 1Z{pick(r, UPPER + string.digits, 16)}",
                                           f"USPS 9400 {group(digits(r, 18), 4, ' ')}",
                                           f"FedEx tracking {digits(r, 12)}", f"DHL {digits(r, 10)}"]),
    "git_sha": lambda r: f"HEAD is now at {pick(r, HEX, 7)} fix(tools): retry on 429; merge {pick(r, HEX, 40)}",
    "pod_name": lambda r: f"pod/agent-runner-{pick(r, LOWNUM, 10)}-{pick(r, LOWNUM, 5)} 1/1 Running "
                          f"{r.randint(0, 5)} {r.randint(1, 59)}m 10.244.{r.randint(0, 9)}.{r.randint(2, 250)}",
    "token_usage": lambda r: _dump({"usage": {"input_tokens": r.randint(100, 90000),
                                              "output_tokens": r.randint(10, 4000),
                                              "total_tokens": r.randint(100000, 999999)}}),
    "doc_example": lambda r: r.choice(["aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
                                       "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                                       "curl -u username:password https://example.com",
                                       "postgres://user:pass@localhost:5432/mydb (example from README)"]),
}


def generate_negatives() -> Iterator[tuple[str, str]]:
    """NEGATIVES_PER_SORT near misses of each sort, as (sort, text), some inside a JSON carrier."""
    rng = random.Random(SEED + 1)
    names = [name for name in JSON_CARRIERS if name not in NESTED]
    for sort, make in NEAR_MISSES.items():
        for i in range(NEGATIVES_PER_SORT):
            text = make(rng)
            if i % 3 == 0:
                name = names[i // 3 % len(names)]
                text = JSON_CARRIERS[name](rng, text, "")
            yield sort, text
