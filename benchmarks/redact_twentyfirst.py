"""The twenty-first blind redaction corpus: retrieval and memory, what RAG pipelines and agent-memory stores hold
and return. Written from the formats' public specifications by someone who read neither the detection rules nor
the other corpora.

Carriers (the `form` head): vector database records (Pinecone upsert/query, Qdrant points, Weaviate GraphQL,
Chroma query results, Milvus search, pgvector rows as psql prints them), parsed documents (unstructured elements,
LlamaParse Markdown pages with headers/footers, Docling HTML tables, chunks whose overlap window repeats a value,
chunks split between a label and its value), search hits (Elasticsearch/OpenSearch `_source` + `highlight` with
<em>, Algolia, Typesense, Vespa), reranker inputs/outputs, answers with citations and quoted passages, agent
memory (Mem0 facts, Letta core/archival memory, LangGraph checkpoints and store items, Zep facts), knowledge-base
exports (Confluence storage format, Notion Markdown, Zendesk Guide articles, SharePoint/Drive text) and MCP
`resources/read` results. About a third is JSON carried (`is_json`).

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37,
Discover 6011/65, JCB 3528-3589, Diners 36, UnionPay 62) with the Luhn digit; IBANs, ISO 13616 and the SWIFT IBAN
registry's BBAN structures (MOD 97-10); SSNs, the SSA's rules (area not 000/666/9xx, group not 00, serial not
0000); phones, the national numbering plans (NANP, Ofcom, ARCEP, BNetzA, TRAI/DoT, CNMC, Anatel, AGCOM, ACM, UKE,
MIC Japan, MSIT Korea, ACMA, BTK, PTS, ENACOM) with context words in each country's language; AWS keys, IAM's
documented AKIA/ASIA ids and 40-character secrets; Slack, Discord, Teams/Power Automate, Google Chat, Zapier and
Mattermost webhook URLs as their docs print them (the secret is the token-bearing segment or query value only);
Stripe `whsec_` signing secrets; Azure Storage/Service Bus, ADO.NET, JDBC, ODBC and URI connection strings (the
secret is the password or key only); JWT (RFC 7519/7515), HTTP Basic (RFC 7617), Bearer (RFC 6750), Digest
`response=` (RFC 7616), SigV4 `Signature=`; PEM PKCS#8/SEC1 and OpenSSH keys, also inside GCP service-account
JSON; provider tokens as their docs show them: OpenAI `sk-`/`sk-proj-`, Anthropic `sk-ant-api03-`, Pinecone
`pcsk_`, Hugging Face `hf_`, GitHub `ghp_`/`github_pat_` (CRC32 checksum), LangSmith `lsv2_pt_`, Groq `gsk_`;
national ids (outside the target): Spanish DNI/NIE (mod 23 letter), Brazilian CPF (two mod 11 digits), Polish
PESEL (weights 1-3-7-9), Dutch BSN (11-proof), Indian Aadhaar (Verhoeff), Turkish TC Kimlik (its two digits).

Judgements: a case's `secret` is only what must not survive (a webhook's token segment, a connection string's
password, a cookie's value, a header's credential). Providers' published test card numbers are valid cards by
format (IIN and Luhn), so redacting them is no false positive; the corpus holds them neither as values nor as near
misses. Near misses are what retrieval stores hold that is not secret or personal in itself: vector and chunk ids,
offsets, document hashes, embedding floats, scores, page/section/clause references, ISO standard numbers, DOIs,
article numbers, product codes and versions, dates, amounts, placeholders, masked values, Luhn-invalid numbers,
businesses' published toll-free service lines, the AWS docs' EXAMPLE keys, model names with dimensions, ticket
ids: none of them identifies a person or opens anything.
"""

from __future__ import annotations

import base64
import hashlib
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

SEED = 21
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"es_dni", "br_cpf", "pl_pesel", "nl_bsn", "in_aadhaar", "tr_tckn"})
"""National ids: written and reported, not held to the recall target."""

LOWER = string.ascii_lowercase
ALNUM = string.ascii_letters + string.digits
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"
HEX = "0123456789abcdef"


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


# ---- carriers -------------------------------------------------------------------------------------------------

def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _fid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _floats(rng: random.Random, n: int = 4) -> list[float]:
    return [round(rng.uniform(-0.2, 0.2), 6) for _ in range(n)]


def c_pinecone(rng: random.Random, snip: str, _s: str) -> str:
    doc = f"kb-{rng.randint(100, 999)}"
    return _dump({"vectors": [{"id": f"{doc}#chunk-{rng.randint(0, 40)}", "values": _floats(rng),
                               "metadata": {"text": snip, "source": f"s3://kb-raw/{doc}.pdf",
                                            "page": rng.randint(1, 60)}}], "namespace": "support-kb"})


def c_qdrant(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"result": [{"id": _fid(rng), "version": rng.randint(1, 9), "score": round(rng.random(), 4),
                              "payload": {"page_content": snip, "metadata": {"doc_id": rng.randint(1, 9999)}}}],
                  "status": "ok", "time": 0.0021})


def c_weaviate(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"data": {"Get": {"WikiChunk": [{"content": snip, "title": "Onboarding",
                                                  "_additional": {"id": _fid(rng),
                                                                  "distance": round(rng.random(), 4)}}]}}})


def c_chroma(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"ids": [[f"id{rng.randint(1, 99999)}"]], "documents": [[snip]],
                  "metadatas": [[{"source": "confluence", "space": "OPS"}]],
                  "distances": [[round(rng.uniform(0.1, 1.2), 4)]], "embeddings": None})


def c_milvus(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"code": 0, "data": [{"id": rng.getrandbits(60), "distance": round(rng.random(), 5),
                                        "entity": {"chunk_text": snip, "lang": "xx"}}]})


def c_unstructured(rng: random.Random, snip: str, _s: str) -> str:
    return _dump([{"type": "NarrativeText", "element_id": hashlib.sha256(snip.encode()).hexdigest()[:32],
                   "text": snip, "metadata": {"filename": "handbook.docx", "page_number": rng.randint(1, 30),
                                              "languages": ["eng"]}}])


def c_mem0(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"results": [{"id": _fid(rng), "memory": snip, "user_id": f"u_{rng.randint(1000, 9999)}",
                               "metadata": {"category": "personal"}, "created_at": "2026-11-03T09:14:22Z"}]})


def c_langgraph(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"v": 1, "id": _fid(rng), "ts": "2026-12-01T10:00:00+00:00",
                  "channel_values": {"messages": [{"type": "tool", "name": "retrieve", "content": snip}]},
                  "channel_versions": {"messages": rng.randint(2, 40)}})


def c_langgraph_store(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"namespace": ["memories", f"user-{rng.randint(10, 99)}"], "key": _fid(rng),
                  "value": {"data": snip}, "created_at": "2026-10-21T08:00:00Z"})


def c_zep(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"facts": [{"uuid": _fid(rng), "fact": snip, "rating": round(rng.random(), 2),
                             "valid_at": "2026-09-30T00:00:00Z"}]})


def c_es(rng: random.Random, snip: str, secret: str) -> str:
    words = [w for w in snip.split() if secret not in w and len(w) > 3]
    hl = snip.replace(words[0], f"<em>{words[0]}</em>", 1) if words else snip
    return _dump({"hits": {"total": {"value": 1}, "hits": [{
        "_index": "kb-articles", "_id": str(rng.getrandbits(40)), "_score": round(rng.uniform(3, 20), 3),
        "_source": {"body": snip, "lang": "en"}, "highlight": {"body": [hl]}}]}})


def c_algolia(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"hits": [{"objectID": str(rng.randint(10 ** 6, 10 ** 7)), "content": snip,
                            "hierarchy": {"lvl0": "Runbooks", "lvl1": "Access"}}], "nbHits": 1,
                  "processingTimeMS": rng.randint(1, 9)})


def c_typesense(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"found": 1, "hits": [{"document": {"id": str(rng.randint(1, 9999)), "text": snip},
                                        "text_match": rng.getrandbits(50)}]})


def c_vespa(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"root": {"children": [{"id": f"id:kb:doc::{rng.randint(1, 99999)}",
                                         "relevance": round(rng.random(), 4), "fields": {"body": snip}}]}})


def c_rerank(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"query": "how do I reach the on-call DBA", "documents": ["Escalation matrix v3", snip],
                  "results": [{"index": 1, "relevance_score": round(rng.uniform(0.5, 1), 4)}]})


