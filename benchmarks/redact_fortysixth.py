"""The forty-sixth blind redaction corpus: education and e-learning agents, East Asian users foremost -- what an agent
that runs a school, a university or a learning platform sees. Written from the formats' public specifications by
someone who read neither the detection rules nor the other corpora.

Carriers (the `form` head): LMS records (Canvas Conversations API messages and Rails log lines, Moodle web-service
forum posts, cron/log lines and page HTML, gradebook feedback), Google Classroom announcements, SIS exports (CSV
with Japanese headers, JSON student records), enrolment and scholarship forms, proctoring logs and flag events (OCR
of the candidate's screen), parent and student chats (WeChat-style exports, LINE talk history, KakaoTalk exports,
LINE Messaging API and Kakao i skill webhooks, WeCom group-robot bodies, Zoom Team Chat events and saved meeting
chats, Teams WebVTT transcripts), helpdesk tickets, rendered notice e-mails, deploy notes and the agent's own
messages (Markdown replies, tool_use inputs, chat-completion requests). About a third is JSON carried (`is_json`).
Six cases in ten are written in Chinese (simplified and traditional), Japanese or Korean: CJK labels, full-width
colons and digits, ideographic spaces, CJK brackets (「」【】〔〕（）) and particles right after a value; the rest in
eighteen other languages.

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37,
Discover 6011/65, JCB 3528-3589, Diners 36, UnionPay 62) with the Luhn digit, also in full-width digits; IBANs,
ISO 13616 and the SWIFT IBAN registry's BBAN structures (MOD 97-10; Belgium's national mod 97 pair too); SSNs, the
SSA's rules (area not 000/666/9xx, group not 00, serial not 0000) as FAFSA forms ask them; phones, the national
numbering plans (NANP, Ofcom, ARCEP, BNetzA, TRAI/DoT; MIIT China, MIC Japan, MSIT Korea, NCC Taiwan) with context
words in the country's language, drama/fiction ranges avoided; AWS keys, IAM's AKIA/ASIA ids and 40-character
secrets as `aws configure`, the credentials file and the console's CSV print them; webhooks as their docs print
them: Slack, Discord, Teams (Power Automate `sig=` and legacy webhookb2), Google Chat (`token=`), Feishu/Lark,
DingTalk (`access_token=`), WeCom (`key=`), Mattermost, Zoom Team Chat -- the secret is the token only; Stripe
`whsec_` (dashboard: 32 base62, CLI: 64 hex) and `sk_live_`/`rk_live_`; connection strings (PostgreSQL/MySQL/
MongoDB/Redis/AMQP URIs, ADO.NET, ODBC, JDBC incl. Oracle thin for Banner, Azure Storage `AccountKey`) -- the
secret is the password or key only; JWT (RFC 7519/7515) as LTI 1.3 id_tokens and client assertions (IMS Security
Framework) and Zoom Meeting SDK signatures; Bearer (RFC 6750: Canvas `N~` tokens, Google `ya29.`) and Basic
(RFC 7617); PEM PKCS#8/SEC1 EC keys and OpenSSH Ed25519 keys (PROTOCOL.key) -- the secret is the base64 body;
TOTP seeds (RFC 6238, Google Authenticator's Key Uri Format, base32 RFC 4648); recovery codes as GitHub, Google
and Microsoft print them; Google API keys (`AIza`, 39) and OAuth client secrets (`GOCSPX-`); AI keys (OpenAI
`sk-proj-`, Anthropic `sk-ant-api03-`, DeepSeek/DashScope `sk-` + 32 hex, Moonshot `sk-`, Zhipu `id.secret`,
Hugging Face `hf_`); developer tokens (GitHub `ghp_` with CRC32, `github_pat_`, GitLab `glpat-`, Slack `xoxb-`/
`xoxp-`, SendGrid `SG.`, npm); session cookies (MoodleSession, Canvas's Rails AES-GCM cookie, Open edX sessionid,
Tomcat JSESSIONID, Express connect.sid, PHPSESSID). Outside the target: national ids with public check algorithms
-- China's resident id (GB 11643, ISO 7064 MOD 11-2), Taiwan's national id (letter weights, mod 10), Korea's RRN
(weights 2-9/2-5, mod 11), Japan's My Number (MIC ordinance, mod 11), Hong Kong's HKID (mod 11), Singapore's NRIC
(weights 2-7-6-5-4-3-2, letter table) -- and Chinese, Japanese, Korean and Taiwanese phones.

Judgements: a case's `secret` is only what must not survive (a webhook's token, a connection string's password, a
cookie's value, a header's credential, a PEM key's body). A value disguised by the writer (full-width letters from
an IME, a zero-width character, %-encoding, JSON \\u escapes, a full-width `＠`) is the secret as written. Google
Chat webhook URLs carry Google's one shared `key=`, which opens nothing alone; the token is the secret. RSA keys are
left out because their generation cannot be seeded; LTI tools holding EC keys is what the IMS framework allows
beside RS256. Near misses are what a school's systems hold that is neither secret nor personal: course and LTI
ids, CSS selectors, XPath, campus coordinates, pixel sizes, timestamps (also Japanese era dates), request and
trace ids, cache-busting hashes and SRI digests, CSRF field names without values, placeholders and example
addresses, masked values (138****5678), version strings, businesses' published service lines (0120, 400, 1588,
0800), Luhn-invalid receipt numbers, order and payment transaction numbers, parcel tracking numbers (UPU S10 with
its check digit), textbook ISBNs (valid check digit), grades and amounts, rooms and course codes, file digests,
documented example keys: none of them identifies a person or opens anything.
"""

from __future__ import annotations

import base64
import json
import random
import re
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
    luhn_ok,
    openssh_ed25519_blob,
    pick,
)

SEED = 46
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"cn_resident_id", "tw_national_id", "kr_rrn", "jp_my_number", "hk_hkid", "sg_nric",
                            "phone_cn", "phone_jp", "phone_kr", "phone_tw"})
"""National ids and East Asian phones: written and reported, not held to the recall target."""

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
ALNUM = string.ascii_letters + string.digits
URLSAFE = string.ascii_letters + string.digits + "-_"
HEX = "0123456789abcdef"
BASE32 = string.ascii_uppercase + "234567"


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


# ---- languages ------------------------------------------------------------------------------------------------

CJK = ("zh", "zh_tw", "ja", "ko")
OTHER = ("en", "de", "fr", "es", "it", "pt", "nl", "pl", "tr", "ru", "ar", "hi", "vi", "th", "id", "sv", "uk", "he")


def lang_of(i: int) -> str:
    """Case `i`'s language: three in five CJK (cycling the four), the rest cycling eighteen others."""
    return CJK[i % 4] if i % 5 < 3 else OTHER[(i * 7) % len(OTHER)]


FRAMES = {
    "zh": ["老师您好，{x}，麻烦帮忙核对一下。", "【教务处通知】{x}", "家长留言：{x} 谢谢老师！", "{x}"],
    "zh_tw": ["老師您好，{x}，再麻煩您確認。", "【註冊組公告】{x}", "家長留言：{x} 謝謝老師！", "{x}"],
    "ja": ["先生、{x} です。ご確認ください。", "【教務課より】{x}", "保護者より：{x} よろしくお願いします。", "{x}"],
    "ko": ["선생님, {x} 확인 부탁드립니다.", "[학사지원팀 안내] {x}", "학부모 메시지: {x} 감사합니다.", "{x}"],
    "en": ["Hi Ms. Park, {x} — could you check?", "Registrar note: {x}"],
    "de": ["Hallo Frau Weber, {x} – bitte prüfen.", "Hinweis Studienbüro: {x}"],
    "fr": ["Bonjour Madame, {x} — merci de vérifier.", "Note de la scolarité : {x}"],
    "es": ["Hola profesora, {x}, ¿lo puede revisar?", "Secretaría académica: {x}"],
    "it": ["Buongiorno prof, {x}, può controllare?", "Segreteria studenti: {x}"],
    "pt": ["Olá professora, {x}, pode conferir?", "Secretaria acadêmica: {x}"],
    "nl": ["Hallo meester, {x}, kunt u het nakijken?", "Studentenadministratie: {x}"],
    "pl": ["Dzień dobry, {x}, proszę sprawdzić.", "Dziekanat: {x}"],
    "tr": ["Merhaba hocam, {x}, kontrol eder misiniz?", "Öğrenci işleri: {x}"],
    "ru": ["Здравствуйте, {x}, проверьте, пожалуйста.", "Учебная часть: {x}"],
    "ar": ["مرحباً أستاذة، {x}، يرجى التحقق.", "شؤون الطلاب: {x}"],
    "hi": ["नमस्ते मैडम, {x}, कृपया जाँच लें।", "परीक्षा विभाग: {x}"],
    "vi": ["Chào cô, {x}, cô kiểm tra giúp em.", "Phòng đào tạo: {x}"],
    "th": ["สวัสดีครับอาจารย์ {x} รบกวนตรวจสอบครับ", "งานทะเบียน: {x}"],
    "id": ["Halo Bu, {x}, mohon dicek.", "Bagian akademik: {x}"],
    "sv": ["Hej, {x} – kan du kolla?", "Studieexpeditionen: {x}"],
    "uk": ["Добрий день, {x}, перевірте, будь ласка.", "Деканат: {x}"],
    "he": ["שלום המורה, {x}, אפשר לבדוק?", "מזכירות הסטודנטים: {x}"],
}

JOINS = {
    "zh": ["{l}：{v}", "{l}：\u3000{v}", "{l}是{v}", "{l}为：{v}", "【{l}】{v}", "{l}「{v}」", "{l}（{v}）",
           "{l}: {v}"],
    "zh_tw": ["{l}：{v}", "{l}：\u3000{v}", "{l}是{v}", "【{l}】{v}", "{l}「{v}」", "{l}〔{v}〕", "{l}: {v}"],
    "ja": ["{l}：{v}", "{l}は「{v}」", "{l}は{v}です", "【{l}】{v}", "{l}『{v}』", "{l}：\u3000{v}", "{l}: {v}"],
    "ko": ["{l}: {v}", "{l}은(는) {v}입니다", "[{l}] {v}", "{l} → {v}", "{l}：{v}", "{l} {v}"],
    "other": ["{l}: {v}", "{l}: {v}", "{l} = {v}", "{l} → {v}"],
}


def _labels(table: dict[str, str], lang: str) -> list[str]:
    return (table.get(lang) or table["en"]).split("|")


def say(rng: random.Random, lang: str, label: str, value: str) -> str:
    """`label` and `value` joined as a writer of `lang` joins them (CJK punctuation and particles for CJK)."""
    return rng.choice(JOINS.get(lang, JOINS["other"])).format(l=label, v=value)


def frame(rng: random.Random, lang: str, inner: str) -> str:
    """`inner` inside a sentence of `lang` (a teacher's, a parent's or an office's)."""
    return rng.choice(FRAMES[lang]).format(x=inner)


def labelled(rng: random.Random, i: int, table: dict[str, str], value: str) -> str:
    """`value` after a label from `table` in case `i`'s language, framed in that language."""
    lang = lang_of(i)
    return frame(rng, lang, say(rng, lang, rng.choice(_labels(table, lang)), value))