def c_mcp(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"jsonrpc": "2.0", "id": rng.randint(1, 99), "result": {"contents": [
        {"uri": "kb://runbooks/access.md", "mimeType": "text/markdown", "text": snip}]}})


def c_zendesk(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"article": {"id": rng.getrandbits(40), "title": "Getting access", "locale": "en-us",
                              "body": f"<p>{snip}</p>"}})


def c_pgvector(rng: random.Random, snip: str, _s: str) -> str:
    n = rng.randint(1, 9999)
    return (" id   | doc_id | chunk | content                                  | embedding\n"
            "------+--------+-------+------------------------------------------+----------\n"
            f" {n} | {rng.randint(1, 500)} | {rng.randint(0, 30)} | {snip} | [0.0132,-0.0441,...]\n(1 row)")


def c_llamaparse(rng: random.Random, snip: str, _s: str) -> str:
    page = rng.randint(2, 40)
    return f"ACME Internal — Confidential\n\n## 4.{rng.randint(1, 9)} Access\n\n{snip}\n\n---\nPage {page} of 48"


def c_docling(rng: random.Random, snip: str, _s: str) -> str:
    return (f"<table><tr><th>System</th><th>Details</th></tr><tr><td>svc-{rng.randint(1, 99)}</td>"
            f"<td>{snip}</td></tr></table>")


def c_overlap(rng: random.Random, snip: str, _s: str) -> str:
    return (f"[chunk {rng.randint(0, 50)} | chars 1024-2048]\n... see the access section. {snip}\n"
            f"[chunk next | overlap 128]\n{snip} The following section covers rotation.")


def c_split(rng: random.Random, snip: str, secret: str) -> str:
    """A chunk boundary between a label and its value; a number (digits and separators) keeps its context word
    in its chunk, so the boundary falls before the whole snippet."""
    at = 0 if set(secret) <= set(string.digits + "+-()./ _") else snip.find(secret)
    return (f"--- chunk {rng.randint(0, 80)} (tokens 0-512) ---\n{snip[:at]}\n"
            f"--- chunk next (tokens 512-1024) ---\n{snip[at:]}")


def c_cited(rng: random.Random, snip: str, _s: str) -> str:
    n = rng.randint(1, 6)
    return f"Here is what the knowledge base says [{n}]:\n\n> {snip}\n\nSources: [{n}] Ops wiki › Access (p. 3)"


def c_letta(rng: random.Random, snip: str, _s: str) -> str:
    return (f"<persona>I am the helpdesk assistant.</persona>\n<human>\n{snip}\n</human>\n"
            f"archival_memory_search results (1 of {rng.randint(2, 9)}): {snip}")


def c_confluence(rng: random.Random, snip: str, _s: str) -> str:
    return ('<ac:structured-macro ac:name="code" ac:schema-version="1"><ac:plain-text-body><![CDATA['
            f"{snip}]]></ac:plain-text-body></ac:structured-macro><p>Updated v{rng.randint(2, 30)}</p>")


def c_notion(rng: random.Random, snip: str, _s: str) -> str:
    return f"# Team onboarding\n\nOwner: IT · Last edited {rng.randint(1, 28)} Nov 2026\n\n- {snip}\n- Ask in #it"


def c_sharepoint(rng: random.Random, snip: str, _s: str) -> str:
    return (f"HR-Letter-{rng.randint(100, 999)}.docx (exported from SharePoint)\nHeader: Human Resources\n\n"
            f"{snip}\n\nFooter: Page {rng.randint(1, 5)} | Internal")


Carrier = Callable[[random.Random, str, str], str]
JSON_CARRIERS: dict[str, Carrier] = {
    "pinecone": c_pinecone, "qdrant": c_qdrant, "weaviate": c_weaviate, "chroma": c_chroma, "milvus": c_milvus,
    "unstructured": c_unstructured, "mem0": c_mem0, "langgraph_ckpt": c_langgraph,
    "langgraph_store": c_langgraph_store, "zep": c_zep, "es_hit": c_es, "algolia": c_algolia,
    "typesense": c_typesense, "vespa": c_vespa, "rerank": c_rerank, "mcp_read": c_mcp, "zendesk_guide": c_zendesk}
TEXT_CARRIERS: dict[str, Carrier] = {
    "pgvector_row": c_pgvector, "llamaparse_md": c_llamaparse, "docling_html": c_docling, "chunk_overlap": c_overlap,
    "chunk_split": c_split, "cited_answer": c_cited, "letta_memory": c_letta, "confluence": c_confluence,
    "notion_md": c_notion, "sharepoint_txt": c_sharepoint}


# ---- the kinds ----------------------------------------------------------------------------------------

PW_LABELS = [("Password", "en"), ("Passwort", "de"), ("Kennwort", "de"), ("contraseña", "es"), ("clave", "es"),
             ("mot de passe", "fr"), ("senha", "pt"), ("password", "it"), ("wachtwoord", "nl"), ("lösenord", "sv"),
             ("adgangskode", "da"), ("passord", "no"), ("lykilorð", "is"), ("hasło", "pl"), ("heslo", "cs"),
             ("jelszó", "hu"), ("parola", "ro"), ("парола", "bg"), ("лозинка", "sr"), ("κωδικός", "el"),
             ("şifre", "tr"), ("пароль", "ru"), ("пароль", "uk"), ("құпиясөз", "kk"), ("პაროლი", "ka"),
             ("գաղտնաբառ", "hy"), ("كلمة المرور", "ar"), ("סיסמה", "he"), ("رمز عبور", "fa"), ("پاس ورڈ", "ur"),
             ("पासवर्ड", "hi"), ("পাসওয়ার্ড", "bn"), ("கடவுச்சொல்", "ta"), ("パスワード", "ja"), ("비밀번호", "ko"),
             ("密码", "zh"), ("mật khẩu", "vi"), ("รหัสผ่าน", "th"), ("kata sandi", "id"), ("nenosiri", "sw"),
             ("kalmar sirri", "ha")]
WORDS = ["Kaffee", "harbor", "Lluvia", "soleil", "Tavolo", "fjord", "Mango", "granit", "Vinter", "kiwi", "Zebra",
         "Oktober", "nube", "Rosso", "Piwo", "Tulpe", "ocean", "Badger", "cerise", "Pampa"]


def password_value(rng: random.Random) -> str:
    """A password as people and generators make them; no quote, backslash, `<`, `&` or space."""
    shape = rng.randrange(4)
    if shape == 0:
        return rng.choice(WORDS) + digits(rng, rng.randint(2, 4)) + rng.choice("!#$%*?@")
    if shape == 1:
        return pick(rng, ALNUM + "!#%*+-_.@$^~", rng.randint(14, 24))
    if shape == 2:
        return "-".join(rng.choice(WORDS) for _ in range(3)) + digits(rng, 2)
    return pick(rng, ALNUM, 6) + rng.choice("!$%") + pick(rng, ALNUM, 7)


def v_password(rng: random.Random, i: int) -> Value:
    p = password_value(rng)
    u = f"svc_{rng.choice(WORDS).lower()}"
    lab, lang = PW_LABELS[i % len(PW_LABELS)]
    styles = [
        ("env_db", f"Copy into .env:\nDB_HOST=pg-kb.internal\nDB_PASSWORD={p}\nDB_USER={u}"),
        ("env_pgpass", f"Runbook step 3: export PGPASSWORD='{p}' && psql -h 10.4.0.7 -U {u} kb"),
        ("yaml_mysql", f"services:\n  db:\n    environment:\n      MYSQL_ROOT_PASSWORD: \"{p}\""),
        ("json_user", f'LDAP sync config: {{"userName": "{u}", "userPassword": "{p}", "port": 636}}'),
        ("camel", f"vectorStore:\n  adminUser: {u}\n  adminPassword: {p}"),
        ("prefixed", f"KB_INGEST_POSTGRES_PASSWORD={p}"),
        ("cli_long", f"$ mysqldump -u {u} --password {p} wiki > wiki.sql"),
        ("cli_eq", f"mongosh \"mongodb://kb-1:27017\" --username {u} --password={p}"),
        ("cli_short", f"mysql -h db.kb.local -u {u} -p{p} confluence"),
        ("redis", f"REDIS_HOST=cache.kb\nREDIS_PASS={p}"),
        ("properties", f"spring.datasource.username={u}\nspring.datasource.password={p}"),
        ("xml", f'<add key="SmtpPassword" value="{p}" />'),
        ("docker_env", f"docker run -e POSTGRES_PASSWORD={p} -p 5432:5432 pgvector/pgvector:pg16"),
        ("md_table", f"| host | user | password |\n|---|---|---|\n| kb-prod | {u} | {p} |"),
        ("ini", f"[client]\nuser = {u}\npassword = {p}"),
        ("prose_" + lang, f"{u} — {lab}: {p}"),
        ("prose2_" + lang, f"Wi-Fi «Office-5G» · {lab} = {p}"),
        ("memory_" + lang, f"User said their {lab} for the NAS is {p}"),
    ]
    style, snip = styles[i % len(styles)]
    return style, p, snip, False