FULLWIDTH = {c: chr(ord(c) + 0xFEE0) for c in string.digits + string.ascii_letters + "+-()@._/:~"}


def fullwidth(text: str) -> str:
    """`text` as a CJK IME in full-width mode types it (U+FF01-FF5E, spaces as U+3000)."""
    return "".join(FULLWIDTH.get(c, "\u3000" if c == " " else c) for c in text)


PASSWORD_L = {"zh": "密码|登录密码|初始密码", "zh_tw": "密碼|登入密碼|預設密碼",
              "ja": "パスワード|初期パスワード|仮パスワード", "ko": "비밀번호|임시 비밀번호|초기 비밀번호",
              "en": "password|temporary password", "de": "Passwort|Kennwort", "fr": "mot de passe",
              "es": "contraseña|clave", "it": "password", "pt": "senha", "nl": "wachtwoord", "pl": "hasło",
              "tr": "şifre|parola", "ru": "пароль", "ar": "كلمة المرور", "hi": "पासवर्ड", "vi": "mật khẩu",
              "th": "รหัสผ่าน", "id": "kata sandi", "sv": "lösenord", "uk": "пароль", "he": "סיסמה"}
EMAIL_L = {"zh": "邮箱|电子邮件|联系邮箱", "zh_tw": "電子郵件|信箱", "ja": "メールアドレス|メール",
           "ko": "이메일|이메일 주소", "en": "email|e-mail", "de": "E-Mail", "fr": "courriel|adresse e-mail",
           "es": "correo", "it": "e-mail", "pt": "e-mail", "nl": "e-mailadres", "pl": "e-mail", "tr": "e-posta",
           "ru": "эл. почта", "ar": "البريد الإلكتروني", "hi": "ईमेल", "vi": "email", "th": "อีเมล", "id": "surel",
           "sv": "e-post", "uk": "ел. пошта", "he": "דוא\"ל"}
CARD_L = {"zh": "银行卡号|信用卡号|卡号", "zh_tw": "信用卡號|卡號", "ja": "カード番号|クレジットカード番号",
          "ko": "카드번호|신용카드 번호", "en": "card number|card", "de": "Kartennummer", "fr": "numéro de carte",
          "es": "número de tarjeta", "it": "numero carta", "pt": "número do cartão", "nl": "kaartnummer",
          "pl": "numer karty", "tr": "kart numarası", "ru": "номер карты", "ar": "رقم البطاقة", "hi": "कार्ड नंबर",
          "vi": "số thẻ", "th": "หมายเลขบัตร", "id": "nomor kartu", "sv": "kortnummer", "uk": "номер картки",
          "he": "מספר כרטיס"}
IBAN_L = {"zh": "收款账户 IBAN|汇款 IBAN", "zh_tw": "匯款帳戶 IBAN", "ja": "振込先 IBAN|IBANコード",
          "ko": "해외송금 IBAN|계좌 IBAN", "en": "IBAN", "de": "IBAN|Bankverbindung (IBAN)",
          "fr": "IBAN du bénéficiaire", "es": "cuenta IBAN", "nl": "IBAN-rekeningnummer", "pl": "numer IBAN",
          "it": "IBAN per la borsa", "pt": "IBAN da conta"}
KEY_L = {"zh": "API 密钥|密钥|API Key", "zh_tw": "API 金鑰|金鑰", "ja": "APIキー|シークレットキー",
         "ko": "API 키|비밀 키", "en": "API key|secret key|access token", "de": "API-Schlüssel", "fr": "clé API",
         "es": "clave de API", "it": "chiave API", "pt": "chave de API", "nl": "API-sleutel", "pl": "klucz API",
         "tr": "API anahtarı", "ru": "API-ключ", "ar": "مفتاح API", "hi": "API कुंजी", "vi": "khóa API",
         "th": "คีย์ API", "id": "kunci API", "sv": "API-nyckel", "uk": "API-ключ", "he": "מפתח API"}
TOKEN_L = {"zh": "访问令牌|令牌", "zh_tw": "存取權杖", "ja": "アクセストークン|トークン", "ko": "액세스 토큰|토큰",
           "en": "access token|token"}
SECRET_L = {"zh": "客户端密钥|Client Secret", "zh_tw": "用戶端密鑰", "ja": "クライアント シークレット",
            "ko": "클라이언트 보안 비밀번호", "en": "client secret"}
SSN_L = {"zh": "美国社会安全号码（SSN）|SSN", "zh_tw": "社會安全碼（SSN）", "ja": "社会保障番号（SSN）",
         "ko": "사회보장번호(SSN)", "en": "SSN|Social Security Number|FAFSA — SSN", "es": "número de Seguro Social"}
TOTP_L = {"zh": "两步验证密钥|设置密钥", "zh_tw": "兩步驟驗證金鑰", "ja": "セットアップキー|二段階認証の秘密キー",
          "ko": "OTP 설정 키|2단계 인증 키", "en": "2FA secret|setup key"}
RECOVERY_L = {"zh": "备用验证码|恢复代码", "zh_tw": "備用驗證碼|復原碼", "ja": "バックアップ コード|リカバリーコード",
              "ko": "백업 코드|복구 코드", "en": "backup code|recovery code"}
WEBHOOK_L = {"zh": "机器人 Webhook 地址|通知地址", "zh_tw": "Webhook 網址", "ja": "Webhook URL|通知用URL",
             "ko": "웹훅 주소|Webhook URL", "en": "webhook|webhook URL"}
PEM_L = {"zh": "LTI 工具私钥|SFTP 私钥", "zh_tw": "私密金鑰", "ja": "秘密鍵", "ko": "개인 키", "en": "private key"}
CONN_L = {"zh": "数据库连接串|连接字符串", "zh_tw": "資料庫連線字串", "ja": "接続文字列|DB接続先",
          "ko": "DB 연결 문자열", "en": "connection string|DB URL"}
COOKIE_L = {"zh": "会话 Cookie", "zh_tw": "工作階段 Cookie", "ja": "セッションCookie", "ko": "세션 쿠키",
            "en": "session cookie"}
JWT_L = {"zh": "签名 JWT|id_token", "zh_tw": "簽章 JWT", "ja": "署名付きJWT|id_token", "ko": "서명 JWT|id_token",
         "en": "signed JWT|id_token"}


# ---- carriers -------------------------------------------------------------------------------------------------

def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _iso(rng: random.Random) -> str:
    return (f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
            f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}+09:00")


def _ms(rng: random.Random) -> int:
    return rng.randint(1704034800000, 1735657199000)


def _nonluhn(rng: random.Random, n: int) -> str:
    """n digits whose last is not their Luhn digit (a message or receipt id, never a card number)."""
    partial = str(rng.randint(1, 9)) + digits(rng, n - 2)
    return partial + str((int(luhn_digit(partial)) + rng.randint(1, 9)) % 10)


def j_canvas(rng: random.Random, snip: str, _s: str) -> str:
    subject = rng.choice(["课程作业", "提出物について", "과제 제출", "Re: Week 3 lab", "請假申請"])
    return _dump({"id": rng.randint(10 ** 5, 10 ** 7), "subject": subject, "workflow_state": "unread",
                  "messages": [{"id": rng.randint(10 ** 5, 10 ** 7), "created_at": _iso(rng), "body": snip,
                                "generated": False, "media_comment": None}]})


def j_moodle_forum(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"posts": [{"id": rng.randint(1000, 99999), "discussionid": rng.randint(100, 9999),
                             "subject": rng.choice(["Re: 質問", "Re: 问题", "Re: 질문", "Re: question"]),
                             "message": f"<p>{snip}</p>", "messageformat": 1,
                             "timecreated": _ms(rng) // 1000}], "warnings": []})


def j_classroom(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"courseId": str(rng.randint(10 ** 11, 10 ** 12 - 1)), "id": str(rng.randint(10 ** 11, 10 ** 12 - 1)),
                  "text": snip, "state": "PUBLISHED", "creationTime": _iso(rng)})


def j_zoom_chat(rng: random.Random, snip: str, _s: str) -> str:
    channel = rng.choice(["3年B組 連絡", "高二(3)班 家校群", "2학년 1반 공지", "Physics 101 TAs"])
    return _dump({"event": "chat_message.sent", "event_ts": _ms(rng),
                  "payload": {"object": {"channel_name": channel, "message": snip, "date_time": _iso(rng)}}})


def j_line_event(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"events": [{"type": "message", "mode": "active", "timestamp": _ms(rng), "source": {"type": "group"},
                              "message": {"type": "text", "id": _nonluhn(rng, 18), "text": snip}}]})


def j_kakao_skill(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"intent": {"name": rng.choice(["학부모 문의", "결석 신고", "등록금 문의"])},
                  "userRequest": {"timezone": "Asia/Seoul", "utterance": snip, "lang": "ko"},
                  "bot": {"name": "학교 안내봇"}})


def j_wecom_robot(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"msgtype": "text", "text": {"content": snip, "mentioned_list": rng.choice([["@all"], []])}})


def j_sis_record(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"student": {"grade_level": rng.randint(7, 12), "homeroom": f"{rng.randint(1, 3)}-{rng.randint(1, 8)}",
                              "enroll_status": "A", "counselor_notes": snip}, "exported_at": _iso(rng)})


def j_proctor(rng: random.Random, snip: str, _s: str) -> str:
    exam = rng.choice(["MATH-101 期中考试", "英語II 期末試験", "자료구조 중간고사", "CHEM-210 final"])
    return _dump({"session": _uuid(rng), "exam": exam,
                  "flags": [{"type": "screen_text", "at_ms": rng.randint(1000, 5400000), "ocr": snip}]})


def j_tool_use(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"type": "tool_use", "id": f"call_{rng.randint(1, 99)}", "name": "lms_send_message",
                  "input": {"recipient": f"course:{rng.randint(1000, 9999)}:parents", "body": snip}})


def j_chat_request(rng: random.Random, snip: str, _s: str) -> str:
    system = rng.choice(["你是学校的教务助手。", "あなたは学習支援アシスタントです。", "당신은 학교 행정 도우미입니다.",
                         "You are the campus help desk agent."])
    return _dump({"model": rng.choice(["qwen-plus", "gpt-4o-mini", "claude-sonnet-4"]), "temperature": 0.2,
                  "messages": [{"role": "system", "content": system}, {"role": "user", "content": snip}]})