def aws_secret_value(rng: random.Random) -> str:
    while True:
        s = pick(rng, B64, 40)
        if "/" in s or "+" in s:
            return s


def v_aws_secret(rng: random.Random, i: int) -> Value:
    s = aws_secret_value(rng)
    kid = rng.choice(("AKIA", "ASIA")) + pick(rng, string.ascii_uppercase + "234567", 16)
    styles = [
        ("env", f"AWS_ACCESS_KEY_ID={kid}\nAWS_SECRET_ACCESS_KEY={s}"),
        ("credfile", f"[kb-ingest]\naws_access_key_id = {kid}\naws_secret_access_key = {s}"),
        ("sts_json", f'{{"Credentials": {{"AccessKeyId": "{kid}", "SecretAccessKey": "{s}", '
                     f'"Expiration": "2026-12-06T20:00:00Z"}}}}'),
        ("colon_pair", f"bucket creds {kid}:{s}"),
        ("csv_row", f"Access key ID,Secret access key\n{kid},{s}"),
        ("slash_pair", f"The S3 loader uses {kid} / {s} (rotate quarterly)"),
        ("boto3", f'boto3.client("s3", aws_access_key_id="{kid}", aws_secret_access_key="{s}")'),
        ("s3cfg", f"[default]\naccess_key = {kid}\nsecret_key = {s}"),
        ("terraform", f'provider "aws" {{\n  access_key = "{kid}"\n  secret_key = "{s}"\n}}'),
        ("md_table", f"| Access key | Secret |\n|---|---|\n| {kid} | {s} |"),
        ("prose_es", f"Clave de acceso {kid} y clave secreta {s} para el bucket de documentos"),
        ("spaced", f"{kid}   {s}"),
    ]
    style, snip = styles[i % len(styles)]
    return style, s, snip, False


def v_webhook(rng: random.Random, i: int) -> Value:
    shape = i % 7
    if shape == 0:
        tok = pick(rng, ALNUM, 24)
        url = f"https://hooks.slack.com/services/T{pick(rng, string.ascii_uppercase + string.digits, 8)}/" \
              f"B{pick(rng, string.ascii_uppercase + string.digits, 10)}/{tok}"
        style = "slack"
    elif shape == 1:
        tok = pick(rng, URLSAFE, 68)
        url = f"https://discord.com/api/webhooks/{rng.randint(10 ** 17, 10 ** 18)}/{tok}"
        style = "discord"
    elif shape == 2:
        tok = pick(rng, HEX, 32)
        url = (f"https://acme.webhook.office.com/webhookb2/{_fid(rng)}@{_fid(rng)}/IncomingWebhook/{tok}/"
               f"{_fid(rng)}")
        style = "teams"
    elif shape == 3:
        tok = pick(rng, URLSAFE, 43)
        url = (f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/{pick(rng, HEX, 32)}"
               f"/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={tok}")
        style = "power_automate"
    elif shape == 4:
        tok = pick(rng, URLSAFE, 43) + "%3D"
        url = (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?key=AIzaSy"
               f"{pick(rng, URLSAFE, 33)}&token={tok}")
        style = "google_chat"
    elif shape == 5:
        tok = pick(rng, LOWER + string.digits, 7)
        url = f"https://hooks.zapier.com/hooks/catch/{rng.randint(10 ** 6, 10 ** 8)}/{tok}/"
        style = "zapier"
    else:
        tok = pick(rng, LOWER + string.digits, 26)
        url = f"https://chat.acme.io/hooks/{tok}"
        style = "mattermost"
    lead = rng.choice(["Alerts go to", "Webhook:", "WEBHOOK_URL=", "Notify URL →", "Incoming webhook (do not share)",
                       "Le webhook du canal :", "Webhook-URL für Alarme:", "URL del webhook:", "通知用Webhook:"])
    return style, tok, f"{lead} {url}", False


def v_stripe_whsec(rng: random.Random, i: int) -> Value:
    s = "whsec_" + pick(rng, ALNUM, 32)
    styles = [
        ("env", f"STRIPE_WEBHOOK_SECRET={s}"),
        ("json", f'{{"endpoint": "we_{pick(rng, ALNUM, 24)}", "secret": "{s}"}}'),
        ("cli", f"> Ready! Your webhook signing secret is {s} (^C to quit)"),
        ("prose_fr", f"Secret de signature Stripe : {s}"),
        ("yaml", f"stripe:\n  signing_secret: {s}"),
        ("code", f"event = stripe.Webhook.construct_event(payload, sig, \"{s}\")"),
        ("bare", f"{s}"),
        ("md", f"`{s}` is the endpoint secret for /billing/webhook"),
    ]
    style, snip = styles[i % len(styles)]
    return style, s, snip, False


def v_connection_string(rng: random.Random, i: int) -> Value:
    p = password_value(rng)
    host = rng.choice(["kb-db.postgres.database.azure.com", "10.20.3.4", "vec-prod.cluster-abc.rds.amazonaws.com",
                       "sql-kb.database.windows.net", "mongo-0.kb.svc"])
    u = rng.choice(["kbadmin", "rag_reader", "ingest", "sa"])
    shape = i % 11
    if shape == 0:
        key = base64.b64encode(rng.randbytes(64)).decode()
        return "azure_storage", key, (f"DefaultEndpointsProtocol=https;AccountName=kbdocs{rng.randint(1, 99)};"
                                      f"AccountKey={key};EndpointSuffix=core.windows.net"), False
    if shape == 1:
        key = base64.b64encode(rng.randbytes(32)).decode()
        return "servicebus", key, (f"Endpoint=sb://kb-events.servicebus.windows.net/;SharedAccessKeyName="
                                   f"RootManageSharedAccessKey;SharedAccessKey={key}"), False
    forms = [
        ("ado", f"Server=tcp:{host},1433;Initial Catalog=kb;User ID={u};Password={p};Encrypt=True;"),
        ("jdbc", f"jdbc:postgresql://{host}:5432/rag?user={u}&password={p}&sslmode=require"),
        ("odbc", f"Driver={{ODBC Driver 18 for SQL Server}};Server={host};Database=kb;Uid={u};Pwd={p};"),
        ("uri_pg", f"postgresql://{u}:{p}@{host}:5432/vectors"),
        ("uri_mongo", f"mongodb+srv://{u}:{p}@cluster0.ab12c.mongodb.net/kb?retryWrites=true"),
        ("uri_redis", f"redis://default:{p}@{host}:6379/0"),
        ("uri_amqp", f"amqp://{u}:{p}@{host}:5672/rag"),
        ("jdbc_mysql", f"jdbc:mysql://{host}:3306/wiki?user={u}&password={p}"),
        ("sqlalchemy", f"SQLALCHEMY_DATABASE_URI = \"mysql+pymysql://{u}:{p}@{host}/kb\""),
    ]
    style, snip = forms[shape - 2]
    p_q = quote(p, safe="") if style.startswith(("uri", "sqlalchemy")) else p
    return style, p_q, snip.replace(p, p_q), False


KEY_LABELS = ["API Key: {v}", "Secret key = {v}", "access token is {v}", "API key for the embeddings: {v}",
              "Clé API : {v}", "API-Schlüssel: {v}", "Clave de API: {v}", "Chave de API: {v}", "Chiave API: {v}",
              "API-sleutel: {v}", "Klucz API: {v}", "API kulcs: {v}", "Ключ API: {v}", "API キー: {v}",
              "API 키: {v}", "API 密钥：{v}", "Khóa API: {v}", "مفتاح API: {v}", "API anahtarı: {v}",
              "Kunci API: {v}", "Private token - {v}", "Client Secret: {v}", "app secret => {v}",
              "Access Token (prod): {v}", "Ufunguo wa API: {v}", "מפתח API: {v}", "API कुंजी: {v}"]