TEXT_TEMPLATES = {
    "moodle_log": "{iso} [moodle] mod_assign: submission comment by user {num}: {snip}",
    "canvas_rails_log": "I, [{iso} #{num}]  INFO -- : [{uuid}] Conversation body: {snip}",
    "wechat_export": "2024-09-{day} 20:{min} [王妈妈|李爸爸|陈同学|张雨涵家长]\n{snip}\n"
                     "21:02 班主任李老师\n收到，我来处理。",
    "line_export": "[LINE] 2年A組 保護者のトーク履歴\n保存日時：2024/09/{day} 21:04\n\n2024/09/02(月)\n"
                   "20:{min}\t[田中|佐藤（母）|鈴木 陽翔|高橋]\t{snip}\n20:59\t担任\t承知しました。",
    "kakao_export": "학부모 단톡방 님과 카카오톡 대화\n저장한 날짜 : 2024-09-{day} 21:04:11\n\n"
                    "--------------- 2024년 9월 2일 월요일 ---------------\n"
                    "[[김민지 엄마|이서준|박지우 아빠|최은서]] [오후 8:{min}] {snip}",
    "teams_vtt": "WEBVTT\n\n{uuid}/18-0\n00:12:{min}.120 --> 00:13:{min}.480\n"
                 "<v [王老师|山田先生|김교수|Dr. Okafor]>{snip}</v>",
    "zoom_saved_chat": "20:{min}:05 From [김선생님|陈助教|佐藤 TA|Host] to Everyone:\n\t{snip}",
    "enrol_form": "═══ 入学申请表 ═══\n申请编号：A2024-{num}\n"
                  "志愿专业：[计算机科学与技术|國際企業學系|経済学部|경영학과]\n备注：{snip}",
    "scholarship_form": "[奨学金申請書（給付型）|장학금 신청서|助学金申请表|Scholarship application|"
                        "Solicitud de beca] 2/4\n"
                        "── 振込・連絡先 / contact ──\n{snip}\n──────────",
    "proctor_log": "{iso} WARN proctor.flag session={uuid} type=SCREEN_TEXT text=\"{snip}\"",
    "agent_reply": "**Assistant** — [已为您整理如下：|以下の内容で登録しました：|다음 내용으로 처리했습니다:|"
                   "I've noted the following:]\n\n> {snip}\n\n[如需修改请告诉我。|変更があればお知らせください。|"
                   "수정이 필요하면 말씀해 주세요.|Tell me if anything changes.]",
    "email_view": "件名: [【重要】学費納入のお知らせ|关于奖学金发放的通知|(공지) 수강신청 안내|Your enrolment]\n"
                  "差出人: 教務課\n"
                  "日付: {iso}\n\n{snip}\n\n--\n教務課 学生支援係",
    "helpdesk_ticket": "Ticket INC{num} | Category: LMS / 登录问题 | Priority: P3\nDescription:\n{snip}",
    "moodle_page": "<div class=\"text_to_html\" id=\"yui_3_17_2_1_{num}\"><p>{snip}</p></div>",
    "grade_feedback": "Assignment {day} — feedback ({min}/60)\n{snip}",
    "deploy_notes": "## Zoom / LMS integration — deploy notes ({iso})\n\n- staging verified\n- {snip}\n",
}
"""Text carriers: `FIELDS` and choices are drawn, `{snip}` is the value."""


FIELDS: dict[str, Callable[[random.Random, int], str]] = {
    "iso": lambda r, _n: _iso(r), "uuid": lambda r, _n: _uuid(r), "num": lambda r, _n: str(r.randint(100, 999999)),
    "day": lambda r, _n: str(r.randint(10, 28)), "min": lambda r, _n: str(r.randint(10, 59)),
    "ms": lambda r, _n: str(_ms(r)), "d": digits, "hex": lambda r, n: pick(r, HEX, n),
    "an": lambda r, n: pick(r, ALNUM, n), "isbn": lambda r, _n: isbn13(r), "s10": lambda r, _n: s10(r),
    "luhnbad": lambda r, _n: _luhn_bad(r), "luhnbad_s": lambda r, _n: group(_luhn_bad(r), 4, " "),
    "sri": lambda r, _n: base64.b64encode(r.getrandbits(384).to_bytes(48, "big")).decode(),
    "region": lambda r, _n: r.choice(CN_REGIONS),
}
"""Template fields, `{name}` or `{name:N}` (N: a width); `[a|b]` in a template is one of its options."""
FIELD_RE = re.compile(r"\{(" + "|".join(FIELDS) + r")(?::(\d+))?\}|\[([^\[\]]*\|[^\[\]]*)\]")


def _fill(rng: random.Random, template: str) -> str:
    """`template` (no snippet in it) with its fields and choices drawn, left to right."""
    return FIELD_RE.sub(lambda m: FIELDS[m[1]](rng, int(m[2] or 0)) if m[1] else rng.choice(m[3].split("|")), template)


def text_carrier(template: str) -> Callable[[random.Random, str, str], str]:
    """A carrier writing `template` around the snippet (the snippet itself is never rewritten)."""
    head, tail = template.split("{snip}")
    return lambda rng, snip, _s: _fill(rng, head) + snip + _fill(rng, tail)


def t_sis_csv(rng: random.Random, snip: str, _s: str) -> str:
    cell = snip.replace('"', '""')
    return f"学年,クラス,出席番号,備考\n{rng.randint(1, 3)},{rng.choice('ABCD')},{rng.randint(1, 40)},\"{cell}\""


Carrier = Callable[[random.Random, str, str], str]
JSON_CARRIERS: dict[str, Carrier] = {
    "canvas_conversation": j_canvas, "moodle_forum_ws": j_moodle_forum, "classroom_announcement": j_classroom,
    "zoom_chat_event": j_zoom_chat, "line_webhook": j_line_event, "kakao_skill": j_kakao_skill,
    "wecom_robot": j_wecom_robot, "sis_record": j_sis_record, "proctor_event": j_proctor, "agent_tool_use": j_tool_use,
    "chat_request": j_chat_request,
}
TEXT_CARRIERS: dict[str, Carrier] = {name: text_carrier(t) for name, t in TEXT_TEMPLATES.items()}
TEXT_CARRIERS["sis_csv"] = t_sis_csv


# ---- values: credentials --------------------------------------------------------------------------------------

SYMBOLS = "!#$%*+-=?@^_~."
ROMAJI = ["Sakura", "haruto", "Yuina", "tanaka", "Sora", "hinata"]
PINYIN = ["Zhangwei", "liuyang", "xiaoming", "Wanghao", "chenjing", "lixin"]
KO_QWERTY = ["dkssud", "tkfkdgo", "gkrtod", "dbwjd", "wlsdn"]
"""Korean words typed with the keyboard in English mode (안녕, 사랑해, 학생, 유정, 진우), a common password habit."""


def password_value(rng: random.Random) -> str:
    """A password as students, parents and staff set them: names with dates, Korean typed in English mode, random
    strong ones, passphrases, school default patterns."""
    style = rng.randrange(6)
    if style == 0:
        return rng.choice(PINYIN) + str(rng.randint(2003, 2012)) + rng.choice(SYMBOLS)
    if style == 1:
        return rng.choice(ROMAJI) + rng.choice("#!@") + digits(rng, 4)
    if style == 2:
        return rng.choice(KO_QWERTY) + digits(rng, 3) + "!"
    if style == 3:
        return pick(rng, UPPER, 1) + pick(rng, ALNUM + SYMBOLS, rng.randint(10, 14)) + pick(rng, string.digits, 1)
    if style == 4:
        return "-".join(rng.choice(["Maple", "river", "Lantern", "tofu", "Kimchi", "mochi", "Panda"]) for _ in range(3))
    return "Stu@" + str(rng.randint(2003, 2012)) + f"{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}"


CHANGE_AFTER = {"zh": "（首次登录后请修改）", "zh_tw": "（首次登入後請變更）", "ja": "（初回ログイン後に変更）",
                "ko": "(최초 로그인 후 변경)"}


def v_password(rng: random.Random, i: int) -> Value:
    pw = password_value(rng)
    style = ["label", "label", "moodle_cfg", "cli", "json_field", "yaml", "label", "fullwidth_colon"][i % 8]
    if style == "moodle_cfg":
        return style, pw, frame(rng, lang_of(i), f"config.php: $CFG->dbpass    = '{pw}';"), False
    if style == "cli":
        user = rng.choice(["stu2024", "teacher01", "ta_kim"])
        return style, pw, f"moosh user-create --password {pw} --email-skip {user}", False
    if style == "json_field":
        return style, pw, frame(rng, lang_of(i), f'{{"username": "lti_sync", "password": "{pw}"}}'), False
    if style == "yaml":
        return style, pw, f"smtp:\n  host: smtp.school.internal\n  user: noreply\n  smtp_password: {pw}", False
    if style == "fullwidth_colon":
        lang = CJK[i % 4]
        return style, pw, f"{rng.choice(_labels(PASSWORD_L, lang))}：{pw}{CHANGE_AFTER[lang]}", False
    return style, pw, labelled(rng, i, PASSWORD_L, pw), False


def aws_id(rng: random.Random) -> str:
    """An IAM access key id: AKIA (long-term) or ASIA (temporary) and 16 base32 characters."""
    return rng.choice(["AKIA", "AKIA", "ASIA"]) + pick(rng, BASE32, 16)


AWS_LABELS = {"zh": "秘密访问密钥", "zh_tw": "私密存取金鑰", "ja": "シークレットアクセスキー", "ko": "비밀 액세스 키"}


def v_aws_secret(rng: random.Random, i: int) -> Value:
    kid, secret = aws_id(rng), pick(rng, ALNUM + "+/", 40)
    style = ["configure", "credentials", "csv", "env", "localized", "create_json", "beside"][i % 7]
    if style == "configure":
        snip = (f"AWS Access Key ID [None]: {kid}\nAWS Secret Access Key [None]: {secret}\n"
                "Default region name [None]: ap-northeast-1")
    elif style == "credentials":
        snip = f"[lecture-capture]\naws_access_key_id = {kid}\naws_secret_access_key = {secret}"
    elif style == "csv":
        snip = f"Access key ID,Secret access key\n{kid},{secret}"
    elif style == "env":
        snip = f"AWS_ACCESS_KEY_ID={kid} AWS_SECRET_ACCESS_KEY={secret} aws s3 sync ./recordings s3://lecture-archive"
    elif style == "localized":
        lang = CJK[i % 4]
        snip = frame(rng, lang, f"アクセスキー ID：{kid}、{AWS_LABELS[lang]}：{secret}" if lang == "ja"
                     else f"Access Key ID：{kid}，{AWS_LABELS[lang]}：{secret}")
    elif style == "create_json":
        snip = _dump({"AccessKey": {"UserName": "moodle-s3", "AccessKeyId": kid, "Status": "Active",
                                    "SecretAccessKey": secret, "CreateDate": _iso(rng)}})
    else:
        snip = frame(rng, lang_of(i), f"{kid} / {secret}")
    return style, secret, snip, False


def webhook_url(rng: random.Random, style: str) -> tuple[str, str]:
    """(url, token) of a chat webhook as the provider's docs print it; the token is what opens it."""
    if style == "slack":
        tok = pick(rng, ALNUM, 24)
        team, bot = pick(rng, UPPER + string.digits, 8), pick(rng, UPPER + string.digits, 10)
        return f"https://hooks.slack.com/services/T{team}/B{bot}/{tok}", tok
    if style == "discord":
        tok = pick(rng, URLSAFE, 68)
        return f"https://discord.com/api/webhooks/{rng.randint(10 ** 17, 10 ** 19 - 1)}/{tok}", tok
    if style == "teams_workflow":
        tok = pick(rng, URLSAFE, 43)
        return (f"https://prod-{rng.randint(10, 99)}.japaneast.logic.azure.com:443/workflows/{pick(rng, HEX, 32)}"
                f"/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={tok}",
                tok)
    if style == "teams_legacy":
        tok = pick(rng, HEX, 32)
        tenant = rng.choice(["kyoto-u", "ntu", "snu", "campus"])
        return (f"https://{tenant}.webhook.office.com/webhookb2/{_uuid(rng)}@{_uuid(rng)}/IncomingWebhook/{tok}/"
                f"{_uuid(rng)}", tok)
    if style == "google_chat":
        tok = pick(rng, URLSAFE, 43)
        return (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?key=AIzaSyDdI0hCZtE6vySj"
                f"Mm-WEfRq3CPzqKqqsHI&token={tok}", tok)
    if style in ("feishu", "lark"):
        tok = _uuid(rng)
        host = "open.feishu.cn" if style == "feishu" else "open.larksuite.com"
        return f"https://{host}/open-apis/bot/v2/hook/{tok}", tok
    if style == "dingtalk":
        tok = pick(rng, HEX, 64)
        return f"https://oapi.dingtalk.com/robot/send?access_token={tok}", tok
    if style == "wecom":
        tok = _uuid(rng)
        return f"https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key={tok}", tok
    if style == "mattermost":
        tok = pick(rng, LOWER + string.digits, 26)
        return f"https://chat.school.example/hooks/{tok}", tok
    tok = pick(rng, ALNUM, 22)
    return f"https://integrations.zoom.us/chat/webhooks/incomingwebhook/{tok}?format=full", tok


WEBHOOK_STYLES = ["slack", "dingtalk", "feishu", "wecom", "discord", "teams_workflow", "google_chat", "teams_legacy",
                  "lark", "mattermost", "zoom_chat"]


def v_webhook(rng: random.Random, i: int) -> Value:
    style = WEBHOOK_STYLES[i % len(WEBHOOK_STYLES)]
    url, tok = webhook_url(rng, style)
    how = i // len(WEBHOOK_STYLES) % 3
    if how == 0:
        snip = labelled(rng, i, WEBHOOK_L, url)
    elif how == 1:
        body = rng.choice(['{"text":"成绩已发布"}', '{"msgtype":"text","text":{"content":"成績を公開しました"}}',
                           '{"content":"과제 마감 1시간 전"}'])
        snip = f"curl -X POST -H 'Content-Type: application/json' -d '{body}' '{url}'"
    else:
        snip = f"GRADE_NOTIFY_WEBHOOK={url}"
    return style, tok, snip, False


def v_stripe_whsec(rng: random.Random, i: int) -> Value:
    secret = "whsec_" + (pick(rng, HEX, 64) if i % 4 == 1 else pick(rng, ALNUM, 32))
    style = ["env", "cli", "localized", "python", "json"][i % 5]
    if style == "env":
        snip = f"STRIPE_WEBHOOK_SECRET={secret}"
    elif style == "cli":
        snip = (f"> Ready! You are using Stripe API Version [2024-06-20]. Your webhook signing secret is {secret} "
                f"(^C to quit)")
    elif style == "localized":
        labels = {"zh": "Webhook 签名密钥", "zh_tw": "簽署密鑰", "ja": "署名シークレット", "ko": "서명 비밀"}
        label = labels.get(lang_of(i), "signing secret")
        snip = frame(rng, lang_of(i), say(rng, lang_of(i), label, secret))
    elif style == "python":
        snip = f'event = stripe.Webhook.construct_event(payload, sig_header, "{secret}")  # 学費決済'
    else:
        snip = _dump({"endpoint": "https://pay.school.example/stripe/tuition", "signing_secret": secret})
    return style, secret, snip, False


DB_PW = ALNUM + "-_.~!*"


def v_connection_string(rng: random.Random, i: int) -> Value:
    pw = pick(rng, DB_PW, rng.randint(12, 20))
    style = ["postgres", "mysql", "mongodb_srv", "redis", "adonet", "jdbc_oracle", "jdbc_mssql", "azure_storage",
             "amqp", "odbc"][i % 10]
    if style == "postgres":
        conn = f"postgresql://moodle_app:{pw}@db01.campus.internal:5432/moodle"
    elif style == "mysql":
        conn = f"mysql://sis_ro:{pw}@10.20.{rng.randint(0, 255)}.{rng.randint(1, 254)}:3306/powerschool"
    elif style == "mongodb_srv":
        host = f"cluster0.{pick(rng, LOWER + string.digits, 5)}.mongodb.net"
        conn = f"mongodb+srv://edxapp:{pw}@{host}/edxapp?retryWrites=true&w=majority"
    elif style == "redis":
        conn = f"rediss://default:{pw}@cache.lms.internal:6380/0"
    elif style == "adonet":
        conn = (f"Server=tcp:sis-prod.database.windows.net,1433;Initial Catalog=SIS;User ID=sisreader;"
                f"Password={pw};Encrypt=True;")
    elif style == "jdbc_oracle":
        conn = f"jdbc:oracle:thin:banner/{pw}@//banner-db.campus.internal:1521/PROD"
    elif style == "jdbc_mssql":
        conn = f"jdbc:sqlserver://sis-db:1433;databaseName=Enrolment;user=report;password={pw};encrypt=true"
    elif style == "azure_storage":
        pw = base64.b64encode(rng.getrandbits(512).to_bytes(64, "big")).decode()
        conn = (f"DefaultEndpointsProtocol=https;AccountName=lecturecapture{rng.randint(10, 99)};AccountKey={pw};"
                f"EndpointSuffix=core.windows.net")
    elif style == "amqp":
        conn = f"amqp://celery:{pw}@mq.lms.internal:5672//"
    else:
        conn = f"Driver={{ODBC Driver 18 for SQL Server}};Server=sis01;Database=Enrol;Uid=etl;Pwd={pw};"
    snip = labelled(rng, i, CONN_L, conn) if i % 2 else conn
    return style, pw, snip, False


def generic_key(rng: random.Random, style: str) -> tuple[str, str]:
    """(provider's own label, key) for keys that carry no prefix and are known only by their label."""
    keys = {
        "zoom_client_secret": ("Zoom Client Secret", lambda: pick(rng, ALNUM, 32)),
        "moodle_ws_token": ("Moodle Webservice-Token", lambda: pick(rng, HEX, 32)),
        "canvas_dev_key": ("Canvas Developer Key secret", lambda: pick(rng, ALNUM, 64)),
        "blackboard_secret": ("Blackboard REST application secret", lambda: pick(rng, ALNUM, 32)),
        "lti11_secret": ("LTI 1.1 shared secret", lambda: pick(rng, ALNUM, 24)),
        "kaltura_admin": ("Kaltura admin secret", lambda: pick(rng, HEX, 32)),
        "agora_certificate": ("Agora App Certificate", lambda: pick(rng, HEX, 32)),
        "tencent_secret": ("Tencent Cloud SecretKey", lambda: pick(rng, ALNUM, 32)),
        "aliyun_secret": ("AccessKey Secret", lambda: pick(rng, ALNUM, 30)),
        "line_channel": ("LINE Channel secret", lambda: pick(rng, HEX, 32)),
        "kakao_rest": ("Kakao REST API 키", lambda: pick(rng, HEX, 32)),
    }
    label, make = keys[style]
    return label, make()


KEY_STYLES = ["zoom_client_secret", "moodle_ws_token", "canvas_dev_key", "blackboard_secret", "lti11_secret",
              "kaltura_admin", "agora_certificate", "tencent_secret", "aliyun_secret", "line_channel", "kakao_rest"]


def v_labelled_key(rng: random.Random, i: int) -> Value:
    style = KEY_STYLES[i % len(KEY_STYLES)]
    label, key = generic_key(rng, style)
    lang = lang_of(i)
    if i % 3 == 0:
        label = rng.choice(_labels(KEY_L, lang))
    return style, key, frame(rng, lang, say(rng, lang, label, key)), False


ZW = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]


def _base_secret(rng: random.Random, i: int) -> str:
    """The secret a disguise is put on: an OpenAI or GitHub key, a password, a Google client secret, an AWS
    secret."""
    slot = i % 5
    if slot == 0:
        return "sk-proj-" + pick(rng, URLSAFE, 48)
    if slot == 1:
        return crc_token(rng, "ghp_")
    if slot == 2:
        return password_value(rng)
    if slot == 3:
        return "GOCSPX-" + pick(rng, URLSAFE, 28)
    return pick(rng, ALNUM + "+/", 40)