def v_labelled_key(rng: random.Random, i: int) -> Value:
    v = pick(rng, rng.choice([ALNUM, HEX, ALNUM + "-_"]), rng.choice([32, 36, 40, 48]))
    tmpl = KEY_LABELS[i % len(KEY_LABELS)]
    return f"label{i % len(KEY_LABELS)}", v, tmpl.format(v=v), False


ZW = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u202e", "\u2066"]


def v_disguised(rng: random.Random, i: int) -> Value:
    raw = [f"sk-proj-{pick(rng, URLSAFE, 48)}", crc_token(rng, "ghp_"), f"xoxb-{digits(rng, 11)}-{digits(rng, 12)}-"
           f"{pick(rng, ALNUM, 24)}", "AIza" + pick(rng, URLSAFE, 35), "sk_live_" + pick(rng, ALNUM, 24),
           "hf_" + pick(rng, string.ascii_letters, 34), "AKIA" + pick(rng, string.ascii_uppercase + "234567", 16),
           "glpat-" + pick(rng, URLSAFE, 20)][i % 8]
    how = i // 8 % 4
    if how == 3:
        out = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in raw)
        style = "fullwidth"
    else:
        ch = ZW[(i // 32 + i) % len(ZW)]
        cut = sorted(rng.sample(range(4, len(raw) - 2), how + 1))
        out = "".join(raw[a:b] + ch for a, b in zip([0] + cut, cut, strict=False)) + raw[cut[-1]:]
        style = f"u{ord(ch):04x}"
    lead = rng.choice(["token:", "key =", "Pasted from the wiki:", "my key", "clé :", "Schlüssel:", "キー：", ""])
    return style, out, f"{lead} {out}".strip(), False


FIRST = ["maria", "j.smith", "anil.kumar", "sofia", "lukas.meier", "chloe", "ahmed", "yuki.tanaka", "olga", "priya",
         "tomasz", "ines", "kwame", "lars.eriksen", "aylin", "nguyen.van.an", "fatima.bello", "emre", "sara.cohen"]
DOMAINS = ["acme-corp.com", "mail.kb-tools.io", "gmail.com", "outlook.de", "yahoo.co.in", "orange.fr",
           "uol.com.br", "hotmail.co.uk", "web.de", "empresa.es", "firma.pl", "seznam.cz", "bigpond.com"]
IDN = ["josé.garcía@correo.es", "Pelé@exemplo.com.br", "δοκιμή@παράδειγμα.ελ", "用户@例子.公司", "юзер@пример.рф",
       "अजय@उदाहरण.भारत", "müller@straße.de", "ελένη@mail.gr", "θωμάς@εταιρεία.ελ", "יעל@דוגמה.ישראל",
       "ñandú@correo.ar", "øystein@firma.no", "señal@ejemplo.pe", "ŽÁK@škola.cz", "köz@cég.hu"]
MAIL_CTX = ["email", "E-Mail", "correo", "e-mail", "courriel", "メール", "이메일", "邮箱", "почта", "ईमेल",
            "البريد الإلكتروني", "e-posta", "sähköposti", "epost", "poczta", "email kantor"]


def v_email(rng: random.Random, i: int) -> Value:
    local = rng.choice(FIRST) + (str(rng.randint(1, 99)) if rng.random() < 0.4 else "")
    addr = f"{local}@{rng.choice(DOMAINS)}"
    ctx = MAIL_CTX[i % len(MAIL_CTX)]
    shape = i % 9
    if shape == 0:
        return "plain", addr, f"Contact ({ctx}): {addr}", False
    if shape == 1:
        up = addr.upper()
        return "upper", up, f"REQUESTER: {up}", False
    if shape == 2:
        idn = IDN[i // 9 % len(IDN)]
        return "idn", idn, f"{ctx}: {idn}", False
    if shape == 3:
        enc = addr.replace("@", "%40")
        return "urlenc", enc, f"https://kb.acme.io/search?q=owner&user={enc}&page=2", False
    if shape == 4:
        esc = addr.replace("@", "\\u0040")
        return "json_u0040", esc, f'raw jsonb: {{"owner": "{esc}", "acl": "team"}}', True
    if shape == 5:
        ent = addr.replace("@", "&#64;")
        return "html_entity", ent, f"<p>Reach the author at {ent}</p>", True
    if shape == 6:
        return "mailto", addr, f"[Write to HR](mailto:{addr}?subject=Offer%20letter)", False
    if shape == 7:
        return "memory", addr, f"User prefers to be contacted at {addr} rather than by phone", False
    return "angle", addr, f"From: \"{local.title()}\" <{addr}>", False


LANG_PHONE = {"en": ["phone", "call me at", "mobile", "tel", "cell", "ring me on", "whatsapp"],
              "fr": ["téléphone", "tél.", "portable", "appelez-moi au", "mobile"],
              "de": ["Telefon", "Tel.", "Handy", "Mobil", "Rufnummer", "erreichbar unter"],
              "hi": ["फ़ोन", "मोबाइल", "phone", "mobile no.", "संपर्क नंबर"], "bn": ["ফোন", "মোবাইল"],
              "ta": ["தொலைபேசி", "கைபேசி"], "es": ["teléfono", "móvil", "llámame al", "tel."],
              "pt": ["telefone", "celular", "whatsapp", "ligue para"], "it": ["cellulare", "telefono", "tel."],
              "nl": ["telefoon", "mobiel", "bel me op"], "pl": ["telefon", "tel. kom.", "komórka"],
              "ja": ["電話", "携帯", "電話番号"], "ko": ["전화", "휴대폰", "연락처"], "tr": ["telefon", "cep", "GSM"],
              "sv": ["telefon", "mobil", "ring mig på"], "ar_es": ["celular", "teléfono", "cel."],
              "fr_ca": ["téléphone", "cellulaire", "tél."]}
PHONE_TEMPLATES = ["{c}: {n}", "{c} {n}", "Contact — {c} {n} (after 5pm)", "memory: user's {c} is {n}",
                   "| Name | {c} |\n|---|---|\n| R. Ortiz | {n} |", "{c} → {n}", "CRM note: {c} {n}, prefers mornings"]


def phone_case(rng: random.Random, i: int, forms: list[tuple[str, Callable[[random.Random], str]]],
               langs: list[str]) -> Value:
    """A national plan's number in one of its written forms beside a context word of one of `langs`."""
    style, make = forms[i % len(forms)]
    n = make(rng)
    words = LANG_PHONE[langs[i // len(forms) % len(langs)]]
    tmpl = PHONE_TEMPLATES[i // 3 % len(PHONE_TEMPLATES)]
    return style, n, tmpl.format(c=rng.choice(words), n=n), False


def _nanp(rng: random.Random) -> tuple[str, str, str]:
    area = rng.choice(["212", "415", "646", "312", "617", "303", "206", "512", "604", "416", "514", "403", "613"])
    exch = str(rng.randint(2, 9)) + digits(rng, 2)
    while exch[1:] == "11" or exch == "555":
        exch = str(rng.randint(2, 9)) + digits(rng, 2)
    return area, exch, digits(rng, 4)


US_FORMS = [("paren", lambda r: "({}) {}-{}".format(*_nanp(r))),
            ("dash", lambda r: "{}-{}-{}".format(*_nanp(r))), ("dot", lambda r: "{}.{}.{}".format(*_nanp(r))),
            ("intl_space", lambda r: "+1 {} {} {}".format(*_nanp(r))),
            ("intl_dash", lambda r: "+1-{}-{}-{}".format(*_nanp(r))),
            ("one_paren", lambda r: "1 ({}) {}-{}".format(*_nanp(r))),
            ("compact", lambda r: "{}{}{}".format(*_nanp(r))), ("space", lambda r: "{} {} {}".format(*_nanp(r)))]
UK_FORMS = [("mobile", lambda r: f"07{r.choice('1234579')}{digits(r, 2)} {digits(r, 6)}"),
            ("mobile_intl", lambda r: f"+44 7{r.choice('1234579')}{digits(r, 2)} {digits(r, 6)}"),
            ("london", lambda r: f"020 {r.choice('378')}{digits(r, 3)} {digits(r, 4)}"),
            ("london_intl0", lambda r: f"+44 (0)20 {r.choice('378')}{digits(r, 3)} {digits(r, 4)}"),
            ("manchester", lambda r: f"0161 {r.randint(2, 9)}{digits(r, 2)} {digits(r, 4)}"),
            ("compact", lambda r: f"07{r.choice('1234579')}{digits(r, 8)}"),
            ("dash", lambda r: f"0113-{r.randint(2, 9)}{digits(r, 2)}-{digits(r, 4)}"),
            ("intl_compact", lambda r: f"+447{r.choice('1234579')}{digits(r, 8)}")]


def _fr_pairs(r: random.Random, first: str) -> list[str]:
    return [first] + [digits(r, 2) for _ in range(4)]


FR_FORMS = [("mobile_space", lambda r: "0" + " ".join(_fr_pairs(r, r.choice("67")))),
            ("paris_dot", lambda r: "01." + ".".join(digits(r, 2) for _ in range(4))),
            ("intl", lambda r: "+33 " + " ".join(_fr_pairs(r, r.choice("67")))),
            ("intl0", lambda r: "+33 (0)" + " ".join(_fr_pairs(r, r.choice("12345")))),
            ("compact", lambda r: "06" + digits(r, 8)), ("dash", lambda r: "07-" + "-".join(digits(r, 2)
                                                                                          for _ in range(4))),
            ("intl_compact", lambda r: "+336" + digits(r, 8)), ("0033", lambda r: "0033 6 " + digits(r, 8))]
DE_FORMS = [("berlin", lambda r: f"030 {r.randint(2, 9)}{digits(r, 7)}"),
            ("mobile", lambda r: f"01{r.choice(['51', '52', '60', '70', '71', '76'])} {digits(r, 8)}"),
            ("intl_mobile", lambda r: f"+49 1{r.choice(['51', '62', '72'])} {digits(r, 8)}"),
            ("intl0", lambda r: f"+49 (0)89 {r.randint(2, 9)}{digits(r, 6)}"),
            ("slash", lambda r: f"089/{r.randint(2, 9)}{digits(r, 6)}"),
            ("dash", lambda r: f"0171-{digits(r, 7)}"), ("din", lambda r: f"+49 40 {digits(r, 3)} {digits(r, 4)}-0"),
            ("0049", lambda r: f"0049 221 {r.randint(2, 9)}{digits(r, 6)}")]
IN_FORMS = [("intl_space", lambda r: f"+91 {r.choice('6789')}{digits(r, 4)} {digits(r, 5)}"),
            ("zero", lambda r: f"0{r.choice('6789')}{digits(r, 4)} {digits(r, 5)}"),
            ("compact", lambda r: f"{r.choice('6789')}{digits(r, 9)}"),
            ("intl_dash", lambda r: f"+91-{r.choice('6789')}{digits(r, 9)}"),
            ("mumbai", lambda r: f"022-2{digits(r, 3)} {digits(r, 4)}"),
            ("delhi", lambda r: f"+91 11 2{digits(r, 3)} {digits(r, 4)}"),
            ("split_3", lambda r: f"{r.choice('6789')}{digits(r, 2)}-{digits(r, 3)}-{digits(r, 4)}"),
            ("0091", lambda r: f"0091 {r.choice('6789')}{digits(r, 9)}")]


def v_phone_us_ca(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, US_FORMS, ["en", "en", "fr_ca"])


def v_phone_uk(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, UK_FORMS, ["en"])


def v_phone_fr(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, FR_FORMS, ["fr"])


def v_phone_de(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, DE_FORMS, ["de"])


def v_phone_in(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, IN_FORMS, ["en", "hi", "bn", "ta"])


def ssn_value(rng: random.Random) -> tuple[str, str, str]:
    area = rng.randint(1, 899)
    while area == 666:
        area = rng.randint(1, 899)
    return f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"


def v_ssn(rng: random.Random, i: int) -> Value:
    a, g, s = ssn_value(rng)
    styles = [("dash", f"SSN: {a}-{g}-{s}", f"{a}-{g}-{s}"),
              ("space", f"Social Security No. {a} {g} {s}", f"{a} {g} {s}"),
              ("compact_label", f"ssn={a}{g}{s}", f"{a}{g}{s}"),
              ("w4_table", f"| Employee | SSN |\n|---|---|\n| D. Park | {a}-{g}-{s} |", f"{a}-{g}-{s}"),
              ("memory", f"User's social security number is {a}-{g}-{s}", f"{a}-{g}-{s}"),
              ("json", f'{{"employee": "J. Rivera", "ssn": "{a}{g}{s}"}}', f"{a}{g}{s}"),
              ("hr_letter", f"Re: payroll setup — SSN {a} {g} {s}, start date 2027-01-04", f"{a} {g} {s}"),
              ("es", f"Número de Seguro Social: {a}-{g}-{s}", f"{a}-{g}-{s}")]
    style, snip, val = styles[i % len(styles)]
    return style, val, snip, False


CARD_BRANDS = ["visa", "mc", "mc2", "amex", "discover", "discover65", "jcb", "diners", "unionpay"]


def card_number(rng: random.Random, brand: str) -> str:
    """An IIN of `brand` (ISO/IEC 7812) completed with random digits and its Luhn digit."""
    prefix = {"visa": "4", "mc": f"5{rng.randint(1, 5)}", "mc2": str(rng.randint(2221, 2720)),
              "amex": rng.choice(["34", "37"]), "discover": "6011", "discover65": "65",
              "jcb": str(rng.randint(3528, 3589)), "diners": "36", "unionpay": "62"}[brand]
    length = {"amex": 15, "diners": 14}.get(brand, 16)
    body = prefix + digits(rng, length - 1 - len(prefix))
    return body + luhn_digit(body)


CARD_CTX = ["Card number", "Kartennummer", "numéro de carte", "número de tarjeta", "cartão", "carta di credito",
            "kaartnummer", "numer karty", "カード番号", "카드번호", "卡号", "номер карты", "kart numarası",
            "رقم البطاقة", "nomor kartu", "số thẻ"]


def v_card(rng: random.Random, i: int) -> Value:
    brand = CARD_BRANDS[i % len(CARD_BRANDS)]
    num = card_number(rng, brand)
    sep = [" ", "-", ".", "_", ""][i // len(CARD_BRANDS) % 5]
    val = group_card(num, sep) if sep else num
    ctx = CARD_CTX[i % len(CARD_CTX)]
    tmpl = rng.choice(["{c}: {v}", "{c} {v} exp 09/29", "memory: paid with {c} {v}",
                       "| {c} | {v} |", "Refund to {c} {v} approved", "{v}"])
    return f"{brand}_{['space', 'dash', 'dot', 'under', 'none'][i // len(CARD_BRANDS) % 5]}", val, \
        tmpl.format(c=ctx, v=val), False


IBAN_BBAN = {"DE": "8n10n", "FR": "5n5n11c2n", "GB": "4a6n8n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c",
             "NL": "4a10n", "BE": "3n7n2n", "PL": "8n16n", "SE": "3n16n1n", "DK": "4n9n1n", "NO": "4n6n1n",
             "AT": "5n11n", "CH": "5n12c", "PT": "4n4n11n2n", "RO": "4a16c", "HU": "3n4n1n15n1n", "CZ": "4n6n10n",
             "SK": "4n6n10n", "BG": "4a4n2n8c", "GR": "3n4n16c", "TR": "5n1n16c", "SA": "2n18c", "AE": "3n16n",
             "IL": "3n3n13n", "KZ": "3n13c", "GE": "2a16n", "BR": "8n5n10n1a1c", "UA": "6n19c", "IS": "4n2n6n10n",
             "RS": "3n13n2n", "IE": "4a6n8n"}
IBAN_CTX = ["IBAN", "Bankverbindung", "IBAN du bénéficiaire", "cuenta IBAN", "conto IBAN", "rekeningnummer",
            "numer rachunku", "bankkonto", "банковская сметка", "hesap no (IBAN)", "رقم الآيبان", "מספר חשבון",
            "IBAN (ადრესატი)", "IBAN：", "účet"]


def v_iban(rng: random.Random, i: int) -> Value:
    cc = list(IBAN_BBAN)[i % len(IBAN_BBAN)]
    b = bban(rng, IBAN_BBAN[cc])
    iban = cc + iban_check(cc, b) + b
    shape = i // len(IBAN_BBAN) % 4
    val, style = [(group(iban, 4, " "), "grouped"), (iban, "compact"), (iban.lower(), "lower"),
                  (group(iban.lower(), 4, " "), "lower_grouped")][shape]
    tmpl = rng.choice(["{c}: {v}", "{c} {v} (BIC on file)", "| Beneficiary | {c} |\n|---|---|\n| A. Novak | {v} |",
                       "Please pay the invoice to {v}", "memory: user's {c} = {v}", "<td>{c}</td><td>{v}</td>"])
    return f"{cc.lower()}_{style}", val, tmpl.format(c=IBAN_CTX[i % len(IBAN_CTX)], v=val), False


# ---- wider kinds ----------------------------------------------------------------------------------------------

def v_auth_header(rng: random.Random, i: int) -> Value:
    shape = i % 5
    if shape == 0:
        cred = base64.b64encode(f"{rng.choice(FIRST)}:{password_value(rng)}".encode()).decode()
        return "basic", cred, f"curl -H 'Authorization: Basic {cred}' https://wiki.acme.io/rest/api/content", False
    if shape == 1:
        tok = pick(rng, URLSAFE, 40)
        return "bearer", tok, f"GET /v1/indexes HTTP/1.1\nHost: api.vectors.io\nAuthorization: Bearer {tok}", False
    if shape == 2:
        resp = pick(rng, HEX, 32)
        return "digest", resp, (f'Authorization: Digest username="kb", realm="wiki", nonce="{pick(rng, HEX, 16)}", '
                                f'uri="/export", response="{resp}", qop=auth, nc=00000001'), False
    if shape == 3:
        sig = pick(rng, HEX, 64)
        kid = "AKIA" + pick(rng, string.ascii_uppercase + "234567", 16)
        return "sigv4", sig, (f"Authorization: AWS4-HMAC-SHA256 Credential={kid}/20261206/eu-west-1/s3/aws4_request, "
                              f"SignedHeaders=host;x-amz-date, Signature={sig}"), False
    tok = pick(rng, URLSAFE, 36)
    return "bearer_json", tok, f'{{"headers": {{"authorization": "Bearer {tok}", "x-request-id": "{_fid(rng)}"}}}}', \
        False


def jwt_value(rng: random.Random) -> str:
    head = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64url(json.dumps({"sub": str(rng.randint(1, 10 ** 6)), "email": f"{rng.choice(FIRST)}@acme-corp.com",
                              "iat": 1764979200 + rng.randint(0, 10 ** 6), "scope": "kb:read"}).encode())
    return f"{head}.{body}.{b64url(rng.randbytes(32))}"


def v_jwt(rng: random.Random, i: int) -> Value:
    t = jwt_value(rng)
    tmpl = ["token={v}", "Authorization: Bearer {v}", "langgraph config: {{'configurable': {{'jwt': '{v}'}}}}",
            "set-cookie: id_token={v}; Secure", "MCP server env LETTA_TOKEN={v}", "{v}"][i % 6]
    return ["kv", "header", "config", "cookie", "env", "bare"][i % 6], t, tmpl.format(v=t), False


def v_private_key(rng: random.Random, i: int) -> Value:
    shape = i % 4
    if shape in (0, 1):
        key = ec.derive_private_key(rng.getrandbits(250) + 1, ec.SECP256R1())
        fmt = serialization.PrivateFormat.PKCS8 if shape == 0 else serialization.PrivateFormat.TraditionalOpenSSL
        pem = key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode().strip()
    elif shape == 2:
        seed = rng.randbytes(32)
        pub = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        blob = openssh_ed25519_blob(seed, pub, rng.randbytes(4), b"deploy@kb")
        b64 = base64.b64encode(blob).decode()
        pem = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + group(b64, 70, "\n") + "\n-----END OPENSSH PRIVATE KEY-----"
    else:
        key = ec.derive_private_key(rng.getrandbits(250) + 1, ec.SECP256R1())
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
        sa = {"type": "service_account", "project_id": "kb-rag-prod", "private_key_id": pick(rng, HEX, 40),
              "private_key": pem, "client_email": "ingest@kb-rag-prod.iam.gserviceaccount.com"}
        return "gcp_sa_json", json.dumps(pem)[1:-1], "service-account.json:\n" + json.dumps(sa, indent=2), False
    return ["pkcs8", "sec1", "openssh"][shape], pem, f"Deploy key (from the runbook page):\n{pem}", False


def v_session_cookie(rng: random.Random, i: int) -> Value:
    name, val = [("sessionid", pick(rng, LOWER + string.digits, 32)), ("JSESSIONID", pick(rng, "0123456789ABCDEF", 32)),
                 ("PHPSESSID", pick(rng, LOWER + string.digits, 26)), ("connect.sid", "s%3A" + pick(rng, URLSAFE, 32)
                                                                       + "." + pick(rng, ALNUM, 43)),
                 ("ASP.NET_SessionId", pick(rng, LOWER + string.digits, 24)), ("_gitlab_session",
                                                                              pick(rng, HEX, 32)),
                 ("laravel_session", b64url(rng.randbytes(60))), ("confluence.session", pick(rng, ALNUM, 40))][i % 8]
    tmpl = ["Cookie: {n}={v}; theme=dark", "Set-Cookie: {n}={v}; Path=/; HttpOnly; Secure",
            '{{"cookies": [{{"name": "{n}", "value": "{v}", "domain": "wiki.acme.io"}}]}}',
            "curl -b '{n}={v}' https://kb.acme.io/export"][i // 8 % 4]
    return name.lower().replace(".", "_"), val, tmpl.format(n=name, v=val), False


PROVIDER_LEADS = ["OPENAI_API_KEY={v}", "key: {v}", '"api_key": "{v}"', "export {e}={v}", "{v}",
                  "client = Client(api_key=\"{v}\")", "Onboarding: your personal key is {v}", "| {e} | {v} |"]


def provider(env: str, make: Callable[[random.Random], str]) -> Callable[[random.Random, int], Value]:
    """A provider token kind: `make` writes the token as the provider's docs show it."""
    def gen(rng: random.Random, i: int) -> Value:
        v = make(rng)
        lead = PROVIDER_LEADS[i % len(PROVIDER_LEADS)].replace("OPENAI_API_KEY", env)
        return f"lead{i % len(PROVIDER_LEADS)}", v, lead.format(v=v, e=env), False
    return gen


def openai_key(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return f"sk-proj-{pick(rng, URLSAFE, 74)}T3BlbkFJ{pick(rng, URLSAFE, 74)}"
    return f"sk-{pick(rng, ALNUM, 20)}T3BlbkFJ{pick(rng, ALNUM, 20)}"


def github_token(rng: random.Random) -> str:
    if rng.random() < 0.6:
        return crc_token(rng, "ghp_")
    return f"github_pat_11{pick(rng, string.ascii_uppercase + string.digits, 20)}_{pick(rng, ALNUM, 59)}"


PROVIDERS = {
    "openai_key": provider("OPENAI_API_KEY", openai_key),
    "anthropic_key": provider("ANTHROPIC_API_KEY", lambda r: f"sk-ant-api03-{pick(r, URLSAFE, 93)}AA"),
    "pinecone_key": provider("PINECONE_API_KEY", lambda r: f"pcsk_{pick(r, ALNUM, 6)}_{pick(r, ALNUM, 63)}"),
    "huggingface_token": provider("HF_TOKEN", lambda r: "hf_" + pick(r, string.ascii_letters, 34)),
    "github_token": provider("GITHUB_TOKEN", github_token),
    "langsmith_key": provider("LANGSMITH_API_KEY", lambda r: f"lsv2_pt_{pick(r, HEX, 32)}_{pick(r, HEX, 10)}"),
    "groq_key": provider("GROQ_API_KEY", lambda r: "gsk_" + pick(r, ALNUM, 52)),
}


OTHER_PHONES: dict[str, tuple[list[tuple[str, Callable[[random.Random], str]]], list[str]]] = {
    "phone_es": ([("mobile", lambda r: f"6{digits(r, 2)} {digits(r, 3)} {digits(r, 3)}"),
                  ("intl", lambda r: f"+34 6{digits(r, 2)} {digits(r, 2)} {digits(r, 2)} {digits(r, 2)}"),
                  ("madrid", lambda r: f"91 {digits(r, 3)} {digits(r, 2)} {digits(r, 2)}"),
                  ("compact", lambda r: f"+347{digits(r, 8)}")], ["es"]),
    "phone_br": ([("mobile_paren", lambda r: f"(11) 9{digits(r, 4)}-{digits(r, 4)}"),
                  ("intl", lambda r: f"+55 21 9{digits(r, 4)}-{digits(r, 4)}"),
                  ("landline", lambda r: f"(31) 3{digits(r, 3)}-{digits(r, 4)}"),
                  ("compact", lambda r: f"+55119{digits(r, 8)}")], ["pt"]),
    "phone_it": ([("mobile", lambda r: f"3{r.choice('2345')}{digits(r, 1)} {digits(r, 3)} {digits(r, 4)}"),
                  ("intl", lambda r: f"+39 3{r.choice('2345')}{digits(r, 1)} {digits(r, 7)}"),
                  ("rome", lambda r: f"06 {digits(r, 4)} {digits(r, 4)}"),
                  ("milan_intl", lambda r: f"+39 02 {digits(r, 8)}")], ["it"]),
    "phone_nl": ([("mobile", lambda r: f"06-{digits(r, 8)}"),
                  ("intl", lambda r: f"+31 6 {digits(r, 4)} {digits(r, 4)}"),
                  ("amsterdam", lambda r: f"020 {digits(r, 3)} {digits(r, 4)}"),
                  ("intl_compact", lambda r: f"+316{digits(r, 8)}")], ["nl"]),
    "phone_pl": ([("mobile", lambda r: f"{r.choice('567')}{digits(r, 2)} {digits(r, 3)} {digits(r, 3)}"),
                  ("intl", lambda r: f"+48 {r.choice('567')}{digits(r, 2)} {digits(r, 3)} {digits(r, 3)}"),
                  ("warsaw", lambda r: f"22 {digits(r, 3)} {digits(r, 2)} {digits(r, 2)}"),
                  ("dash", lambda r: f"+48 {r.choice('567')}{digits(r, 2)}-{digits(r, 3)}-{digits(r, 3)}")],
                 ["pl"]),
    "phone_jp": ([("mobile", lambda r: f"0{r.choice('789')}0-{digits(r, 4)}-{digits(r, 4)}"),
                  ("intl", lambda r: f"+81 {r.choice('789')}0-{digits(r, 4)}-{digits(r, 4)}"),
                  ("tokyo", lambda r: f"03-{digits(r, 4)}-{digits(r, 4)}"),
                  ("osaka_paren", lambda r: f"06({digits(r, 4)}){digits(r, 4)}")], ["ja"]),
    "phone_kr": ([("mobile", lambda r: f"010-{digits(r, 4)}-{digits(r, 4)}"),
                  ("intl", lambda r: f"+82 10-{digits(r, 4)}-{digits(r, 4)}"),
                  ("seoul", lambda r: f"02-{digits(r, 4)}-{digits(r, 4)}"),
                  ("compact", lambda r: f"010{digits(r, 8)}")], ["ko"]),
    "phone_au": ([("mobile", lambda r: f"04{digits(r, 2)} {digits(r, 3)} {digits(r, 3)}"),
                  ("intl", lambda r: f"+61 4{digits(r, 2)} {digits(r, 3)} {digits(r, 3)}"),
                  ("sydney", lambda r: f"(02) {r.choice('89')}{digits(r, 3)} {digits(r, 4)}"),
                  ("intl_land", lambda r: f"+61 3 9{digits(r, 3)} {digits(r, 4)}")], ["en"]),
    "phone_tr": ([("mobile", lambda r: f"0 (5{digits(r, 2)}) {digits(r, 3)} {digits(r, 2)} {digits(r, 2)}"),
                  ("intl", lambda r: f"+90 5{digits(r, 2)} {digits(r, 3)} {digits(r, 2)} {digits(r, 2)}"),
                  ("istanbul", lambda r: f"0212 {digits(r, 3)} {digits(r, 2)} {digits(r, 2)}"),
                  ("compact", lambda r: f"05{digits(r, 9)}")], ["tr"]),
    "phone_se": ([("mobile", lambda r: f"07{r.choice('0236')}-{digits(r, 3)} {digits(r, 2)} {digits(r, 2)}"),
                  ("intl", lambda r: f"+46 7{r.choice('0236')} {digits(r, 3)} {digits(r, 2)} {digits(r, 2)}"),
                  ("stockholm", lambda r: f"08-{digits(r, 3)} {digits(r, 2)} {digits(r, 2)}"),
                  ("compact", lambda r: f"+467{r.choice('0236')}{digits(r, 7)}")], ["sv"]),
    "phone_ar": ([("mobile_intl", lambda r: f"+54 9 11 {digits(r, 4)}-{digits(r, 4)}"),
                  ("national", lambda r: f"011 15-{digits(r, 4)}-{digits(r, 4)}"),
                  ("cordoba", lambda r: f"(0351) 4{digits(r, 2)}-{digits(r, 4)}"),
                  ("compact", lambda r: f"+54911{digits(r, 8)}")], ["ar_es"]),
}


# ---- national ids (outside the target) ------------------------------------------------------------------------

def es_dni(rng: random.Random) -> str:
    if rng.random() < 0.3:
        lead = rng.randrange(3)
        n = int(str(lead) + digits(rng, 7))
        return "XYZ"[lead] + f"{n % 10 ** 7:07d}" + "TRWAGMYFPDXBNJZSQVHLCKE"[n % 23]
    n = rng.randint(10 ** 6, 10 ** 8 - 1)
    return f"{n:08d}" + "TRWAGMYFPDXBNJZSQVHLCKE"[n % 23]


def br_cpf(rng: random.Random) -> str:
    d = [int(c) for c in digits(rng, 9)]
    for w in (10, 11):
        d.append(sum(x * (w - k) for k, x in enumerate(d)) * 10 % 11 % 10)
    s = "".join(map(str, d))
    return f"{s[:3]}.{s[3:6]}.{s[6:9]}-{s[9:]}" if rng.random() < 0.7 else s


def pl_pesel(rng: random.Random) -> str:
    y, m, day = rng.randint(0, 99), rng.randint(1, 12), rng.randint(1, 28)
    m += 20 if y < 10 else 0
    s = f"{y:02d}{m:02d}{day:02d}" + digits(rng, 4)
    return s + str((10 - sum(int(c) * w for c, w in zip(s, [1, 3, 7, 9] * 3, strict=False)) % 10) % 10)


def nl_bsn(rng: random.Random) -> str:
    while True:
        s = str(rng.randint(1, 9)) + digits(rng, 8)
        if (sum(int(c) * (9 - k) for k, c in enumerate(s[:8])) - int(s[8])) % 11 == 0:
            return s


VERHOEFF_MUL = ["0123456789", "1234067895", "2340178956", "3401289567", "4012395678", "5987604321",
                "6598710432", "7659821043", "8765932104", "9876543210"]
VERHOEFF_P = ["0123456789", "1576283094", "5803796142", "8916043527", "9453126870", "4286573901", "2793806415",
              "7046913258"]
VERHOEFF_INV = "0432156789"


def verhoeff_digit(num: str) -> str:
    """The Verhoeff check digit (Aadhaar's, UIDAI) that completes `num`."""
    c = 0
    for k, ch in enumerate(reversed(num)):
        c = int(VERHOEFF_MUL[c][int(VERHOEFF_P[(k + 1) % 8][int(ch)])])
    return VERHOEFF_INV[c]


def in_aadhaar(rng: random.Random) -> str:
    s = str(rng.randint(2, 9)) + digits(rng, 10)
    s += verhoeff_digit(s)
    return group(s, 4, rng.choice([" ", " ", "-", ""]))


def tr_tckn(rng: random.Random) -> str:
    d = [rng.randint(1, 9)] + [int(c) for c in digits(rng, 8)]
    d.append((sum(d[0:9:2]) * 7 - sum(d[1:8:2])) % 10)
    d.append(sum(d) % 10)
    return "".join(map(str, d))


IDS: dict[str, tuple[Callable[[random.Random], str], list[str]]] = {
    "es_dni": (es_dni, ["DNI", "NIE", "documento de identidad", "DNI/NIE"]),
    "br_cpf": (br_cpf, ["CPF", "CPF do titular", "nº do CPF"]),
    "pl_pesel": (pl_pesel, ["PESEL", "nr PESEL", "numer PESEL"]),
    "nl_bsn": (nl_bsn, ["BSN", "burgerservicenummer", "BSN-nummer"]),
    "in_aadhaar": (in_aadhaar, ["Aadhaar", "आधार संख्या", "Aadhaar No.", "UID"]),
    "tr_tckn": (tr_tckn, ["TC Kimlik No", "T.C. kimlik numarası", "TCKN"]),
}
ID_TEMPLATES = ["{c}: {v}", "HR letter — {c} {v}", "| Name | {c} |\n|---|---|\n| K. Demir | {v} |",
                "memory: user's {c} is {v}", '{{"{c}": "{v}"}}']


def national_id(kind: str) -> Callable[[random.Random, int], Value]:
    make, labels = IDS[kind]

    def gen(rng: random.Random, i: int) -> Value:
        v = make(rng)
        tmpl = ID_TEMPLATES[i % len(ID_TEMPLATES)]
        return f"t{i % len(ID_TEMPLATES)}", v, tmpl.format(c=labels[i % len(labels)], v=v), False
    return gen


def other_phone(kind: str) -> Callable[[random.Random, int], Value]:
    forms, langs = OTHER_PHONES[kind]
    return lambda rng, i: phone_case(rng, i, forms, langs)


KINDS: dict[str, Callable[[random.Random, int], Value]] = {
    "password": v_password, "aws_secret": v_aws_secret, "webhook": v_webhook, "stripe_whsec": v_stripe_whsec,
    "connection_string": v_connection_string, "labelled_key": v_labelled_key, "disguised": v_disguised,
    "email": v_email, "phone_us_ca": v_phone_us_ca, "phone_uk": v_phone_uk, "phone_fr": v_phone_fr,
    "phone_de": v_phone_de, "phone_in": v_phone_in, "ssn": v_ssn, "card": v_card, "iban": v_iban,
    "auth_header": v_auth_header, "jwt": v_jwt, "private_key": v_private_key, "session_cookie": v_session_cookie,
    **PROVIDERS, **{k: other_phone(k) for k in OTHER_PHONES}, **{k: national_id(k) for k in IDS}}


def carry(rng: random.Random, i: int, value: Value) -> tuple[str, str, bool]:
    """The carrier for case `i`: every third one JSON (unless the value must stay raw), cycling both lists."""
    style, secret, snip, raw_only = value
    if i % 3 == 0 and not raw_only:
        name = list(JSON_CARRIERS)[i // 3 % len(JSON_CARRIERS)]
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
    body = "4" + digits(rng, 14)
    return group(body + str((int(luhn_digit(body)) + rng.randint(1, 9)) % 10), 4, " ")


NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "vector_id": lambda r: _dump({"id": f"vec_{pick(r, HEX, 24)}", "namespace": "kb", "score": 0.8123}),
    "chunk_offset": lambda r: f"chunk_id={pick(r, HEX, 12)}-{r.randint(0, 400)} start_char={r.randint(0, 90000)} "
                              f"end_char={r.randint(90000, 99999)} overlap=128",
    "doc_hash": lambda r: f"document sha256: {hashlib.sha256(r.randbytes(16)).hexdigest()} (dedup key)",
    "embedding": lambda r: _dump({"embedding": _floats(r, 8), "dim": r.choice([384, 768, 1024, 1536, 3072])}),
    "score": lambda r: f"rerank relevance_score={r.random():.6f} distance={r.uniform(0, 2):.6f} "
                       f"rank={r.randint(1, 50)}",
    "page_ref": lambda r: f"Source: Employee Handbook 2026, p. {r.randint(1, 300)} of {r.randint(300, 400)}",
    "clause_ref": lambda r: f"See clause {r.randint(1, 20)}.{r.randint(1, 9)}.{r.randint(1, 9)} and Annex "
                            f"{r.choice('ABCD')}, section {r.randint(1, 40)}(b)",
    "iso_std": lambda r: f"Aligned with ISO/IEC {r.choice(['27001:2022', '27002:2022', '42001:2023', '27701:2019'])} "
                         f"and ISO {r.randint(9000, 31000)}:{r.randint(2005, 2024)}",
    "doi": lambda r: f"Cited: https://doi.org/10.{r.randint(1000, 9999)}/{pick(r, LOWER + string.digits, 8)}."
                     f"{r.randint(2015, 2026)}.{r.randint(100, 99999)}",
    "article_no": lambda r: f"Art. {r.randint(1, 99)} GDPR; Article {r.randint(1, 60)}(2) of Regulation (EU) "
                            f"2024/{r.randint(1000, 1999)}; SKU {r.randint(10 ** 7, 10 ** 8)}",
    "product_version": lambda r: f"llama-index-core=={r.randint(0, 1)}.{r.randint(10, 14)}.{r.randint(0, 40)}, "
                                 f"qdrant-client {r.randint(1, 2)}.{r.randint(0, 15)}.{r.randint(0, 9)}, part "
                                 f"RX-{r.randint(1000, 9999)}-{pick(r, string.ascii_uppercase, 2)}",
    "date_time": lambda r: f"indexed_at 2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}T"
                           f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:00Z, valid_until 31.12.2027",
    "amount": lambda r: f"Invoice total: € {r.randint(1, 99)}.{r.randint(100, 999)},{r.randint(10, 99)} "
                        f"(VAT {r.randint(5, 25)} %), USD {r.randint(1000, 999999):,}.00",
    "placeholder": lambda r: r.choice(["DB_PASSWORD=<your-password>", "API Key: YOUR_API_KEY_HERE",
                                       "PINECONE_API_KEY=${PINECONE_API_KEY}", "password: changeme-in-vault",
                                       "Secret key = <redacted>", "token: {{ secrets.HF_TOKEN }}",
                                       "Passwort: ********", "connection: postgresql://user:<password>@host/db"]),
    "masked": lambda r: r.choice([f"card **** **** **** {digits(r, 4)}", f"IBAN DE** **** **** **** **{digits(r, 2)}",
                                  f"sk-...{pick(r, ALNUM, 4)}", f"phone +44 7*** ***{digits(r, 3)}",
                                  f"SSN ***-**-{digits(r, 4)}", f"j***@{r.choice(DOMAINS)}"]),
    "luhn_invalid": lambda r: f"Reference number {_luhn_bad(r)} (not a card)",
    "service_number": lambda r: r.choice([f"Customer service: 1-800-{r.randint(200, 999)}-{digits(r, 4)} (toll-free)",
                                          f"Freephone helpline 0800 {digits(r, 3)} {digits(r, 4)}",
                                          f"Service client : 0 800 {digits(r, 2)} {digits(r, 2)} {digits(r, 2)} "
                                          "(appel gratuit)",
                                          f"Kundenservice (kostenlos): 0800 {digits(r, 7)}",
                                          f"Toll free helpline 1800-{digits(r, 3)}-{digits(r, 4)}"]),
    "doc_example": lambda r: r.choice(["aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
                                       "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                                       "Example: api_key='sk-...'; never commit real keys",
                                       "export OPENAI_API_KEY=\"sk-your-key\"",
                                       "curl -u username:password https://example.com",
                                       "whsec_... (copy it from the dashboard)"]),
    "model_dims": lambda r: f"model text-embedding-3-{r.choice(['small', 'large'])} dims={r.choice([512, 1536, 3072])}"
                            f" tokens={r.randint(100, 8191)} batch={r.randint(16, 2048)}",
    "ticket_id": lambda r: f"Linked ticket ZD-{r.randint(10000, 99999)}, Jira KB-{r.randint(100, 9999)}, "
                           f"PR #{r.randint(100, 9999)}, commit {pick(r, HEX, 40)}",
}


def generate_negatives() -> Iterator[tuple[str, str]]:
    """NEGATIVES_PER_SORT near misses of each sort, as (sort, text), some inside a JSON carrier."""
    rng = random.Random(SEED + 1)
    for sort, make in NEAR_MISSES.items():
        for i in range(NEGATIVES_PER_SORT):
            text = make(rng)
            if i % 3 == 0:
                name = list(JSON_CARRIERS)[i % len(JSON_CARRIERS)]
                text = JSON_CARRIERS[name](rng, text, "")
            yield sort, text