def v_disguised(rng: random.Random, i: int) -> Value:
    raw = _base_secret(rng, i)
    style = ["zero_width", "fullwidth", "percent", "json_u", "fullwidth_digits"][i // 5 % 5]
    lang = lang_of(i)
    if style == "zero_width":
        at = rng.randint(3, len(raw) - 2)
        secret = raw[:at] + rng.choice(ZW) + raw[at:]
    elif style == "fullwidth":
        secret = fullwidth(raw)
    elif style == "percent":
        secret = "".join(f"%{b:02X}" for b in raw.encode()) if i % 2 else quote(raw, safe="")
        if secret == raw:
            secret = "".join(f"%{b:02X}" for b in raw.encode())
        return style, secret, f"POST /login/index.php body: username=stu{digits(rng, 6)}&token={secret}", False
    elif style == "json_u":
        secret = "".join(f"\\u{ord(c):04x}" if k % 2 == 0 or not c.isalnum() else c for k, c in enumerate(raw))
        return style, secret, frame(rng, lang, f'{{"credential":"{secret}"}}'), True
    else:
        secret = "".join(FULLWIDTH[c] if c.isdigit() else c for c in raw)
        if secret == raw:
            secret = fullwidth(raw)
    return style, secret, frame(rng, lang, say(rng, lang, rng.choice(_labels(KEY_L, lang)), secret)), False


# ---- values: personal data ------------------------------------------------------------------------------------

LOCALS = ["zhang.wei", "liuyang2008", "wanghao_88", "tanaka.haruto", "sato-yui", "kim.minji", "leeseojun",
          "parent.park", "chen.yuting", "lin0915", "nguyen.an", "maria.souza", "lukas.meier", "ahmed.k", "priya.r"]
DOMAINS = ["163.com", "126.com", "foxmail.com", "sina.com", "yahoo.co.jp", "docomo.ne.jp", "gmail.com", "naver.com",
           "daum.net", "hanmail.net", "icloud.com", "outlook.com", "stu.pku.edu.cn", "g.ntu.edu.tw", "snu.ac.kr",
           "st.osaka-u.ac.jp", "web.de", "mail.ru", "libero.it", "uol.com.br", "rediffmail.com", "wp.pl"]
IDN = ["学生@学校.中国", "김민지@학교.한국", "山田花子@メール.jp", "陳怡君@例子.台灣", "josé.garcía@correo.es",
       "müller@schule.de"]


def email_value(rng: random.Random, i: int) -> tuple[str, str]:
    """(style, address): common Chinese/Japanese/Korean providers, numeric QQ ids, university mail, EAI addresses
    (RFC 6531) and the full-width ＠ writers use against scrapers."""
    style = ["plain", "qq", "plain", "idn", "fullwidth_at", "plain", "angle", "spelled_at"][i % 8]
    if style == "qq":
        return style, f"{rng.randint(10 ** 5, 10 ** 10)}@qq.com"
    if style == "idn":
        return style, rng.choice(IDN)
    address = f"{rng.choice(LOCALS)}{rng.choice(['', str(rng.randint(1, 99))])}@{rng.choice(DOMAINS)}"
    if style == "fullwidth_at":
        return style, address.replace("@", "＠")
    if style == "spelled_at":
        return style, address.replace("@", " (at) ")
    return style, address


def v_email(rng: random.Random, i: int) -> Value:
    style, address = email_value(rng, i)
    if style == "angle":
        lang = lang_of(i)
        who = rng.choice(["王小明", "田中 陽翔", "이서준", "Maria Souza"])
        return style, address, frame(rng, lang, f"{who} <{address}>"), False
    if i % 5 == 2:
        return style, address, frame(rng, lang_of(i), f"[{address}](mailto:{address})"), False
    return style, address, labelled(rng, i, EMAIL_L, address), False


def _nanp(rng: random.Random) -> tuple[str, str, str]:
    area = rng.choice(["212", "415", "617", "312", "206", "213", "416", "604", "514", "647", "778", "303", "512"])
    exchange = str(rng.randint(2, 9)) + digits(rng, 2)
    while exchange[1:] == "11" or exchange == "555":
        exchange = str(rng.randint(2, 9)) + digits(rng, 2)
    return area, exchange, digits(rng, 4)


def _uk_mobile(r: random.Random) -> str:
    return f"07{r.choice('45789')}{digits(r, 2)} {digits(r, 6)}"


def _three_four(r: random.Random) -> str:
    exchange = str(r.randint(2, 8)) + digits(r, 2)
    return f"{exchange if exchange != '496' else '497'} {digits(r, 4)}"


def _pairs(r: random.Random, n: int) -> str:
    return " ".join(f"{r.randint(10, 98):02d}" for _ in range(n))


PhoneForm = tuple[str, Callable[[random.Random], str]]
US_FORMS: list[PhoneForm] = [
    ("paren", lambda r: "({}) {}-{}".format(*_nanp(r))), ("dash", lambda r: "{}-{}-{}".format(*_nanp(r))),
    ("dot", lambda r: "{}.{}.{}".format(*_nanp(r))), ("intl", lambda r: "+1 {} {} {}".format(*_nanp(r))),
    ("one_dash", lambda r: "1-{}-{}-{}".format(*_nanp(r))), ("intl_paren", lambda r: "+1 ({}) {}-{}".format(*_nanp(r)))]
UK_FORMS: list[PhoneForm] = [
    ("mobile", _uk_mobile), ("intl_mobile", lambda r: "+44 " + _uk_mobile(r)[1:]),
    ("london", lambda r: f"020 {r.choice('378')}{digits(r, 3)} {digits(r, 4)}"),
    ("manchester", lambda r: "0161 " + _three_four(r)), ("edinburgh", lambda r: "0131 " + _three_four(r)),
    ("intl_london", lambda r: f"+44 (0)20 {r.choice('378')}{digits(r, 3)} {digits(r, 4)}")]
FR_FORMS: list[PhoneForm] = [
    ("mobile", lambda r: f"06 {_pairs(r, 4)}"), ("mobile07", lambda r: f"07 {r.randint(30, 98)} {_pairs(r, 3)}"),
    ("dotted", lambda r: f"06.{_pairs(r, 4).replace(' ', '.')}"),
    ("paris", lambda r: f"01 {r.randint(40, 89)} {_pairs(r, 3)}"),
    ("lyon", lambda r: f"04 {r.randint(72, 78)} {_pairs(r, 3)}"),
    ("intl", lambda r: f"+33 {r.choice('67')} {_pairs(r, 4)}"), ("intl_zero", lambda r: f"+33 (0)6 {_pairs(r, 4)}")]
DE_MOBILE = ["0151", "0152", "0157", "0160", "0162", "0170", "0171", "0172", "0173", "0175", "0176", "0178", "0179"]
DE_FORMS: list[PhoneForm] = [
    ("mobile", lambda r: f"{r.choice(DE_MOBILE)} {digits(r, 8)}"),
    ("slash", lambda r: f"{r.choice(DE_MOBILE)}/{digits(r, 7)}"),
    ("berlin", lambda r: f"030 {r.randint(3, 9)}{digits(r, 7)}"),
    ("munich", lambda r: f"089 {r.randint(2, 9)}{digits(r, 7)}"),
    ("intl_mobile", lambda r: f"+49 {r.choice(DE_MOBILE)[1:]} {digits(r, 7)}"),
    ("intl_hamburg", lambda r: f"+49 (0)40 {r.randint(2, 9)}{digits(r, 7)}")]
IN_FORMS: list[PhoneForm] = [
    ("intl_space", lambda r: f"+91 {r.choice('6789')}{digits(r, 4)} {digits(r, 5)}"),
    ("intl_dash", lambda r: f"+91-{r.choice('6789')}{digits(r, 9)}"),
    ("national", lambda r: f"{r.choice('6789')}{digits(r, 4)} {digits(r, 5)}"),
    ("trunk", lambda r: f"0{r.choice('6789')}{digits(r, 9)}"),
    ("delhi", lambda r: f"011-2{digits(r, 7)}"), ("bengaluru", lambda r: f"080-{r.choice('24')}{digits(r, 7)}")]

COUNTRY = {"us_ca": ("en", ["phone", "cell", "call me at", "mobile", "cellulaire"], "美国|美國|アメリカ|미국"),
           "uk": ("en", ["mobile", "tel", "ring me on", "landline"], "英国|英國|イギリス|영국"),
           "fr": ("fr", ["portable", "tél.", "téléphone", "joignable au"], "法国|法國|フランス|프랑스"),
           "de": ("de", ["Handy", "Telefon", "Tel.", "erreichbar unter", "Mobil"], "德国|德國|ドイツ|독일"),
           "in": ("en", ["mobile", "contact no.", "मोबाइल", "फ़ोन", "WhatsApp"], "印度|印度|インド|인도")}
CJK_LEADS = {"zh": "留学生紧急联系人（{c}）", "zh_tw": "交換生緊急聯絡人（{c}）", "ja": "留学先ホストファミリー（{c}）",
             "ko": "교환학생 비상연락처({c})"}


def country_phone(country: str, forms: list[PhoneForm]) -> Callable[[random.Random, int], Value]:
    """A phone of `country` in a national or +CC form after the country's own context word; CJK cases put a
    CJK lead (an exchange student's emergency contact) before it."""
    own, words, names = COUNTRY[country]

    def make(rng: random.Random, i: int) -> Value:
        style, fmt = forms[i % len(forms)]
        number = fmt(rng)
        inner = f"{rng.choice(words)}{rng.choice([': ', ' '])}{number}"
        lang = lang_of(i)
        if lang in CJK:
            lead = CJK_LEADS[lang].format(c=names.split("|")[CJK.index(lang)])
            return style, number, frame(rng, lang, f"{lead} {inner}"), False
        return style, number, frame(rng, own, inner), False
    return make


def ssn_value(rng: random.Random) -> str:
    area = rng.randint(1, 899)
    while area == 666:
        area = rng.randint(1, 899)
    return f"{area:03d}{rng.randint(1, 99):02d}{rng.randint(1, 9999):04d}"


def v_ssn(rng: random.Random, i: int) -> Value:
    raw = ssn_value(rng)
    style = ["dashed", "dashed", "spaced", "compact", "fullwidth"][i % 5]
    value = {"dashed": f"{raw[:3]}-{raw[3:5]}-{raw[5:]}", "spaced": f"{raw[:3]} {raw[3:5]} {raw[5:]}",
             "compact": raw, "fullwidth": fullwidth(f"{raw[:3]}-{raw[3:5]}-{raw[5:]}")}[style]
    return style, value, labelled(rng, i, SSN_L, value), False


def card_number(rng: random.Random, brand: str) -> str:
    """A card number of `brand`'s IIN range and length with its Luhn digit."""
    head, length = {"visa": ("4", 16), "mc": (str(rng.randint(51, 55)), 16), "mc2": (str(rng.randint(2221, 2720)), 16),
                    "amex": (rng.choice(["34", "37"]), 15), "discover": ("6011", 16), "discover65": ("65", 16),
                    "jcb": (str(rng.randint(3528, 3589)), 16), "diners": ("36", 14), "unionpay": ("62", 16),
                    "unionpay19": ("62", 19)}[brand]
    partial = head + digits(rng, length - len(head) - 1)
    return partial + luhn_digit(partial)


CARD_BRANDS = ["jcb", "unionpay", "visa", "mc", "amex", "unionpay19", "mc2", "discover", "diners", "discover65"]


def v_card(rng: random.Random, i: int) -> Value:
    brand = CARD_BRANDS[i % len(CARD_BRANDS)]
    number = card_number(rng, brand)
    sep = [" ", "-", "", " "][i // len(CARD_BRANDS) % 4]
    value = group_card(number, sep) if len(number) != 19 else number[:6] + sep + number[6:]
    if i % 7 == 3:
        value = fullwidth(value)
    return brand, value, labelled(rng, i, CARD_L, value), False


IBAN_BBAN = {"DE": "8n10n", "FR": "5n5n11c2n", "GB": "4a6n8n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c", "NL": "4a10n",
             "BE": "3n7n2n", "AT": "5n11n", "CH": "5n12c", "SE": "3n16n1n", "PL": "8n16n", "PT": "4n4n11n2n",
             "IE": "4a6n8n", "FI": "3n11n", "NO": "4n6n1n", "DK": "4n9n1n", "TR": "5n1n16c", "AE": "3n16n"}


def iban_value(rng: random.Random, country: str) -> str:
    """An IBAN of the registry's structure; Belgium's BBAN ends with its national check (first ten mod 97)."""
    body = bban(rng, IBAN_BBAN[country])
    if country == "BE":
        check = int(body[:10]) % 97 or 97
        body = body[:10] + f"{check:02d}"
    return country + iban_check(country, body) + body


def v_iban(rng: random.Random, i: int) -> Value:
    country = list(IBAN_BBAN)[i % len(IBAN_BBAN)]
    compact = iban_value(rng, country)
    style = "grouped" if i % 3 else "compact"
    value = group(compact, 4, " ") if style == "grouped" else compact
    return f"{country}_{style}", value, labelled(rng, i, IBAN_L, value), False


# ---- values: tokens, keys, cookies ----------------------------------------------------------------------------

def lti_claims(rng: random.Random) -> dict[str, object]:
    """An LTI 1.3 launch's id_token claims (IMS LTI Core 1.3, section 5) without personal claims."""
    iat = _ms(rng) // 1000
    return {"iss": rng.choice(["https://canvas.instructure.com", "https://moodle.school.example"]),
            "aud": f"10000000000{rng.randint(100, 999)}", "sub": _uuid(rng), "iat": iat, "exp": iat + 3600,
            "nonce": pick(rng, HEX, 20),
            "https://purl.imsglobal.org/spec/lti/claim/message_type": "LtiResourceLinkRequest",
            "https://purl.imsglobal.org/spec/lti/claim/version": "1.3.0",
            "https://purl.imsglobal.org/spec/lti/claim/deployment_id": f"{rng.randint(1, 99)}:{pick(rng, HEX, 8)}"}


def jwt_value(rng: random.Random, kind: str) -> str:
    """A compact JWS (RFC 7515): an LTI id_token (RS256), an LTI client assertion (ES256) or a Zoom Meeting SDK
    signature (HS256); the signature is random bytes of the algorithm's length."""
    iat = _ms(rng) // 1000
    if kind == "zoom_sdk":
        header, sig = {"alg": "HS256", "typ": "JWT"}, 32
        claims: dict[str, object] = {"appKey": pick(rng, ALNUM, 22), "sdkKey": pick(rng, ALNUM, 22),
                                     "mn": rng.randint(10 ** 9, 10 ** 11), "role": rng.choice([0, 1]), "iat": iat,
                                     "exp": iat + 7200, "tokenExp": iat + 7200}
    elif kind == "client_assertion":
        header, sig = {"alg": "ES256", "typ": "JWT", "kid": pick(rng, URLSAFE, 16)}, 64
        cid = f"10000000000{rng.randint(100, 999)}"
        claims = {"iss": cid, "sub": cid, "aud": "https://canvas.instructure.com/login/oauth2/token", "iat": iat,
                  "exp": iat + 300, "jti": _uuid(rng)}
    else:
        header, sig = {"alg": "RS256", "typ": "JWT", "kid": _iso(rng)[:10] + "T00:00:00Z"}, 256
        claims = lti_claims(rng)
    parts = [b64url(json.dumps(header, separators=(",", ":")).encode()),
             b64url(json.dumps(claims, separators=(",", ":")).encode()),
             b64url(rng.getrandbits(8 * sig).to_bytes(sig, "big"))]
    return ".".join(parts)


def v_jwt(rng: random.Random, i: int) -> Value:
    style = ["lti_id_token", "zoom_sdk", "client_assertion"][i % 3]
    token = jwt_value(rng, style)
    how = i // 3 % 3
    if how == 0 and style == "lti_id_token":
        snip = f"POST /lti/launch  id_token={token}&state={_uuid(rng)}"
    elif how == 0 and style == "client_assertion":
        snip = ("grant_type=client_credentials&client_assertion_type=urn%3Aietf%3Aparams%3Aoauth%3Aclient-assertion-"
                f"type%3Ajwt-bearer&client_assertion={token}&scope=https%3A%2F%2Fpurl.imsglobal.org%2Fspec%2Flti-ags")
    elif how == 1:
        snip = _dump({"signature": token}) if style == "zoom_sdk" else f"JWT: {token}"
    else:
        snip = labelled(rng, i, JWT_L, token)
    return style, token, snip, False


def _pem_body(pem: str) -> str:
    return "\n".join(pem.strip().split("\n")[1:-1])


def private_key_pem(rng: random.Random, style: str) -> str:
    """A real key from the generator's bits: EC P-256 in PKCS#8 or SEC1 PEM, or Ed25519 in OpenSSH's format."""
    if style == "openssh":
        seed = rng.getrandbits(256).to_bytes(32, "big")
        public = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        blob = openssh_ed25519_blob(seed, public, rng.getrandbits(32).to_bytes(4, "big"), b"sis-export@sftp")
        body = base64.b64encode(blob).decode()
        return f"-----BEGIN OPENSSH PRIVATE KEY-----\n{group(body, 70, chr(10))}\n-----END OPENSSH PRIVATE KEY-----\n"
    key = ec.derive_private_key(rng.getrandbits(255) + 1, ec.SECP256R1())
    fmt = serialization.PrivateFormat.PKCS8 if style == "pkcs8" else serialization.PrivateFormat.TraditionalOpenSSL
    return key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode()


def v_private_key(rng: random.Random, i: int) -> Value:
    style = ["pkcs8", "openssh", "sec1"][i % 3]
    pem = private_key_pem(rng, style)
    body = _pem_body(pem)
    how = i // 3 % 3
    if how == 0:
        return style, body, labelled(rng, i, PEM_L, "\n" + pem), False
    if how == 1:
        escaped = pem.replace("\n", "\\n")
        return f"{style}_escaped", body.replace("\n", "\\n"), f'"private_key": "{escaped}",', False
    return style, body, f"$ cat /etc/lti/tool_private.pem\n{pem}", False


def session_cookie(rng: random.Random, style: str) -> tuple[str, str]:
    """(name, value) of an LMS session cookie: PHP/Moodle ids, Canvas's Rails AES-GCM cookie (data--iv--tag,
    CGI-escaped), Django's (Open edX) id, Tomcat's (Blackboard) id, Express's signed id."""
    if style == "moodle":
        return "MoodleSession", pick(rng, LOWER + string.digits, 26)
    if style == "canvas":
        sizes = (rng.randint(90, 160), 12, 16)
        parts = [base64.b64encode(rng.getrandbits(8 * n).to_bytes(n, "big")).decode() for n in sizes]
        return "canvas_session", quote("--".join(parts), safe="-")
    if style == "edx":
        return "sessionid", pick(rng, LOWER + string.digits, 32)
    if style == "blackboard":
        return "JSESSIONID", pick(rng, "0123456789ABCDEF", 32)
    if style == "express":
        sig = base64.b64encode(rng.getrandbits(256).to_bytes(32, "big")).decode().rstrip("=")
        return "connect.sid", quote(f"s:{pick(rng, URLSAFE, 32)}.{sig}", safe="")
    return "PHPSESSID", pick(rng, "abcdefghijklmnopqrstuv0123456789", 26)


def v_session_cookie(rng: random.Random, i: int) -> Value:
    style = ["moodle", "canvas", "edx", "blackboard", "express", "php"][i % 6]
    name, value = session_cookie(rng, style)
    how = i // 6 % 5
    if how == 0:
        snip = f"Cookie: {name}={value}; lang=ja"
    elif how == 1:
        snip = f"Set-Cookie: {name}={value}; path=/; secure; HttpOnly; SameSite=None"
    elif how == 2:
        snip = f"curl -b '{name}={value}' https://lms.school.example/grade/report/index.php?id={rng.randint(2, 999)}"
    elif how == 3:
        snip = f"{name}\t{value}\tlms.school.example\t/\tSession\t{len(value) + len(name)}\t✓\t✓"
    else:
        snip = labelled(rng, i, COOKIE_L, f"{name}={value}")
    return style, value, snip, False


def v_auth_header(rng: random.Random, i: int) -> Value:
    style = ["canvas_bearer", "google_bearer", "basic", "canvas_bearer", "basic_localized"][i % 5]
    if style == "canvas_bearer":
        cred = f"{rng.randint(1, 20)}~{pick(rng, ALNUM, 64)}"
        snip = f"curl -H 'Authorization: Bearer {cred}' https://school.instructure.com/api/v1/courses?per_page=50"
    elif style == "google_bearer":
        cred = "ya29.a0" + pick(rng, URLSAFE, rng.randint(140, 200))
        snip = f"GET /v1/courses/{rng.randint(10 ** 11, 10 ** 12)}/students HTTP/1.1\nAuthorization: Bearer {cred}"
    else:
        user = rng.choice(["sis_sync", "moodle_ws", "proctor-api"])
        cred = base64.b64encode(f"{user}:{password_value(rng)}".encode()).decode()
        snip = f"Authorization: Basic {cred}"
        if style == "basic_localized":
            snip = frame(rng, lang_of(i), snip)
    return style, cred, snip, False


def v_totp_seed(rng: random.Random, i: int) -> Value:
    seed = pick(rng, BASE32, 32)
    style = ["otpauth", "setup_key", "otpauth_qr_alt"][i % 3]
    issuer = rng.choice(["Moodle", "Canvas", "学務情報システム", "e-Campus", "Zoom"])
    account = rng.choice(["stu2024", "teacher.kim", "admin", "ta01"])
    if style == "setup_key":
        secret = group(seed.lower(), 4, " ")
        return style, secret, labelled(rng, i, TOTP_L, secret), False
    uri = f"otpauth://totp/{quote(issuer)}:{account}?secret={seed}&issuer={quote(issuer)}&algorithm=SHA1&digits=6&period=30"
    if style == "otpauth":
        return style, seed, frame(rng, lang_of(i), uri), False
    return style, seed, f'<img alt="{uri}" src="/admin/tool/mfa/qr.php">', False


def v_recovery_code(rng: random.Random, i: int) -> Value:
    style = ["github", "google", "microsoft", "github", "zoom"][i % 5]
    if style == "github":
        code = f"{pick(rng, HEX, 5)}-{pick(rng, HEX, 5)}"
    elif style == "google":
        code = f"{digits(rng, 4)} {digits(rng, 4)}"
    elif style == "microsoft":
        code = "-".join(pick(rng, UPPER + string.digits, 5) for _ in range(5))
    else:
        code = pick(rng, UPPER + string.digits, 10)
    return style, code, labelled(rng, i, RECOVERY_L, code), False


def v_google_api_key(rng: random.Random, i: int) -> Value:
    key = "AIza" + pick(rng, URLSAFE, 35)
    style = ["youtube_url", "moodle_setting", "gemini_env", "label"][i % 4]
    if style == "youtube_url":
        snip = f"GET https://www.googleapis.com/youtube/v3/search?part=snippet&q=%E8%AC%9B%E7%BE%A9&key={key}"
    elif style == "moodle_setting":
        snip = f"repository_youtube | apikey | {key}"
    elif style == "gemini_env":
        snip = f"GEMINI_API_KEY={key}"
    else:
        snip = labelled(rng, i, KEY_L, key)
    return style, key, snip, False


def v_google_client_secret(rng: random.Random, i: int) -> Value:
    secret = "GOCSPX-" + pick(rng, URLSAFE, 28)
    style = ["client_json", "env", "label"][i % 3]
    if style == "client_json":
        client = f"{rng.randint(10 ** 11, 10 ** 12)}-{pick(rng, LOWER + string.digits, 32)}.apps.googleusercontent.com"
        snip = _dump({"web": {"client_id": client, "project_id": f"classroom-sync-{rng.randint(100, 999)}",
                              "auth_uri": "https://accounts.google.com/o/oauth2/auth",
                              "token_uri": "https://oauth2.googleapis.com/token", "client_secret": secret}})
    elif style == "env":
        snip = f"GOOGLE_CLIENT_SECRET={secret}"
    else:
        snip = labelled(rng, i, SECRET_L, secret)
    return style, secret, snip, False


def ai_key(rng: random.Random, style: str) -> str:
    """An AI provider's key as its console prints it."""
    return {"openai": lambda: "sk-proj-" + pick(rng, URLSAFE, 156),
            "anthropic": lambda: "sk-ant-api03-" + pick(rng, URLSAFE, 93) + "AA",
            "deepseek": lambda: "sk-" + pick(rng, HEX, 32), "dashscope": lambda: "sk-" + pick(rng, HEX, 32),
            "moonshot": lambda: "sk-" + pick(rng, ALNUM, 48),
            "zhipu": lambda: pick(rng, HEX, 32) + "." + pick(rng, ALNUM, 16),
            "huggingface": lambda: "hf_" + pick(rng, string.ascii_letters, 34)}[style]()


AI_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "deepseek": "DEEPSEEK_API_KEY",
          "dashscope": "DASHSCOPE_API_KEY", "moonshot": "MOONSHOT_API_KEY", "zhipu": "ZHIPUAI_API_KEY",
          "huggingface": "HF_TOKEN"}


def v_ai_api_key(rng: random.Random, i: int) -> Value:
    style = list(AI_ENV)[i % len(AI_ENV)]
    key = ai_key(rng, style)
    how = i // len(AI_ENV) % 3
    if how == 0:
        snip = f"export {AI_ENV[style]}={key}"
    elif how == 1:
        snip = f'client = OpenAI(api_key="{key}", base_url=BASE_URL)  # 作文批改助手'
    else:
        snip = labelled(rng, i, KEY_L, key)
    return style, key, snip, False


def dev_token(rng: random.Random, style: str) -> str:
    """A developer platform token by its documented prefix."""
    return {"github_classic": lambda: crc_token(rng, "ghp_"),
            "github_fine": lambda: "github_pat_" + pick(rng, ALNUM, 22) + "_" + pick(rng, ALNUM, 59),
            "gitlab": lambda: "glpat-" + pick(rng, URLSAFE, 20),
            "slack_bot": lambda: f"xoxb-{rng.randint(10 ** 10, 10 ** 12)}-{rng.randint(10 ** 12, 10 ** 13)}-"
                                 f"{pick(rng, ALNUM, 24)}",
            "slack_user": lambda: f"xoxp-{rng.randint(10 ** 10, 10 ** 12)}-{rng.randint(10 ** 10, 10 ** 12)}-"
                                  f"{rng.randint(10 ** 12, 10 ** 13)}-{pick(rng, HEX, 32)}",
            "sendgrid": lambda: "SG." + pick(rng, URLSAFE, 22) + "." + pick(rng, URLSAFE, 43),
            "stripe_live": lambda: "sk_live_" + pick(rng, ALNUM, rng.choice([24, 99])),
            "stripe_restricted": lambda: "rk_live_" + pick(rng, ALNUM, 99),
            "npm": lambda: crc_token(rng, "npm_")}[style]()


DEV_STYLES = ["github_classic", "slack_bot", "stripe_live", "sendgrid", "github_fine", "gitlab", "slack_user",
              "stripe_restricted", "npm"]


def v_dev_token(rng: random.Random, i: int) -> Value:
    style = DEV_STYLES[i % len(DEV_STYLES)]
    token = dev_token(rng, style)
    how = i // len(DEV_STYLES) % 3
    if how == 0:
        snip = frame(rng, lang_of(i), f"git clone https://x-access-token:{token}@github.com/school/lms-plugins.git"
                     if style.startswith("github") else f"token={token}")
    elif how == 1:
        snip = f"- name: deploy\n  env:\n    TOKEN: {token}"
    else:
        snip = labelled(rng, i, TOKEN_L, token)
    return style, token, snip, False


# ---- values: outside the target -------------------------------------------------------------------------------

CN_REGIONS = ["110101", "110108", "310104", "310115", "440305", "440106", "330106", "510107", "420111", "320102",
              "610113", "120101", "500103", "370202"]
CN_WEIGHTS = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2]


def cn_check(first17: str) -> str:
    """GB 11643-1999's check character: ISO 7064 MOD 11-2 over the first 17 digits."""
    return "10X98765432"[sum(int(d) * w for d, w in zip(first17, CN_WEIGHTS, strict=True)) % 11]


def _birth(rng: random.Random) -> tuple[int, int, int]:
    return rng.randint(2003, 2012), rng.randint(1, 12), rng.randint(1, 28)


def cn_resident_id(rng: random.Random) -> str:
    y, m, d = _birth(rng)
    first = f"{rng.choice(CN_REGIONS)}{y}{m:02d}{d:02d}{rng.randint(1, 999):03d}"
    return first + cn_check(first)


TW_LETTERS = dict(zip("ABCDEFGHJKLMNPQRSTUVXYWZIO", range(10, 36), strict=True))


def tw_check(letter: str, eight: str) -> str:
    """Taiwan's national id check digit: the letter's two digits weighted 1 and 9, the next eight 8..1, mod 10."""
    n = TW_LETTERS[letter]
    total = n // 10 + (n % 10) * 9 + sum(int(d) * w for d, w in zip(eight, range(8, 0, -1), strict=True))
    return str((10 - total % 10) % 10)


def tw_national_id(rng: random.Random) -> str:
    letter = rng.choice("ABEFHK")
    eight = rng.choice("12") + digits(rng, 7)
    return letter + eight + tw_check(letter, eight)


def kr_rrn(rng: random.Random) -> str:
    """A resident registration number of someone born 2003-2012 (sex digit 3/4) with the weights 2-9,2-5 mod 11
    digit numbers issued before October 2020 carry."""
    y, m, d = _birth(rng)
    first = f"{y % 100:02d}{m:02d}{d:02d}{rng.choice('34')}{digits(rng, 5)}"
    total = sum(int(c) * w for c, w in zip(first, [2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5], strict=True))
    return f"{first[:6]}-{first[6:]}{(11 - total % 11) % 10}"


def jp_check(eleven: str) -> str:
    """My Number's check digit (MIC ordinance 85, 2014): P_n from the right weighted n+1 (n<=6) or n-5, mod 11."""
    total = sum(int(p) * (n + 1 if n <= 6 else n - 5) for n, p in enumerate(reversed(eleven), start=1))
    r = total % 11
    return "0" if r <= 1 else str(11 - r)


def jp_my_number(rng: random.Random) -> str:
    eleven = str(rng.randint(1, 9)) + digits(rng, 10)
    number = eleven + jp_check(eleven)
    return group(number, 4, " ") if rng.random() < 0.5 else number


def hk_hkid(rng: random.Random) -> str:
    """An HKID: a letter, six digits and the mod 11 check (a space counts 36, letters 10-35, weights 9..2)."""
    letter, six = rng.choice("ACDEGHKPRVYZ"), digits(rng, 6)
    total = 36 * 9 + (ord(letter) - 55) * 8 + sum(int(c) * w for c, w in zip(six, range(7, 1, -1), strict=True))
    check = (11 - total % 11) % 11
    return f"{letter}{six}({'A' if check == 10 else check})"


def sg_nric(rng: random.Random) -> str:
    """A Singapore NRIC of someone born 2000 or later (T) or earlier (S): weights 2-7-6-5-4-3-2, +4 for T, letter
    table JZIHGFEDCBA."""
    prefix = rng.choice("TTS")
    seven = (f"{rng.randint(3, 12):02d}" if prefix == "T" else f"{rng.randint(70, 99)}") + digits(rng, 5)
    total = sum(int(c) * w for c, w in zip(seven, [2, 7, 6, 5, 4, 3, 2], strict=True)) + (4 if prefix == "T" else 0)
    return prefix + seven + "JZIHGFEDCBA"[total % 11]


ID_LABELS = {"cn_resident_id": ("zh", "身份证号|公民身份号码|证件号码"),
             "tw_national_id": ("zh_tw", "身分證字號|身分證統一編號"),
             "kr_rrn": ("ko", "주민등록번호|주민번호"), "jp_my_number": ("ja", "マイナンバー（個人番号）|個人番号"),
             "hk_hkid": ("zh_tw", "香港身份證號碼|HKID"), "sg_nric": ("en", "NRIC|NRIC No.")}
ID_MAKERS: dict[str, Callable[[random.Random], str]] = {
    "cn_resident_id": cn_resident_id, "tw_national_id": tw_national_id, "kr_rrn": kr_rrn,
    "jp_my_number": jp_my_number, "hk_hkid": hk_hkid, "sg_nric": sg_nric}


def national_id(kind: str) -> Callable[[random.Random, int], Value]:
    lang, labels = ID_LABELS[kind]

    def make(rng: random.Random, i: int) -> Value:
        value = ID_MAKERS[kind](rng)
        if i % 4 == 3:
            return "table", value, f"| 氏名/姓名 | {labels.split('|')[0]} |\n|---|---|\n| ○○ | {value} |", False
        return "label", value, frame(rng, lang, say(rng, lang, rng.choice(labels.split("|")), value)), False
    return make


def _cn_phone(r: random.Random) -> str:
    return r.choice(["138", "139", "135", "150", "158", "186", "187", "189", "199", "177", "166"]) + digits(r, 8)


EA_PHONES: dict[str, tuple[str, str, list[PhoneForm]]] = {
    "phone_cn": ("zh", "电话|手机|联系电话|家长手机号", [
        ("compact", _cn_phone), ("spaced", lambda r: f"{_cn_phone(r)[:3]} {digits(r, 4)} {digits(r, 4)}"),
        ("intl", lambda r: "+86 " + _cn_phone(r)),
        ("dashed", lambda r: f"{_cn_phone(r)[:3]}-{digits(r, 4)}-{digits(r, 4)}"),
        ("beijing", lambda r: f"010-{r.randint(5, 8)}{digits(r, 7)}"),
        ("shenzhen", lambda r: f"0755-{r.randint(2, 8)}{digits(r, 7)}")]),
    "phone_jp": ("ja", "電話番号|携帯|TEL|連絡先", [
        ("mobile", lambda r: f"0{r.choice('789')}0-{digits(r, 4)}-{digits(r, 4)}"),
        ("tokyo", lambda r: f"03-{r.randint(3, 6)}{digits(r, 3)}-{digits(r, 4)}"),
        ("intl", lambda r: f"+81 {r.choice('789')}0-{digits(r, 4)}-{digits(r, 4)}"),
        ("osaka", lambda r: f"06-{r.randint(6, 7)}{digits(r, 3)}-{digits(r, 4)}"),
        ("fullwidth", lambda r: fullwidth(f"090-{digits(r, 4)}-{digits(r, 4)}")),
        ("yokohama", lambda r: f"045-{r.randint(2, 9)}{digits(r, 2)}-{digits(r, 4)}")]),
    "phone_kr": ("ko", "전화번호|휴대폰|연락처|보호자 연락처", [
        ("mobile", lambda r: f"010-{r.randint(2, 9)}{digits(r, 3)}-{digits(r, 4)}"),
        ("compact", lambda r: f"010{r.randint(2, 9)}{digits(r, 7)}"),
        ("intl", lambda r: f"+82 10-{r.randint(2, 9)}{digits(r, 3)}-{digits(r, 4)}"),
        ("seoul", lambda r: f"02-{r.randint(2, 9)}{digits(r, 3)}-{digits(r, 4)}"),
        ("busan", lambda r: f"051-{r.randint(2, 9)}{digits(r, 2)}-{digits(r, 4)}"),
        ("fullwidth", lambda r: fullwidth(f"010-{r.randint(2, 9)}{digits(r, 3)}-{digits(r, 4)}"))]),
    "phone_tw": ("zh_tw", "電話|手機|聯絡電話|家長手機", [
        ("mobile", lambda r: f"09{digits(r, 2)}-{digits(r, 3)}-{digits(r, 3)}"),
        ("spaced", lambda r: f"09{digits(r, 2)} {digits(r, 3)} {digits(r, 3)}"),
        ("intl", lambda r: f"+886 9{digits(r, 2)} {digits(r, 3)} {digits(r, 3)}"),
        ("taipei", lambda r: f"(02) 2{digits(r, 3)}-{digits(r, 4)}"),
        ("kaohsiung", lambda r: f"(07) {r.randint(2, 8)}{digits(r, 2)}-{digits(r, 4)}"),
        ("fullwidth", lambda r: fullwidth(f"09{digits(r, 2)}-{digits(r, 3)}-{digits(r, 3)}"))]),
}


def ea_phone(kind: str) -> Callable[[random.Random, int], Value]:
    lang, labels, forms = EA_PHONES[kind]

    def make(rng: random.Random, i: int) -> Value:
        style, fmt = forms[i % len(forms)]
        number = fmt(rng)
        label = rng.choice(labels.split("|")) if i % 5 else "mobile"
        return style, number, frame(rng, lang, say(rng, lang, label, number)), False
    return make


KINDS: dict[str, Callable[[random.Random, int], Value]] = {
    "password": v_password, "aws_secret": v_aws_secret, "webhook": v_webhook, "stripe_whsec": v_stripe_whsec,
    "connection_string": v_connection_string, "labelled_key": v_labelled_key, "disguised": v_disguised,
    "email": v_email, "phone_us_ca": country_phone("us_ca", US_FORMS), "phone_uk": country_phone("uk", UK_FORMS),
    "phone_fr": country_phone("fr", FR_FORMS), "phone_de": country_phone("de", DE_FORMS),
    "phone_in": country_phone("in", IN_FORMS), "ssn": v_ssn, "card": v_card, "iban": v_iban,
    "jwt": v_jwt, "private_key": v_private_key, "session_cookie": v_session_cookie, "auth_header": v_auth_header,
    "totp_seed": v_totp_seed, "recovery_code": v_recovery_code, "google_api_key": v_google_api_key,
    "google_client_secret": v_google_client_secret, "ai_api_key": v_ai_api_key, "dev_token": v_dev_token,
    **{kind: national_id(kind) for kind in ID_MAKERS}, **{kind: ea_phone(kind) for kind in EA_PHONES},
}


def carry(rng: random.Random, i: int, value: Value) -> tuple[str, str, bool]:
    """The carrier for case `i`: every third one JSON (unless the value must stay raw), cycling both lists."""
    _style, secret, snip, raw_only = value
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

def _luhn_bad(rng: random.Random, n: int = 16) -> str:
    number = _nonluhn(rng, n)
    assert not luhn_ok(number)
    return number


def isbn13(rng: random.Random) -> str:
    """A textbook's ISBN-13 (ISO 2108) of a CJK registration group with its mod 10 (1-3 weights) check digit."""
    group_id = rng.choice(["4", "7", "89", "957", "986"])
    body = "978" + group_id + digits(rng, 9 - len(group_id))
    check = (10 - sum(int(d) * (3 if k % 2 else 1) for k, d in enumerate(body)) % 10) % 10
    return f"978-{group_id}-{body[3 + len(group_id):]}-{check}"


def s10(rng: random.Random) -> str:
    """A UPU S10 item id (EMS): two letters, eight digits, the weighted mod 11 check digit, the country."""
    eight = digits(rng, 8)
    c = 11 - sum(int(d) * w for d, w in zip(eight, [8, 6, 4, 2, 3, 5, 9, 7], strict=True)) % 11
    return f"E{rng.choice('EMJ')}{eight}{0 if c == 10 else 5 if c == 11 else c}{rng.choice(['JP', 'CN', 'KR', 'TW'])}"


NEAR_MISSES: dict[str, list[str]] = {
    "lms_ids": ["/course/view.php?id={d:4}", "/mod/quiz/attempt.php?attempt={d:5}&cmid={d:4}",
                "Canvas course_id {d:5}, section {d:4}", "LTI client_id 10000000000{d:3}（公開値）",
                "resource_link_id: {uuid}"],
    "css_selectors": ["#gradebook > div.slick-row:nth-child({d:1}) .cell-{d:4}",
                      ".que.multichoice#question-{d:2}-{d:1}",
                      "[data-testid='submit-quiz'] button.btn-primary", "div.zm-video-container > canvas:first-of-type",
                      "ul.nav-tabs li:nth-of-type({d:1}) > a"],
    "xpath": ["//div[@id='region-main']/form/input[{d:1}]", "/html/body/div[2]/section/table/tbody/tr[{d:2}]/td[{d:1}]",
              "//button[contains(., '提出する')]", "//span[text()='출석']/following-sibling::input"],
    "coordinates": ["キャンパス座標 35.71{d:2}, 139.76{d:2}", "校区位置：北纬39.99{d:2}° 东经116.30{d:2}°",
                    "lat=37.46{d:3}&lng=126.95{d:3}&zoom=1[5|6|7]", "25.01{d:2}° N, 121.53{d:2}° E"],
    "pixel_sizes": ["[1920×1080|1280×720|3840×2160]", "video [1280x720|640x360]@30fps, {d:4} kbps",
                    "width: [320|640|1280]px; height: [180|360|720]px;", "ギャラリービュー 4{d:1} タイル 320x180"],
    "timestamps": ["{iso}", "{ms}", "令和6年[1|4|9|11]月{day}日", "2024년 9월 {day}일 (월) 오후 [1|3|5]:{min}",
                   "2024年9月{day}日 1[0|4|6]:{min}", "民國113年[3|9|12]月"],
    "request_ids": ["X-Request-Id: {uuid}", "traceparent: 00-{hex:32}-{hex:16}-01",
                    "x-zm-trackingid: v=2.0;clid=aw1;rid=WEB_{hex:32}", "X-Canvas-Meta: q=1;a=1;g={an:6};s={d:4};"],
    "asset_hashes": ["main.{hex:8}.chunk.js", "/theme/styles.php/boost/{ms}_1/all", "style.css?v={hex:8}",
                     '<script src="/lib/app.js" integrity="sha384-{sri}">'],
    "csrf_field_names": ['<input type="hidden" name="sesskey" value="">', "Missing header X-CSRF-Token",
                         "csrfmiddlewaretoken field absent (Open edX login)",
                         "logintoken が無効です（Moodle ログインフォーム）",
                         "authenticity_token param required", "CSRF 토큰 필드 이름: _csrf"],
    "placeholders": ["密码：********", "パスワード：（非表示）", "비밀번호: ●●●●●●●●", "API key: <YOUR_API_KEY>",
                     "メールアドレス（例：you@example.com）", "邮箱：请输入邮箱", "token=${CANVAS_TOKEN}",
                     "手机号：请输入11位手机号", 'client_secret: "********"', "STRIPE_WEBHOOK_SECRET=whsec_..."],
    "masked_values": ["1[38|86|50]****{d:4}", "010-****-{d:4}", "カード番号：****-****-****-{d:4}", "z***g@qq.com",
                      "身份证号：{region}********{d:3}X", "IBAN DE** **** **** **** **{d:2}"],
    "versions": ["Moodle 4.[1|3|4].{d:1}+ (Build: 2024{d:2}{day})", "Zoom 6.[0|1|2].{d:1} (3{d:4})",
                 "LTI 1.3.0 / LTI Advantage", "canvas-lms release/2024-0[4|8]-{day}.{d:3}", "node v20.1[0|1|5].{d:1}"],
    "service_numbers": ["入試センター（フリーダイヤル）0120-{d:3}-{d:3} 受付 9:00-17:00",
                        "客服热线 400-{d:3}-{d:4}（工作日）",
                        "고객센터 1588-{d:4} (평일 9시~18시)", "免付費客服專線 0800-{d:3}-{d:3}",
                        "Kundenservice 0800 {d:7} (kostenfrei)", "Support line 1-800-[2|4|7]{d:2}-{d:4} (Mon-Fri)"],
    "luhn_invalid": ["受付番号 {luhnbad_s}", "交易流水号：{luhnbad}", "Belegnummer {luhnbad_s}", "접수번호 {luhnbad}"],
    "order_numbers": ["支付宝交易号 2024{d:4}2200{d:16}", "transaction_id 42000{d:23}",
                      "out_trade_no TUITION-2024-{d:6}",
                      "注文番号 {d:3}-{d:7}-{d:7}", "주문번호 ORD{d:10}"],
    "tracking_numbers": ["顺丰单号 SF{d:13}", "EMS {s10}", "お問い合わせ伝票番号 {d:4}-{d:4}-{d:4}",
                         "CJ대한통운 운송장 {d:12}", "中通快递 7{d:13}"],
    "element_ids": ["id_submitbutton", "yui_3_17_2_1_{ms}_{d:3}", "region-main-box", "gradebook-{d:4}-cell",
                    "mod_quiz_navblock_q{d:2}"],
    "isbn": ["教科書 ISBN {isbn}", "教材：ISBN {isbn}（第3版）", "교재 ISBN {isbn}", "Textbook ISBN {isbn}"],
    "docs_examples": ["aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
                      "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                      "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
                      "Authorization: Bearer <access_token>"],
    "grades_amounts": ["GPA [2|3].{d:2} / 4.30", "学费 ¥[12|38],{d:3}.00", "등록금 ₩[3|4],{d:3},000", "NT$[25|48],000",
                       "平均点 [6|7]{d:1}.{d:1}点 / 偏差値 [5|6]{d:1}.{d:1}"],
    "rooms_courses": ["本館{d:1}F-{d:3}教室", "B동 [1|2|5]{d:2}호", "COMP[1|2|3]{d:3}-2024S[1|2]-L0{d:1}",
                      "第{d:1}講義室",
                      "教学楼A[1|3]{d:2}"],
    "file_digests": ["提出物 SHA-256: {hex:64}", "commit {hex:40}", 'ETag: "{hex:32}"', "答案 PDF 校验值 MD5 {hex:32}"],
}
"""Near-miss sorts: templates of `FIELDS` and choices, one drawn per text."""


def generate_negatives() -> Iterator[tuple[str, str]]:
    """NEGATIVES_PER_SORT near misses of each sort, as (sort, text), some inside a JSON carrier."""
    rng = random.Random(SEED + 1)
    for sort, templates in NEAR_MISSES.items():
        for i in range(NEGATIVES_PER_SORT):
            text = _fill(rng, rng.choice(templates))
            if i % 3 == 0:
                name = list(JSON_CARRIERS)[i % len(JSON_CARRIERS)]
                text = JSON_CARRIERS[name](rng, text, "")
            yield sort, text
