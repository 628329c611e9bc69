"""The built-in detectors: each a named rule with a pattern, the placeholder type it redacts to, and an
optional validator.

Every pattern is written in the syntax RE2 and Python's `re` share (no look-arounds, no back-references), so the
same text serves twice: all patterns joined are the RE2 prefilter that pyarrow runs over a whole column in C++,
and each alone runs in Python on the few strings the prefilter lets through (but for the sweep rules, which read
every text in Python: a value's shape with no label, whose trigger would filter nothing). Where a rule needs
context around its value (a label, a word boundary RE2 cannot express), the value is the named group `v`; the
rest of the match is context and stays (a pattern with alternative forms of the value names them `v`, `w`, `x`:
the first that took part is the value). Separators allow a line break, so a value wrapped over lines is still
found; `\\n` (a backslash and an n) is a line break inside a JSON string, as tool arguments and results store it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from tracegym.redact import manifests, national, words
from tracegym.redact import validators as v

Validator = Callable[[str], bool | int]
"""True to keep a match, False to drop it, or the length of the prefix to keep."""

# A value separator inside a grouped number: space, dash, or a line break (raw, or escaped inside JSON text).
_SEP = r"(?:[ \t-]|\\?\r?\n|\\n)"
_GAP = r"(?:[ .-]|\\?\r?\n|\\n)"  # between an IBAN's groups of four: space, dash, dot
_PSEP = r"(?:[ .-]|\\?\r?\n|\\n)"  # between a phone number's groups
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_DATE = (r"(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.](?:\d{4}|\d{2})|"
         rf"{_MONTH} \d{{1,2}}(?:st|nd|rd|th)?,? \d{{4}}|\d{{1,2}}(?:st|nd|rd|th)? (?:of )?{_MONTH},? \d{{4}})")
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
# Labels whose value is a credential, as keys in JSON, YAML, env files and code.
_SECRET_WORDS = (r"(?:api[_ -]?key|apikey|secret[_ -]?key|access[_ -]?key|private[_ -]?key|client[_ -]?secret|"
                 r"auth[_ -]?token|access[_ -]?token|refresh[_ -]?token|secret|token|credentials?|[_.-]key|"
                 r"[a-z0-9]Key|[_.-]pat\b|code[_-]verifier|secret[_ -]?(?:data|value|string))")
# (`_pat`: a personal access token, as `asana_pat`, `AIRTABLE_PAT`, `x-asana-pat` name one; `code_verifier`: PKCE's
# secret, RFC 7636, whose hash the `code_challenge` is public; `secret_data`, `secret_string`: the secret a store
# holds, as Keycloak's credential table, Terraform's Secret Manager and AWS's `SecretString` name it)
# Labels that name a key outright, as people write them ("API Key:", "Client Secret =", x-api-key); a live stream's
# key (`stream_key`, "Stream key": whoever holds it broadcasts on the channel, Mux's a UUID); Agora's App
# Certificate (`appCertificate`, 32 hex: the secret its RTC and RTM tokens are signed with). A payment gateway's
# private credential, which Kushki names an id (`Private-Merchant-Id`: the key its API calls are made with, beside
# the public one) and Spanish-speaking integrators a private credential (`credencial privada`).
_KEY_LABELS = (r"(?i:api[_ -]?(?:key|token)|api[_ -]?(?:key[_ -]?)?secret|secret[_ -]?key|access[_ -]?token|"
               r"client[_ -]?secret|auth[_ -]?token|private[_ -]?key|x-auth-token|stream[_ -]?key|"
               r"app[_ -]?certificate|private[_ -]?merchant[_ -]?id|credencial(?:es)?[_ -]privada)")
# The word in English and as German, French, Spanish, Portuguese and Dutch forms and logs write it.
# Also the short forms people write (pw, ww for wachtwoord, 비번), Vietnamese (mật khẩu), the words joined as
# identifiers spell them (mot_de_passe, mat_khau, CLAVE_DE_ACCESO), Turkish's possessives (şifrem, şifreniz) and
# Indonesian's (kata sandi saya), Arabic (كلمة المرور / كلمة السر), Korean (암호),
# Hebrew, Greek, Hindi and Thai.
_PW = (r"(?i:password|passwd|pass[_-]?phrase|pass[_-]?code|pwd|\bpw\b|passwort|kennwort|mot[ _-]de[ _-]passe|\bmdp|"
       r"contrase[nñ]a|clave[ _-]de[ _-]acceso|senha|wachtwoord|\bww\b|parol[a]?\b|пароль|heslo|has[lł]o|salasana|"
       r"l[oö]senord|passord|adgangskode|jelsz[oó]|[sşŞ]ifre(?:m|n|miz|niz|si)?|"
       r"kata[ _-]sandi(?:[ _-](?:saya|anda|kamu))?|mat[_ ]?khau\b)|(?i:m[ậẬa]t kh[ẩẨa]u)|"
       r"كلمة المرور|كلمة السر|كلمه المرور|סיסמה|[κΚ]ωδικός|Пароль|ПАРОЛЬ|पासवर्ड|รหัสผ่าน|パスワード|暗証番号|密码|密碼|"
       r"비밀번호|비번|암호|" + words.alternation(words.PASSWORD))
# A password's key: the word ending any name (DB_PASSWORD, PGPASSWORD, userPassword, spring.datasource.password:
# no word boundary before it), or `pass` after a separator or in camelCase (REDIS_PASS, --redis-pass, adminPass);
# `auth` ending a name after a separator or a hump (redis_auth, REDIS_AUTH, redisAuth: Redis's AUTH password); `pw`
# ending a lower-case name (OpenLDAP's `rootpw`, pfSense's `ldap_bindpw`); a PHP property ending in `pass`
# (Moodle's `$CFG->dbpass`), and the same short names as env keys write them (`MOODLE_DBPASS`, `APP_SMTPPASS`).
_PW_LABEL = (rf"(?:{_PW}|[_.-](?i:(?:db|sql|smtp|ldap|bind|admin|root)?pass|pw\b|auth\b)|[a-z0-9](?:Pass|Auth\b)|"
             rf"[a-z]pw\b|->(?i:[a-z]{{0,12}}pass)\b)")
# What may close a label before its `:` or `=`: a quote (JSON keys, SQL's backticks around a column name: `` `smtp_pass`
# = '…' ``), then a bracket or a parenthesis (`['API_KEY']`, a name in prose: "token set (JIRA_API_TOKEN): …").
_CLOSE = r"\\?[\"'`]?[\])]?"
# "is" as prose says it before a value, in the languages of _PW ("Le mot de passe est :", "Minha senha é", "Ihr
# Kennwort lautet").
_IS = rf"(?:(?i:is|ist|lautet|luidt|est|es|é|è|är|er|to|jest|wynosi)|là|هي|هو|{words.alternation(words.IS)})"
# An arrow or an assignment operator between a label and its value, as notes, logs and languages write them: `->`,
# `=>`, `→`, `⇒`, `➜`, `:=` (Go, Pascal), `<-` (R).
_ARROW = r"[ \t]*(?:->|=>|→|⇒|⟶|➜|➔|:=|<-)[ \t]*"
# A CJK writer's join of a label and its value: the copula or topic particle, a colon perhaps after it
# (`密钥为：…`, `キーは…`, `키는 …`), an opening corner or tortoise-shell bracket (`secret「…」`, `は『…』`, `〔…〕`),
# a closing lenticular bracket after a bracketed label (`【API Key】…`), a square one with a space after it (`[API 키]
# …`: not a selector's `[name="passwd"]` closing before code), a fullwidth colon.
_CJK_JOIN = r"[ \t]*(?:(?:是|为|為|は|는|은)[ \t]*[:：]?|(?:是|为|為|は)?[「『〔]|】|\][ \t]|[：៖])[ \t]*"
# What a label may say of whose key it is before its `:` or "is": "API key for the prod workspace is …", "the token of
# the ops bot: …" (up to 40 characters, no `:` or `=` among them).
_WHOSE = r"(?:[ \t]+(?i:for|of|on|in|de|für|pour|para)[ \t][^\n:=]{1,40}?)"
# Words that assign in prose: "is set to", "was set to", "set to", "equals", "was".
_SET_TO = r"[ \t]+(?i:(?:is|was|has been)[ \t]+(?:set|changed|reset|updated)[ \t]+to|set[ \t]+to|equals|was)[ \t]+"
# Where a password follows its label: `=`/`:` (env, YAML, INI, JSON), Go's `:=`, the shell's default `${PW:-X}`,
# "is", "for bob is", "my password is" with the possessive after the word ("kata laluan saya ialah"), "reset to", a
# tag's `>`.
_PW_AFTER = (rf"{_CLOSE}(?:{_ARROW}|[ \t]*(?::=|:-|[:=]>?)[ \t]*|"
             rf"(?:[ \t]+(?i:for|of|de|für|pour|para|del|di)[ \t][^\n:=]{{1,30}}?|"
             r"[ \t]+[A-Za-z]{2,8})?"
             rf"[ \t]+{_IS}(?:[ \t]*:)?[ \t]+|"
             rf"[^\n:=]{{0,40}}?[ \t](?i:reset|changed|set|updated|rotated)[ \t]+to[ \t]+|>|{_CJK_JOIN})")
# A dash between a label and its value, as notes, chat and signatures write it (`Password - X`, `Client Secret – X`).
_DASH = r"[ \t]+[-–—][ \t]+"
# A form's dot leader between a label and its value, as text extracted from a PDF form keeps it (`Password
# .......... X`, `API key ........ X`).
_LEADER = r"[ \t]+\.{3,}[ \t]+|[ \t]*…+[ \t]+"
# A label's gloss in parentheses after it, its translation in a bilingual form or message (`db password (salasana)
# X`, `API key (nøkkel) X`).
_GLOSS = r"(?:[ \t]+\([^\d()\n]{2,24}\))"
# A password in prose: its label, inflected (`lösenordet`, `şifresi`), up to six words saying whose it is ("for
# bob", "van root", "του deploy", "של tanaka", "für den SFTP-Zugang der Kasse"), then `:` or the language's "is"; or
# a particle glued to the label in Chinese, Japanese and Korean (`密码是`, `パスワードは`, `비밀번호는`).
_PW_PROSE = (rf"(?:{_PW})[A-Za-z\u00c0-\u024f]{{0,4}}(?:(?:[ \t]+[^\s:=]{{1,40}}){{0,6}}?"
             rf"(?:[ \t]*[:：៖][ \t]*|[ \t]+{_IS}[ \t]*:?[ \t]+|{_DASH}|{_LEADER})|[ \t]*(?:是|为|為|は|는|은)[ \t]*)")
# What may open a value after its label: a quote, a backtick (markdown and Slack code), an HTML tag for code or
# emphasis (Teams and Intercom bodies, `Password: <code>…</code>`); a quote then `'`, a Python repr inside JSON text
# (Sentry's frame `vars`: `"api_key": "'…'"`).
_OPEN = r"(?:\\?[\"'`]'?|<(?:code|kbd|samp|tt|pre|b|strong|em|i|mark)>)?"
# CJK punctuation that ends a value in prose: closing brackets, the ideographic comma and full stop.
_CJK_STOP = "」』〕）】，。、"
# A character of an unquoted password after a `,` or `;` inside it (`UH;mx!_*24`: they end a value in prose): not
# a space, a quote, a bracket or a backslash, nor an `=` (`password=X;encrypt=true` in JDBC: the next `name=`), nor
# kana, hangul or an ideograph (a fullwidth comma read as `,`, then the sentence going on: `…，再麻煩您確認`).
_PW_WORD = rf"[^\s\"'`,;(){{}}\[\]<>\\={_CJK_STOP}\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]"
# A character of an unquoted password: not a space, a quote, a bracket or a backslash, nor the `&` that opens a
# form's or a query's next field (`password=X&grant_type=password`: a literal `&` there is written `%26`).
_PW_CHAR = rf"(?:[^\s\"'`,;(){{}}\[\]<>\\&{_CJK_STOP}]|&(?![A-Za-z_][\w.\[\]-]{{0,40}}=))"
# What stands between a Windows command and its password flag: the rest of the line, where an account
# `DOMAIN\user` whose name opens with n, r or t reads as a JSON escape (`CORP\tomas`), which the detector's view
# writes as a backslash and a line break.
_WIN_GAP = r"(?:[^\n|;&]|(?<=\\)\n)"
# Sysinternals' remote tools, which take `-u user -p password` (PsExec, PsInfo, PsKill, PsList, …).
_SYSINTERNALS = r"(?i:ps(?:exec|info|kill|list|service|shutdown|file|getsid|loglist|passwd|suspend))"
# The short password flags of common tools, as their manuals give them: `docker login -p` (podman, nerdctl,
# buildah, skopeo, oras, `helm registry login` alike), `redis-cli -a`, `ldapsearch -w` (every OpenLDAP client),
# `smbclient -U user%password`, `htpasswd -b[c] file user password` (the flags apart too: `-b -c`) and
# `htpasswd -nb user password`, Windows' `net user NAME password`, `sqlcmd -P`/`bcp -P`, the MongoDB shells' `-p X`,
# `az login -p X`, lftp's `-u user,password`, mosquitto's `-P`, and Cisco IOS's `username … password 0 …` and
# `enable secret 0 …` (type 0: clear text; type 7: a reversible encoding, the password in effect); Windows'
# `cmdkey … /pass:X`, Sysinternals' remote tools' `-p X` (PsExec, PsInfo, PsKill, …), a Metasploit option naming
# a password set at msfconsole's prompt (`msf6 … > set SMBPass X`, `setg PASSWORD X`, `HttpPassword`); the MinIO
# client's `mc alias set ALIAS URL ACCESSKEY SECRETKEY` (and its older `mc config host add`): the fourth word the
# secret key, the account's password.
_PW_TOOLS = (r"\b(?:docker|podman|nerdctl|buildah|skopeo|oras|helm[ \t]+registry)[ \t]+login\b[^\n|;&]{0,120}?"
             r"[ \t]-p[ \t]+|\bredis-cli\b[^\n|;&]{0,120}?[ \t]-a[ \t]+|"
             r"\bldap[a-z]{3,8}\b[^\n|;&]{0,160}?[ \t]-w[ \t]+|"
             r"\bsmbclient\b[^\n|;&]{0,120}?[ \t]-U[ \t]*\\?[\"']?[^\s%\"'\\]{1,64}%|"
             r"\bhtpasswd(?:[ \t]+-[A-Za-z]{1,4}){0,3}?[ \t]+-[A-Za-z]{0,4}b[A-Za-z]{0,4}(?:[ \t]+-[A-Za-z]{1,4}){0,3}"
             r"[ \t]+(?:[^\s-][^\s]*[ \t]+)?[^\s-][^\s]*[ \t]+|"
             r"\bnet[ \t]+user[ \t]+[^\s/*]+[ \t]+|\b(?:sqlcmd|bcp)\b[^\n|;&]{0,120}?[ \t]-P[ \t]*|"
             r"\bmongo(?:sh)?\b[^\n|;&]{0,120}?[ \t]-p[ \t]+|\baz[ \t]+login\b[^\n|;&]{0,120}?[ \t]-p[ \t]+|"
             r"\blftp\b[^\n|;&]{0,120}?[ \t]-u[ \t]+\\?[\"']?[^\s,\"'\\]{1,64},|"
             r"\bmosquitto_(?:pub|sub|rr)\b[^\n|;&]{0,160}?[ \t]-P[ \t]+|"
             r"(?:^|\n)[ \t]*(?:username[ \t]+\S+(?:[ \t]+privilege[ \t]+\d{1,2})?|enable)[ \t]+"
             r"(?:password|secret)[ \t]+[07][ \t]+|"
             rf"\bcmdkey\b{_WIN_GAP}{{0,200}}?[ \t]/pass:|"
             rf"\b{_SYSINTERNALS}(?:64)?(?:\.exe)?[ \t]{_WIN_GAP}{{0,160}}?[ \t]-p[ \t]+|"
             r"\bmsf\d{0,2}\b[^\n>]{0,80}>[ \t]*setg?[ \t]+[A-Za-z]{0,20}(?i:pass(?:word)?)[ \t]+|"
             r"\bmc[ \t]+(?:alias[ \t]+set|config[ \t]+host[ \t]+add)[ \t]+[^\s-]\S{0,63}[ \t]+https?://\S{1,200}[ \t]+"
             r"\\?[\"']?[^\s\"'\\]{1,128}\\?[\"']?[ \t]+")
# A login a spraying tool reports as valid, up to its password: netexec's (crackmapexec's) line (the protocol, the
# address, the port, the host's name, `[+]`, `domain\\user:`, a user opening with n, r or t read as after a JSON
# escape as `_WIN_GAP` says) and kerbrute's `[+] VALID LOGIN:  user@domain:` (its tab a JSON escape too).
_SPRAY_HIT = (r"\b(?:SMB|WINRM|LDAPS?|MSSQL|SSH|RDP|FTP|WMI|VNC|NFS)[ \t]+\d{1,3}(?:\.\d{1,3}){3}[ \t]+\d{1,5}[ \t]+"
              r"\S{1,64}[ \t]+\[\+\][ \t]+(?:[^\s\\:]{0,64}\\{1,2}\n?)?[^\s\\:]{1,64}:|"
              r"\[\+\][ \t]+VALID LOGIN(?: WITH ERROR)?:?(?:[ \t]|\\\n)+[^\s:]{1,128}[ \t]*:[ \t]*")
# Shell forms: a flag whose name ends in pass or password (--db-password X, keytool -storepass X, openssl -passin;
# the name up to 32 characters and not opening with a third dash: else from each dash of a long run the label words
# were tried at every length), `curl -u user:password` (and with other short flags before it: `curl -su
# user:password`), `sshpass -p X`, `mysql … -pX` (with no space: `-p X` prompts and names a database).
_PW_SHELL = (rf"-{{1,2}}(?:[A-Za-z._][A-Za-z._-]{{0,31}})?(?:{_PW}|(?i:pass(?:in|out)?))[ \t=]+|"
             r"(?:^|[ \t\"'])(?:-[A-Za-z]{0,4}u|--user)[ \t=]+\\?[\"']?[^\s:\"'\\]{1,64}:|"
             r"\bsshpass[ \t]+-p[ \t]*|\bmysql(?:dump|admin|sh)?[ \t][^\n|;&]{0,80}?[ \t]-p|" + _PW_TOOLS)
# What every password match holds, as stems: the exact label alternatives of _PW joined with every other trigger
# outgrow RE2's DFA budget, and the one pass over a column falls back to a slower engine (3x). `pass` not before
# `e` (passenger, passed), which no label needs but "mot de passe".
_PW_TRIGGER = (r"(?i:pass[^e]|mot[ _-]de[ _-]passe|pwd|\bpw\b|[_.-]pw\b|mdp|parol|heslo|has[lł]o|salasana|senord|"
               r"adgangskode|jelsz|ifre|kata[ _-]sandi|clave[ _-]de|contrase|senha|wachtwoord|\bww\b|kennwort|"
               r"mat[_ ]?khau)|"
               r"(?i:m[ậẬa]t kh[ẩẨa]u)|"
               r"كلمة المرور|كلمة السر|كلمه المرور|סיסמה|[κΚ]ωδικός|पासवर्ड|รหัสผ่าน|пароль|Пароль|ПАРОЛЬ|パスワード|"
               r"暗証番号|密码|密碼|"
               r"비밀번호|비번|암호|-[A-Za-z]{0,4}u[ \t]|--user|mysql|(?i:[_.-]auth\b)|[a-z0-9]Auth\b|"
               r"\blogin\b|redis-cli|\bldap[a-z]|smbclient|lftp|\bnet[ \t]+user|sqlcmd|\bbcp\b|\bmongo|(?i:identified)|"
               r"[a-z]pw\b|mosquitto_|\b(?:password|secret)[ \t]+[07][ \t]|\bmc[ \t]+(?:alias|config)[ \t]|"
               rf"{_SYSINTERNALS}|"
               + words.alternation(words.PASSWORD))
# A password's token standing apart from its label: a generated or chosen one (lower and upper case, a digit, a
# symbol among those generators draw; `-`, `.` or `_` alone when its letters are no words, checked by the
# validator) or a passphrase (`lantern-maple-cobalt-27`, `Copper.Saffron.Meadow56`). The lookaheads keep the
# search on a qualifying token, so that a word between label and value (`requested:`) does not end it.
_NEAR_CHAR = r"[A-Za-z0-9!#$%&*+\-./:=?@^_|~]"
_NEAR_PASSWORD = (rf"(?=(?:{_NEAR_CHAR}){{0,39}}[a-z])(?=(?:{_NEAR_CHAR}){{0,39}}[A-Z])(?=(?:{_NEAR_CHAR}){{0,39}}\d)"
                  rf"(?=(?:{_NEAR_CHAR}){{0,39}}[!#$%&*+\-.=?@^_|~]){_NEAR_CHAR}{{8,40}}?|"
                  r"[A-Za-z]{3,12}(?:[-.][A-Za-z]{3,12}){2,6}[-.]?\d{1,4}")
# Letters of the scripts e-mail addresses are written in beyond ASCII (RFC 6531): Latin-1, Latin Extended and
# Vietnamese's Latin Extended Additional,
# Greek, Cyrillic, Armenian, Hebrew, Arabic, the Indic scripts (Devanagari to Sinhala), Thai, Myanmar, Georgian,
# Ethiopic, Khmer, kana, CJK, Hangul. Real characters, not escapes: RE2 reads `\u` differently from Python.
_INTL = "\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u0370-\u03ff\u0400-\u04ff\u0530-\u058f\u0590-\u05ff" \
        "\u0600-\u06ff\u0900-\u0dff\u0e00-\u0e7f\u1000-\u109f\u10a0-\u10ff\u1200-\u137f\u1780-\u17ff\u1e00-\u1eff" \
        "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
_LABEL = f"A-Za-z0-9{_INTL}"
# Between a number's groups as people, forms and OCR write them: one separator (space, dash, dot, slash), a run of up
# to 3 spaces (OCR, fixed-width forms: `6448  9075  6301  0415`), or a dash or slash with spaces around it
# (`123 - 45 - 6789`); shared by cards, SSNs and phone numbers, each validated by its checksum or plan.
_DSEP = r"(?:[ \t]{1,3}|[ \t]{0,2}[-/.][ \t]{0,2})"
_CSEP = rf"(?:{_DSEP}|[_+]|\\?\r?\n|\\n)"  # between a card's groups; `_`, `+` (a form-encoded space) too
# Words a phone number follows, in English, French and German; a `_number`/`No.` may follow them
# (phone_number=). Portuguese, Spanish and Italian too (celular, telefone, contato, teléfono, móvil, tlf,
# cellulare), Indonesian telepon and hp (handphone), "my number" / "Rückruf" (call back), the adjective
# (recapito telefonico, número telefónico), a word ending in a letter beyond ASCII followed by what the ASCII
# word boundary after it needs (`zadzwoń pod`), and Japanese (電話番号, 携帯電話, 連絡先: no word boundary in CJK text);
# and the words of the translation table (tracegym/redact/words.py) for phone, the Latin ones here, the others
# in _PHONE_CJK. "Call me" as French, Italian and Portuguese write it (`rappelez-moi`, `me joindre au`,
# `richiamare`, `ligar-me`), German's formal `Rufen Sie mich`, and a field's index after the word (SAP's
# `TELF1`, a contacts export's `Phone 1`); plural, as a list of them is named (`phones`, `phoneNumbers`). "Alternate
# number", the second phone forms ask for beside the registered one (India's KYC and bank forms); Haitian Creole's
# `telefòn` (`nimewo telefòn`), a form's header too. "Can be reached
# on", the passive of "reach me"; a person's number (`the driver's number`, `her number`): English says "claim
# number", not "the claim's number", so a possessive before "number" names a person's.
_PHONE_LATIN_FORM = (r"(?i:telephone|t[eé]l[eé]phone|phone|t[eé]l|mobile?|cell(?:phone)?|call(?: me)?|whats ?app|sms|"
                     r"text me|reach me|(?:ring|text)(?: me| (?:him|her|them|the (?:guest|driver|client|customer)))|"
                     r"direct (?:line|dial)|viber|mob|fax|contact|handy|festnetz|landline|"
                     r"fixe|fijo|fixo|telefone?|"
                     r"rufnummer|erreichbar unter|portable|"
                     r"num[eé]ro|appelez-moi|ph|my number|alternat(?:e|ive)[ _-]number|"
                     r"r[uü]ckruf|anruf|celular|fone|contato|tel[eé]fono|m[oó]vil|"
                     r"cellulare|tlf|tfno|telf|fisso|telefoon|mobiel|mobil|kom[oó]rk[a-z]{0,2}|kom|telef[oò]n[a-z]{0,2}|telepon|hp|h/p|telef[oóô]nic[oa]s?|"
                     r"numer[a-z]{0,2}|nummer|n[uú]mero|ll[aá]m[ae]me(?: al)?|chiamar(?:mi|e)(?: al)?|chiamami|"
                     r"(?:m'|me )r?appeler(?: au)?|r?appel(?:ez|le|er)(?:-moi)?(?: au)?|(?:me|nous) joindre(?: au)?|"
                     r"(?:ri)?chiamarmi|"
                     r"richiamare|ligar-me|liga-me|ring mig(?: p[aå])?|bel me(?: op)?|"
                     r"zadzwo[nń](?:[ \t]+pod\b|[ \t])?|"
                     r"msisdn|call[_ -]?back|gsm|cep[ _-]?tel[a-z]{0,5}|s[dđĐ]t|dien[ _]?thoai|g[oọ]i cho t[oô]i|"
                     r"reachable|joignable|ruf(?:e|en)?(?: sie)? mich|erreichen sie mich|raggiungibile|bereikbaar|"
                     r"localizable|contactable|(?:rang|rung|called|calling|voicemail|missed call)(?: me)? from|"
                     r"(?:be|been) reached (?:on|at)|(?:his|her|their|[a-z]{2,20}['’]s) number|{table})"
                     r"(?i:s)?(?:[_ -]?(?i:number|nummer|nommer|numer|n[uú]mero|no|nr|num)(?i:s)?)?(?:[_ -]?[1-9])?"
                     r"(?:\b|(?:Phone|Tel|Mobile)\w{0,12}\b)")
_PHONE_LATIN = _PHONE_LATIN_FORM.replace("{table}", words.alternation(words.PHONE, latin=True))
# A camelCase name holding such a word after another (customerPhone, billingMobileNo); one that opens with it
# (contactPhone, phoneNumber) is _PHONE_LATIN's, its next hump a phone word too.
_PHONE_CAMEL = (r"[a-z0-9](?:Phone|Tel|Telephone|Mobile|Cell|Fax|Msisdn|Whatsapp)"
                r"(?:Number|No|Nr|Num|Phone|Mobile)?\b")
# Words of scripts with no ASCII word boundary: Japanese (電話番号, 携帯電話, 連絡先), Korean (전화번호, 휴대폰,
# 핸드폰, 연락처), Arabic (هاتف, جوال, رقم الهاتف), Vietnamese (điện thoại, di động), Thai and Hindi (फ़ोन, मोबाइल,
# दूरभाष); and Greek, Hebrew and Cyrillic ones as a column's header writes them (`Τηλέφωνο`, `Κινητό`, `נייד`,
# `Телефон`), which the header trigger reads from this list alone. Hindi's "X's number" (`ग्राहक का नंबर`, `मेरा नंबर`):
# the possessive before the borrowed नंबर, which a compound (`पॉलिसी नंबर`, policy number) writes without.
_PHONE_CJK_OWN = (r"電話(?:番号)?|携帯(?:電話)?|連絡先|전화(?:번호)?|휴대(?:폰|전화)|핸드폰|연락처|هاتف|الهاتف|جوال|"
                  r"الجوال|[đĐ]i[ệe]n tho[ạa]i|di [đd][ộo]ng|โทรศัพท์|เบอร์|มือถือ|फ़ोन|फोन|मोबाइल|दूरभाष|"
                  r"[Ττ]ηλέφωνο|[Κκ]ινητό|טלפון|נייד|[Тт]елефон|[Мм]обильный|[Мм]обільний|"
                  r"(?:का|के|मेरा)[ \t]+(?:नंबर|नम्बर)")
_PHONE_CJK = f"(?:{_PHONE_CJK_OWN}|{words.alternation(words.PHONE, latin=False)})"
_PHONE_WORDS = rf"(?:{_PHONE_LATIN}|{_PHONE_CAMEL}|{_PHONE_CJK})"
# The rules' own phone words, without the translation table's: what a column header's trigger reads (with the
# table's words, of many scripts and case forms, that RE2 pass outgrows its automaton budget: forty times slower).
_PHONE_HEADER_WORDS = rf"(?:{_PHONE_LATIN_FORM.replace('{table}', 'phone')}|{_PHONE_CAMEL}|(?:{_PHONE_CJK_OWN}))"
# The words that follow a number in verb-final languages, where "call me on N" is written "N, call": Korean
# (`…로 전화 주세요`), Japanese (`…に電話`, `…までご連絡`), Turkish (`… numarasından arayın`, `…'dan arayın`), Hindi
# (`… पर कॉल करें`).
_PHONE_AFTER = (r"(?:으?로|번으로)[ \t]*(?:전화|연락|문자)|(?:に|まで|へ)[ \t]*[おご]?(?:電話|連絡)|"
                r"(?:numaras[ıi]ndan|numaradan|['’]?[dt][ae]n)[ \t]+ara|पर[ \t]+(?:कॉल|फ़ोन|फोन|संपर्क)")
_NATIONAL_NUMBER = r"\(?\d[\d ()./-]{5,22}\d"
# A mobile-money wallet's number: M-Pesa, bKash, Nagad, JazzCash, Easypaisa, MoMo, telebirr and their peers name
# a wallet by its owner's phone number (`M-PESA number: …`, `Easypaisa account …`, `namba ya M-PESA …`, Swahili's
# `M-Pesa namba …`); Wave (Senegal's and Côte d'Ivoire's) by its capitalized name, a common word's otherwise.
_WALLET = (r"(?i:m-?pesa|bkash|nagad|jazz ?cash|easy ?paisa|upaisa|sadapay|nayapay|momo|airtel ?money|telebirr|"
           r"orange ?money|opay|palmpay|mtn ?money|tigo ?pesa|ecocash)|Wave|বিকাশ|নগদ")
_WALLET_WORD = r"(?i:number|no\.?|nr|account|a/c|wallet|namba|nambari)"
_WALLET_NUMBER = (rf"(?:(?<![A-Za-z])(?:{_WALLET})(?:[ \t]+{_WALLET_WORD}|"
                  r"[ \t]*(?:নম্বর|নাম্বার|نمبر|नंबर|नम्बर))(?![A-Za-z])|"
                  rf"(?<![A-Za-z])(?i:namba|nambari)[ \t]+ya[ \t]+(?:{_WALLET})(?![A-Za-z]))")
"""A number as a national plan writes it, its groups apart by spaces, dots, dashes, slashes or an area code in
parentheses; `national_phone` checks it against the plans."""
# Words for an account in the languages IBANs are written in: rekening, cuenta, conta, conto, rachunek, účet,
# számla, hesap, račun, λογαριασμός, счёт/счет, рахунок.
_IBAN_WORDS = (r"(?:(?i:iban|konto|compte|account|acct|bank|sepa|refund|transfer|wire|rib|payout|payment|rekening|"
               r"cuenta|conta|conto|rachun|[uú][cč]et|sz[aá]ml|hesap|ra[cč]un)|λογαριασμ|сч[её]т|рахун)")
# An ABA routing number (a bank's, public): its Federal Reserve routing symbol prefix (00 government, 01-12 banks,
# 21-32 thrifts, 61-72 electronic, 80 traveler's checks) and seven digits; the words that label it (ABA, RTN,
# routing, Spanish `ruta`); the words for the account number beside it, the secret of a wire or ACH instruction.
_ABA = r"(?<![0-9])(?:0[0-9]|1[0-2]|2[1-9]|3[0-2]|6[1-9]|7[0-2]|80)[0-9]{7}(?![0-9])"
_ROUTING_WORDS = r"\b(?i:aba|rtn|routing|ruta)[^0-9\n]{0,16}?"
_TO_ACCOUNT = r"[^0-9\n*\u2022]{0,20}?(?<![A-Za-z0-9])"
"""From an account's word to its number: no digit, line break or mask between (`account ending ****1234` is none)."""
_US_ACCOUNT = rf"\b(?i:account|acct|a/c|cuenta){_TO_ACCOUNT}(?P<v>[0-9]{{5,17}})(?![0-9])"
# An Australian BSB (APCA's Bank-State-Branch number, a branch's and public: six digits, printed 3-3) after its
# label, and the account number beside it (BECS: up to nine digits; compact or in groups of three or four), after
# an account's word in English or Vietnamese (`tài khoản`): the secret of a direct credit.
_BSB = r"\b(?i:bsb)(?:[ _-]?(?i:number|no\.?|#))?[^0-9A-Za-z\n]{0,6}(?<![0-9])[0-9]{3}[ -]?[0-9]{3}(?![0-9])"
_AU_ACCOUNT = (rf"(?:\b(?i:account|acct|acc|a/c)\b|t[aà]i[ ]kho[aả]n){_TO_ACCOUNT}"
               r"(?P<v>[0-9]{5,9}|[0-9]{2,4}(?:[ -][0-9]{1,4}){1,2})(?![0-9]|[ -][0-9])")
# Labels of a US SSN: SSN (also inside names: user_ssn, customerSsn), SS#, SS number, social security (number),
# and TIN / tax id / taxpayer id, as an SSN is the individual's taxpayer identification number (IRS); "social" as
# Americans say it for the number ("my social is …", "social #:").
# The words for it in the languages of _PW: Sozialversicherungsnummer, numéro de sécurité sociale, número de seguro
# social, previdenza sociale, segurança social, 社会保障番号, 社会安全号码. "Gave her social as …" too; and the
# insured's ID number of the NUCC 1500 health insurance claim form (CMS-1500 box 1a, `INSURED'S I.D. NUMBER`),
# which Medicare (the HICN, until 2019) and many payers filled with the SSN: nine digits there are one.
_SSN_OWN = (r"(?:(?i:ssn|\bss#|\bss[ _-]?(?:num(?:ber)?|nr|no)\b|social[ _-]?sec(?:urity)?|\bsoc\.?[ _-]?sec\b|"
              r"\bsocial(?:[ _-]?(?:number|num|no|#))?(?:[ \t]+(?:is|was|as)\b|[ \t]*[:#=])|"
              r"\binsured['’]?s[ \t]+i\.?d\.?[ \t]+(?:number|no\b|#)|"
              r"\btin\b|tax[ _-]?(?:payer[ _-]?)?id|taxpayer|sozialversicherung|s[eé]curit[eé] sociale|seguro social|"
              r"seguridad social|previdenza sociale|seguran[cç]a social)|社会保障|社会安全)")
_SSN_TRANSLATED = words.alternation(words.SOCIAL_SECURITY)
"""The translation table's words for it: a rule of their own, not a column header's (RE2's header pass would outgrow
its automaton: 0.17 -> 9.5 s over the real traces' strings; in the English rule's pattern Python's `re` tries them at
every position, doubling its time over τ-bench)."""
# The name of a business's tax or registration number between a tax label and the number (`tax_id: SIREN …`, `Tax
# ID: EIN …`, `VKN …`, `VAT …`): the number is that scheme's, a company's, whatever SSN rules its digits pass.
_OTHER_TAX_NUMBER = r"(?i:\b(?:siren|siret|vkn|vergi|ein|fein|vat|tva|ust-?idnr)\b)[^\d\n]{0,6}\d[^\n]*$"
# An IRS form's name between the label and the number (`SSN/TIN (W-9) =`, `SSN for the 1099-K:`, as people type
# them too: `ssn (w-9):`, `w9`): the form that asks for it, whose digits are no part of it.
_TAX_FORM = (r"(?<![A-Za-z0-9-])(?i:W-?[2489](?:BEN(?:-E)?|ECI)?|1099(?:-[A-Z]{1,4})?|1040(?:-[A-Z]{1,2})?)"
             r"(?![A-Za-z0-9])")
_SSN_AFTER = (rf"[^\d\n]{{0,30}}(?:{_TAX_FORM}[^\d\n]{{0,30}})?(?:(?:\r?\n|\\n)[^\d\n]{{0,40}})?"
              rf"(?P<v>\d{{3}}{_DSEP}?\d{{2}}{_DSEP}?\d{{4}})(?:$|\D)")
# Labels of a US ITIN (the IRS's taxpayer number for those who cannot get an SSN, issued on a W-7): `ITIN` in
# capitals, in any case as a key or before `number`/`no` (`itin_number`, `"itin":`), or the name written out.
_ITIN_WORDS = (r"(?:\bITIN\b|\b(?i:itin)(?:[ _-]?(?i:number|num|no|nr)\b|\\?[\"']?[ \t]*[:=])|"
               r"(?i:individual[ _-]taxpayer[ _-]id(?:entification)?))")
# Labels of national ids with a public check: the UK's National Insurance number (NINO, NI number), Canada's Social
# Insurance Number (SIN; NAS, numéro d'assurance sociale), the NINO's Welsh name on HMRC's Welsh forms (rhif Yswiriant
# Gwladol), Spain's DNI/NIF and NIE (documento nacional de identidad, or `documento` alone), the DNI's Basque name
# (Nortasun Agiri Nazionala, `NAN:` as a form's label: in capitals with its colon, as `NaN` is no label).
# The short names in capitals, or in any case as a key (`"sin":`, `nino=`, `"spanish_id_(dni)":`, `dni_number`): in
# prose they are words too (Spanish "sin", German "nie", Polish "dni"). As a column's header or a label alone, a
# short name in any case gives its value the label (_NATID_CONTEXT), which the rule then reads as `sin: …`.
_NATID_SHORT = r"(?i:nino|dni|nif|nie|sin|nas)"
_NATID_WORDS = (r"(?:(?:\b|_)(?:NINO|DNI|NIF|NIE|SIN|NAS)(?:\b|_)|\bNAN[ \t]*:|"
                rf"(?:\b|_){_NATID_SHORT}(?:_|[\])\"'`\\]{{0,3}}[ \t]*[:=])|"
                r"(?i:(?:\b|_)ni[ _-]?(?:number|num|no|nr)(?:\b|_)|national[ _-]?insurance|social[ _-]?insurance|"
                r"assurance[ _-]?sociale|yswiriant[ _-]gwladol|n\.i\.[ef]\.|documento|identidad|identitat|"
                r"nortasun[ _-]agiri))")
def _both_cases(pattern: str) -> str:
    """A pattern with its non-ASCII letters in both cases (`[uú]` as `[uúÚ]`, `ø` as `[øØ]`): rules compile with
    re.ASCII, under which `(?i)` folds ASCII letters alone, and a label is written in capitals too (`Rol Único
    Tributario`, `NUMÉRO DE SÉCURITÉ SOCIALE`)."""
    out: list[str] = []
    in_class = escaped = False
    for ch in pattern:
        if escaped or ch == "\\":
            escaped = not escaped and ch == "\\"
            out.append(ch)
            continue
        in_class = ch == "[" or in_class and ch != "]"
        upper = ch.upper()
        folds = not ch.isascii() and upper != ch and len(upper) == 1
        out.append((ch + upper if in_class else f"[{ch}{upper}]") if folds else ch)
    return "".join(out)


def _natid_label(n: national.NationalId) -> str:
    """The label of one national id as its rule reads it (Python): its words in any case, not inside a longer
    lower-case word; its short names in capitals, or in any case as a key (`"nif":`, `rut=`); its camelCase form
    after a lower-case letter or digit (`clienteCpf`)."""
    forms = [rf"(?<![A-Za-z0-9])(?i:{_both_cases(n.words)})(?![a-z0-9])"]
    if n.short:
        forms += [rf"(?<![A-Za-z0-9])(?:{n.short.upper()})(?![A-Za-z0-9])",
                  rf"(?<![A-Za-z0-9])(?i:{n.short})(?=_|[\])\"'`\\]{{0,3}}[ \t]*[:=])"]
    if n.camel:
        forms.append(rf"(?<=[a-z0-9])(?:{n.camel})(?![a-z0-9])")
    return "(?:" + "|".join(forms) + ")"


def _natid_trigger(n: national.NationalId) -> str:
    """What a label of `_natid_label` holds, for RE2: the stems, and a short name as a key (`"nrn":`, `be_nrn:`).
    Not a short name before `_` (`run_id=` is a run's id, not Chile's RUN): the rule runs where its text says more."""
    if not n.short:
        return n.stems
    return rf"{n.stems}|(?i:{n.short})[\])\"'`\\]{{0,3}}[ \t]*[:=]"


_NATID_CONTEXT = rf"(?:{_NATID_WORDS}|(?:\b|_){_NATID_SHORT}(?:\b|_))"
# The label stems of the national ids of tracegym/redact/national.py, and the labels that name no id's country
# (`national_id`, `id_number`), as a column's header names them: a group of context words of its own (joined with
# the others, the header's RE2 pass is four times slower).
_NATIONAL_STEMS = "(?:" + "|".join([n.stems for n in national.IDS] + [national.GENERIC_STEMS]) + ")"
# Their values: a NINO (two prefix letters, HMRC's rules on each, six digits in pairs, a suffix A-D), a DNI (eight
# digits and a letter) or an NIE (X, Y or Z, seven digits, a letter), a SIN (nine digits in threes).
_NINO_PREFIX = r"[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]"
_NINO_SPACED = rf"{_NINO_PREFIX}(?: \d{{2}}){{3}} [A-D]"
_NINO = rf"{_NINO_PREFIX}(?:\d{{6}}|(?:-\d{{2}}){{3}}-)[A-D]|{_NINO_SPACED}"
_NATID = (rf"{_NINO}|\d{{8}}[ -]?[A-Z]|[XYZ][ -]?\d{{7}}[ -]?[A-Z]|"
          r"\d{3} \d{3} \d{3}|\d{3}-\d{3}-\d{3}|\d{9}")
# A flag whose name ends in a label, its value after a space: --aws-secret-key X, --auth-token X. The name does not
# open with a third dash and holds up to 64 characters: else from each dash of a long run the label words were tried
# at every length (quadratic).
_FLAG = r"--(?:[A-Za-z0-9][A-Za-z0-9-]{0,63})?"
# Commands that store a secret under a name (the CLIs' documented forms): what they are given is a secret by the
# command's meaning, whatever the name.
_SECRET_STORE = (r"\bdatabricks[ \t]+secrets[ \t]+put(?:-secret)?\b|\bsecretsmanager[ \t]+"
                 r"(?:create-secret|put-secret-value|update-secret)\b|\bgh[ \t]+secret[ \t]+set\b|"
                 r"\bkeyvault[ \t]+secret[ \t]+set\b")
# An HTTP header that carries a credential (RFC 7235 and the APIs' own): X-Api-Key, Api-Key, X-Auth-Token,
# X-*-Token/-Key/-Secret/-Signature, DD-API-KEY, DD-APPLICATION-KEY.
_CRED_HEADER = (r"(?i:x-[a-z0-9-]{0,64}(?:key|token|secret|signature|auth|-pat)|api-?key|auth-token|"
                r"[a-z]{2,12}-(?:api|application|app)-key)")
# Where a header's value follows its name: `Name: v`, `"Name": "v"`, `'Name': ['v']` (Python, Go maps), the
# HAR form `{"name": "Name", "value": "v"}`, and a pair in a list of them (`["Name", "v"]`: Sentry's request headers).
_HEADER_AFTER = (r"(?:\\?[\"']?(?:[ \t]*[:=][ \t]*\[?[ \t]*|[ \t]*,[ \t]*\\?[\"'](?i:value)\\?[\"'][ \t]*:[ \t]*)"
                 r"\\?[\"']?|\\?[\"'][ \t]*,[ \t]*\\?[\"'])")
# RFC 7235 credentials after an auth scheme: a token68 (base64url or base64, `=` padding), and an auth-param,
# `name=value` or `name="value"` (escaped quotes inside JSON text too).
_TOKEN68 = r"[A-Za-z0-9._~+/-]{16,2048}=*"
# Prometheus' `authorization` block (scrape and remote-write configs): the scheme under `type:`, the credential
# under `credentials:` on the next line.
_AUTH_BLOCK = (r"\btype:[ \t]*\\?[\"']?[A-Za-z][A-Za-z0-9_.-]{1,30}\\?[\"']?[ \t]*\\?\r?\n[ \t]*"
               r"credentials:[ \t]*\\?[\"']?")
_AUTH_PARAM = r"[A-Za-z][A-Za-z0-9_-]{0,30}[ \t]*=[ \t]*(?:\\?\"[^\"\\\n]{0,256}\\?\"|[^\s,\"\\]{0,256})"
# A cookie that holds a session or a credential (RFC 6265 `name=value`): session, sid, JSESSIONID, PHPSESSID,
# connect.sid, _session, auth_token, remember_token, csrftoken, XSRF-TOKEN, access/refresh tokens, jwt.
# Rails' `_session_id` too (the leading `_` is the cookie's; a bare `session_id` is an id, and trace ids stay), and
# an application's `<name>-session-id` (JupyterHub's `jupyterhub-session-id`: a hyphenated name is a cookie's or a
# header's, not a log field's or a variable's); Jetty's `JSESSIONID.<node>`, oauth2-proxy's `_oauth2_proxy`,
# Shopify's `_secure_session_id` (its admin's `_secure_admin_session_id`), WordPress's `wordpress_logged_in_<hash>`
# and `wordpress_sec_<hash>`, WooCommerce's `wp_woocommerce_session_<hash>`, Steam's `steamLoginSecure`, an
# application's `<Name>Session` (Moodle's `MoodleSession`).
_COOKIE_NAME = (r"(?:(?:[A-Za-z0-9_.-]*[_.-])?(?i:session|sess|sid|sessionid|jsessionid|phpsessid|aspsessionid|"
                r"token|auth|jwt|csrftoken|remember[_-]?me)|JSESSIONID\.[A-Za-z0-9]{1,16}|_oauth2_proxy(?:_\d)?|"
                r"_secure(?:_admin)?_session_id|wordpress_(?:logged_in|sec)_[0-9a-f]{32}|"
                r"wp_woocommerce_session_[0-9a-f]{32}|steamLoginSecure|[A-Z][a-z]+Session|_session_id|"
                r"[A-Za-z0-9_.]+-(?i:session-id)|"
                r"__Secure-[13]P(?:SID(?:TS|CC)?|APISID)|S?APISID|[HS]SID|SIDCC|ESTSAUTH(?:PERSISTENT|LIGHT)?|"
                r"\.?ASPXAUTH|\.AspNetCore\.(?:Cookies|Identity\.Application)|_shibsession_[0-9A-Za-z]{8,64}|"
                r"SimpleSAML(?:SessionID|AuthToken))")
# Google's sign-in cookies (`SID`, `HSID`, `SSID`, `APISID`, `SAPISID`, `__Secure-1PSID`, `__Secure-3PSIDTS`, …: its
# cookie policy's list), Microsoft Entra's `ESTSAUTH` and ASP.NET's authentication cookies are sessions too; so are
# the Shibboleth SP's `_shibsession_<hash of its application id>` and SimpleSAMLphp's `SimpleSAMLSessionID` and
# `SimpleSAMLAuthToken`, the research and education federations' single sign-on.
COOKIE_NAMES = _COOKIE_NAME
"""The names of session and credential cookies: a label structure gives a value (a devtools export's `"name"`)."""
TAB = r"(?:\t|\\\r?\n|\\t)"
"""A tab in a tab-separated line (a cookie jar's), raw or escaped inside JSON text (the detector reads `\\t` there
as a backslash and a line break)."""
# Words for a key or a secret in prose, in the languages customers write ("la clé :", "unser Token ist").
# Turkish anahtar, French jeton, Vietnamese khóa, Arabic مفتاح / رمز, Korean 키 / 토큰 too; and the words of the
# translation table (tracegym/redact/words.py) for secret, key and token.
_KEY_ABROAD = r"cl[eé]|claves?|chiave|schl[uü]ssel|sleutel|nyckel|klucz|chave|n[oø]kkel|anahtar[ıi]?|kh[oó]a"
"""The words for key in other languages that the rules list beside the translation table's (`words.KEY`), in any
case."""
_KEY_GLUED = r"sleutel|nyckel|schl[uü]ssel|n[oø]gle|n[oø]kkel"
"""The words for key that a Germanic compound glues to the word before them (`toegangssleutel`, `adgangsnøgle`)."""
_KEY_STEMS = (rf"(?i:key|token|secret|jeton|{_KEY_ABROAD})|khóa|مفتاح|الرمز|رمز|키|토큰|キー|トークン|シークレット|"
              + words.alternation(words.SECRET, words.KEY, words.TOKEN))
# The words that name a fleet fuel card (ISO/IEC 7812-1 major industry identifier 7, petroleum) in the languages of
# the fuel and fleet-card networks: fuel card, fleet card, Tankkarte, carte carburant, tarjeta de combustible, carta
# carburante, tankpas, karta paliwowa, cartão combustível, drivstoffkort; as a key too (`fuel_card_no`, `fuelCard`).
_FUEL_CARD = (r"(?i:(?:fuel|fleet|petrol|diesel)[ _-]?card|tank[ _-]?(?:karte|kaart|pas|kort)|flotten[ _-]?karte|"
              r"carte[ _-](?:de[ _-])?(?:carburant|flotte)|tarjeta[ _-](?:de[ _-])?(?:combustible|flota)|"
              r"carta[ _-](?:carburante|flotta)|karta[ _-](?:paliwowa|flotowa)|"
              r"cart[aã]o[ _-](?:de[ _-])?(?:combust[ií]vel|frota)|drivstoff[ _-]?kort|br[aä]nsle[ _-]?kort)")
# OCPP 2.0.1's SetVariables: a `setVariableData` entry's `attributeValue`, then the `variable` it sets by name,
# in the same entry (JSON, its quotes escaped too when the frame sits in a JSON string).
_OCPP_FIELD = r"\\?\""
_OCPP_IS = r"\\?\"[ \t]*:[ \t]*"
_OCPP_SECRET = r"(?:[A-Za-z]*(?:Password|Secret)|AuthorizationKey)"
# The last groups: a SIM's `Ki` and `OPc`, which name a key column too (a SIM vendor's batch file: `ICCID,IMSI,KI,…`),
# case-sensitive; a fuel card's words (a `fuel_card` column).
_CONTEXT_GROUPS = (rf"(?:{_PHONE_WORDS}|(?<![A-Za-z])(?:{_WALLET})(?![a-z]))",
                   rf"(?:{_SSN_OWN}|{_NATID_CONTEXT}|{_IBAN_WORDS}|(?i:{_SECRET_WORDS})|{_KEY_LABELS})",
                   _PW, _KEY_STEMS, _NATIONAL_STEMS, r"\b(?:Ki|KI|OPc|OPC)\b",
                   _FUEL_CARD)
CONTEXT_WORDS = "(?:" + "|".join(_CONTEXT_GROUPS) + ")"
"""The words that give a value its meaning when they name its column (`phone_number`, `| API key |`)."""


PASS_ENDING = r"[_.-](?i:pass)"
"""The end of a name that an export gives a password column (`smtp_pass`, `db_pass`): `pass` after a separator."""


def _cell_trigger(cw: str) -> str:
    return (rf"[,;\t|│┆][ \t\"'`]*{cw}|{cw}[^\n,;\t|│┆]{{0,40}}[,;\t|│┆]|"
            r"\"sensitive\\?\"[ \t]*:[ \t]*true|\"concealed\\?\"[ \t]*:|"
            rf"{cw}\\?[\"']?\]?[ \t]*=>|{cw}\.?[ \t]*[:：]?[ \t]*(?:\\?\r?\n|\\n)|{cw}\\?\"[ \t]+\\?\"|"
            rf"{cw}[^\"\n]{{0,40}}\\?\"[ \t]*(?:\\?\r?\n|\\n)")


CELL_TRIGGERS = tuple(_cell_trigger(group) for group in (
    _PHONE_HEADER_WORDS, _SSN_OWN, _NATID_CONTEXT, _IBAN_WORDS, rf"(?:(?i:{_SECRET_WORDS})|{_KEY_LABELS})",
    *_CONTEXT_GROUPS[2:])) + (
    rf"[,;\t|│┆][ \t\"'`]*(?i:{national.SAID_NAMES})[ \t\"'`]*(?:[,;\t|│┆]|\\?\r?\n|\\n)",
    rf"(?:^|\n|[,;\t|│┆])[ \t\"'`]*[A-Za-z0-9]{{1,40}}{PASS_ENDING}[ \t\"'`]*(?:[,;\t|│┆]|\\?\r?\n|\\n)")
"""A text that may hold a table with such a column (one headed by a national id's short name whole: `| pnr |`, or by
a name ending in `pass`, as an export names a password column: `smtp_pass`, `db_pass`), a value
its structure marks sensitive, a dump's `["name"]=>` (PHP), a quoted label and a quoted value after it (Redis's `"HSET"
key "field" "value"`), a label ending a quoted string at the end of its line (a Terraform plan's `name =
"/prod/DB_PASSWORD"`, its `value` below), or a label ending its line with the value below (RE2 and Python syntax alike):
one pattern per group of context words, each an RE2 pass of its own, as joined they outgrow RE2's automaton budget (ten
times slower; SSN, national id and IBAN words joined took 0.065 s over τ-bench's strings, apart 0.024 s)."""
# The rules read a Germanic compound too, a token or key word glued to the word before it (`toegangstoken`,
# `åtkomsttoken`, `Zugriffstoken`, `adgangsnøgle`); their triggers, which need no word boundary, the stems alone
# (with the compounds RE2's automaton for the joined triggers outgrows its budget: nine times slower).
_KEY_WORDS = rf"(?i:[a-zåäöæøü]{{3,16}}(?:token|{_KEY_GLUED}))|{_KEY_STEMS}"
# A word for key in a language other than English (`clave`, `Schlüssel`, `ключ`), glued ones too (`toegangssleutel`).
_KEY_WORDS_ABROAD = (rf"(?i:[a-zåäöæøü]{{3,16}}(?:{_KEY_GLUED}))|(?i:{_KEY_ABROAD})|khóa|مفتاح|키|キー|"
                     + words.alternation(words.KEY))
# A service's key named by the service, in a language other than English: a bare word for key and a capitalised
# name beside it (`Panopto nøkkel`, `clé Dataverse`, `sleutel voor Zenodo`, `Kaltura Schlüssel`), the name not a
# determiner or a possessive (`Votre clé`, `Din nøkkel`). Services that issue UUIDs as API keys (Dataverse, Panopto,
# Heroku, Mux) are named so; an id's key is named by what it keys (`partition`, `object`, `cache`: `_HEX_NOT_KEY`).
_KEY_WORD_BARE = rf"(?:(?i:{_KEY_ABROAD})|" + words.alternation(words.KEY) + r")(?![A-Za-z\u00c0-\u024f])"
_SERVICE_NAME = (r"(?!(?i:der|die|das|den|dem|des|ein|eine|einen|dein|deine|ihr|ihre|mein|meine|unser|unsere|"
                 r"votre|notre|cette|une|het|een|mijn|jouw|din|ditt|min|mitt|vores|jeres|sin|det|the|your|this|"
                 r"that|our|my|nuestra|vuestra|tua|sua|mia|nova|neue|neuer|nieuwe|ny|nya|nye|uusi)\b)"
                 r"[A-Z][A-Za-z0-9]{2,24}")
_NAMED_KEY = (rf"(?:{_SERVICE_NAME}[ \t]+{_KEY_WORD_BARE}|{_KEY_WORD_BARE}[ \t]+(?:(?i:voor|van|for|f[oö]r|fyrir|til|"
              rf"de|du|d'|f[uü]r|pour|per|para)[ \t]*)?{_SERVICE_NAME})")
# Words that name a credential outright, not any key: a token or a secret word, or a key word with `API` beside it
# (`API-sleutel`, `Κλειδί API`, Finnish `rajapinta-avain`/`rajapinnan avain`: the API's key), or an HMAC key (a
# webhook's signing secret: DocuSign Connect's, Shopify's); a UUID after them is one (Heroku API keys), after a bare
# key word an id.
# An ending glued to a key word, as languages inflect it (Azerbaijani `açarı`, Turkish `anahtarı`, Basque `gakoa`,
# Albanian `çelësi`): up to four letters, Latin ones beyond ASCII too.
_INFLECTED = "[A-Za-z\u00c0-\u024f]{0,4}"
_API_KEY_WORDS = (rf"(?i:api)[ _-]?(?:{_KEY_WORDS})|"
                  rf"(?:{_KEY_WORDS})[ \t_-]+(?:(?i:de|da|do|di|del|della|der|wa)[ \t]+)?(?i:api)\b|"
                  rf"(?i:rajapinta|rajapinnan)[ _-]?(?:{_KEY_WORDS})")
_CRED_WORDS = (rf"{_API_KEY_WORDS}|"
               r"(?i:[a-zåäöæøü]{0,16}token|secret|hmac[ _-]?key)|"
               r"토큰|トークン|シークレット|" + words.alternation(words.SECRET, words.TOKEN))
# What stands between a key word and its value in prose: up to six words saying whose key it is ("del portal de
# pagos", "für den Abrechnungsdienst"), then `:`, `=`, an arrow, "is", a dash, "set to", a CJK join, or a form's dot
# leader.
_KEY_PROSE_AFTER = (rf"(?:[ \t]+[^\s\d:=][^\s:=]{{0,24}}){{0,6}}?{_CLOSE}"
                    rf"(?:{_ARROW}|[ \t]*[:=][ \t]*|[ \t]+{_IS}[ \t]*:?[ \t]+|{_DASH}|{_SET_TO}|{_CJK_JOIN}|{_LEADER})")
_KEY_PROSE_TRIGGER = (rf"(?:{_KEY_STEMS})(?:[^\n:=]{{0,64}}(?:[:：=→⇒⟶➜➔]|->|<-|[ \t]{_IS}[ \t]|[ \t][-–—][ \t]|"
                      r"[ \t]\.{3}|"
                      r"[ \t](?i:to|equals|was)[ \t])|是|为|為|は|는|은|[「『〔】\]])")


_NOT_KEY_WORD = r"(?!(?i:cle(?:rk|ar|ver|rgy)|secretar(?:y|ies|iat)|keynote)(?![A-Za-z]))"
"""English words that open with a word for key or secret and an ending `_INFLECTED` reads (`cl[eé]` + `rk`, `secret`
+ `ary`): a role or an adjective before a colon (`Warehouse clerk: …`, `Cooperative secretary: …`), no key's label."""


def _in_prose(words: str) -> str:
    """A label of `words` in prose, an ending glued to it (`_INFLECTED`), what stands between it and its value
    (`_KEY_PROSE_AFTER`) and a quote or a tag that may open the value; not an English word that opens with one
    (`_NOT_KEY_WORD`)."""
    return rf"(?:^|[^A-Za-z0-9_.-]){_NOT_KEY_WORD}(?:{words}){_INFLECTED}{_KEY_PROSE_AFTER}{_OPEN}"


# The secret access key as AWS's Spanish, Portuguese, Italian and French pages name it (`clave de acceso secreta`,
# `chave de acesso secreta`, `chiave di accesso segreta`, `clé d'accès secrète`), or short (`clave secreta de AWS`).
_AWS_SECRET_ROMANCE = (r"(?i:(?:clave|chave|chiave|cl[eé])[ _-](?:(?:de|di|d')[ _-]?(?:acceso|acesso|accesso|acc[eè]s)"
                       r"[ _-])?(?:secreta|segreta|secr[eè]te)(?:[ \t]+(?:de|da|do|di|d')[ \t]*aws)?)")
_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_UUID4 = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
"""A random UUID (RFC 9562's version 4, its variant bits 10) as Python's `uuid4()` writes it: lower case."""
# A name that labels a hex key: it ends in key, token or secret (DD_API_KEY, twilio_token, webhook_secret).
_HEX_LABEL = r"(?i:[a-z0-9_.-]{0,64}(?:key|token|secret))"
# Names whose hex value is a digest or an id, not a key; Mambu's `encodedKey`, the 32-hex id of each of its entities.
_HEX_NOT_KEY = (r"(?i:public|cache|idempot|primary|foreign|partition|sort|object|dedup|row|hash|checksum|etag|"
                r"encoded[_ -]?key|"
                r"commit|sha|md5|digest|fingerprint|nonce|request|trace|span|correlation|(?:page|next)[_-]?token|cursor)")
# What a random-looking value that stands alone is when it is no secret, read before it: a digest (a certificate's
# thumbprint, JOSE's `x5t`/`x5t#S256`), an id, a file or
# a cipher's public parameter (salt, IV) named on its line up to 24 characters before it; a line of a base64 block
# (a certificate's, a public key's: after a long base64 line or a PEM header); a CTF flag's body (`HTB{…}`); a
# password hash in crypt(3)'s modular format (`$2b$12$…` bcrypt, Cisco's `$9$salt$…`, mosquitto's `$7$101$salt$…`).
_NOT_A_KEY = (rf"(?:{_HEX_NOT_KEY}|\b(?i:id|uuid|guid|ksuid|ulid|version|build|image|video|file|doc|document|sheet|"
              r"order|invoice|ticket|tracking|integrity|salt|iv|serial|thumbprint|x5t|message-id|code[_-]challenge|"
              r"nonce)\b|[a-z_]Id\b|_id\b|[?&]state=$|"
              r"[a-z0-9]ID\b)[^\n]{0,24}$|(?:[A-Za-z0-9+/=]{40}|-----)[ \t]*\\?\r?\n[ \t]*$|\w\{$|"
              r"\$[0-9A-Za-z]{1,3}\$(?:[^\s$]{1,64}\$){0,3}$")
# What generated passwords are written with: letters, digits and the symbols their alphabets use, and the Latin-1
# letters people's own passwords hold (`Kirschblüte02$`); not quotes, a backslash, brackets, `=`, `:`, `,`, `;`,
# `|` or `^` (what ends a value in every carrier around one).
_GENERATED = r"!#-&*+\-./0-9?@A-Z_a-z~À-ÖØ-öø-ÿ"

# A URL's scheme and `//` (RFC 3986): what follows up to an `@` is the authority's userinfo, a user name (a Sentry
# DSN's public key), not an e-mail address (RFC 5322), which `mailto:` writes without `//`.
_URL_SCHEME = r"[A-Za-z][A-Za-z0-9+.-]{0,20}://"
# A MIME header holding message ids (RFC 5322 3.6.4 msg-id, `<id-left@id-right>`; RFC 2392 Content-ID): the ids
# before the one matched included, so that every id of a `References:` list goes with its header.
# A message's own id, not a mailbox: RFC 5322's `Message-ID: <…@host>` and its kin, and SIP's `Call-ID: local@host`
# (RFC 3261 8.1.1.4, no angle brackets).
_MSG_ID_HEADER = (r"(?:(?i:message-id|in-reply-to|references|content-id|resent-message-id)[ \t]*:[ \t]*"
                  r"(?:<[^<>\s]{1,250}>(?:[ \t]|\r?\n[ \t])*)*<|(?i:call-id)[ \t]*:[ \t]*)")


# A qualifier in parentheses between a phone word and its number: "Phone (work) …", "Tel. (mobile): …".
_QUALIFIER = r"(?:\([^\d()\n]{1,20}\)[^\d\n+(]{0,8})?"
# The label of a product code (GS1's GTIN-8/12/13/14 as EAN, UPC and JAN, and ISBN) before a number: a product's,
# whatever issuer range and check digit it happens to share with a card (`EAN 4001249499736`: Luhn and a Visa prefix).
_PRODUCT_CODE = r"(?i:\b(?:ean|gtin|upc|isbn|jan)(?:[ _-]?(?:8|10|12|13|14|a|e))?\b)[\"'\\ \t:#=]{0,6}"
# The noun "contact" right before a bare digit run: a record cited by its id ("HubSpot contact 620600585", "contact
# 4711"); a phone number after "contact" comes with `:`, a verb or "number" between, in groups, or with its trunk
# prefix (`contact 07429 877640`: no record id opens with 0). Hindi's संपर्क (contact) the same.
_CONTACT_RECORD = r"^[_\d]?(?:(?i:contacts?)|संपर्क)[ \t]+[1-9]\d{4,}\W?$"
# The name of an id between a phone word and a number: the number is that id ("call back later, ticket 4471 2281",
# a return's `RMA-2025-…`, an SSN read back on a call); a booking's confirmation number, as a hotel's or a channel's
# message names it after the word for number (`numero di conferma`, `número de confirmación`, `número de
# confirmação`, `Bestätigungsnummer`, `numero di prenotazione`, `número de reserva`).
_ID_BETWEEN = (r"(?i:\b(?:ticket|order|invoice|case|booking|reservation|tracking|ref|reference|id|rma|ssn|"
               r"social security|commande|bestellung|factura|rechnung|permit|permis|licen[cs]e|lizenz|ruhsat\w*|"
               r"confirmation|conferma|confirmaci[oó]n|confirma[cç][aã]o|best[aä]tigung(?:snummer)?|prenotazione|"
               r"reserva|buchung(?:snummer)?)\b)")
# A contact record as a JSON object whose first key names another field (`"contact": {"ts": "…"}`, `{"tax_id": …}`):
# the number is that field's, not a phone number's; a key that is a phone word itself (`{"mobile": …}`) keeps it.
_CONTACT_OBJECT = (r'^[_\d]?(?i:contacts?)\\?"[ \t]*:[ \t]*\{[ \t]*\\?"'
                   r'(?![^"\\]*?(?:{words}))[^"\\]+\\?"[ \t]*:').replace("{words}", _PHONE_WORDS)

# A number's name that says it is free to call, a business's line (`Numéro Vert`, ARCEP's name for France's
# 0800-0805; `Freephone`, `toll-free`, `gebührenfrei`, `número gratuito`), or a call centre's (`call centre number`,
# Turkish `çağrı merkezi`, Arabic `مركز الاتصال`, the Gulf's `الرقم الموحد`, unified number, and `الرقم المجاني`,
# free number): the number is none of a person's, though some plan reads its digits as one (`0800…` is a fixed
# line in Sweden's, `800 …` a Mexican number). The Nordic, Baltic and Dutch names: the "green number" of Norway,
# Denmark and Sweden (`grønt nummer`, `grönt nummer`), a free number (`gratisnummer`, `gratis nummer`, Finnish
# `maksuton numero`, Estonian `tasuta number`, Latvian `bezmaksas numurs`, Lithuanian `nemokamas numeris`,
# Icelandic `gjaldfrjálst númer`, German `kostenlose Nummer`) and Finland's `palvelunumero` (a service number, as
# Traficom names 0800/0700/0600). Southern Europe's: the free number of Croatian, Serbian and Bosnian
# (`besplatni telefon`, `besplatan broj`) and Slovenian (`brezplačna številka`), Italy's `numero verde` (AGCOM's
# name for its 800 and 803 numbers) and Portugal's `linha verde`, and a free line in Spanish and Portuguese (`línea
# gratuita`, `linha gratuita`).
_FREE_NUMBER = (r"gr[\xf8\xf6o]nt[ -]?nummer|gratis[ -]?(?:nummer|number|numero)|maksuton|palvelunumero|"
                r"tasuta[ -]?(?:number|telefon)|bezmaksas|nemokam(?:as|o)|gjaldfrj\xe1ls\w*|"
                r"kostenlose?[ -]?(?:nummer|rufnummer|hotline)|kostenfrei\w*|avgiftsfri(?:tt)?|"
                r"besplat(?:an|n[a-z]{0,3})|brezpla[c\u010d]n[a-z]{0,3}|n[u\xfa]mero verde|linha verde|"
                r"l[i\xed]nea gratuita|linha gratuita")
_TOLL_FREE = (r"(?i:\b(?:num\xe9ro vert|numero vert|freephone|toll[- ]?free|geb\xfchrenfrei|n[u\xfa]mero gratuito|"
              rf"num\xe9ro gratuit|call[ _-]?cent(?:re|er)s?|[cçÇ]a[gğ]r[ıi] merkezi|{_FREE_NUMBER})\b)|"
              r"مركز الاتصال|الرقم الموحد|الرقم المجاني")
# Helplines whose name opens with the word for telephone, so that the phone word is no label of a person's number:
# Spain's Teléfono de la Esperanza, Italy's Telefono Amico, Telefono Azzurro and Telefono Rosa, Poland's Telefon
# Zaufania, the Telefonseelsorge of Germany and Austria.
_NAMED_HELPLINE = (r"^[_\d]?(?i:tel[eéÉ]fono de la esperanza|telefono (?:amico|azzurro|rosa)|telefon zaufania|"
                   r"telefonseelsorge)[^\w\n]{0,4}\d")
# A company's number in a business register, which Belgium's KBO/BCE writes grouped as a phone number is
# (`0xxx.xxx.xxx`) and its neighbours write in groups too: `ondernemingsnummer`, `numéro d'entreprise`,
# `Unternehmensnummer`, KBO, BCE, the VAT number (BTW, TVA, VAT), Denmark's CVR, Norway's and Sweden's
# `organisasjonsnummer`/`organisationsnummer` (`org.nr`), Finland's Y-tunnus, Estonia's `registrikood`.
_COMPANY_NUMBER = (r"ondernemingsnummer|(?:num\xe9ro|numero|n\xb0)[ ]d['\u2019]entreprise|unternehmensnummer|"
                   r"kbo|bce|btw|tva|vat|cvr|cvr-nr|y-tunnus|"
                   r"org\.?[ -]?nr|organisa[st]jonsnummer|organisationsnummer|registrikood|"
                   r"registreerimiskood")
# A remittance's tracking number right before a number: Western Union's Money Transfer Control Number (MTCN, ten
# digits written 3-3-4 like a NANP number), a tracking or control number in English and Spanish.
_TRACKING_NUMBER = (r"\b(?i:mtcn|tracking|control|seguimiento|rastreo|remesa|remittance)"
                    r"(?:[ _-]?(?i:no|nr|num(?:ber)?|n[uú]mero|#))?[^\n\d\w]{0,4}$")
# A bare number attribute of an XML element whose name is no phone's: the element says what the number is (Guatemala's
# FEL `<dte:NumeroAutorizacion Serie="…" Numero="…">`, an invoice's `<Factura numero="…">`), not a phone word. A
# call's, a message's or a dial's element names a phone (Android's call-log backup, `<call number="…" …>`).
_NUMBER_ATTRIBUTE = (r"<(?![\w.:-]*(?i:tel|phone|fono|m[oó]vil|cel|fax|contact|call|sms|mms|dial|caller|sip))[\w.:-]+"
                     r"(?:[ \t]+[\w.:-]+=\\?\"[^\"<>\n]*\\?\")*[ \t]+"
                     r"(?i:n[uú]mero|numer[a-z]{0,2}|number|nummer|num|no|nr)=\\?\"$")
# What a number grouped like a phone's is when a word right before it names something else: a document's,
# an article's, a batch's or a meter's number, a quantity or a range (in English, German, French and Spanish), a
# line named free to call (`toll-free line`, `freephone number`), or the groups of an IBAN before it.
_NOT_A_PHONE = (r"(?:(?:\b(?i:no|nr|num|serial|seri\w*|article|artikel|art|part|batch|lot|charge|qty|quantity|range|"
                r"meter|z\xe4hler\w*|compteur|contador|account|acct|konto|iban|invoice|rechnung|factur\w*|order|"
                r"bestell\w*|commande|pedido|po|sku|ean|isbn|doi|ref\w*|id|case|ticket|tracking|mtcn|confirmation|"
                r"booking|reservation|room|version|build|freephone|toll[- ]?free|helpline|hotline|"
                rf"num\xe9ro vert|servicenummer|geb\xfchrenfrei|{_FREE_NUMBER}|{_COMPANY_NUMBER})\b|"
                rf"\b(?i:freephone|toll[- ]?free)[ \t]+(?i:line|number|no)\b|#)[^\n\d\w]{{0,6}}|"
                r"[A-Z]{2}\d{2}(?: [A-Z0-9]{4})+ )$")

# A word that names a version, a build or a release right before four dotted numbers (`version 5.6.30.53`, `Build:
# 6.7.24.7`, `versione`, `versión`, `versão`, `verzija`, `Firmware`): a product's version, whatever octets they make.
_VERSION_LABEL = (r"\b(?i:version|versione|versi[o\xf3]n|vers[a\xe3]o|verzij[aeu]|build|release|firmware|fw|rev)"
                  r"[ \t]*[:=#]?[ \t]*$")
_BUILD_AFTER = r"\b(?i:build|rev|revision)[ \t]*[:#]?[ \t]*\d"
"""A build's or a revision's number right after four dotted numbers (`5.6.24.1 build 9156`, `(Build 7601)`): they
are a version too."""

# An e-mail address written out: a local part (letters spelled one by one, words joined by `dot`, `underscore`,
# `plus`...), an `at` in brackets or a spaced `@`, or a spoken one, and a domain whose dots are words or marked.
_SPOKEN_WORD = r"[A-Za-z0-9][A-Za-z0-9_+-]{0,40}"
_JOIN_SPOKEN = r"(?i:dot|underscore|dash|hyphen|plus|minus|punto|ponto|punkt|point)"
# At most six joins and thirty spelled letters: a bounded run, as "underscore underscore …" reads either way.
_SPOKEN_LOCAL = (rf"(?:[A-Za-z0-9][ ]{{1,3}}){{0,30}}{_SPOKEN_WORD}"
                 rf"(?:(?:[ ]{{1,3}}{_JOIN_SPOKEN}[ ]{{1,3}}|[ ]?[\[(]{_JOIN_SPOKEN}[\])][ ]?|\.)"
                 rf"{_SPOKEN_WORD}){{0,6}}")
_AT_MARKED = r"(?:[ ]?(?:\[(?i:at)\]|\((?i:at)\)|\{(?i:at)\}|<(?i:at)>)[ ]?|[ ]{1,3}@[ ]{1,3})"
_AT_SPOKEN = r"[ ]{1,3}(?i:at|arroba)[ ]{1,3}"
_DOT_MARKED = r"(?:[ ]?(?:\[(?i:dot)\]|\((?i:dot)\)|\{(?i:dot)\})[ ]?|\.)"
_DOT_SPOKEN = r"[ ]{1,3}(?i:dot|punto|ponto|punkt|point)[ ]{1,3}"
_SPOKEN_DOMAIN = (rf"[A-Za-z0-9](?:[A-Za-z0-9-]{{0,61}}[A-Za-z0-9])?"
                  rf"(?:(?:{_DOT_MARKED}|{_DOT_SPOKEN})[A-Za-z0-9-]{{1,63}}){{0,3}}(?:{_DOT_MARKED}|{_DOT_SPOKEN})")
_SPOKEN_TLD = r"(?i:com|org|net|edu|gov|info|biz|io|ai|app|dev|[a-z]{2})"
_EMAIL_WORDS = r"(?i:e-?mail|mail|correo|courriel|e-?posta|endere[cç]o)"
# What Japanese, Chinese and Korean text runs on into an address with: kana, the CJK ideographs, Hangul syllables,
# the ideographic comma and full stop.
_CJK_GLUED = "\u3001\u3002\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af"
# The large webmail providers' domain names: `name at gmail dot com` with no word for e-mail before it is how users
# spell an address to get it past a chat filter (prose puts no provider's name between `at` and `dot`).
_WEBMAIL = (r"(?i:g(?:oogle)?mail|yahoo|ymail|outlook|hotmail|msn|aol|icloud|proton(?:mail)?|gmx|web|"
            r"t-online|freenet|mail|yandex|rambler|ukr|rediffmail|naver|daum|hanmail|qq|163|126|sina|libero|"
            r"virgilio|wp|onet|interia|uol|bol|laposte|wanadoo|seznam|tutanota|zoho|fastmail)")

# The field a contact centre or a telephony API stores a caller's number in: Automatic Number Identification (`ani`,
# `ANI`, `aniNumber`), caller id, calling or from number (the dialled `dnis` is the business's own line).
_CALLER_FIELD = (r"\bani(?:_?number)?\b|\bcaller[ _-]?(?:id|number|phone)\b|\bcalling[ _-]?(?:number|party)\b|"
                 r"\bfrom[ _-]?number\b|\bcallerid\b")

WORD_TRIGGERED = frozenset({"phone_national", "secret_prose", "password", "date_of_birth", "ssn", "national_id"})
"""Rules whose triggers open with a list of words: the prefilter runs them in a pass of their own."""
OWN_PASS = frozenset({"national_id", "recovery_code", "totp_seed"})
"""Rules whose triggers (label words in many scripts: national ids', recovery codes', authenticator secrets'; bare
shapes) get an RE2 pass apart from the other worded ones and the literal prefixes: joined with either they outgrow
RE2's DFA budget (the recovery and authenticator words: 0.9 -> 5.7 s with the worded ones over the real traces'
14,510 strings, +0.6 s with the prefixes), alone they cost 0.15 s."""


@dataclass(frozen=True)
class Rule:
    """One detector: findings are named after it in reports, and redacted to `<LABEL_n>`."""

    name: str
    label: str
    pattern: str
    validator: Validator | None = None
    trigger: str | None = None
    """A simpler pattern that every match contains, cheap for RE2's DFA (a literal prefix, a digit run); the
    full pattern runs only on texts where it matched. None: the pattern itself."""
    description: str = ""
    reject: str | None = None
    """A pattern that, found in the whole match (its context included), drops it: what the value alone does not
    show (`git@github.com` followed by `:path` is an SSH remote)."""
    reject_label: str | None = None
    """A pattern that, found in the match before its value (the label and what precedes it), drops it: a digest's or
    an id's name (`cache_key`, `trace token is`). The value itself is not read: a random key holds `sha` or `row` by
    chance."""
    label_window: int = 0
    """Characters before the match that `reject_label` reads too: for a rule whose pattern holds no label (a value
    that stands alone), the words before it (`"request_id": "…"`)."""
    sweep: bool = False
    """Run in Python over every text, not after an RE2 prefilter: a pattern of one character run that `re` scans
    fast, whose trigger would be no filter at all (a long token: every log with a request id holds one)."""
    translated: str = ""
    """Label words of the translation table (tracegym/redact/words.py) that trigger the rule too: RE2's prefilter
    reads them in a pass of their own (joined with the worded triggers, a few hundred phrases in their case forms
    outgrow RE2's automaton: 0.9 -> 5.8 s over the real traces' strings; alone 0.02 s)."""

    def __post_init__(self) -> None:
        if self.trigger is None:
            object.__setattr__(self, "trigger", self.pattern)

    # Compiled when a rule first runs: most texts trigger few rules, and compiling all of them cost a tenth of a
    # small ingest's CPU.
    @functools.cached_property
    def regex(self) -> re.Pattern[str]:
        return re.compile(self.pattern, re.ASCII)

    @functools.cached_property
    def reject_regex(self) -> re.Pattern[str] | None:
        return re.compile(self.reject, re.ASCII) if self.reject else None

    @functools.cached_property
    def reject_label_regex(self) -> re.Pattern[str] | None:
        return re.compile(self.reject_label, re.ASCII) if self.reject_label else None


# The words that name a list of two-factor recovery codes (GitHub's recovery codes, Google's backup codes, once its
# "backup verification codes", Microsoft's recovery code, the authenticator apps' scratch and emergency codes,
# login.gov's "personal key"), in the languages sites print.
_RECOVERY_OWN = (r"(?:(?i:(?:recovery|backup|scratch|emergency|rescue|one[ -]time|2fa|mfa|two[ -]factor|bypass)"
                   r"[ ._-]?(?:access[ ._-]?)?codes?|"
                   r"backup[ ._-]?verification[ ._-]?codes?|personal[ ._-]?key|"
                   r"wiederherstellungs-?codes?|sicherungs-?codes?|"
                   r"codes? de (?:r[eé]cup[eé]ration|secours)|c[oó]digos? de (?:recupera[cç][aã]o|recuperaci[oó]n|"
                   r"respaldo|backup|reserva)|codici (?:di )?(?:backup|recupero|riserva)|herstelcodes?|"
                   r"kody (?:zapasowe|odzyskiwania)|reservkoder|yedek kodlar)|återställningskoder|"
                   r"gendannelseskoder|varakoodit|kurtarma kodları|резервные коды|коды восстановления|záložní kódy|"
                   r"バックアップ ?コード|リカバリー ?コード|备用码|恢复码|備用碼|백업 코드|복구 코드)")
_RECOVERY_TRANSLATED = words.alternation(words.RECOVERY)
_CJK_BEFORE_VALUE = r"(?:[\]】」』〕]|是|為|为|は|[은이]\([는가]\)|[은는이가])"
"""Between a CJK label and its value: a closing bracket (`【恢复代码】…`, `[복구 코드] …`), or the copula or topic
particle (`…是`, `…は`, Korean `…은(는)`) written right before it."""
_RECOVERY_WORDS = f"(?:{_RECOVERY_OWN}|{_RECOVERY_TRANSLATED})"
# One code: Google's eight digits (also 4+4, `+` in a form's body), or eight to sixteen letters and digits, or
# groups joined by `-` (GitHub's `4f2a1-9c3be`, Microsoft's five groups of five); a digit in it, or capitals in
# three to six equal groups (a random code of twelve that drew no digit), or two of five (`ZBGTS-QVBPT`: the
# validator reads them random).
_RECOVERY_CODE = (r"(?:(?=[A-Za-z-]*\d)(?:\d{4}[ +-]\d{4}(?![\d-])|[A-Za-z0-9]{3,12}(?:-[A-Za-z0-9]{3,12}){1,5}|"
                  r"[A-Za-z0-9]{8,16})|[A-Z]{4,5}(?:-[A-Z]{4,5}){2,5}(?![A-Za-z0-9])|[A-Z]{5}-[A-Z]{5}(?![A-Za-z0-9]))")
# One code printed in equal groups, as the sites print theirs (GitHub's 5+5 hex, Google's 4+4 digits, Microsoft's
# five of five, a portal's four of four), with a digit: what a label's words may stand before with no `:` between
# ("backup code for the VPN 4821 0937"), unlike a ticket's or an order's id (`INC-40213`, `ORD-2024-77`).
_GROUPED_CODE = (r"(?=[A-Za-z-]*\d)(?:\d{4}[ +-]\d{4}(?![\d-])|[A-Za-z0-9]{4}(?:-[A-Za-z0-9]{4}){1,7}|"
                 r"[A-Za-z0-9]{5}(?:-[A-Za-z0-9]{5}){1,5})")
# Between the codes of a list: a comma, a semicolon or a line break (a bullet or a list number after it, quotes of
# a JSON array), or spaces.
_RECOVERY_SEP = (r"(?:\\?[\"']?[ \t]*(?:[,;|]|\r?\n|\\n)[ \t]*(?:[-*•][ \t]*|\d{1,2}[.)][ \t]*)?\\?[\"']?|"
                 r"[ \t]+)")
# The words for an authenticator's shared secret on a two-factor setup page ("Can't scan? Enter this setup key"),
# the exchanges' "Backup Key" (Binance's, KuCoin's: the seed to write down, which restores the authenticator); the
# second factor's name after the word for key where languages put it there (`Clave 2FA`, `clé de secours 2FA`,
# `chave TOTP`; the seed's word too, Portuguese `semente 2FA`, Spanish `semilla TOTP`, Catalan `llavor 2FA`) or glued
# to it in a compound (`2FA-Schlüssel`, `TOTP-sleutel`, `MFA-nyckel`, Finnish `MFA-avain`, Estonian `2FA-võti`,
# Latvian `MFA atslēga`, Lithuanian `2FA raktas`, Icelandic `2FA lykill`).
_TOTP_OWN = (r"(?:(?i:setup[ _-]?key|secret[ _-]?key|(?:totp|otp|2fa|mfa|authenticator)[ ._-]?(?:secret|seed|key)|"
               r"\btotp\b|shared[ _-]?secret|manual[ _-]?(?:entry[ _-]?)?key|einrichtungsschl(?:ü|ue)ssel|"
               r"(?:can['’]?t|cannot|unable[ _-]to)[ _-]scan|backup[ _-]?key|"
               r"cl[eé] (?:secr[eè]te|de configuration)|clave (?:secreta|de configuraci[oó]n)|"
               r"chave (?:secreta|de configura[cç][aã]o)|chiave (?:segreta|di configurazione)|"
               r"(?:cl[eé]|clave|chave|chiave|llave|semente|semilla|llavor)(?: (?:secr[eè]te|secreta|segreta|"
               r"de secours|de respaldo|de seguran[cç]a|di riserva))? (?:2fa|a2f|mfa|totp|otp)\b|"
               r"(?:2fa|mfa|totp|otp)[ _-]?(?:schl(?:ü|ue)ssel|sleutel|nyckel|n[oø]gle|n[oø]kkel|avain|v[oõ]ti|"
               r"atsl[eē]ga|raktas|lykill)))")
_TOTP_TRANSLATED = words.alternation(words.SETUP_KEY)
_TOTP_WORDS = f"(?:{_TOTP_OWN}|{_TOTP_TRANSLATED})"
_TOTP_HEAD = r"(?i:\b(?:totp|2fa|mfa)\b)"
"""A heading that names a second factor: under it, a line `secret: …` gives the authenticator's secret."""
_BASE32_GROUPS = r"[a-z2-7]{4}(?: [a-z2-7]{4}){3,7}|[A-Z2-7]{4}(?: [A-Z2-7]{4}){3,7}"
_BASE32 = rf"(?:{_BASE32_GROUPS}|[A-Z2-7]{{16,128}}|[a-z2-7]{{16,128}})"
# A device's setup code: Matter's manual pairing code, HomeKit's setup code.
_PAIRING_OWN = (r"(?:(?i:(?:manual[ _-]?)?pairing[ _-]?code|setup[ _-]?code|homekit(?:[ _-]?(?:setup[ _-]?)?code)?|"
                r"matter[ _-]?code)|\bpair(?:ing)?\b)")
_PAIRING_TRANSLATED = words.alternation(words.PAIRING)

# A card's or a wallet's PIN after its label (`M-PESA PIN: …`, `UPI PIN …`, `(MPIN) …`, `PIN ya M-PESA: …`), or
# after an Iranian card's second PIN (`رمز دوم`: the online one, 5 to 12 digits by Shetab's rules).
_PIN_OWN = r"\b(?:(?i:[mt]-?)?PIN|Pin|pin)\b"
_PIN_LATIN = words.alternation(words.PIN, latin=True)
_PIN_TRANSLATED = words.alternation(words.PIN, latin=False)
_PIN_SECOND = r"(?:رمز دوم|رمز اینترنتی)"
_PIN_GAP = (r"(?:(?:[ \t]+[A-Za-z][A-Za-z-]{0,15}){1,2}(?:[ \t]*[:：=]|[ \t]+[-–—]|\)[ \t])|"
            r"[ \t]+(?i:ya|wa|la|of|for|de|du|da|do|kwa)[ \t]+[A-Za-z][A-Za-z-]{0,15}[ \t]|"
            r"\)?(?:[ \t]*[:：=]|[ \t]+[-–—]|[ \t]+(?i:is|ni|est)?))[ \t]*\\?[\"']?")
_PIN_END = r"(?![0-9A-Za-z]|[.,/:-]\d)"
SECOND_FACTOR_WORDS = f"{_RECOVERY_WORDS}|{_TOTP_WORDS}"
"""Labels of recovery codes and authenticator secrets, which structure ties to a value too (`id="recovery_code"`
beside `value="…"`): not context words of table headers, whose RE2 pass they would slow."""


# Between a short name said in lower case and its value: a `:`, a `#`, a key's `=` (a form's or a log's
# `pnr=…&`), a table row's `|` between its label cell and its value cell (`| hetu | …`), or a scanner's finding
# (`hetu detected: …`, `bsn found: …`).
_SAID_GAP = r"(?:[ \t]+(?i:detected|found|matched))?[ \t]?[:#=|]?[ \t]?\\?[\"']?"

# A Kerberos principal as klist and ktutil print it (`host/web01.example.lan@EXAMPLE.LAN`, `svc$@CORP.LAN`: the realm
# in capitals, as RFC 4120 6.1 has realms named after their DNS domain written), and a key in hex: DES 8 bytes,
# AES128, RC4 and Camellia-128 16, 3DES 24, AES256 and Camellia-256 32 (RFC 3961, 3962, 8009).
_KRB_PRINCIPAL = r"[\w$./-]{1,256}@[A-Z0-9][A-Z0-9.-]{0,252}"
_KRB_HEX = r"(?:[0-9A-Fa-f]{16}){1,4}"
# The enctype names secretsdump writes before an account's key (RFC 3962, 8009's AES; DES, 3DES, RC4).
_KRB_ENCTYPE = (r"aes(?:128|256)-cts-hmac-sha1-96|aes128-cts-hmac-sha256-128|aes256-cts-hmac-sha384-192|"
                r"des-cbc-(?:md5|crc)|des3-cbc-sha1|rc4[_-]hmac|arcfour-hmac(?:-md5)?")

# A Wi-Fi network's key: the network's word (Wi-Fi, WLAN) and a word for a key or a password, either first
# (`WLAN-Passwort`, `clé Wi-Fi`, `סיסמת Wi-Fi`: Hebrew's construct form of סיסמה), words like `of the` between.
_WIFI = r"(?i:wi[ _-]?fi|wlan)"
_WIFI_KEY = rf"(?:{_PW}|{_KEY_STEMS}|סיסמת|(?i:psk|code|c[oó]digo|codice))"
_WIFI_OF = r"(?i:du|de|del|della|di|des|da|do|für|f[oö]r|voor|van|het|til|for|the|of|la|le|el|das|den|die)"


_EMPLOYER_ID = r"(?:(?i:employer)[ _-]?(?i:identification|id)|\bF?EIN\b)"
"""The label of a US employer identification number (EIN, FEIN): a business's number, not a person's."""


# A PIX key's label (Banco Central do Brasil, Manual de Uso do DICT): `Pix`, `chave Pix`, `pixKey`, and the random
# key's own name (`chave aleatória`, EVP); not an id of a payment or a charge made by PIX (`pix_txid`, `Pix
# payment id`, an end-to-end id), whose label names the id.
_PIX_LABEL = (r"(?:(?<![A-Za-z0-9])(?i:pix)(?![a-z0-9])|(?<=[a-z])Pix(?![a-z])|"
              r"(?<![A-Za-z])(?i:chave[ _-]aleat[oó]ria|random[ _-]key)(?![a-z]))")
_PIX_NOT_KEY = (r"(?i:\bids?\b|_ids?\b|txid|e2e|end[ _-]?to[ _-]?end|transa[cç]|payment|pagamento|pago|\bqr|"
                r"cobran|charge|order|pedido|refund|devolu)|[a-z]Ids?\b")
# The values DICT takes for the keys it writes without punctuation: an EVP, a UUID in lower-case hex, and a CPF's
# eleven digits (its check read); a phone's E.164 and an e-mail are found as such.
_PIX_VALUE = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\d{11}"


def _pix_key(value: str) -> bool:
    """An EVP (the UUID's shape is the pattern's) or a CPF by its check digits."""
    return "-" in value or national.cpf(value)


def _national_rules() -> tuple[Rule, ...]:
    """A `national_id` rule per id of tracegym/redact/national.py after its label, each validated by the id's own
    check (the label selects it: a value after `PESEL` must pass PESEL's); and one where its shape and check alone
    make a chance match rare (a punctuated CPF, a codice fiscale, a CURP, a Chinese resident id)."""
    labelled = tuple(
        Rule("national_id", "NATIONAL_ID",
             rf"{_natid_label(n)}(?:[^\n]{{0,30}}?[^A-Za-z0-9\n])?(?P<v>{n.value})(?:$|[^A-Za-z0-9])",
             trigger=_natid_trigger(n), validator=n.check,
             description=f"{n.name} after its label ({n.check.__doc__.split(' (')[0]})")
        for n in national.IDS)
    said = tuple(
        Rule("national_id", "NATIONAL_ID",
             rf"(?<![A-Za-z0-9])(?i:{n.said}){_SAID_GAP}(?P<v>{n.value})(?:$|[^A-Za-z0-9])",
             trigger=rf"(?i:{n.said}){_SAID_GAP}\d", validator=n.check,
             description=f"{n.name} right after a short name in lower case (`{n.said.split('|')[0]} …`)")
        for n in national.IDS if n.said)
    generic = Rule("national_id", "NATIONAL_ID",
                   rf"{national.GENERIC_WORDS}(?:[^\n]{{0,30}}?[^A-Za-z0-9\n])?(?P<v>{national.GENERIC_VALUE})"
                   r"(?![A-Za-z0-9])",
                   trigger=f"{national.GENERIC_STEMS}|{national.SHORT_TRIGGER}",
                   translated=national.GENERIC_TRANSLATED, validator=national.any_id,
                   reject=r"(?:^|[^\d-])\d{2}-\d{7}$", reject_label=_EMPLOYER_ID, label_window=24,
                   description="an id after a label that names none's country (`id_number`, `document number`, "
                               "`national_id`), by any id's check; not a US employer's EIN (`Employer "
                               "identification number (EIN) 12-3456789`: a business's, its label says so and the "
                               "IRS groups it 2-7, as no person's id is)")
    bare = tuple(
        Rule("national_id", "NATIONAL_ID",
             rf"(?:^|[^A-Za-z0-9.-])(?P<v>{n.bare})(?![A-Za-z0-9]|[.-][A-Za-z0-9])",
             trigger=n.bare_trigger, validator=n.check,
             description=f"{n.name} with no label, by its shape and check")
        for n in national.IDS if n.bare)
    return labelled + said + (generic,) + bare


# A value in a network device's configuration after the keyword that names it: quoted (a JSON string's `\"`, a CSV
# cell's doubled `""` too; `'…'` as a shell quotes it) or bare up to a space; a bare one does not end in `;` or `,`
# (Junos ends a statement with `;`).
_CONF_VALUE = (r"(?:(?:\\?\"|\"\")(?P<v>[^\"\\\n]{1,128})\\?\"|'(?P<w>[^'\\\n]{1,128})'|"
               r"(?P<x>[^\s\"'\\]{0,127}[^\s\"'\\;,])(?=$|[\s\"'\\;,]))")
# The keywords of the device configurations that give a RADIUS or TACACS+ server's shared secret and a routing
# protocol's MD5 key: Huawei VRP's `radius-server shared-key cipher …` / `hwtacacs-server shared-key cipher …`,
# Junos' `set system radius-server 10.0.0.1 secret …` (`tacplus-server`, `set access radius-server`, a BGP or OSPF
# `authentication-key`, an IKE `pre-shared-key ascii-text`), Nokia SR OS' `server 1 address 10.0.0.1 secret …`,
# Cisco IOS' `radius-server key 7 …`, `tacacs-server host 10.0.0.1 key …` and BGP's `neighbor 10.0.0.1 password …`.
_SHARED_KEY = (r"\b(?:radius|hwtacacs|tacacs)-server[ \t]+shared-key[ \t]+(?:cipher|simple)[ \t]+|"
               r"\bset[ \t]+(?:system|access|protocols|security|routing-instances)[ \t][^\n]{0,200}?[ \t]"
               r"(?:secret|authentication-key|ascii-text)[ \t]+|"
               r"\bserver[ \t]+\d{1,2}[ \t]+address[ \t]+[0-9A-Fa-f.:]{2,45}[ \t]+secret[ \t]+|"
               r"\b(?:radius|tacacs)-server[ \t]+(?:host[ \t]+\S{1,64}[^\n]{0,80}?[ \t])?key[ \t]+(?:[07][ \t]+)?|"
               r"\bneighbor[ \t]+[0-9A-Fa-f.:]{2,45}[ \t]+password[ \t]+(?:[07][ \t]+)?")
# The keywords that give an SNMP community (its name is its password) or an SNMPv3 user's passphrase: Junos'
# `set snmp community …`, Huawei VRP's `snmp-agent community read|write [cipher] …` and `usm-user` modes, Cisco's
# `snmp-server community …` and `snmp-server user … auth sha …`, RouterOS' `/snmp community add name=…`, net-snmp's
# snmpd.conf (`rocommunity …`, `rwcommunity6 …`, `com2sec NAME SOURCE …`, `createUser NAME SHA …`) and its tools'
# `-c …` and `-A …` (`snmpwalk -v2c -c …`, `snmpget -v3 … -a SHA -A …`), `-X …` after `-x AES`; Nokia SR OS'
# `community "…" access-permissions r` (the name quoted before its keywords: a pattern of its own).
_SNMP_KEY = (r"\bset[ \t]+snmp[ \t]+community[ \t]+|"
             r"\bsnmp-agent[ \t]+community[ \t]+(?:read|write)[ \t]+(?:(?:cipher|simple)[ \t]+)?|"
             r"\bsnmp-agent[ \t]+usm-user\b[^\n]{0,120}?[ \t](?:authentication|privacy)-mode[ \t]+[\w-]{2,12}[ \t]+"
             r"(?:cipher[ \t]+)?|"
             r"\bsnmp-server[ \t]+community[ \t]+|"
             r"\bsnmp-server[ \t]+user\b[^\n]{0,120}?[ \t]auth[ \t]+(?:md5|sha\d*)[ \t]+|"
             r"/snmp[ \t]+community[ \t]+(?:add|set)\b[^\n]{0,120}?[ \t]name=|"
             r"(?:^|[^\w-])(?:ro|rw)community6?[ \t]+|"
             r"\bcom2sec6?(?:[ \t]+-Cn[ \t]+\S{1,64})?[ \t]+\S{1,64}[ \t]+\S{1,64}[ \t]+|"
             r"\bcreateUser[ \t]+(?:-e[ \t]+\S{1,64}[ \t]+)?\S{1,64}[ \t]+(?:MD5|SHA(?:-\d{3})?)[ \t]+|"
             r"\bsnmp(?:walk|get|getnext|bulkwalk|bulkget|set|table|trap|inform|status|df|netstat|delta)\b"
             r"[^\n|;&]{0,160}?[ \t]-[cA][ \t]*|"
             r"[ \t]-x[ \t]+(?:DES|AES\w{0,8})[ \t]+-X[ \t]*")
# A `community` key in a block or section an SNMP name heads: a YAML `snmp:` block (Home Assistant's, an IoT
# gateway's), a TOML or INI section (Telegraf's `[[inputs.snmp]]`, `[snmp]`), up to eight lines below it.
_SNMP_SECTION = (r"(?:^|[^\w-])(?i:snmp)[\w.-]{0,24}(?:\]\]?|[ \t]*:)?[ \t]*(?:\\?\r?\n|\\n)"
                 r"(?:[^\n\\]{0,160}(?:\\?\r?\n|\\n)){0,8}?[ \t]*(?i:community)\\?[\"']?[ \t]*[:=][ \t]*")
# A label that names an SNMP community in prose or a key (`SNMP community (RO): …`, `community string = …`,
# `snmp_community:`), up to 40 characters (whose it is) before its `:` or `=`.
_SNMP_LABEL = (r"(?i:snmp[ _-]?(?:v[12]c?[ _-]?)?(?:(?:ro|rw|read|write)[ _-]?)?community|community[ _-]?string|"
               r"\b(?:ro|rw)[_-]community)(?:\\?[\"'])?(?:[^\n:=\"]{0,40}?)[ \t]*[:=][ \t]*")
_HEX32 = r"[0-9a-fA-F]{32}"
# A JSON or YAML key's quotes: a JSON string's (escaped too), a CSV cell's doubled ones, YAML's or mongosh's `'`.
_KQ = r"(?:\\?\"|\"\"|')?"
# The label of an NT (or LM) hash as the tools print it: mimikatz's `* NTLM :` and `Hash NTLM:`, pypykatz's and
# impacket's `NThash`/`nthash`, `NT hash`, `LMHash`.
_NT_LABEL = r"(?i:ntlm(?:[ _-]?hash)?|nt[ _-]?hash|lm[ _-]?hash)"
# The tools that take an NT hash for a password (pass-the-hash): netexec (and crackmapexec before it) and evil-winrm
# after `-H`/`--hash`, impacket's `-hashes LM:NT` (the LM part may be empty), mimikatz's `/ntlm:` (the label reads
# it), Rubeus' `/rc4:`, xfreerdp's `/pth:`.
_PTH_FLAG = (r"\b(?:nxc|netexec|crackmapexec|cme|evil-winrm)\b[^\n|;&]{0,160}?[ \t](?:-H|--hash)[ \t]+\\?[\"']?"
             rf"(?:{_HEX32}:)?|(?:^|[ \t\"'])-hashes[ \t]+\\?[\"']?(?:{_HEX32})?:|/(?i:rc4|pth):")


# Browser automation filling a password field: a selector that names it (`'#password'`, `'input[name="passwd"]'`,
# `'[type=password]'`), then the value: Playwright's and Puppeteer's `page.fill(sel, value)` and `page.type(sel,
# value)`, a locator's `.fill(value)`, `.type(…)`, `.pressSequentially(…)`, Selenium's `.send_keys(…)`, WebdriverIO's
# `setValue`/`addValue`, Cypress's `.type(…)`; and the action logs that print them (`fill "#password" with "…"`).
_QUOTE = r"\\?[\"'`]"
_FILL_CALL = r"(?:fill|type|send_?[kK]eys|pressSequentially|setValue|addValue|insertText)"
# A keystroke action that types text into whatever has the focus: `xdotool type [--delay N] '…'`, a computer-use
# tool's `{"action": "type", "text": …}`, Playwright's `keyboard.type(…)`, pyautogui's `write(…)`: a password when
# the field it types into is named on its line or the line before, or after it ("… into the Password field").
_TYPING = (r"(?:\bxdotool[ \t]+type(?:[ \t]+--?[a-z-]+(?:[ \t]+\d+)?)*|"
           r"\\?\"action\\?\"[ \t]*:[ \t]*\\?\"type\\?\"[ \t]*,[ \t]*\\?\"text\\?\"[ \t]*:|"
           r"\b(?:keyboard\.(?:type|insertText)|pyautogui\.(?:write|typewrite))\()[ \t]*")
_TYPED_VALUE = r"(?P<v>[^\s'\"`\\]{3,128})\\?[\"'`]"


def _field_fill(label: str) -> str:
    """A browser automation call filling a field whose selector (its first argument: no comma, unlike a tuple of
    field names `("username", "password1", "password2")`) holds `label`, up to the value's opening quote."""
    return (rf"(?:\(\s*{_QUOTE}[^\n,]{{0,60}}?(?:{label})[^\n,]{{0,60}}?{_QUOTE}\s*(?:,\s*|\)\s*\.{_FILL_CALL}\(\s*)|"
            rf"\b{_FILL_CALL}\s+{_QUOTE}[^\n]{{0,60}}?(?:{label})[^\n]{{0,60}}?{_QUOTE}\s+with\s+){_QUOTE}")


def _typed_after(label: str) -> str:
    """A keystroke action after `label` on its line or the line before, up to the typed text's opening quote."""
    return rf"(?:{label})[^\n]{{0,80}}?(?:(?:\r?\n|\\n)[^\n]{{0,80}}?)?{_TYPING}{_QUOTE}"

# Provider tokens whose prefix or structure is documented (gitleaks' catalogue, each checked against its provider's
# description), grouped in one rule: the engine runs each rule's trigger over every text, a few grouped rules cost
# less than many. Base64 bodies (`ops_eyJ`, `eyJrIjoi`, `fm2_`) keep their `+`, `/` and padding.
_PROVIDER_TOKENS = (
    r"ops_eyJ[A-Za-z0-9+/]{200,4096}={0,2}|eyJrIjoi[A-Za-z0-9+/]{40,400}={0,2}|cmVmdGtuOjAxOj[A-Za-z0-9]{40,100}|"
    r"CLOJARS_[a-z0-9]{60}|EZ[AT]K[A-Za-z0-9]{54}|FLWSECK(?:_TEST)?-[0-9a-f]{32}-X|FLWSECK_TEST-?[0-9a-f]{12}|"
    r"fo1_[A-Za-z0-9_-]{43}|fm(?:1[ar]|2)_[A-Za-z0-9+/]{100,4096}={0,3}|"
    r"[ps]at\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}|api_org_[A-Za-z]{34}|s-s4t2(?:ud|af)-[0-9a-f]{64}|"
    r"API-[A-Z0-9]{26}|sha256~[A-Za-z0-9_-]{43}|pnu_[A-Za-z0-9]{36}|rdme_[a-z0-9]{70}|sm_[aps]at_[A-Za-z0-9]{16}|"
    r"A{20,22}[A-Za-z0-9]{1,60}%[0-9A-F]{2}[A-Za-z0-9%]{20,160}|"
    r"t1\.[A-Za-z0-9_-]{50,300}={0,2}\.[A-Za-z0-9_-]{86}={0,2}|x(?:keysib|smtpsib)-[0-9a-f]{64}-[A-Za-z0-9]{16}|"
    r"dnkey-[A-Za-z0-9=_-]{26}-[A-Za-z0-9=_-]{52}|LTAI[A-Za-z0-9]{12,20}|"
    r"(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-][A-Za-z0-9-]{10,32}\."
    r"[A-Za-z0-9+/_=-]{30,120}|[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8}")
_PROVIDER_TRIGGER = (
    r"ops_eyJ|eyJrIjoi|cmVmdGtuOjAxOj|CLOJARS_|EZ[AT]K[A-Za-z0-9]{54}|FLWSECK|fo1_|fm(?:1[ar]|2)_|"
    r"[ps]at\.[A-Za-z0-9_-]{22}\.|api_org_|s-s4t2|API-[A-Z0-9]{26}|sha256~|pnu_|rdme_|sm_[aps]at_|A{20}|"
    r"t1\.[A-Za-z0-9_-]{50}|x(?:keysib|smtpsib)-|dnkey-|LTAI[A-Za-z0-9]{12}|"
    r"(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-]|[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8}")

# A DLMS/COSEM client's command line as Gurux's examples print it: the system title (`-T` and 16 hex) or the
# security level (`-C AuthenticationEncryption`) names the line one, and so does a second key flag (`-A <key> -B
# <key>`, a key pair). A match holds no key flag whole: the next match reads it again as the context of the next.
_DLMS_CONTEXT = (r"(?:[ \t]-T[ \t]+[0-9A-Fa-f]{16}(?![0-9A-Za-z])|"
                 r"[ \t]-C[ \t]+(?:AuthenticationEncryption|Authentication|Encryption)\b)")
_DLMS_GAP = r"[^\n]{0,200}?"


def _dlms_key(key: str = _HEX32) -> str:
    """A Gurux client's key flag (`-A`, `-B`, `-b`, `-D`) and its key: `key`, the value's group or 32 hex."""
    return rf"-[ABDb][ \t]+{key}(?![0-9A-Za-z])"


# Between a FIX message's fields: SOH, or `|`, `^` or `^A` where logs print it (`cat -v` and `less` show SOH as `^A`).
_FIX_SEP = r"(?:[\x01|]|\^A?)"
# A FIX field's value up to the next field: a `^` inside it is the value's own unless a field's tag follows it
# (`…xJ_^Kq…^A10=…`); a password's spaces are its own too.
_FIX_VALUE = r"(?:[^\x01|^\n]|\^(?!A?\d{1,5}=)){1,128}(?=[\x01|^\n]|$)"

# In rank order: where two findings overlap, the earlier rule's stays (secrets before personal data, a URL's
# password before the e-mail-like text around it, an IBAN before the digits in it).
BUILTIN_RULES: tuple[Rule, ...] = (
    # A body up to its END line holds no run of five dashes: else each of many BEGIN lines with no END after them
    # would be read to the text's end (quadratic).
    Rule("private_key", "PRIVATE_KEY",
         r"-----BEGIN[A-Z ]{0,20} PRIVATE KEY( BLOCK)?-----(?:(?:[^-]|-{1,4}[^-])*?-----END[A-Z ]{0,20} PRIVATE KEY"
         r"( BLOCK)?-----|"
         r"(?:[A-Za-z0-9+/=:, -]|\r?\n|\\n|\\r)*)",
         trigger=r"PRIVATE KEY", description="PEM private-key blocks (RSA, EC, OpenSSH, PGP), cut ones too"),
    Rule("private_key", "PRIVATE_KEY",
         r"(?:^|[^A-Za-z0-9+/])(?P<v>LS0tLS1CRUdJTi[A-Za-z0-9+/]{40,8000}={0,2})",
         trigger=r"LS0tLS1CRUdJTi", validator=v.encoded_private_key,
         description="a PEM private key base64-encoded whole (kubeconfig's `client-key-data`, Kubernetes secrets' "
                     "`tls.key`, CI variables): `-----BEGIN` encodes as `LS0tLS1CRUdJTi`"),
    Rule("private_key", "PRIVATE_KEY",
         r"Private-Lines:[ \t]*\d{1,3}(?:\\?\r?\n){1,2}[ \t]*(?P<v>[A-Za-z0-9+/=]{4,}(?:(?:\\?\r?\n){1,2}[ \t>]*"
         r"[A-Za-z0-9+/=]{4,})*)(?:\\?\r?\n|[\"',\]}]|$)",
         trigger=r"Private-Lines:",
         description="PuTTY private keys (.ppk, versions 2 and 3): the base64 lines after `Private-Lines: N`"),
    Rule("private_key", "PRIVATE_KEY",
         r"(?:^|[^A-Za-z0-9_-])(?P<v>AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})(?:$|[^A-Za-z0-9_-])",
         trigger=r"AGE-SECRET-KEY-1", validator=v.age_identity,
         description="age identities (AGE-SECRET-KEY-1 + 58 bech32 characters, as age-keygen writes them)"),
    Rule("private_key", "PRIVATE_KEY",
         r"(?:^|[^1-9A-HJ-NP-Za-km-z])(?P<v>[xtyzuvYZUV]prv[1-9A-HJ-NP-Za-km-z]{107,108})(?:$|[^1-9A-HJ-NP-Za-km-z])",
         trigger=r"[xtyzuvYZUV]prv[1-9A-HJ-NP-Za-km-z]{107}", validator=v.extended_private_key,
         description="BIP32 extended private keys (`xprv`/`tprv`, SLIP-132's `yprv`/`zprv`…: Base58Check over 78 "
                     "bytes, checked), anywhere: alone, in a wallet descriptor (`wpkh(xprv…/84h/0h/0h/0/*)`)"),
    Rule("anthropic_key", "API_KEY", r"\bsk-ant-[A-Za-z0-9_-]{20,}", trigger=r"sk-ant-",
         description="Anthropic API keys"),
    Rule("openai_key", "API_KEY", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
         trigger=r"(?:^|[^A-Za-z0-9_]|\\[nrt])sk-",
         validator=lambda s: not s.startswith("sk-ant-") and bool(re.search(r"\d", s)),
         description="OpenAI API keys (sk-, sk-proj-, service-account and admin keys)"),
    Rule("aws_access_key", "API_KEY", r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b",
         trigger=r"AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA", description="AWS access key ids"),
    Rule("github_token", "TOKEN", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
         trigger=r"gh[pousr]_|github_pat_", description="GitHub tokens"),
    Rule("gitlab_token", "TOKEN",
         r"\b(?:gl(?:pat|dt|rt|rtr|cbt|ptt|ft|imt|agent|oas|soat|ffct)-[A-Za-z0-9_-]{20,}(?:\.[0-9a-z]{9}\b)?|"
         r"GR1348941[A-Za-z0-9_-]{20,})",
         trigger=r"gl(?:pat|dt|rt|rtr|cbt|ptt|ft|imt|agent|oas|soat|ffct)-|GR1348941",
         description="GitLab tokens by their documented prefixes (glpat- personal, gldt- deploy, glrt- runner, "
                     "glcbt- CI job, glptt- trigger, glft- feed, gloas- OAuth, GR1348941 runner registration), a "
                     "routable token's `.` and 9-character suffix with it"),
    Rule("slack_token", "TOKEN",
         r"\b(?:xox[abposr]-[A-Za-z0-9-]{10,}|xoxe(?:\.xox[bp])?-\d-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,})",
         trigger=r"xox[abposre][.-]|xapp-\d-",
         description="Slack tokens: bot, user and legacy (xox?-), refresh (xoxe-), app-level (xapp-1-)"),
    Rule("stripe_key", "API_KEY", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}", trigger=r"_live_|_test_",
         description="Stripe keys"),
    Rule("google_api_key", "API_KEY", r"\bAIza[0-9A-Za-z_-]{35}", trigger=r"AIza", description="Google API keys"),
    Rule("fcm_server_key", "API_KEY", r"\bAAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{120,160}", trigger=r":APA91b",
         description="Firebase Cloud Messaging legacy server keys (`AAAA` + 7, `:APA91b` + about 134: the key the "
                     "legacy HTTP API takes as `Authorization: key=…`)"),
    Rule("google_oauth_secret", "SECRET", r"\bGOCSPX-[A-Za-z0-9_-]{28}", trigger=r"GOCSPX-",
         description="Google OAuth client secrets (GOCSPX- + 28)"),
    Rule("google_access_token", "TOKEN", r"(?<![A-Za-z0-9_.-])ya29\.[A-Za-z0-9_-]{20,2048}", trigger=r"ya29\.",
         description="Google OAuth 2.0 access tokens (`ya29.`: gcloud's `print-access-token`, the metadata server's, "
                     "a service account's)"),
    Rule("google_refresh_token", "TOKEN", r"(?<![A-Za-z0-9_./:-])1//0[A-Za-z0-9_-]{40,512}(?![A-Za-z0-9_-])",
         trigger=r"1//0[A-Za-z0-9_-]{40}", validator=v.labelled_key,
         description="Google OAuth 2.0 refresh tokens (`1//0…`: gcloud's and the OAuth playground's, an "
                     "application's stored grant)"),
    Rule("mailchimp_key", "API_KEY", r"(?<![0-9A-Za-z])[0-9a-f]{32}-us\d{1,2}(?![0-9A-Za-z])",
         trigger=r"[0-9a-f]{8}-us\d", validator=lambda s: v.hex_key(s.split("-")[0]),
         description="Mailchimp API keys (32 hex, `-us` and the data centre's number)"),
    Rule("amazon_lwa_token", "TOKEN",
         r"(?<![A-Za-z0-9_-])(?:Atz[ar]\|[A-Za-z0-9_-]{60,2048}|amzn1\.oa2-cs\.v1\.[0-9a-f]{64})(?![A-Za-z0-9_-])",
         trigger=r"Atz[ar]\||amzn1\.oa2-cs\.v1\.",
         description="Login with Amazon refresh tokens (`Atzr|…`: the Selling Partner and Alexa APIs'), access "
                     "tokens (`Atza|…`, an hour's: `x-amz-access-token`) and client secrets (`amzn1.oa2-cs.v1.` + "
                     "64 hex)"),
    Rule("mollie_key", "API_KEY", r"(?<![A-Za-z0-9_])(?:live|test)_[A-Za-z0-9]{30}(?![A-Za-z0-9_])",
         trigger=r"(?:live|test)_[A-Za-z0-9]{30}", validator=v.mollie_key,
         description="Mollie API keys (`live_`/`test_` + 30 random letters and digits), anywhere"),
    Rule("databento_key", "API_KEY", r"(?<![A-Za-z0-9_.-])db-[A-Za-z0-9]{29}(?![A-Za-z0-9_-])",
         trigger=r"db-[A-Za-z0-9]{29}", validator=v.databento_key,
         description="Databento API keys (`db-` + 29 letters and digits: 32 characters, as its docs give them), "
                     "anywhere: `db.Historical(\"db-…\")`, `DATABENTO_API_KEY=db-…`"),
    Rule("ebay_token", "TOKEN",
         r"(?<![A-Za-z0-9^#])v\^1\.1(?:#[A-Za-z]\^[0-9]{1,3}){1,12}#t\^[A-Za-z0-9+/]{40,4096}={0,2}",
         trigger=r"v\^1\.1#[A-Za-z]\^[0-9]",
         description="eBay OAuth user and application tokens (`v^1.1#i^1#…#t^…`: fields of a letter, `^` and a "
                     "number, then the base64 body after `t^`), whose `^` and `#` no bearer token's charset holds"),
    Rule("plaid_token", "TOKEN",
         rf"(?<![A-Za-z0-9_-])(?:access|processor)-(?:production|development|sandbox)-{_UUID}(?![0-9A-Za-z])",
         trigger=r"(?:access|processor)-(?:production|development|sandbox)-",
         description="Plaid access and processor tokens (`access-production-<uuid>`, `processor-sandbox-<uuid>`)"),
    Rule("persona_key", "API_KEY",
         rf"(?<![A-Za-z0-9_-])persona_(?:production|sandbox)_{_UUID}(?![0-9A-Za-z])",
         trigger=r"persona_(?:production|sandbox)_",
         description="Persona API keys (`persona_production_<uuid>`, `persona_sandbox_<uuid>`), anywhere"),
    Rule("aws_session_token", "TOKEN",
         r"(?<![A-Za-z0-9+/])(?:FwoGZXIvYXdz|IQoJb3JpZ2luX2Vj)[A-Za-z0-9+/]{80,4096}={0,2}",
         trigger=r"FwoGZXIvYXdz|IQoJb3JpZ2luX2Vj",
         description="AWS STS session tokens by their opening, whatever labels them (`FwoGZXIvYXdz`, "
                     "`IQoJb3JpZ2luX2Vj`: base64 of the token's fixed header; `AWS_SESSION_TOKEN`, "
                     "`x-amz-security-token`, an ECS task role's `Token`)"),
    Rule("kubernetes_secret", "SECRET", rf"^{manifests.SECRET_DATA}: \"(?P<v>{manifests.SECRET_VALUE})\"$",
         trigger=r"(?:data|stringData):[ \t]*(?:\r?\n|\\n)[ \t]+[\w.\"'-]+:|\\?\"kind\\?\"[ \t]*:[ \t]*\\?\"Secret|"
                 rf"^{manifests.SECRET_DATA}: \"",
         description="a Kubernetes Secret's values, base64 under `data:` whatever their keys "
                     "(tracegym/redact/manifests.py)"),
    Rule("kerberos_key", "SECRET",
         rf"{_KRB_PRINCIPAL}[ \t]+(?:\([A-Za-z0-9:-]{{3,64}}\)[ \t]+)?\(0x(?P<v>{_KRB_HEX})\)|"
         rf"\bKey for {_KRB_PRINCIPAL} \(hex\):[ \t]*(?P<w>{_KRB_HEX})(?![0-9A-Fa-f])",
         trigger=r"(?:@[A-Z0-9.-]+|\))[ \t]+\(0x[0-9A-Fa-f]|\(hex\):",
         description="a keytab entry's key as MIT `klist -k -K` and ktutil's `list -k` print it (`PRINCIPAL "
                     "(ENCTYPE)  (0xHEX)`) and as ktutil's `addent -key` prompt takes it (`Key for PRINCIPAL (hex): "
                     "HEX`)"),
    Rule("kerberos_key", "SECRET",
         rf"[^\s:]:(?:{_KRB_ENCTYPE}):(?P<v>{_KRB_HEX})(?![0-9A-Fa-f])|"
         r"[^\s:]:plain_password_hex:(?P<w>[0-9A-Fa-f]{32,1000})(?![0-9A-Fa-f])",
         trigger=rf":(?:{_KRB_ENCTYPE}|plain_password_hex):[0-9A-Fa-f]",
         description="an account's Kerberos keys and a machine account's password as Impacket's secretsdump prints "
                     "them (`DOMAIN\\user:aes256-cts-hmac-sha1-96:HEX`, `DC$:plain_password_hex:HEX`)"),
    Rule("vault_unseal_key", "SECRET",
         r"(?:\b(?i:unseal|recovery)[ _-]?(?i:key)[ _-]?\d{1,2}[ \t]*:[ \t]*|"
         r"\b(?:unseal|recovery)_keys_(?:b64|hex)\\?\"[ \t]*:[ \t]*\[(?:[ \t]|\\?\r?\n)*\\?\"|"
         r"\bvault[ \t]+operator[ \t]+unseal(?:[ \t]+-[\w=-]+)*[ \t]+)"
         r"(?P<v>[A-Za-z0-9+/]{40,100}={0,2}"
         r"(?:\\?\"[ \t]*,(?:[ \t]|\\?\r?\n)*\\?\"[A-Za-z0-9+/]{40,100}={0,2}){0,9})(?![A-Za-z0-9+/=])",
         trigger=r"(?i:unseal|recovery)[ _-]?(?i:keys?)|operator[ \t]+unseal", validator=lambda s: v.entropy(s) >= 3.5,
         description="HashiCorp Vault's unseal and recovery key shares (`vault operator init`'s `Unseal Key 1: …`, "
                     "its JSON `unseal_keys_b64` list, `vault operator unseal …`)"),
    Rule("azure_ad_secret", "SECRET",
         r"(?:^|[^A-Za-z0-9_~.-])(?P<v>[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34})(?:$|[^A-Za-z0-9_~.-])",
         trigger=r"\dQ~[A-Za-z0-9_~.-]{31}", validator=lambda s: v.entropy(s) >= 4.0,
         description="Microsoft Entra ID (Azure AD) client secrets: 3 characters, a digit, `Q~`, 31-34 more"),
    Rule("huggingface_token", "TOKEN", r"\bhf_[A-Za-z0-9]{30,}", trigger=r"hf_",
         validator=lambda s: bool(re.search(r"[A-Z]", s) and re.search(r"[a-z]", s)),
         description="Hugging Face tokens"),
    Rule("npm_token", "TOKEN", r"\bnpm_[A-Za-z0-9]{36}\b", trigger=r"npm_", description="npm tokens"),
    Rule("issuer_token", "TOKEN",
         r"(?:^|[^A-Za-z0-9_.-])(?P<v>ATATT3[A-Za-z0-9_-]{40,300}=[0-9A-F]{8}|AT(?:BB|CTT)[A-Za-z0-9_=-]{32,300}|"
         r"dapi[0-9a-f]{32}(?:-\d)?|pat[A-Za-z0-9]{14}\.[0-9a-f]{64}|dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}|"
         r"hv[sbr]\.[A-Za-z0-9_-]{24,300}|NR(?:AK|AA|II)-[A-Z0-9]{27,32}|sntrys_eyJ[A-Za-z0-9+/=_-]{40,400}|"
         r"sntryu_[0-9a-f]{64}|v1\.0-[0-9a-f]{24}-[0-9a-f]{146}|[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_-]{60,200}|"
         r"CCIP(?:AT|RJ)_[A-Za-z0-9]{16,40}_[0-9a-f]{40}|sq0(?:atp|csp)-[A-Za-z0-9_-]{22,60}|EAAA[A-Za-z0-9_-]{56,70}|"
         r"r8_[A-Za-z0-9]{37}|lsv2_(?:pt|sk)_[0-9a-f]{32}_[0-9a-f]{10}|napi_[a-z0-9]{64}|a[ks]-[A-Za-z0-9]{22}|"
         r"00D[A-Za-z0-9]{12}(?:[A-Za-z0-9]{3})?![A-Za-z0-9._]{40,300}|dckr_(?:pat|oat)_[A-Za-z0-9_-]{24,64}|"
         rf"pat-(?:na|eu|ap)[0-9]-{_UUID}|access-(?:sandbox|development|production)-{_UUID}|"
         r"[12]/[0-9]{10,19}(?:/[0-9]{10,19})?:[0-9a-f]{32})"
         r"(?:$|[^A-Za-z0-9_+/=-])",
         trigger=r"ATATT3|AT(?:BB|CTT)[A-Za-z0-9]|dapi[0-9a-f]{32}|pat[A-Za-z0-9]{14}\.|dt0c01\.|hv[sbr]\.|"
                 r"NR(?:AK|AA|II)-|sntry[su]_|v1\.0-[0-9a-f]{24}-|\.atlasv1\.|CCIP(?:AT|RJ)_|sq0(?:atp|csp)-|"
                 r"EAAA[A-Za-z0-9_-]{56}|r8_[A-Za-z0-9]{37}|lsv2_(?:pt|sk)_|napi_[a-z0-9]{64}|a[ks]-[A-Za-z0-9]{22}|"
                 r"00D[A-Za-z0-9]{12}|dckr_(?:pat|oat)_|pat-(?:na|eu|ap)[0-9]-|access-(?:sandbox|development|production)-|"
                 r"[0-9]{10}:[0-9a-f]{32}",
         validator=v.issuer_token,
         description="tokens by their issuers' documented formats, anywhere in text: Atlassian API tokens (ATATT3… "
                     "=CRC32), Bitbucket app passwords (ATBB) and access tokens (ATCTT), Databricks (dapi + 32 hex, "
                     "-N), Airtable PATs (pat + 14 . 64 hex), Dynatrace (dt0c01.), HashiCorp Vault (hvs./hvb./hvr.), "
                     "New Relic (NRAK-, NRAA-, NRII-), Sentry (sntrys_, sntryu_), Cloudflare Origin CA keys (v1.0-), "
                     "Terraform Cloud/Enterprise user tokens (14 .atlasv1. 60+), CircleCI personal and project tokens "
                     "(CCIPAT_, CCIPRJ_), Square access tokens and application secrets (EAAA + 60, sq0atp-, sq0csp-), "
                     "Replicate (r8_ + 37), LangSmith (lsv2_pt_, lsv2_sk_), Neon (napi_ + 64), Modal token ids and "
                     "secrets (ak-, as- + 22), Salesforce session ids and access tokens (the 15- or 18-character org "
                     "id 00D…, `!`, the session part), Docker Hub personal and organization access tokens (dckr_pat_, "
                     "dckr_oat_), HubSpot private app tokens (pat-<region>-<uuid>), Plaid access tokens "
                     "(access-<environment>-<uuid>), Asana personal access tokens (1/<user id>:<32 hex>, "
                     "2/<user id>/<app id>:<32 hex>)"),
    Rule("issuer_token", "TOKEN",
         r"(?:\bSSWS[ \t]+|(?i:okta)[\w.-]{0,30}[\"'`)\]:= \t\\]{1,8})(?P<v>00[A-Za-z0-9_-]{40})(?:$|[^A-Za-z0-9_-])",
         trigger=r"SSWS|(?i:okta)", validator=v.issuer_token,
         description="Okta API tokens (00 + 40) after Okta's `SSWS` scheme or a name holding okta (its quotes "
                     "escaped too: JSON text inside JSON)"),
    Rule("provider_token", "TOKEN",
         rf"(?<![A-Za-z0-9_.+/-])(?P<v>{_PROVIDER_TOKENS})(?![A-Za-z0-9_+/=%-])",
         trigger=_PROVIDER_TRIGGER, validator=v.provider_token,
         description="tokens of a documented prefix or structure, anywhere in text: 1Password service account "
                     "tokens (`ops_eyJ…`), Grafana API keys (`eyJrIjoi…`), JFrog reference tokens "
                     "(`cmVmdGtuOjAxOj…`), Clojars (`CLOJARS_` + 60), EasyPost (`EZAK`, `EZTK` + 54), Flutterwave "
                     "(`FLWSECK-`, `FLWSECK_TEST-` + 32 hex `-X`; its encryption key), Fly.io (`fo1_`, `fm1a_`, "
                     "`fm1r_`, `fm2_`), Harness (`pat.`, `sat.` + 22 `.` 24 `.` 20), Hugging Face organization "
                     "tokens (`api_org_`), 42's intra (`s-s4t2ud-`, `s-s4t2af-` + 64 hex), Octopus Deploy (`API-` + "
                     "26), OpenShift (`sha256~` + 43), Prefect (`pnu_` + 36), ReadMe (`rdme_` + 70), SettleMint "
                     "(`sm_pat_`, `sm_aat_`, `sm_sat_` + 16), X's app bearer tokens (20-22 `A`s, URL-escaped "
                     "base64), Yandex Cloud IAM tokens (`t1.` … `.` + 86), Brevo (`xkeysib-`, `xsmtpsib-` + 64 hex "
                     "`-` 16), Defined Networking (`dnkey-` + 26 `-` 52), Alibaba Cloud key ids (`LTAI` + 12-20), "
                     "Authress service client keys (`sc_….….acc_….…`), Mailgun's private API keys (32 hex `-` 8 "
                     "`-` 8, lower case); random, not placeholders nor words"),
    Rule("adyen_key", "API_KEY",
         r"\bAQE[A-Za-z0-9+/]{20,200}={0,2}-[A-Za-z0-9+/]{20,200}={0,2}-"
         r"(?:[^\s\"'`\\<\]]|<[^/\s\"'`\\<\]]|\](?=[^\s\"'`\\,}\])])){4,32}",
         trigger=r"AQE[A-Za-z0-9+/]{20}",
         description="Adyen API keys (AQE…, two base64 parts and a last part of any printable characters, `-` "
                     "between; a `<` in the last part too, not one that opens a closing tag `</`; a `]` with more "
                     "of the key after it, not one that closes a list or a Markdown link's text)"),
    Rule("mercadopago_token", "TOKEN",
         r"(?<![A-Za-z0-9_-])(?P<v>(?:APP_USR|TEST)-\d{16}-\d{6}-[0-9a-f]{32}-\d{6,12})(?![A-Za-z0-9_-])",
         trigger=r"(?:APP_USR|TEST)-\d{16}-\d{6}-", validator=lambda s: len(set(s.split("-")[3])) > 6,
         description="Mercado Pago access tokens (`APP_USR-` or `TEST-`, the app id's 16 digits, a date stamp of "
                     "6, 32 hex, the user id), anywhere; not a placeholder's repeated hex"),
    Rule("conekta_key", "API_KEY", r"(?<![A-Za-z0-9_.-])(?P<v>key_[A-Za-z0-9]{20,32})(?![A-Za-z0-9_-])",
         trigger=r"key_[A-Za-z0-9]{20}",
         validator=lambda s: re.search(r"[A-Z]", s[4:]) is not None and v.provider_token(s),
         description="Conekta private and public API keys (`key_` + 20-32 base62), anywhere: random with capitals, "
                     "not an identifier's words (`key_generatorForTheModel`) nor a digest's hex"),
    Rule("braintree_token", "TOKEN", r"\baccess_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}",
         trigger=r"access_token\$", description="Braintree (PayPal) access tokens, access_token$production$…$…"),
    Rule("twitch_token", "TOKEN", r"\boauth:[a-z0-9]{30}\b", trigger=r"oauth:[a-z0-9]{30}",
         validator=lambda s: bool(re.search(r"\d", s)),
         description="Twitch chat (IRC) OAuth tokens, oauth: + 30 lower-case letters and digits"),
    Rule("pypi_token", "TOKEN", r"\bpypi-AgE[IN][A-Za-z0-9_-]{50,1000}", trigger=r"pypi-AgE",
         description="PyPI and TestPyPI API tokens (`pypi-` + a macaroon whose base64 opens `AgEIcHlwaS5vcmc` or "
                     "`AgENdGVzdC5weXBp`), anywhere, however long and after any `=`"),
    Rule("onepassword_secret_key", "SECRET", r"\bA3-[A-Z0-9]{6}-[A-Z0-9]{6}(?:-[A-Z0-9]{5}){4}\b",
         trigger=r"A3-[A-Z0-9]{6}-[A-Z0-9]{6}-",
         description="1Password Secret Keys (`A3-` + 6, 6, then four groups of 5: the account key its Emergency "
                     "Kit prints), anywhere"),
    Rule("meta_token", "TOKEN", r"(?:^|[^A-Za-z0-9])(?P<v>EAA[A-Za-z0-9]{80,512})(?:$|[^A-Za-z0-9])",
         trigger=r"EAA[A-Za-z0-9]{80}", validator=v.issuer_token,
         description="Meta (Facebook, Instagram, WhatsApp Cloud API) access tokens, EAA + 80 letters and digits or "
                     "more, anywhere"),
    Rule("exchange_secret", "SECRET",
         r"\bkraken\.key\b[^\n]{0,80}?(?:\\?\r?\n|\\n)[ \t]*[A-Za-z0-9+/]{40,64}={0,2}[ \t]*(?:\\?\r?\n|\\n)[ \t]*"
         r"(?P<v>[A-Za-z0-9+/]{86}==)(?![A-Za-z0-9+/=])",
         trigger=r"kraken\.key", validator=v.labelled_key,
         description="the private key of a Kraken API key file (`kraken.key`, as krakenex and its kin read it: the "
                     "API key on the first line, the base64 private key, 64 bytes, on the second)"),
    Rule("telegram_bot_token", "TOKEN", r"(?:^|[^\w:]|/bot)(?P<v>\d{8,10}:AA[A-Za-z0-9_-]{32,33})(?:$|[^\w-])",
         trigger=r"\d{8}:AA[A-Za-z0-9_-]{32}",
         description="Telegram bot tokens (Bot API: the bot's id, `:`, then AA and 33 characters)"),
    Rule("telegram_bot_token", "TOKEN",
         r"\bapi\.telegram\.org/(?:file/)?bot(?P<v>\d{5,12}:[A-Za-z0-9_-]{30,40})(?![A-Za-z0-9_-])",
         trigger=r"api\.telegram\.org/", validator=v.labelled_key,
         description="a Telegram bot token in a Bot API URL (`https://api.telegram.org/bot<token>/sendMessage`), "
                     "whatever its secret part opens with (the Bot API docs' own example is `123456:ABC-DEF…`)"),
    Rule("stream_key", "SECRET",
         r"\brtmp[st]?://[A-Za-z0-9.-]{1,253}(?::\d{1,5})?/(?:[A-Za-z0-9._~-]{1,64}/){1,3}"
         r"(?P<v>[A-Za-z0-9_.~=-]{16,256})(?![A-Za-z0-9_.~=/-])",
         trigger=r"rtmp[st]?://", validator=v.stream_key,
         description="a stream key in an RTMP ingest URL (`rtmp[s]://host[:port]/app/<stream key>`: the last "
                     "segment after the application's path, as Twitch, YouTube, Amazon IVS and OBS's custom "
                     "server write it); random, not a plain stream name"),
    Rule("stream_key", "SECRET",
         r"(?:^|[^A-Za-z0-9_])(?P<v>live_\d{6,12}_[A-Za-z0-9]{30}|sk_[a-z]{2}-[a-z]{4,9}-\d_[A-Za-z0-9]{36})"
         r"(?:$|[^A-Za-z0-9_])",
         trigger=r"live_\d{6}|sk_[a-z]{2}-[a-z]{4,9}-\d_", validator=v.issuer_token,
         description="stream keys of a documented format, anywhere: Twitch's (`live_` + the channel's user id + "
                     "`_` + 30 letters and digits) and Amazon IVS's (`sk_` + the AWS region + `_` + 36)"),
    Rule("discord_bot_token", "TOKEN",
         r"(?:^|[^A-Za-z0-9_.-])(?P<v>[MNO][A-Za-z0-9_-]{22,26}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40})"
         r"(?:$|[^A-Za-z0-9_.-])",
         trigger=r"[MNO][A-Za-z0-9_-]{22}[A-Za-z0-9_-]{0,4}\.[A-Za-z0-9_-]{6}\.", validator=v.discord_token,
         description="Discord bot tokens, anywhere (`client.run(\"…\")`, a pasted line): the bot's user id in "
                     "base64, `.`, a timestamp of six, `.`, an HMAC of 27 to 38"),
    Rule("stripe_webhook_secret", "SECRET", r"\bwhsec_[A-Za-z0-9]{24,}", trigger=r"whsec_",
         description="Stripe webhook signing secrets"),
    Rule("twilio_secret", "SECRET",
         r"\b(?:AC|SK)[0-9a-f]{32}(?:\\?[\"']?[ \t,:;]|\\?\r?\n|\\n){1,4}"
         r"(?:(?i:auth[ _-]?token|api[ _-]?secret|token|secret)\\?[\"']?(?:[ \t,:;=]|\\?\r?\n|\\n){1,4})?\\?[\"']?"
         r"(?P<v>[A-Za-z0-9]{32})(?:$|[^A-Za-z0-9])",
         trigger=r"(?:AC|SK)[0-9a-f]{32}", validator=v.twilio_secret,
         description="Twilio auth tokens and API key secrets beside their AC/SK id (-u AC…:token, "
                     "Client(\"AC…\", \"token\"))"),
    Rule("razorpay_secret", "SECRET",
         r"\brzp_(?:live|test)_[A-Za-z0-9]{14}(?:\\?[\"']?[ \t,:;)/]|\\?\r?\n|\\n){1,4}"
         r"(?:(?:(?i:key[ _-]?secret|secret)|[^\x00-\x7f]{1,16})\\?[\"']?(?:[ \t,:;=/]|\\?\r?\n|\\n){1,4})?\\?[\"']?"
         r"(?P<v>[A-Za-z0-9]{24})(?![A-Za-z0-9])",
         trigger=r"rzp_(?:live|test)_[A-Za-z0-9]{14}", validator=v.labelled_key,
         description="a Razorpay key secret (24 letters and digits) beside its `rzp_live_`/`rzp_test_` key id "
                     "(`razorpay.Client(auth=(\"rzp_…\", \"…\"))`, `key id rzp_…, secret …` in any language)"),
    Rule("security_credential", "SECRET",
         r"\bSecurityCredential(?:\\*[\"'])?[ \t]*[:=][ \t]*(?:\\*[\"'])?(?P<v>[A-Za-z0-9+/]{64,1024}={0,2})"
         r"(?![A-Za-z0-9+/=])",
         trigger=r"SecurityCredential", validator=v.labelled_key,
         description="Safaricom Daraja's `SecurityCredential` (B2C, B2B, reversal and status requests: the "
                     "initiator's password encrypted with M-Pesa's public key, base64), in JSON escaped once or more "
                     "too"),
    Rule("subscription_key", "API_KEY",
         r"\b[A-Z][A-Z0-9_]{0,40}_(?:PRIMARY|SECONDARY)_KEY[ \t]*[=:][ \t]*\\?[\"']?(?P<v>[0-9a-fA-F]{32})"
         r"(?![0-9A-Za-z])",
         trigger=r"_(?:PRIMARY|SECONDARY)_KEY", validator=v.hex_key,
         description="an API gateway subscription's primary or secondary key (Azure API Management's, as MTN MoMo "
                     "issues them: 32 hex) in an environment variable (`MOMO_COLLECTION_PRIMARY_KEY=…`); a "
                     "database's primary key is no variable of 32 hex"),
    Rule("labelled_key", "SECRET",
         r"(?<![A-Za-z0-9])(?i:integrity|merchant)[ _-]?(?i:salt)\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?"
         r"(?P<v>[A-Za-z0-9]{16,128})(?![A-Za-z0-9])",
         trigger=r"(?i:integrity|merchant)[ _-]?(?i:salt)", validator=v.labelled_key,
         description="a payment gateway's hashing secret that its docs call a salt: JazzCash's `Integrity Salt` "
                     "(the HMAC key of `pp_SecureHash`), PayU's merchant salt"),
    Rule("labelled_key", "SECRET",
         r"(?:^|[^A-Za-z0-9])(?i:(?:p24|przelewy24)[_ -]?crc(?:[_ -]?key)?|klucz[ \t]+(?:do[ \t]+)?crc|"
         r"crc[ _-]?(?:key|klucz))\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?(?P<v>[0-9A-Fa-f]{16})(?![0-9A-Za-z])",
         trigger=r"(?i:p24[_ -]?crc|przelewy24[_ -]?crc|klucz[ \t]+(?:do[ \t]+)?crc|crc[ _-]?(?:key|klucz))",
         validator=v.crc_key,
         description="Przelewy24's CRC key (16 hex: the salt of a transaction's `sign`) under the names its panel "
                     "and plugins give it (`Klucz do CRC`, `CRC key`, `P24_CRC`); a bare `crc:` is a checksum's"),
    Rule("labelled_key", "SECRET",
         r"(?:^|[^A-Za-z0-9])(?i:second|drugi|druh[\u00fdy])[ _-]?(?i:key|klucz|kl[\u00edi][\u010dc])"
         r"(?:[ \t]*\((?i:md5)\))?\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?(?P<v>[0-9a-f]{32}|[0-9A-F]{32})(?![0-9A-Za-z])",
         trigger=r"(?i:second[ _-]?key|drugi[ _-]?klucz|druh[ýy][ _-]?kl)", validator=v.hex_key,
         description="PayU's second key (32 hex: the MD5 signature key of its notifications), as its panel labels "
                     "it (`Second key (MD5)`, `Drugi klucz (MD5)`, `Druhý klíč (MD5)`) and configs name it "
                     "(`second_key`)"),
    Rule("twilio_sid", "API_KEY", r"\b(?:AC|SK)[0-9a-f]{32}\b", trigger=r"(?:AC|SK)[0-9a-f]{32}",
         validator=v.twilio_secret,
         description="Twilio account and API key SIDs (AC/SK + 32 hex): half of a credential pair"),
    Rule("teams_webhook", "WEBHOOK",
         r"(?:webhook\.office\.com|outlook\.office(?:365)?\.com)/webhook(?:b2)?/(?P<v>[A-Za-z0-9@/_-]{20,})",
         trigger=r"\.office(?:365)?\.com/webhook",
         description="Microsoft Teams incoming-webhook URLs (<tenant>.webhook.office.com/webhookb2/…, the older "
                     "outlook.office.com/webhook/…: the path after the host)"),
    Rule("url_secret", "SECRET",
         r"[?&;](?i:sig|signature|x-amz-signature|x-goog-signature|x-amz-security-token|token|access_token|"
         r"api[_-]?key|key|secret|client_secret|code|appid|app[_-]?key|private[_-]?token|auth[_-]?token)=(?P<v>[A-Za-z0-9%_.~+/-]{16,4096}={0,2})",
         trigger=r"[?&;](?i:sig|signature|x-amz-signature|x-goog-signature|x-amz-security-token|token|access_token|"
                 r"api[_-]?key|key|secret|client_secret|code|appid|app[_-]?key|private[_-]?token|auth[_-]?token)="
                 r"[A-Za-z0-9%_.~+/-]{16}",
         validator=v.labelled_key,
         description="secrets in URL query parameters (sig=, signature=, X-Amz-Signature=, token=, key=, "
                     "OpenWeatherMap's appid=, app_key=, GitLab's private_token=): Logic "
                     "Apps and Power Automate workflow URLs, SAS and presigned URLs"),
    Rule("slack_webhook", "WEBHOOK", r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<v>[A-Za-z0-9_/-]{20,})",
         trigger=r"hooks\.slack\.com/", description="Slack incoming-webhook URLs (the path after the host)"),
    Rule("discord_webhook", "WEBHOOK",
         r"discord(?:app)?\.com/api/(?:v\d+/)?webhooks/(?P<v>\d{15,22}/[A-Za-z0-9_-]{20,})",
         trigger=r"discord(?:app)?\.com/api/", description="Discord webhook URLs (the id and token)"),
    Rule("nabu_casa_webhook", "WEBHOOK", r"hooks\.nabu\.casa/(?P<v>[A-Za-z0-9_=-]{20,})", trigger=r"hooks\.nabu\.casa/",
         description="Home Assistant Cloud webhooks (hooks.nabu.casa/<token>: the path is the credential)"),
    Rule("zapier_webhook", "WEBHOOK", r"hooks\.zapier\.com/hooks/catch/(?P<v>\d+/[A-Za-z0-9]+)",
         trigger=r"hooks\.zapier\.com/", description="Zapier catch hooks (the account id and hook key)"),
    Rule("ifttt_webhook", "WEBHOOK", r"maker\.ifttt\.com/(?:[^\s\"'\\]{0,80}/)?with/key/(?P<v>[A-Za-z0-9_-]{16,})",
         trigger=r"maker\.ifttt\.com/", description="IFTTT Maker webhook keys"),
    Rule("make_webhook", "WEBHOOK", r"hook\.(?:[a-z0-9]+\.)?(?:make|integromat)\.com/(?P<v>[A-Za-z0-9]{20,})",
         trigger=r"hook\.(?:[a-z0-9]+\.)?(?:make|integromat)\.com/",
         description="Make (Integromat) webhook tokens, hook.<region>.make.com/<token>"),
    Rule("chat_webhook", "WEBHOOK",
         r"/hooks/(?P<v>[A-Za-z0-9]{17,}/[A-Za-z0-9]{20,}|[A-Za-z0-9]{20,})(?:$|[^A-Za-z0-9])",
         trigger=r"/hooks/[A-Za-z0-9]{17}", validator=v.labelled_key,
         description="incoming-webhook ids of Mattermost (/hooks/<26>) and Rocket.Chat (/hooks/<17-char id>/<token>)"),
    Rule("webhook_path", "WEBHOOK",
         r"/(?i:web)?hooks?/(?:[A-Za-z][A-Za-z0-9.-]{0,30}/){0,3}?(?P<v>[A-Za-z0-9_-]{24,256})(?![A-Za-z0-9_-])",
         trigger=r"/(?i:web)?hooks?/", validator=v.path_token,
         description="the secret segment of any incoming webhook's URL (Webex's /v1/webhooks/incoming/<token>, "
                     "n8n's, a team's own /webhooks/<token>): a random one, not a word or a UUID"),
    Rule("chat_webhook", "WEBHOOK",
         r"(?:open\.(?:feishu\.cn|larksuite\.com)/open-apis/bot/v2/hook/|qyapi\.weixin\.qq\.com/cgi-bin/webhook/send\?key=|"
         r"oapi\.dingtalk\.com/robot/send\?access_token=)(?P<v>[A-Za-z0-9-]{20,128})",
         trigger=r"open\.(?:feishu\.cn|larksuite\.com)/open-apis/bot/|qyapi\.weixin\.qq\.com/cgi-bin/webhook/|"
                 r"oapi\.dingtalk\.com/robot/", validator=v.issuer_token,
         description="bot webhooks of Feishu/Lark (open-apis/bot/v2/hook/<id>), WeCom (webhook/send?key=) and "
                     "DingTalk (robot/send?access_token=): the hook's id or token"),
    Rule("chat_webhook", "WEBHOOK",
         r"integrations\.zoom\.us/chat/webhooks/incomingwebhook/(?P<v>[A-Za-z0-9_-]{16,64})(?![A-Za-z0-9_-])",
         trigger=r"integrations\.zoom\.us/chat/webhooks/", validator=v.labelled_key,
         description="Zoom Team Chat's incoming-webhook URLs (integrations.zoom.us/chat/webhooks/incomingwebhook/"
                     "<endpoint>: the endpoint, 22 characters, shorter than webhook_path reads)"),
    Rule("aws_secret_key", "SECRET",
         rf"(?:(?:(?i:aws)?[_ .-]?(?i:secret)[_ .-]?(?i:access)?[_ .-]?(?i:key)|{_AWS_SECRET_ROMANCE})"
         rf"(?:\\?[\"'`]?\]?\s*(?::=|[:=,|])\s*{_OPEN}|[ \t]+(?:(?i:is)[ \t]+)?{_OPEN})|"
         r"(?:AKIA|ASIA)[A-Z0-9]{16}(?:\\?[\"']?[ \t,:;|/=]|(?:\\?\r?\n|\\n)(?:[ \t]{0,4}>){0,4}){1,6}\\?[\"']?|"
         r"(?:AKIA|ASIA)[A-Z0-9]{16}[^\n]{0,40}?[^A-Za-z0-9/+])"
         r"(?P<v>[A-Za-z0-9/+]{40})(?:$|[^A-Za-z0-9/+=])",
         trigger=rf"(?i:secret)[_ .-]?(?i:access)?[_ .-]?(?i:key)|AKIA|ASIA|{_AWS_SECRET_ROMANCE}",
         validator=v.aws_secret,
         description="AWS secret access keys after their label (in English, or as AWS's Spanish, Portuguese, "
                     "Italian and French pages name it) or beside an AKIA/ASIA key id"),
    Rule("connection_string_key", "SECRET",
         r"(?:(?i:account[_ ]?key|shared[_ ]?access[_ ]?key|access[_ ]?key)[ \t]*=[ \t]*)"
         r"(?P<v>[A-Za-z0-9+/%]{20,}={0,2})",
         trigger=r"(?i:account[_ ]?key|shared[_ ]?access[_ ]?key|access[_ ]?key)[ \t]*=",
         validator=v.high_entropy_secret,
         description="keys in connection strings (Azure AccountKey=, SharedAccessKey=, AccessKey=)"),
    Rule("sendgrid_key", "API_KEY", r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}", trigger=r"SG\.",
         description="SendGrid keys"),
    Rule("notify_key", "API_KEY",
         rf"[A-Za-z0-9_]-{_UUID4}-(?P<v>{_UUID4})"
         r"(?:$|[^A-Za-z0-9-])",
         trigger=rf"-{_UUID4}-{_UUID4}",
         description="GOV.UK Notify API keys anywhere (`NotificationsAPIClient(\"…\")`): the key's name, the "
                     "service id and the secret id, each id a random UUID, joined by `-` as Notify writes them; the "
                     "secret the last UUID"),
    Rule("jwt", "JWT", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", trigger=r"eyJ",
         validator=v.not_sample_jwt,
         description="JSON Web Tokens; not a documentation sample, signed with the debugger's published default "
                     "secret (jwt.io's `your-256-bit-secret`)"),
    Rule("api_token", "TOKEN",
         r"(?:^|[^A-Za-z0-9_.+/=-])(?P<v>(?:[a-z]{2,10}|[A-Z]{2,10})(?:[._-](?:[a-z]{2,10}|v\d{1,2}))*[._-]"
         r"[A-Za-z0-9_-]{32,512}(?:\.[A-Za-z0-9_-]{16,86})?)(?:$|[^A-Za-z0-9_+/=.-]|\.(?:$|[^A-Za-z0-9]))",
         trigger=r"[A-Za-z][._-][A-Za-z0-9_-]{32}", validator=v.prefixed_token,
         description="API tokens of any issuer that prefixes them (Shopify shpat_, Linear lin_api_, DigitalOcean "
                     "dop_v1_, Mailgun key-, PyPI pypi-, Doppler dp.pt., Postman PMAK-, …): a short prefix, then 32+ "
                     "random characters, anywhere in text; the net under the known providers' rules"),
    Rule("bearer_token", "TOKEN", r"(?i:\bbearer)\s+(?P<v>[A-Za-z0-9._~+/=-]{16,})", trigger=r"(?i:bearer)\s",
         validator=lambda s: bool(re.search(r"\d", s)) and v.entropy(s) >= 3.0,
         description="bearer tokens in Authorization headers"),
    Rule("basic_auth", "TOKEN",
         r"(?i:authorization)\\?[\"']?\s*[:=]\s*\\?[\"']?(?i:basic)\s+(?P<v>[A-Za-z0-9+/]{8,}={0,2})",
         trigger=r"(?i:authorization)", description="HTTP basic credentials"),
    Rule("basic_auth", "TOKEN", r"(?i:\bbasic)[ \t]+(?P<v>[A-Za-z0-9+/]{8,}={0,2})(?:$|[^A-Za-z0-9+/=])",
         trigger=r"(?i:basic)[ \t]+[A-Za-z0-9+/]{8}", validator=v.basic_credentials,
         description="HTTP basic credentials wherever `Basic` precedes them (HAR, header maps): base64 of "
                     "user:password"),
    Rule("basic_auth", "TOKEN",
         r"(?:\\?[\"']|\b)_?auth\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?(?P<v>[A-Za-z0-9+/]{8,}={0,2})(?:$|[^A-Za-z0-9+/=])",
         trigger=r"(?:[\"']|\b)_?auth\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?[A-Za-z0-9+/]{8}",
         validator=v.basic_credentials,
         description="basic credentials under an `auth` key, base64 of user:password as registries' client files "
                     "keep them (Docker's config.json `\"auths\": {host: {\"auth\": …}}`, .npmrc's `_auth=`)"),
    Rule("basic_auth", "TOKEN",
         r"(?i:basic[_ -]?auth(?:orization)?)[A-Za-z_]*\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?"
         r"(?P<v>[A-Za-z0-9+/]{8,}={0,2})(?:$|[^A-Za-z0-9+/=])",
         trigger=r"(?i:basic[_ -]?auth)", validator=v.basic_credentials,
         description="basic credentials under a name that says so (fastlane match's "
                     "`MATCH_GIT_BASIC_AUTHORIZATION=…`, `basic_auth: …`): base64 of user:password"),
    Rule("basic_auth", "TOKEN",
         r"(?:\bauth[ \t]*=[ \t]*\(|\b(?:HTTPBasicAuth|HTTPDigestAuth|BasicAuth|DigestAuth)\()[ \t]*"
         r"\\?[\"'][^\"'\\\s]{1,64}\\?[\"'][ \t]*,[ \t]*\\?[\"'](?P<v>[^\"'\\\s]{4,128})\\?[\"'][ \t]*\)",
         trigger=r"\bauth[ \t]*=[ \t]*\(|(?:Basic|Digest)Auth\(",
         validator=lambda s: v.password(s) or v.connection_password(s) and not re.search(r"(?i:token|key)", s),
         description="the password of a Python HTTP client's basic or digest credentials, written as literals: "
                     "requests' and httpx's `auth=(\"user\", \"password\")` tuple, `HTTPBasicAuth(\"user\", "
                     "\"password\")`, aiohttp's `BasicAuth(…)`; a literal there, so an identifier's shape "
                     "passes too (`Altai_qkzRVT`), as in a connection string's password field"),
    Rule("http_auth", "TOKEN",
         rf"(?:(?i:(?:proxy-)?authorization){_HEADER_AFTER}[A-Za-z][A-Za-z0-9_.-]{{1,30}}[ \t]+|{_AUTH_BLOCK})"
         rf"(?P<v>{_TOKEN68}(?:,[ \t]?{_TOKEN68})*)(?:$|[^A-Za-z0-9._~+/=-])",
         trigger=r"(?i:authorization)|credentials:", validator=v.labelled_key,
         description="credentials after any scheme in an Authorization or Proxy-Authorization header (RFC 7235: "
                     "`Token`, Okta `SSWS`, Elastic `ApiKey`, `FlyV1`, …), as raw requests, curl, fetch, "
                     "PowerShell, header maps and HAR write them, and in Prometheus' `authorization` block "
                     "(`type:` then `credentials:`)"),
    Rule("http_auth", "TOKEN",
         rf"(?:(?i:digest)(?:[ \t]+|[ \t]*\\?\r?\n[ \t]*credentials:[ \t]*)(?:{_AUTH_PARAM}[ \t]*,[ \t]*){{0,12}}"
         r"(?i:response)|"
         r"(?:^|[^A-Za-z0-9_-])(?i:signature|oauth_signature))[ \t]*=[ \t]*\\?\"?"
         r"(?P<v>[A-Za-z0-9+/_%-]{16,512}={0,2})",
         trigger=r"(?i:response|signature)[ \t]*=[ \t]*\\?\"{0,2}[A-Za-z0-9+/_%-]{16}", validator=v.labelled_key,
         description="the credential among an auth scheme's parameters (RFC 7235 auth-params): Digest's "
                     "`response=` (RFC 7616), `signature=` of AWS SigV4, HMAC and draft-cavage HTTP signatures, "
                     "OAuth 1.0's `oauth_signature=`"),
    Rule("credential_header", "SECRET", rf"{_CRED_HEADER}{_HEADER_AFTER}(?P<v>[A-Za-z0-9+/_.=~-]{{16,512}})",
         trigger=r"(?i:-key|-token|-secret|-signature|-auth|-pat|apikey)", validator=v.labelled_key,
         description="credentials in HTTP headers (X-Api-Key, X-Auth-Token, X-*-Token, DD-API-KEY) as raw "
                     "requests, curl -H, header maps and HAR write them"),
    Rule("session_cookie", "TOKEN",
         rf"(?:^|[^A-Za-z0-9_.-]){_COOKIE_NAME}=(?P<v>(?:\d{{1,10}}\|)?[A-Za-z0-9%._~+/:-]{{15,4095}}[A-Za-z0-9%_~+/=-]"
         r"(?:\|\d{9,11}\|[A-Za-z0-9_+/=-]{20,128}|(?:\|{1,2}[A-Za-z0-9%._~+/:-]{1,4095}[A-Za-z0-9%_~+/=-]){1,4})?)",
         trigger=r"(?:(?i:sess|sid|token|auth|jwt|remember)[A-Za-z_-]*(?:\.[A-Za-z0-9]{1,16})?|"
                 r"AspNetCore\.[A-Za-z.]+|_oauth2_proxy(?:_\d)?|wordpress_(?:logged_in|sec)_[0-9a-f]{32}|"
                 r"steamLoginSecure|_shibsession_[0-9A-Za-z]{8,64}|SimpleSAML(?:SessionID|AuthToken))="
                 r"(?:\d{1,10}\|)?[A-Za-z0-9%._~+/:-]{15}",
         validator=v.labelled_key, reject_label=_HEX_NOT_KEY,
         description="session and credential cookies (session=, JSESSIONID=, connect.sid=, auth_token=, "
                     "csrftoken=) and such pairs in query strings; a Laravel Sanctum token's `id|` prefix with it, "
                     "oauth2-proxy's `|timestamp|signature` after it, and Steam's `id||token` as decoded"),
    Rule("session_cookie", "TOKEN",
         rf"(?:(?:^|[^A-Za-z0-9_.-])[A-Za-z0-9_.-]*(?i:cookies?)\\?[\"']?\]?[ \t]*[:=][ \t]*\\?[\"']?|"
         rf"(?i:cookies)(?:\\?[\"'][^{{}}\n]{{0,40}}?[:=]|[ \t]*=)[ \t]*\{{[^{{}}]{{0,200}}?"
         rf"\\?[\"']{_COOKIE_NAME}\\?[\"'][ \t]*:[ \t]*\\?[\"'])"
         r"(?P<v>[A-Za-z0-9%._~+/:-]{14,4095}[A-Za-z0-9%_~+/-]={0,2})(?![A-Za-z0-9%._~+/:=-])",
         trigger=r"(?i:cookie|sess|sid|token|auth|jwt|remember)[A-Za-z_-]*\\?[\"']?\]?[ \t]*[:=][ \t]*\\?[\"']?"
                 r"[A-Za-z0-9%._~+/:-]{15}|(?i:cookie)\\?[\"']?[ \t]*[:=][^\n]{0,200}?=[^\s;=\"'\\]{15}|"
                 r"<Cookie [^\s=]+=|Cookie\(version=|[ \t](?:-b|--cookie)[ \t]+\\?[\"']?[^\s=]+=[^\s;=\"'\\]{15}|"
                 r"\\?[\"'](?:domain|httpOnly|hostOnly|expiry|sameSite)\\?[\"'][ \t]*:",
         validator=v.labelled_key, reject_label=_HEX_NOT_KEY,
         description="a session cookie under a key that says cookie or its name in a `cookies=` dict, as config "
                     "and code keep them (`SESSION_COOKIE=…`, `session_cookie = \"…\"`, `\"sessionCookie\": …`, "
                     "`cookies={\"session\": …}`), or in the object a JSON record that says cookies holds (a browser "
                     "tool's `{\"browser\": \"cookies\", \"items\": {\"sessionid\": …}}`)"),
    Rule("session_cookie", "TOKEN",
         r"(?i:\bsession[ _-]?cookie)[ \t]*:?[ \t]*\\?[\"'`]?[A-Za-z0-9_.-]{1,64}="
         r"(?P<v>[A-Za-z0-9%._~+/:-]{14,4095}[A-Za-z0-9%_~+/=-])(?![A-Za-z0-9%._~+/:=-])",
         trigger=r"(?i:session[ _-]?cookie)[ \t]*:?[ \t]*[\\\"'`]{0,2}[A-Za-z0-9_.-]+=", validator=v.labelled_key,
         reject_label=_HEX_NOT_KEY,
         description="a cookie's `name=value` after the words session cookie, whatever its name (Magento's "
                     "`admin`, a shop's own)"),
    Rule("session_cookie", "TOKEN",
         r"(?<![A-Za-z0-9_.-])(?P<v>CfDJ8[A-Za-z0-9_-]{40,4096}|eyJpdiI6[A-Za-z0-9+/_%=-]{40,4096}|"
         r"\.?e[yJ][A-Za-z0-9_-]{6,1024}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27}|"
         r"s(?:%3[Aa]|:)[A-Za-z0-9_-]{24,64}\.[A-Za-z0-9+/]{27,43}(?:%3[Dd]|=){0,2}|"
         r"Fe26\.2\*[A-Za-z0-9_-]*\*[A-Za-z0-9_*-]{40,4096})(?![A-Za-z0-9_-])",
         trigger=r"CfDJ8|eyJpdiI6|e[yJ][A-Za-z0-9_-]{6}[A-Za-z0-9_-]*\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27}|"
                 r"s(?:%3[Aa]|:)[A-Za-z0-9_-]{24}[A-Za-z0-9_-]*\.[A-Za-z0-9+/]{27}|Fe26\.2\*",
         description="session cookies by their frameworks' formats, anywhere: ASP.NET Core's Data Protection "
                     "payloads (`CfDJ8…`: auth cookies, antiforgery tokens), Laravel's encrypted cookies (`eyJpdiI6…`, "
                     "base64 of `{\"iv\":`), Flask's and itsdangerous' signed sessions (payload, 6-character "
                     "timestamp, 27-character signature; `.eJ…` compressed), express-session's signed ids (`s:` or "
                     "`s%3A`, the id, `.`, its HMAC), hapi's iron-sealed cookies (`Fe26.2**…`)"),
    Rule("session_cookie", "TOKEN",
         rf"{TAB}(?:TRUE|FALSE){TAB}[^\t\n\\]{{0,200}}{TAB}(?:TRUE|FALSE){TAB}\d{{1,12}}{TAB}{_COOKIE_NAME}{TAB}"
         r"(?P<v>[A-Za-z0-9%._~+/:=-]{15,511})",
         trigger=rf"{TAB}(?:TRUE|FALSE){TAB}", validator=v.labelled_key,
         description="session cookies in a Netscape cookie jar (curl's `-c`/`-b` files: domain, subdomains, path, "
                     "secure, expiry, name, value, tab-separated)"),
    Rule("session_cookie", "TOKEN",
         rf"(?:^|[^A-Za-z0-9_.-]){_COOKIE_NAME}{TAB}(?P<v>[A-Za-z0-9%._~+/:=-]{{15,511}}){TAB}"
         r"\.?[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*"
         rf"(?::\d{{1,5}})?{TAB}/",
         trigger=rf"{TAB}\.?[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*(?::\d{{1,5}})?{TAB}/", validator=v.labelled_key,
         description="session cookies in a browser devtools' cookie table as copied (name, value, domain, path, "
                     "expires, …: tab-separated, the name first), the row pasted into a line of its own or after a "
                     "note's prefix (`[log] sessionid\\t…`, a CSV cell, a table's cell)"),
    Rule("session_cookie", "TOKEN",
         rf"(?:^|[^A-Za-z0-9_.-]){_COOKIE_NAME}{TAB}(?P<v>[A-Za-z0-9%._~+/:=-]{{15,511}}){TAB}"
         r"\.?[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?::\d{1,5})?(?=[\t\r\n\]<\"'\\]|$)",
         trigger=rf"{TAB}[A-Za-z0-9%._~+/:=-]{{15}}[A-Za-z0-9%._~+/:=-]*{TAB}\.?[A-Za-z0-9-]+\.[A-Za-z0-9-]",
         validator=v.labelled_key,
         description="session cookies in a browser devtools' cookie table copied with its first columns only "
                     "(name, value, domain: the row ends at the domain)"),
    Rule("session_cookie", "TOKEN", rf"^{_COOKIE_NAME}: \"(?P<v>[A-Za-z0-9%._~+/:=|-]{{15,4095}})\"$",
         trigger=r"(?i:sess|sid|token|auth|jwt|remember)[A-Za-z]*\\?\"[ \t]*,[ \t]*\\?\"value\\?\"|"
                 r"\\?\"name\\?\"[ \t]*:[ \t]*\\?\"[A-Za-z0-9_.-]*(?i:sess|sid|token|auth|jwt|remember)"
                 rf"|^{_COOKIE_NAME}: \"",
         validator=v.labelled_key, reject_label=_HEX_NOT_KEY,
         description="a session cookie that structure names (browser devtools' and extensions' JSON exports, "
                     "`{\"name\": \"sessionid\", \"value\": …}`, other fields between)"),
    Rule("session_cookie", "TOKEN",
         r"(?:^|[^A-Za-z0-9_.-])(?i:asp\.net_sessionid)(?:=|\\?[\"']?[ \t]*:[ \t]*\\?[\"'])(?P<v>[a-z0-5]{24})"
         r"(?![A-Za-z0-9%._~+/=-])",
         trigger=r"(?i:asp\.net_sessionid)(?:=|\\?[\"']?[ \t]*:[ \t]*\\?[\"'])[a-z0-5]{24}",
         validator=lambda s: v.entropy(s) >= 2.5,
         description="ASP.NET session state ids under their cookie's name (`ASP.NET_SessionId=`, a cookie object's "
                     "or dict's value): SessionIDManager's 24 characters of a-z and 0-5 (15 random bytes in its "
                     "base32), letters alone too, which the generic cookie rules take for a word"),
    Rule("session_cookie", "TOKEN",
         rf"'name'[ \t]*:[ \t]*'{_COOKIE_NAME}'[ \t]*,[ \t]*'value'[ \t]*:[ \t]*"
         r"'(?P<v>[A-Za-z0-9%._~+/:=-]{15,511})'",
         trigger=r"'name'[ \t]*:[ \t]*'[A-Za-z0-9_.-]*(?i:sess|sid|token|auth|jwt|remember)",
         validator=v.labelled_key, reject_label=_HEX_NOT_KEY,
         description="a session cookie as a Python dict names it (Playwright's `context.add_cookies([{'name': "
                     "'sessionid', 'value': …}])`, Selenium's `add_cookie`)"),
    Rule("session_cookie", "TOKEN",
         rf"(?i:cookies?)[A-Za-z_.]{{0,12}}\([ \t]*\\?[\"']{_COOKIE_NAME}\\?[\"'][ \t]*,[ \t]*\\?[\"']"
         r"(?P<v>[A-Za-z0-9%._~+/:=-]{15,511})\\?[\"']",
         trigger=r"(?i:cookies?)[A-Za-z_.]{0,12}\([ \t]*\\?[\"']", validator=v.labelled_key,
         reject_label=_HEX_NOT_KEY,
         description="a session cookie set in code by name and value (requests' `cookies.set('sessionid', …)`, "
                     "Express's `res.cookie(…)`, PHP's `setcookie(…)`, js-cookie's `Cookies.set(…)`)"),
    Rule("url_password", "PASSWORD",
         r"\b[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:/@\"'<>\\]{0,64}:(?P<v>[^\s@/\"'<>\\]{1,128})@",
         trigger=r"://[^\s/@]*:[^\s/@]+@", validator=v.url_password,
         description="passwords in URLs and connection strings (scheme://user:password@host)"),
    Rule("url_password", "PASSWORD",
         r"\bobswss?://[A-Za-z0-9.:\[\]-]{1,253}/(?P<v>[^\s/\"'<>\\${%][^\s/\"'<>\\]{3,127})(?:$|[\s\"'<>\\])",
         trigger=r"obswss?://", validator=v.url_password,
         description="the password of an obs-websocket URL (`obsws://host:4455/<password>`: the path is the "
                     "server's password, as obs-cli and OBS's scene-switcher plugins take it); not a reference "
                     "(`${OBS_PASSWORD}`)"),
    Rule("password", "PASSWORD",
         r"\bsteamcmd\b[^\n|;&]{0,160}?[ \t]\+login[ \t]+[^\s+\"'\\]{1,64}[ \t]+"
         r"(?:\\?\"(?P<w>[^\"\\\n]{4,128})\\?\"|(?P<v>[^\s+\"'\\][^\s\"'\\]{0,127}))",
         trigger=r"steamcmd", validator=v.password,
         description="the password of SteamCMD's `+login <user> <password>`, quoted or not (Valve's dedicated-server "
                     "tool; `+login anonymous` has none, and a `+command` after the user is none)"),
    Rule("password", "PASSWORD", rf"{_field_fill(_PW_LABEL)}{_TYPED_VALUE}", trigger=_PW_TRIGGER,
         validator=v.password,
         description="a password a browser automation call types into a field its selector names (`page.fill("
                     "'#password', …)`, `locator('input[name=\"passwd\"]').fill(…)`, `cy.get('#pwd').type(…)`, "
                     "`fill \"#password\" with \"…\"`)"),
    Rule("password", "PASSWORD",
         rf"{_typed_after(_PW)}{_TYPED_VALUE}",
         trigger=_PW_TRIGGER, validator=v.password,
         description="text a keystroke action types after its field is named, on its line or the line before "
                     "(`# focus: Password` then `xdotool type '…'`, a computer-use `{\"action\": \"type\", …}`)"),
    Rule("password", "PASSWORD",
         rf"(?:{_TYPING}|\b(?i:typed?|entered|filled(?:[ \t]+in)?)[ \t]+){_QUOTE}{_TYPED_VALUE}[^\n]{{0,24}}?"
         rf"\b(?i:into|in)\b[^\n]{{0,24}}?(?:{_PW})",
         trigger=_PW_TRIGGER, validator=v.password,
         description="text typed into a field named after it (`typed '…' into the password field`, a "
                     "computer-use type action commented `// into Passwort`)"),
    Rule("password_export", "PASSWORD",
         r"(?:^|[\s\"'>]|\\n)(?P<h>[A-Za-z0-9.-]+\.[A-Za-z]{2,}),https?://(?P=h)(?:[/:?#][^,\s]*)?,[^,\n]*,"
         r"(?P<v>[^,\n\"]{1,128}),",
         trigger=r"[a-z],https?://[a-z0-9]", validator=v.password,
         description="a row of Chrome's and Edge's password export (name, url, username, password, note: the name "
                     "is the url's host), its header gone"),
    Rule("password_export", "PASSWORD",
         r"\\?\"https?://[^\"\\\s]+\\?\",\\?\"[^\"\\\n]*\\?\",\\?\"(?P<v>[^\"\\\n]{1,128})\\?\","
         r"(?:\\?\"[^\"\\\n]*\\?\")?,(?:\\?\"[^\"\\\n]*\\?\")?,\\?\"\{[0-9a-fA-F-]{36}\}\\?\",\d{13}",
         trigger=r"\}\\?\",1\d{12}", validator=v.password,
         description="a row of Firefox's logins export (url, username, password, httpRealm, formActionOrigin, "
                     "guid, timestamps), its header gone"),
    Rule("password", "PASSWORD",
         rf"(?:^|[\s\"'`])[A-Za-z0-9_.-]*{_PW_LABEL}[ \t]*=[ \t]*"
         rf"(?P<v>(?:[^\s\"'`\\&]|&(?![A-Za-z_][\w.\[\]-]{{0,40}}=)){{3,127}}[^\s\"'`\\,;)\]}}.&])",
         trigger=r"(?i:pass|pwd)[A-Za-z]*[ \t]*=[ \t]*[^\s\"'`\\,;(){}\[\]<>]*[,;(){}\[\]<>][^\s\"'`\\]",
         validator=v.password,
         description="unquoted passwords after `name=` with symbols in them (env files, Java properties, log "
                     "key=value)"),
    Rule("password", "PASSWORD",
         rf"(?:{_PW_LABEL}{_PW_AFTER}|\b(?i:pass)(?:[ \t]*=|{_WHOSE}?[ \t]+(?i:is|ist|est|es|è|é|är|er)[ \t])[ \t]*|"
         rf"{_PW_SHELL}|"
         rf"(?i:key|name)=\\?[\"'][^\"'\\\n]{{0,40}}{_PW_LABEL}\\?[\"'][ \t]+(?i:value)=)"
         r"(?:\\?\"(?P<v>[^\"\\\n]{4,128})\\?\"|'(?P<w>[^'\\\n]{4,128})'|"
         rf"{_OPEN}(?P<x>{_PW_CHAR}{{1,128}}(?:[,;]{_PW_WORD}{{1,128}})*)(?:$|[\s\"'`,;(){{}}\[\]<>\\&{_CJK_STOP}]))",
         trigger=_PW_TRIGGER, validator=v.password,
         description="passwords after a password label (env, YAML, JSON, CLI flags, connection strings, prose); "
                     "a quoted one whole, symbols and spaces included"),
    Rule("password", "PASSWORD",
         rf"(?:^|[\s:\"'`>\[])[A-Za-z0-9_.-]*{_PW_LABEL}{_GLOSS}?(?:{_LEADER}|[ \t]+)"
         rf"(?P<v>[^\s\"'`\\(){{}}\[\]<>]{{7,127}}"
         r"[^\s\"'`\\(){}\[\]<>,;.])(?:$|[\s\"'`\\(){}\[\]<>,;.])",
         trigger=_PW_TRIGGER, validator=v.bare_password,
         description="a password after its label and spaces alone (a SWIFT free-text field `:70:passord X`, "
                     "fixed-width records), its gloss in parentheses or a form's dot leader between (`db password "
                     "(salasana) X`): letters and digits, 8+ characters, not code"),
    Rule("password", "PASSWORD",
         rf"{_PW_PROSE}{_OPEN}(?P<v>[^\s\"'`<>\\(){{}}\[\]-][^\s\"'`<>\\(){{}}\[\]{_CJK_STOP}]{{6,126}}"
         r"[^\s\"'`<>\\(){}\[\].,;:!?])",
         trigger=_PW_TRIGGER, validator=v.bare_password,
         description="a password in prose, in any language of the label words: the label, up to four words "
                     "(\"for bob\", \"van root\"), then `:` or \"is\" (`är`, `je`, `είναι`, `היא`), or a particle "
                     "glued to it (`密码是`, `비밀번호는`); letters and digits, 8+ characters"),
    # Printable ASCII but quotes and the backslash: what password generators draw from.
    Rule("password", "PASSWORD",
         rf"{_PW_PROSE}(?P<v>[!#-&(-\[\]-_a-~]{{8,128}})(?:$|[\s\"'`\\])",
         trigger=_PW_TRIGGER, validator=v.symbol_password,
         description="a generated password in prose whose brackets, braces or semicolons end a value elsewhere "
                     "(`Password: t]u]$De:Io]=gP!`, `密码：[biv0l;{.o^0c`): the whole run up to a space"),
    Rule("password", "PASSWORD",
         rf"(?:{_PW})[^\n]{{0,60}}?[\s\"'`:=>(\[,/](?P<v>{_NEAR_PASSWORD})(?=\.?(?:$|[\s\"'`\\,;)\]}}<]))",
         trigger=_PW_TRIGGER, validator=v.near_password, reject_label=r"\$[0-9a-z]{1,3}\$|ENC\[",
         description="a password a few words after its label on the same line, whatever stands between (\"the "
                     "password, as requested: …\", \"Kennwort für den Zugang (gültig 24 h) …\"): a token of lower "
                     "and upper case, a digit and a symbol, or a generator's passphrase of three words or more and "
                     "a number"),
    Rule("password", "PASSWORD",
         r"(?:(?m:^)|\\?\")(?:[0-9_.-]*[A-Za-z][A-Za-z0-9_.-]*|\*|\[[0-9A-Fa-f:]+\]):(?:\d{1,5}|\*):"
         r"[^\s:\\]{1,64}:[^\s:\\]{1,64}:(?P<v>(?:[^\s:\\]|\\[:\\]){1,128})\\?(?m:$)",
         trigger=r":(?:\d{1,5}|\*):[^\s:]+:[^\s:]+:[^\s:]",
         validator=v.password,
         description="the password of a PostgreSQL password file line (`.pgpass`: host:port:database:user:password, "
                     "`*` for any; `\\:` escapes a colon)"),
    Rule("password", "PASSWORD",
         rf"8=FIXT?\.[^\n]{{0,2000}}?{_FIX_SEP}554=(?P<v>{_FIX_VALUE})|"
         r"\bISA(?P<sep>[*|^~:])[^*|^~:\n]{2}(?P=sep)[^*|^~:\n]{10}(?P=sep) ?01 ?(?P=sep)"
         r"(?P<w>[^\x01|^~*:\n]{1,128}?) *(?:[\x01|^~*:\n]|$)",
         trigger=r"(?:[\x01|^]|\^A)554=|ISA[*|^~:]", validator=v.password,
         description="passwords in the fields interchange formats define for one: a FIX message's tag 554 Password "
                     "(SOH, `|`, `^` or `^A` between fields, as logs print them), an X12 interchange header's ISA04 "
                     "Security Information when ISA03 is `01` (a password)"),
    Rule("password", "PASSWORD",
         r"(?:\b553=\S{1,64}|\b35=A)(?:[ \t]+\d{1,5}=\S{0,64}){0,12}?[ \t]+(?:554|925)=(?P<v>\S{1,128})|"
         rf"(?:\b553=[^\x01|^\s]{{1,64}}|\b35=A)(?:{_FIX_SEP}\d{{1,5}}=[^\x01|^\n]{{0,64}}){{0,12}}?{_FIX_SEP}"
         rf"(?:554|925)=(?P<w>{_FIX_VALUE})",
         trigger=r"(?:553=\S|35=A(?:[\x01|^ \t]|\^A))", validator=v.password,
         description="a FIX Logon's tag 554 Password or 925 NewPassword after its 553 Username or its `35=A`, as "
                     "people and logs write the fields with no `8=FIX` header: SOH, `|`, `^` or `^A` between them, "
                     "or spaces (`Logon 553=desk 554=…`: the password then ends at a space alone)"),
    Rule("password", "PASSWORD",
         r"(?:\bjdbc:[a-z0-9]+:[^\s\"'`\\]{0,300}?[?&;](?i:password)=|"
         r"\b(?i:driver|server|data source|dsn)[ \t]*=[^\n\"]{0,300}?;[ \t]*(?i:pwd|password)[ \t]*=[ \t]*)"
         r"(?P<v>\{[^}\n]{1,128}\}|[^;&\s\"'`\\{]{4,128})(?=$|[;&\s\"'`\\])",
         trigger=r"(?i:[?&;][ \t]*(?:pwd|password)[ \t]*=)",
         validator=v.connection_password,
         description="the password of a JDBC URL (`jdbc:postgresql://host/db?user=u&password=…`) or of an ODBC or "
                     "ADO.NET connection string (`Driver={…};Server=…;Uid=u;Pwd=…;`, braced `{…}` too), read as a "
                     "literal there even when shaped like an identifier"),
    Rule("password", "PASSWORD",
         r"(?:\bjdbc:oracle:(?:thin|oci8?):|\bsqlplus(?:[ \t]+-[A-Za-z]+)*[ \t]+)[A-Za-z0-9_$#.\\\"]{1,64}/"
         r"(?P<v>[^\s@/\"'\\]{1,128})@",
         trigger=r"jdbc:oracle:|sqlplus", validator=v.password,
         description="Oracle's `user/password@` connect form (JDBC thin and OCI URLs, `sqlplus user/pw@db`)"),
    Rule("password", "PASSWORD",
         r"(?i:identified)[ \t]+(?:(?i:with)[ \t]+[\w-]+[ \t]+)?(?i:by)[ \t]+"
         r"(?:\\?'(?P<v>[^'\\\s]{4,128})\\?'|\\?\"(?P<w>[^\"\\\s]{4,128})\\?\"|(?P<x>[^\s'\";,)\\]{4,128}))",
         trigger=r"(?i:identified[ \t])", validator=v.password,
         description="SQL passwords after `IDENTIFIED BY` (`CREATE USER … IDENTIFIED BY 'X'`, MySQL and Oracle)"),
    Rule("password", "PASSWORD",
         r"\bConvertTo-SecureString[ \t]+(?:-String[ \t]+)?\\?[\"'](?P<v>[^\"'\\\n]{1,128})\\?[\"'][ \t]+-AsPlainText",
         trigger=r"ConvertTo-SecureString", validator=v.password,
         description="a password PowerShell turns into a SecureString from plain text (`ConvertTo-SecureString \"…\" "
                     "-AsPlainText`): a rule of its own, as a `$pw = ` before it is read by the label rule first"),
    Rule("password", "PASSWORD",
         r"(?:^|[^\w.-])(?:[A-Za-z0-9]+[_.-]|[a-z0-9]+(?=P))?(?i:password)"
         r"(?:[ \t]+(?i:for)[ \t]+[^\n=;]{1,80}?[ \t]*=)?[ \t]+"
         r"(?:\\?'(?P<v>[^'\\\s]{4,128})\\?'|\\?\"(?P<w>[^\"\\\s]{4,128})\\?\")",
         trigger=r"(?i:password[ \t]+(?:for[ \t]|\\?['\"]))", validator=v.password,
         description="SQL passwords quoted after `PASSWORD` (`ALTER USER … WITH PASSWORD 'X'`, `CREATE ROLE … "
                     "PASSWORD 'X'`, PostgreSQL) and `SET PASSWORD FOR … = 'X'` (MySQL); a DSL's `name \"value\"` "
                     "(Gradle's `storePassword \"…\"`, a game server's `rcon_password \"…\"`)"),
    Rule("password", "PASSWORD",
         r"(?:[\w.-]{1,64}:\d{1,5}(?:\[\d{1,2}\])?>|\bredis-cli\b[^\n|;&]{0,120}?)[ \t]*(?i:auth)[ \t]+"
         r"(?:[^\s\"'\\]{1,64}[ \t]+)?(?P<v>[^\s\"'\\]{4,128})(?=$|[\s\"'\\])",
         trigger=r"> ?(?:AUTH|auth) |redis-cli", validator=v.password,
         description="the password of Redis's `AUTH [username] password` typed at redis-cli's prompt "
                     "(`127.0.0.1:6379> AUTH default …`)"),
    Rule("password", "PASSWORD",
         r"(?:\bstats[ \t]+auth[ \t]+[^\s:]{1,64}:|\binsecure-password[ \t]+|"
         r"\brabbitmqctl\b[^\n|;&]{0,80}?\b(?:add_user|change_password)[ \t]+\S{1,64}[ \t]+)"
         r"(?:\\?'(?P<v>[^'\\\n]{4,128})\\?'|\\?\"(?P<w>[^\"\\\n]{4,128})\\?\"|(?P<x>[^\s'\"\\]{4,128}))",
         trigger=r"stats[ \t]+auth[ \t]|insecure-password|rabbitmqctl", validator=v.password,
         description="passwords in HAProxy's config (`stats auth admin:…`, a userlist's `insecure-password …`) and "
                     "given to `rabbitmqctl add_user NAME …` / `change_password`"),
    Rule("password", "PASSWORD",
         r"(?:\bdscl[ \t]+\S+[ \t]+-passwd[ \t]+\S+"
         r"(?:[ \t]+(?:'[^'\n]{1,128}'|\\?\"[^\"\\\n]{1,128}\\?\"|[^\s'\"\\]{1,128}))?|"
         r"(?:^|[ \t]):[ \t]*(?:PSK|EAP|XAUTH)|(?:^|\\n|[ \t])[\w.:%@-]{1,253}[ \t]+:[ \t]*(?:PSK|EAP|XAUTH))[ \t]+"
         r"(?:\\?\"(?P<v>[^\"\\\n]{1,128})\\?\"|'(?P<w>[^'\\\n]{1,128})'|&quot;(?P<x>[^&\n]{1,128})&quot;)(?=$|[\s|\\<])",
         trigger=r"dscl[ \t]|:[ \t]*(?:PSK|EAP|XAUTH)[ \t]", validator=v.password,
         description="macOS' `dscl . -passwd /Users/NAME [OLD] NEW` (the last argument) and a strongSwan "
                     "ipsec.secrets line's `HOST %any : PSK \"…\"` (EAP and XAUTH secrets too)"),
    Rule("password", "PASSWORD",
         r"(?:\bnet[ \t]+use\b[^\n|;&]{0,40}?[ \t]\\\\\S+(?:[ \t]+/\S+)*[ \t]+|"
         r"\b(?:7z[ar]?|unrar|rar)[ \t][^\n|;&]{0,80}?[ \t]-p(?=[^\s-]))"
         r"(?:\\?\"(?P<v>[^\"\\\n]{1,128})\\?\"|'(?P<w>[^'\\\n]{1,128})'|(?P<x>[^\s\"'\\]{1,128}))",
         trigger=r"\bnet[ \t]+use\b|\b(?:7z[ar]?|unrar|rar)[ \t]", validator=v.password,
         description="Windows' `net use Z: \\\\host\\share PASSWORD /user:…` and the archivers' `-pPASSWORD` (7-Zip, "
                     "RAR)"),
    Rule("password", "PASSWORD",
         r"\b(?:impacket-[a-z]+|(?:psexec|smbexec|wmiexec|atexec|dcomexec|secretsdump|mssqlclient|GetUserSPNs|"
         r"GetNPUsers)\.py)\b[^\n|;&]{0,80}?[ \t]\\?[\"']?(?:[\w.-]+/)?[^\s:/@\"'\\]{1,64}:"
         r"(?P<v>[^\s\"'\\]{1,128}?)(?=@[\w.:\[\]-]+(?:$|[\s\"'\\]))",
         trigger=r"impacket-|(?:exec|dump|client|SPNs|NPUsers)\.py", validator=v.password,
         description="the password of Impacket's target `domain/user:password@host` (psexec, wmiexec, "
                     "secretsdump, …)"),
    Rule("password", "PASSWORD", rf"(?:{_SPRAY_HIT})(?P<v>[^\s\"\\]{{1,128}})",
         trigger=r"\[\+\][ \t]+(?:VALID LOGIN|[^\s:]{1,130}:)", validator=v.password,
         description="the password of a login a spraying tool reports as valid: netexec's (crackmapexec's) "
                     "`SMB  10.0.0.5  445  DC01  [+] corp\\bob:… (Pwn3d!)`, kerbrute's `[+] VALID LOGIN:  "
                     "bob@corp.local:…`"),
    Rule("password", "PASSWORD",
         r"(?:(?<![\w-])(?i:psk|wpa_passphrase|sae_password|wpa[_-]?psk|wpa2?-pre-shared-key)[ \t]*[:=][ \t]*|"
         r"\bAT\+CWJAP(?:_CUR|_DEF)?=\\?\"(?:[^\"\\\n]|\\.){0,64}?\\?\",)"
         r"(?:\\?\"(?P<v>[^\"\\\n]{4,128})\\?\"|(?P<w>[^\s\"'\\]{4,128}?))(?=$|[\s\"'\\,;]|\.(?:$|\s))",
         trigger=r"(?i:psk|wpa_passphrase|sae_password|pre-shared-key)[ \t]*[:=]|AT\+CWJAP",
         validator=v.password,
         description="Wi-Fi passphrases: wpa_supplicant's and hostapd's `psk=` / `wpa_passphrase=`, RouterOS' "
                     "`wpa2-pre-shared-key=` (`+` inside, as 802.11i's printable ASCII allows), an ESP "
                     "module's `AT+CWJAP=\"ssid\",\"…\"`"),
    Rule("password", "PASSWORD",
         r"\bWIFI:(?:[A-Z]{1,2}:(?:[^;\\\n\"]|\\[;,:\\\"]){0,128};){0,6}?P:(?P<v>(?:[^;\\\n\"]|\\[;,:\\\"]){1,128});|"
         r"\b(?i:wpa[23]?)(?:[ _-](?i:personal|psk))?[ _-](?i:key|passphrase|password)"
         r"(?:[ \t]*[:=]|[ \t]+(?i:is))?[ \t]+\\?[\"']?(?P<w>[^\s\"'`\\]{4,128}?)(?=$|[\s\"'`\\,;]|\.(?:$|\s))",
         trigger=r"WIFI:[A-Z]|(?i:wpa[23]?(?:[ _-](?:personal|psk))?[ _-](?:key|passphrase|password))",
         validator=v.password,
         description="a Wi-Fi network's passphrase in the `WIFI:T:WPA;S:…;P:…;;` text a Wi-Fi QR code holds "
                     "(ZXing's format, `\\;` escaping), and after `WPA2 key`, `WPA passphrase`, `WPA2-PSK password`"),
    Rule("password", "PASSWORD",
         rf"(?:{_WIFI}(?:[ \t]*\([^()\n]{{1,40}}\))?[ \t_-]*{_WIFI_KEY}|"
         rf"{_WIFI_KEY}(?:[ \t]+{_WIFI_OF})*[ \t]+(?:l')?{_WIFI})(?![^\W\d_])(?:[ \t]*\([^()\n]{{1,40}}\))?"
         rf"[ \t]*(?:[:=：]|[ \t]{_IS}(?![^\W\d_]))[ \t]*\\?[\"']?"
         r"(?P<v>[^\s\"'`\\]{4,128}?)(?=$|[\s\"'`\\,;]|\.(?:$|\s))",
         trigger=_WIFI, validator=v.wifi_passphrase,
         description="a Wi-Fi network's key or password named with the network in any order and language "
                     "(`Wi-Fi (SSID …) key:`, `WLAN-Schlüssel:`, `chiave Wi-Fi:`, `mot de passe du Wi-Fi :`, "
                     "`Wi-Fi-avain:`)"),
    Rule("shared_secret", "SECRET", rf"(?:{_SHARED_KEY}){_CONF_VALUE}",
         trigger=r"(?:radius|tacacs|hwtacacs)-server[ \t]|\bset[ \t]+(?:system|access|protocols|security|"
                 r"routing-instances)[ \t][^\n]{0,200}[ \t](?:secret|authentication-key|ascii-text)[ \t]|"
                 r"\bserver[ \t]+\d{1,2}[ \t]+address[ \t]|\bneighbor[ \t][^\n]{0,50}[ \t]password[ \t]",
         validator=v.password,
         description="a RADIUS or TACACS+ server's shared secret and a routing protocol's MD5 key after the keyword "
                     "that gives it in a device's configuration (Huawei VRP, Junos, Nokia SR OS, Cisco IOS)"),
    Rule("shared_secret", "SECRET", r"(?:^|[^\w$])(?P<v>\$9\$[A-Za-z0-9./-]{8,512})(?![A-Za-z0-9./$-])",
         trigger=r"\$9\$[A-Za-z0-9./-]{8}",
         description="a Junos `$9$` secret, anywhere: a reversible encoding of the secret in clear (RADIUS and "
                     "TACACS+ secrets, MD5 keys, pre-shared keys); not Cisco's type 9 hash (`$9$salt$hash`)"),
    Rule("snmp_secret", "SECRET", rf"(?:{_SNMP_KEY}){_CONF_VALUE}",
         trigger=r"(?:set[ \t]+snmp|snmp-agent|snmp-server|/snmp)[ \t]+|(?:ro|rw)community|com2sec|createUser[ \t]|"
                 r"snmp[a-z]{2,8}[ \t][^\n]{0,160}[ \t]-[cA]|[ \t]-x[ \t]+(?:DES|AES)",
         validator=v.snmp_secret,
         description="an SNMP community (the password of SNMP v1 and v2c) and an SNMPv3 user's passphrases after "
                     "the keyword that gives them: device configurations (Junos, Huawei VRP, Cisco IOS, RouterOS), "
                     "net-snmp's snmpd.conf and its tools' `-c`, `-A`, `-X`"),
    Rule("snmp_secret", "SECRET",
         r"\bcommunity[ \t]+(?:\\?\"|\"\")(?P<v>[^\"\\\n]{1,128})(?:\"\"|\\?\")[ \t]+(?:hash2?[ \t]+)?"
         r"(?:access-permissions|version|src-access-list)\b",
         trigger=r"community[ \t]+\\?\"[^\"\n]{1,128}\"[ \t]+(?:hash|access-permissions|version|src-access-list)",
         validator=v.snmp_secret,
         description="an SNMP community in Nokia SR OS' configuration (`community \"…\" access-permissions r "
                     "version both`)"),
    Rule("snmp_secret", "SECRET", rf"{_SNMP_LABEL}{_CONF_VALUE}",
         trigger=r"(?i:snmp[ _-]?(?:v[12]c?[ _-]?)?(?:(?:ro|rw|read|write)[ _-]?)?community|community[ _-]?string|"
                 r"\b(?:ro|rw)[_-]community)",
         validator=v.snmp_secret,
         description="an SNMP community after a label that names one (`SNMP community (RO) for the RTUs: …`, "
                     "`community string = …`, `snmp_community:`)"),
    Rule("snmp_secret", "SECRET", rf"{_SNMP_SECTION}{_CONF_VALUE}",
         trigger=r"(?i:snmp)[\w.-]{0,24}(?:\]\]?|[ \t]*:)?[ \t]*(?:\r?\n|\\n)", validator=v.snmp_secret,
         description="an SNMP community as a `community` key under a block or section an SNMP name heads (a YAML "
                     "`snmp:` block, Telegraf's `[[inputs.snmp]]`)"),
    Rule("sim_key", "SECRET",
         rf"\bupdate[ \t]+aud[23]g[ \t]+[\w-]{{3,12}}[ \t]+(?:ki|k)[ \t]+(?P<v>{_HEX32})(?![0-9A-Za-z])|"
         rf"\bsecurity{_KQ}[ \t]*:[ \t]*\{{[ \t]*(?:\\?\r?\n[ \t]*|\\n[ \t]*)?{_KQ}k{_KQ}[ \t]*:[ \t]*{_KQ}"
         r"(?P<w>[0-9a-fA-F]{8}(?:[ ]?[0-9a-fA-F]{8}){3})(?![0-9A-Za-z])|"
         rf"(?:^|[^\w-])(?:Ki|KI|ki|OPc|OPC|opc){_KQ}[ \t]*[:=][ \t]*{_KQ}(?P<x>{_HEX32})(?![0-9A-Za-z])",
         trigger=r"update[ \t]+aud[23]g|security\\?[\"']?[ \t]*:[ \t]*\{|"
                 r"(?:Ki|KI|ki|OPc|OPC|opc)[\"'\\]{0,2}[ \t]*[:=]",
         validator=v.sim_key,
         description="a SIM's secret key: OsmoHLR's `subscriber … update aud2g comp128v1 ki …` and `aud3g milenage "
                     "k …`, an Open5GS subscriber's `security: {k: …}`, a `Ki` or `OPc` of 32 hex after its label "
                     "(a SIM vendor's batch file, its `KI` column)"),
    Rule("sim_key", "SECRET",
         r"\bLPA:1\$[^$\s\"'\\]{1,255}\$(?P<v>[^$\s\"'\\]{1,255})",
         trigger=r"LPA:1\$", validator=v.password,
         description="the matching id of an eSIM activation code (GSMA SGP.22 `LPA:1$<SM-DP+ address>$<matching "
                     "id>`): with the address it downloads the profile"),
    Rule("sim_key", "SECRET",
         r"(?:^|[^A-Za-z0-9])(?i:puk)[12]?(?:[ \t]*(?i:code|no\.?|number|#))?\\?[\"']?[ \t]*[:=#]?[ \t]*\\?[\"']?"
         r"(?P<v>\d{8})(?!\d)",
         trigger=r"(?i:puk)[12]?[^\n\d]{0,12}\d{8}",
         description="a SIM's PUK (eight digits, 3GPP TS 31.101) after its label (`PUK1: …`, `\"puk\": \"…\"`)"),
    Rule("meter_key", "SECRET",
         rf"[ \t](?={_dlms_key(f'(?P<v>{_HEX32})')}{_DLMS_GAP}(?:{_DLMS_CONTEXT}|[ \t]{_dlms_key()}))|"
         rf"(?:(?i:gurux)|{_DLMS_CONTEXT}|{_dlms_key()}){_DLMS_GAP}(?=[ \t]{_dlms_key(f'(?P<w>{_HEX32})')})",
         trigger=rf"[ \t]-[ABDb][ \t]+{_HEX32}", validator=v.hex_key,
         description="DLMS/COSEM keys (IEC 62056-5-3: the authentication key, the global unicast and broadcast "
                     "block cipher keys, the dedicated key) given to a Gurux client as its flags `-A`, `-B`, `-b`, "
                     "`-D` take them, each of 32 hex, on a line that names Gurux or gives the client's system title "
                     "(`-T` and 16 hex) or its security level (`-C AuthenticationEncryption`)"),
    Rule("ntlm_hash", "SECRET", rf"(?:^|[^\w-]){_NT_LABEL}{_KQ}[ \t]*[:=][ \t]*{_KQ}(?P<v>{_HEX32})(?![0-9A-Za-z])",
         trigger=r"(?i:ntlm|nt[ _-]?hash|lm[ _-]?hash)[\\\"' \t]{0,12}[:=]", validator=v.nt_hash,
         description="an NT or LM hash after its label (mimikatz's `* NTLM     : …` and `Hash NTLM: …`, pypykatz's "
                     "`\"NThash\": \"…\"`, `NT hash = …`): not the empty password's constants"),
    Rule("ntlm_hash", "SECRET", rf":\d{{1,10}}:{_HEX32}:(?P<v>{_HEX32}):::",
         trigger=rf":\d{{1,10}}:{_HEX32}:{_HEX32}:::", validator=v.nt_hash,
         description="the NT hash of a pwdump line as secretsdump, pwdump and netexec's `--sam`/`--ntds` print them "
                     "(`user:rid:LM:NT:::`)"),
    Rule("ntlm_hash", "SECRET", rf":\d{{1,10}}:(?P<v>{_HEX32}):{_HEX32}:::",
         trigger=rf":\d{{1,10}}:{_HEX32}:{_HEX32}:::", validator=v.nt_hash,
         description="the LM hash of a pwdump line where it is not the empty password's (`user:rid:LM:NT:::`)"),
    Rule("ntlm_hash", "SECRET", rf"(?:{_PTH_FLAG})(?P<v>{_HEX32})(?![0-9A-Za-z])",
         trigger=r"(?:nxc|netexec|crackmapexec|cme|evil-winrm)[ \t]|-hashes[ \t]|/(?i:rc4|pth):",
         validator=v.nt_hash,
         description="an NT hash given for a password (pass-the-hash): netexec's and evil-winrm's `-H`, impacket's "
                     "`-hashes LM:NT`, Rubeus' `/rc4:`, xfreerdp's `/pth:`"),
    Rule("password", "PASSWORD",
         r"\b(?:(?i:user(?:name)?|login)[ \t]*[:=][ \t]*|(?i:account)[ \t]+)[^\s:=/]{1,64}"
         r"(?:[ \t,;/|—–-]+|[ \t]*\\?\r?\n[ \t]*|[ \t]*\\(?:r\\)?n[ \t]*)(?i:pass|pw)[ \t]*[:=][ \t]*"
         r"(?P<v>[^\s\"'`\\]{4,128})",
         trigger=r"(?:(?i:user(?:name)?|login)[ \t]*[:=][ \t]*|(?i:account)[ \t]+)[^\s:=/]+"
                 r"(?:[ \t,;/|—–-]+|[ \t]*\\?\r?\n[ \t]*|[ \t]*\\(?:r\\)?n[ \t]*)(?i:pass|pw)[ \t]*[:=]",
         validator=v.password,
         description="a password after `pass:` or `pw:` right after a user, on its line or the next (`user: acme  "
                     "pass: …`, `user: acme / pass: …`, `account snovak56@efile — pass: …`, `user: ops` then "
                     "`pass: …`)"),
    Rule("password", "PASSWORD",
         r"(?:^|[^\w-])(?i:log-?ins?|credentials?|creds|sign-?in|user(?:name)?[ \t]*/[ \t]*pass(?:word)?)"
         r"(?:[ \t][^\n:=\"]{0,40}?)?[ \t]*[:=][ \t]*\\?[\"'`]?"
         r"[^\x00-@\[-`{-\x7f](?:[\w.@+-]|[^\x00-\x7f]|\\u[0-9a-fA-F]{4}){0,63}"
         r"(?:[ \t]+/[ \t]+|[ \t]*/(?!/)|:(?!//))(?:(?i:pass(?:word)?|pwd?)[ \t]*[:=][ \t]*)?"
         r"\\?[\"'`]?(?P<v>[^\s\"'`\\/]{4,128}?)"
         r"(?=$|[\s,;)}\]\"'`\\]|\.(?:$|[\s\"'`\\]))",
         trigger=r"(?i:log-?in|creds?|credentials|sign-?in|user(?:name)?[ \t]*/[ \t]*pass)[^\n:=]*[:=]",
         validator=v.password, reject=r"(?:^|[^A-Za-z])(?:[a-z]+:){2,}[a-z]+$",
         description="a login's user and password written as a pair after a word for login or credentials "
                     "(`Vendor portal login: noor13 / Tmp-i12R-8807&`, `creds: admin:hunter2`, `login -- user: "
                     "noor13 / pass: …`), the password; not a format's field names (secretsdump's `Dumping Domain "
                     "Credentials (domain\\uid:rid:lmhash:nthash)`)"),
    Rule("password", "PASSWORD", r"\\?\"(?i:pass)\\?\"[ \t]*:[ \t]*\\?\"(?P<v>[^\"\\\s]{4,128})\\?\"",
         trigger=r"(?i:\"pass\\?\"[ \t]*:)", validator=v.json_pass,
         description="a password under a JSON key `pass` (a login body `{\"login\": …, \"pass\": …}`, Parse "
                     "Dashboard's users); not a test report's `\"PASS\": \"tests/…::test_x\"` nor a count"),
    Rule("secret_assignment", "SECRET",
         rf"(?:(?i:{_SECRET_WORDS}){_CLOSE}\s*:?[:=]\s*{_OPEN}|{_FLAG}(?i:{_SECRET_WORDS})[ \t=]+\\?[\"']?)"
         r"(?:base64:)?(?P<v>[A-Za-z0-9+/_.=-][A-Za-z0-9+/_.=~-]{15,255})",
         trigger=r"(?i:(?:key|token|secret(?:[_ -]?(?:data|value|string))?|credential|[_.-]pat|verifier)s?)"
                 r"(?:\\?[\"'`]?[\])]?\s*:?[:=]\s*(?:\\?[\"'`]|<[a-z]{1,6}>)?|"
                 r"[ \t]+\\?[\"']?)(?:base64:)?[A-Za-z0-9+/_.=-][A-Za-z0-9+/_.=~-]{15}",
         validator=v.high_entropy_secret, description="high-entropy strings after key, token or secret labels "
                                                       "(Laravel's `base64:` prefix before one stays), `~` in "
                                                       "them as in OAuth client secrets (RFC 3986's unreserved "
                                                       "characters: Entra ID's `…8Q~…`)"),
    Rule("secret_assignment", "SECRET",
         rf"(?i:{_SECRET_WORDS})\\?[\"']?\]?[ \t]*:?[:=][ \t]*"
         r"(?:\\?\"(?P<v>[!-~]{16,256}?)\\?\"|'(?P<w>[!-~]{16,256}?)')(?:$|[\s,;)}\]>])",
         trigger=r"(?i:(?:key|token|secret(?:[_ -]?(?:data|value|string))?|credential|[_.-]pat|verifier)s?)"
                 r"\\?[\"']?\]?[ \t]*:?[:=][ \t]*\\?[\"'][!-~]{16}",
         validator=v.symbol_secret,
         description="a quoted secret with symbols in it after a key, token or secret label (Django's "
                     "`SECRET_KEY = 'k#9…'`, `\"client_secret\": \"…~…\"`)"),
    Rule("secret_assignment", "SECRET",
         rf"(?:{_SECRET_STORE})[^\n|;&]{{0,200}}?[ \t](?:--string-value|--secret-string|--body|-b|--value)[ \t=]+"
         r"(?:\\?\"(?P<v>[^\"\\\n]{4,4096})\\?\"|'(?P<w>[^'\\\n]{4,4096})'|(?P<x>[^\s\"'\\]{4,4096}))",
         trigger=r"--string-value|--secret-string|\bsecret[ \t]+set\b", validator=v.password,
         description="the value a command stores in a secret store, whatever its name: `databricks secrets put-secret "
                     "SCOPE KEY --string-value …` (and the legacy `put`), `aws secretsmanager create-secret "
                     "--secret-string …`, `gh secret set NAME --body …`, `az keyvault secret set … --value …`"),
    Rule("secret_assignment", "SECRET", r"::add-mask::(?P<v>[^\s\"'\\]{4,4096})", trigger=r"::add-mask::",
         validator=v.password,
         description="the value a GitHub Actions `::add-mask::` workflow command masks (a secret by the command's "
                     "meaning, as a step's script or log prints it); not a reference (`$TOKEN`, `***`)"),
    Rule("labelled_key", "SECRET",
         rf"{_KEY_LABELS}{_CLOSE}(?:{_WHOSE}?(?:{_ARROW}|[ \t]*[:=][ \t]*|{_SET_TO}|[ \t]+(?i:is)[ \t]+)|{_DASH}|"
         rf"{_CJK_JOIN}|[ \t]+){_OPEN}"
         r"(?P<v>[A-Za-z0-9+/_.=-]{16,256}(?::[A-Za-z0-9_-]{16,128}(?![A-Za-z0-9_-]))?)",
         trigger=_KEY_LABELS, validator=v.labelled_key,
         description="keys after a label that names a key (API Key:, Client Secret =), hex keys too, and "
                     "Elasticsearch's `id:api_key` pair (Logstash's and Beats' `api_key` setting)"),
    Rule("labelled_key", "SECRET",
         r"(?:^|[^A-Za-z0-9_])(?i:appid)\\?[\"']?(?:[ \t][^\n:=]{1,40}?)?[ \t]*[:=][ \t]*\\?[\"']?"
         r"(?P<v>[0-9a-f]{32})(?![0-9A-Za-z])",
         trigger=r"(?i:appid)[^\n:=]{0,41}[:=][ \t]*\\?[\"']?[0-9a-f]{32}", validator=v.hex_key,
         description="an `appid` of 32 hex after its label, OpenWeather's API key as its requests name it "
                     "(`OpenWeather appid (forecasts): …`, `\"appid\": \"…\"`); its `appid=` in a URL is url_secret's"),
    Rule("hex_key", "SECRET",
         rf"(?i:[a-z0-9_.-]{{0,64}}secret){_CLOSE}(?:[ \t]*[:=]>?[ \t]*|[ \t]+(?:{_IS}[ \t]+)?){_OPEN}"
         r"(?P<v>[0-9a-fA-F]{24,31})(?:$|[^0-9A-Za-z])",
         trigger=r"(?i:secret)\\?[\"'`]?[ \t:=>\\\"'`]{1,8}[0-9a-fA-F]{24}", validator=v.short_hex_secret,
         reject_label=_HEX_NOT_KEY,
         description="a hex secret of 24-31 digits after a name ending in secret (Plaid's 30: `PLAID_SECRET=…`); "
                     "a key's name reads an id of that length too (MongoDB's 24-hex ObjectId)"),
    Rule("hex_key", "SECRET",
         rf"{_HEX_LABEL}{_CLOSE}(?:[ \t]*[:=]>?[ \t]*|[ \t]+(?:{_IS}[ \t]+)?|{_CJK_JOIN})\[?{_OPEN}"
         r"(?P<v>[0-9a-fA-F]{32,128})(?:$|[^0-9A-Za-z])",
         trigger=r"(?i:key|token|secret)\\?[\"'`]?[ \t:=>\[\]()\\\"'`：为為是は는은「『〔】]{1,8}(?:<[a-z]{1,6}>)?"
                 r"[0-9a-fA-F]{32}",
         validator=v.hex_key,
         reject_label=_HEX_NOT_KEY,
         description="hex keys after a name ending in key, token or secret (Datadog API and application "
                     "keys, Twilio auth tokens, PagerDuty routing keys, webhook signing secrets); not a digest's "
                     "or an id's name (cache_key, etag, sha)"),
    Rule("recovery_code", "SECRET", r"(?:^|[^\w-])(?P<v>[A-Z0-9]{5}(?:-[A-Z0-9]{5}){4})(?:$|[^\w-])",
         trigger=r"[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}-", validator=v.five_by_five,
         description="a Microsoft account's recovery code or a product key, anywhere: five groups of five "
                     "capitals and digits, both in most groups"),
    Rule("filevault_key", "SECRET",
         r"(?:\bPRK\b|(?i:filevault|recovery[ _-]?key))[^\n]{0,60}?(?:^|[^\w-])(?P<v>[A-Z0-9]{4}(?:-[A-Z0-9]{4}){5})"
         r"(?:$|[^\w-])",
         trigger=r"PRK|(?i:filevault|recovery[ _-]?key)", validator=v.letters_and_digits,
         description="a FileVault personal recovery key (six groups of four capitals and digits) after `PRK`, "
                     "`FileVault` or `recovery key` on its line, as Jamf and escrow notes write it"),
    Rule("bitlocker_key", "SECRET", r"(?:^|[^\w-])(?P<v>\d{6}(?:-\d{6}){7})(?:$|[^\w-])",
         trigger=r"\d{6}-\d{6}-\d{6}-\d{6}", validator=v.bitlocker_key,
         description="BitLocker recovery passwords (eight groups of six digits, each a multiple of 11), anywhere"),
    Rule("recovery_code", "SECRET",
         rf"{_RECOVERY_WORDS}(?:[^\n:=]{{0,40}}?(?:[:=：→]|[ \t][-–—](?=[ \t])|\b(?:are|is|sind|lauten|sont|son|são)\b|"
         rf"{_CJK_BEFORE_VALUE}|(?=[ \t]*(?:\r?\n|\\n)))|(?=[ \t]+[A-Za-z0-9])|(?=[ \t]*[「『〔]))"
         r"(?:[ \t]*\\?(?:\r?\n|\\n)[+-]?){0,2}[ \t]*"
         rf"(?:\[?\\?[\"']|[「『〔])?(?:[-*•][ \t]*|\d{{1,2}}[.)][ \t]*)?"
         rf"(?P<v>{_RECOVERY_CODE}(?:{_RECOVERY_SEP}{_RECOVERY_CODE}){{0,19}})(?![A-Za-z0-9])",
         trigger=_RECOVERY_OWN, translated=_RECOVERY_TRANSLATED, validator=v.recovery_codes,
         description="two-factor recovery and backup codes after their label, the whole list (GitHub's 5+5 hex, "
                     "Google's eight digits, Microsoft's 5x5 groups, scratch codes; as lines, bullets, numbered "
                     "lists, a JSON array, comma- or space-separated)"),
    Rule("recovery_code", "SECRET",
         rf"{_RECOVERY_WORDS}{_WHOSE}[ \t]+(?P<v>{_GROUPED_CODE}(?:{_RECOVERY_SEP}{_GROUPED_CODE}){{0,19}})"
         r"(?![A-Za-z0-9-])",
         trigger=_RECOVERY_OWN, translated=_RECOVERY_TRANSLATED, validator=v.recovery_codes,
         description="recovery codes after their label and whose they are, with no `:` between (`emergency access "
                     "code for the VPN portal 4821 0937`): codes in equal groups alone"),
    Rule("recovery_code", "SECRET",
         rf"{_RECOVERY_WORDS}[ \t]+(?i:for|of|on|in|de|f\u00fcr|pour|para)[ \t][^\n:=]{{1,80}}?[:=][ \t]*"
         rf"(?P<v>{_GROUPED_CODE}(?:{_RECOVERY_SEP}{_GROUPED_CODE}){{0,19}})(?![A-Za-z0-9-])",
         trigger=_RECOVERY_OWN, translated=_RECOVERY_TRANSLATED, validator=v.recovery_codes,
         description="recovery codes after their label, a long `for …` naming whose they are, and `:` (`backup "
                     "code for the shared mailbox of the front desk: 4821 0937`): codes in equal groups alone"),
    Rule("recovery_code", "SECRET",
         rf"{_RECOVERY_WORDS}[^\n:=.!?]{{0,40}}?\b(?i:sent|gave|shared|typed|entered|pasted|texted|forwarded|"
         r"read out)(?:[ \t]+(?i:it|them|him|her|over))?(?:[ \t]+(?i:to)[ \t]+(?i:them|him|her))?[ \t]+\\?[\"']?"
         rf"(?P<v>{_RECOVERY_CODE}(?:{_RECOVERY_SEP}{_RECOVERY_CODE}){{0,19}})(?![A-Za-z0-9-])",
         trigger=_RECOVERY_OWN, translated=_RECOVERY_TRANSLATED, validator=v.recovery_codes,
         description="recovery codes a victim reports handing over, after their label and a verb of giving (`they "
                     "asked for my backup code, I sent …`, `gave them the recovery codes …`)"),
    Rule("totp_seed", "SECRET",
         rf"{_TOTP_WORDS}[^\n:=]{{0,64}}?(?:[:=]|\b(?:is|ist|est|es|é|se)\b)[ \t]*(?:\r?\n|\\n)?[ \t]*\\?[\"'`]?"
         rf"(?P<v>{_BASE32})(?![A-Za-z0-9])",
         trigger=_TOTP_OWN, translated=_TOTP_TRANSLATED, validator=v.totp_seed,
         description="an authenticator's shared secret after its label and `:` or \"is\" (Haitian Creole's `se`: "
                     "`kòd sekrè 2FA a se …`), printed in groups of four (Google's `jbsw y3dp …`, one case)"),
    Rule("totp_seed", "SECRET",
         rf"{_TOTP_HEAD}(?:[^\n]{{0,160}}\r?\n){{0,3}}?[^\n]{{0,200}}?(?:\r?\n|\\n)(?:\s|\\n)*(?:[-*•][ \t]*)?"
         rf"(?:ال)?(?:{_KEY_STEMS})[^\n:=]{{0,24}}?[ \t]*[:=：][ \t]*\\?[\"'`]?(?P<v>{_BASE32})(?![A-Za-z0-9])",
         trigger=_TOTP_HEAD, validator=v.totp_seed,
         description="an authenticator's secret under a two-factor heading (`2FA/TOTP`), on a line of its own after "
                     "the word for secret or key in any language (`• segreto: …`, `μυστικό: …`, Arabic's `المفتاح` "
                     "with its article)"),
    Rule("totp_seed", "SECRET",
         rf"{_TOTP_HEAD}[^\n]{{0,80}}?(?<![A-Za-z])(?i:secret|seed)[ \t]*[:=][ \t]*\\?[\"'`]?(?P<v>{_BASE32})"
         r"(?![A-Za-z0-9])",
         trigger=_TOTP_HEAD, validator=v.totp_seed,
         description="an authenticator's secret on a log line that names the second factor, as `secret=` or "
                     "`seed:` after it (`2fa enrolled user=… secret=…`)"),
    Rule("totp_seed", "SECRET",
         rf"(?:{_TOTP_WORDS}(?:[ \t]+[-–—][ \t]+|{_LEADER}|[ \t]+)\\?[\"'`]?(?P<v>{_BASE32})|"
         rf"(?<![A-Za-z])(?i:key)[ \t]*[:=：][ \t]*\\?[\"'`]?(?P<w>{_BASE32_GROUPS}))(?![A-Za-z0-9])",
         trigger=rf"{_TOTP_OWN}|(?i:key)[ \t]*[:=：][ \t]*\\?[\"'`]?[a-zA-Z2-7]{{4}} [a-zA-Z2-7]{{4}} [a-zA-Z2-7]{{4}} "
                 r"[a-zA-Z2-7]{4}",
         translated=_TOTP_TRANSLATED, validator=v.totp_seed,
         description="an authenticator's secret after its label and a dash (`2FA setup key — …`), a form's dot "
                     "leader or spaces alone (`2FA seed JBSW…`, `authenticator key jbsw y3dp …`), or in the groups "
                     "of four a setup page prints after the word key (`Your key: jbsw y3dp …`)"),
    Rule("recovery_code", "SECRET",
         rf"(?:{_field_fill(_RECOVERY_WORDS)}|{_typed_after(_RECOVERY_WORDS)})(?P<v>{_RECOVERY_CODE})\\?[\"'`]",
         trigger=_RECOVERY_OWN, translated=_RECOVERY_TRANSLATED, validator=v.recovery_codes,
         description="a recovery code a browser automation call or a keystroke action types into its field"),
    Rule("totp_seed", "SECRET",
         rf"(?:{_field_fill(_TOTP_WORDS)}|{_typed_after(_TOTP_WORDS)})(?P<v>{_BASE32})\\?[\"'`]",
         trigger=_TOTP_OWN, translated=_TOTP_TRANSLATED, validator=v.totp_seed,
         description="an authenticator's secret a browser automation call or a keystroke action types"),
    Rule("totp_seed", "SECRET",
         rf"\b(?:pyotp\.(?:TOTP|HOTP)\(\s*{_QUOTE}|otpauth://[th]otp/[^\s?]*\?(?:[^\s#]*&)?secret=|"
         rf"oathtool\b[^\n|;&]{{0,60}}?(?:-b|--base32)\b[^\n|;&]{{0,40}}?[ \t]\\?[\"']?)(?P<v>{_BASE32})"
         r"(?![A-Za-z0-9])",
         trigger=r"pyotp\.|otpauth://|oathtool", validator=v.totp_seed,
         description="the secret of an `otpauth://` URI (Google Authenticator's key URI format), of pyotp's "
                     "`TOTP(…)`/`HOTP(…)` and of `oathtool --totp -b …` (its base32 key), base32 with no digit too"),
    Rule("totp_seed", "SECRET",
         rf"\bBase32StringSeed\b[^\n]{{0,200}}(?:\\?\r?\n[ \t]*)(?P<v>{_BASE32})(?![A-Za-z0-9])",
         trigger=r"Base32StringSeed", validator=v.totp_seed,
         description="the seed `aws iam create-virtual-mfa-device --bootstrap-method Base32StringSeed` writes, as "
                     "the next line prints it (`… && cat seed.txt`)"),
    Rule("totp_seed", "SECRET",
         r"\boathtool\b(?![^\n|;&]{0,60}(?:-b|--base32)\b)[^\n|;&]{0,60}?[ \t]\\?[\"']?(?P<v>[0-9a-fA-F]{16,128})"
         r"(?![0-9A-Za-z])",
         trigger=r"oathtool", validator=v.labelled_key,
         description="the hex key `oathtool` is given without `-b` (its default: `oathtool --totp 3132…`)"),
    Rule("totp_seed", "SECRET", r"(?:^|[^\w ]|[^\w ] |\w\n)(?P<v>[a-z2-7]{4}(?: [a-z2-7]{4}){7})(?![ \w])",
         trigger=r"[a-z2-7]{4} [a-z2-7]{4} [a-z2-7]{4} [a-z2-7]{4} [a-z2-7]{4} [a-z2-7]{4}",
         validator=v.totp_seed,
         description="an authenticator's 32-character secret as setup pages print it, eight lower-case groups of "
                     "four, standing alone (a digit 2-7 in two groups or more)"),
    Rule("labelled_key", "SECRET",
         _in_prose(_API_KEY_WORDS) + r"(?P<v>[A-Za-z0-9+/_.=-]{16,256})(?![A-Za-z0-9+/_.=-])",
         trigger=_KEY_PROSE_TRIGGER, validator=v.labelled_key, reject_label=_HEX_NOT_KEY,
         description="a key after the word for key with `API` beside it in other languages (`Clé API :`, "
                     "`Chave da API:`, `مفتاح API:`, `APIキー:`): named a credential outright, as `API key:` is, "
                     "so read as `API key:`'s value is (hex keys and upper-case ones too)"),
    Rule("secret_prose", "SECRET",
         rf"(?:^|[^A-Za-z0-9_.-])(?:(?i:api)[ _-]?)?{_NOT_KEY_WORD}(?:{_KEY_WORDS}){_INFLECTED}(?:[_-](?i:api))?"
         rf"{_KEY_PROSE_AFTER}"
         rf"{_OPEN}(?P<v>[A-Za-z0-9+/_.=-]{{16,256}})",
         trigger=_KEY_PROSE_TRIGGER,
         validator=v.prose_secret,
         reject_label=_HEX_NOT_KEY,
         description="a random key after a word for key, token or secret in prose, in other languages too "
                     "(\"le secret client est …\", \"unser Token ist …\", \"esta es la clave: …\")"),
    Rule("secret_prose", "SECRET",
         rf"(?:^|[^A-Za-z0-9_.-])(?:[A-Za-z]{{1,20}}[ \t_-])?(?:{_CRED_WORDS})"
         r"[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]{0,4}"
         rf"{_KEY_PROSE_AFTER}"
         rf"{_OPEN}(?P<v>{_UUID})(?:$|[^0-9A-Za-z-])",
         trigger=_KEY_PROSE_TRIGGER,
         reject_label=_HEX_NOT_KEY,
         description="a UUID after a word that names a credential outright in prose, in other languages too: a "
                     "token or secret word, a key word with `API` beside it (Heroku API keys: `Clave API: …`, "
                     "`το διακριτικό πρόσβασης είναι …`); the word before read, so that `trace token is …` is "
                     "rejected"),
    Rule("secret_prose", "SECRET",
         _in_prose(_CRED_WORDS) + r"(?P<v>[!#-&(-;=?-\[\]-~]{8,64})(?:$|[\s\"'`\\<])",
         trigger=_KEY_PROSE_TRIGGER, validator=v.short_secret, reject_label=_HEX_NOT_KEY,
         description="a short secret a person chose or was handed, after a word that names a credential (`token: "
                     "Niebieski138&`, `API key: Tmp-6Fj0-4579&`, a JSON key's quoted value in text: `\"secret\": "
                     "\"…\"`): both cases, a digit and a symbol"),
    Rule("secret_prose", "SECRET",
         _in_prose(_CRED_WORDS) + r"(?P<v>[A-Za-z0-9]{10,15})(?![A-Za-z0-9+/_.=-])",
         trigger=_KEY_PROSE_TRIGGER, validator=v.short_random, reject_label=_HEX_NOT_KEY,
         description="a short random key after a word that names a credential (`token => jk31aJzWrqgM`, `API key: "
                     "…`): 10-15 letters and digits of both cases, no words"),
    Rule("secret_prose", "SECRET",
         _in_prose(_KEY_WORDS) + r"(?P<v>[!#-&(-;=?-\[\]-~]{8,64})(?:$|[\s\"'`\\<])",
         trigger=_KEY_PROSE_TRIGGER, validator=v.generated_password, reject_label=_HEX_NOT_KEY,
         description="a generated password after a bare word for key (`key: 0?bT6rMI=Z?G=gYp`): read whole, as "
                     "`generated_password` reads one with no label (the label lets it run past `=`)"),
    Rule("secret_prose", "SECRET",
         _in_prose(_KEY_WORDS_ABROAD) + r"(?P<v>[^\s\"'`\\<]{8,64})(?:$|[\s\"'`\\<])",
         trigger=_KEY_PROSE_TRIGGER, validator=v.keyed_password, reject_label=_HEX_NOT_KEY,
         description="a password after a word for key in a language other than English (`clave: Volga7904*`, "
                     "`ключ: Kirschblüte+Sakura+Volga20`): a passphrase, or a short secret with a symbol"),
    Rule("secret_prose", "SECRET",
         _in_prose(_CRED_WORDS) + r"(?P<v>(?=[^\s\"'`\\<]{0,63}[^\x00-\x7f])[^\s\"'`\\<]{8,64})(?:$|[\s\"'`\\<])",
         trigger=_KEY_PROSE_TRIGGER, validator=v.short_secret_any_script, reject_label=_HEX_NOT_KEY,
         description="a short secret with letters beyond ASCII after a word that names a credential (`secret: "
                     "Ąžuolas1986%`, `\"secret\": \"Chór2013?\"`), as the rule above reads an ASCII one"),
    Rule("secret_prose", "SECRET",
         rf"(?:^|[^A-Za-z0-9_.-])(?:[A-Za-z]{{1,20}}[ \t_-])?(?:(?i:api)[ _-]?)?(?:{_KEY_WORDS})"
         rf"(?:[ \t]+[^\s\d:=][^\s:=]{{0,14}}){{0,2}}"
         rf"[ \t]+{_OPEN}(?P<v>[A-Za-z0-9+/_.=-]{{24,256}})"
         r"(?:$|[^A-Za-z0-9+/_.=-])",
         trigger=rf"(?:{_KEY_STEMS})(?:[ \t]+[^\s:=]{{1,15}}){{0,2}}[ \t]+[A-Za-z0-9+/_.=-]{{24}}",
         validator=v.prose_secret, reject_label=_HEX_NOT_KEY,
         description="a random key of 24+ characters right after a word for key, token or secret and a space, "
                     "up to two words between: `API` or a provider's name (`API-nøgle Auth0 …`), or the words "
                     "that follow the noun where modifiers do (`токен доступа …`, `chave da API …`, `token di "
                     "accesso …`); a SWIFT free-text field's `:70:secret …`; the word before it read, so that "
                     "`cache key …` is rejected"),
    Rule("labelled_key", "SECRET",
         rf"(?:^|[^A-Za-z0-9_.-])(?:{_API_KEY_WORDS}){_INFLECTED}(?:[ \t]+[^\s\d:=][^\s:=]{{0,14}}){{0,2}}"
         rf"[ \t]+{_OPEN}(?P<v>[A-Za-z0-9+/_.=-]{{16,23}})(?:$|[^A-Za-z0-9+/_.=-])",
         trigger=r"(?i:api)[^\n]{0,48}[ \t][A-Za-z0-9+/_.=-]{16}",
         validator=v.prose_secret, reject_label=_HEX_NOT_KEY,
         description="a random key of 16-23 characters right after the word for key with `API` beside it and a "
                     "space, up to two words between (`API-sleutel voor Brightspace …`, `API raktas …`): named a "
                     "credential outright, the rule above's shorter keys"),
    Rule("secret_prose", "SECRET",
         rf"(?:^|[^A-Za-z0-9_.-]){_NAMED_KEY}(?:{_CLOSE}(?:[ \t]*[:=][ \t]*|{_LEADER}|{_DASH})|[ \t]+){_OPEN}"
         rf"(?P<v>{_UUID})(?:$|[^0-9A-Za-z-])",
         trigger=rf"(?:{_KEY_STEMS})[^\n]{{0,40}}[0-9a-fA-F]{{8}}-[0-9a-fA-F]{{4}}-",
         reject_label=_HEX_NOT_KEY, label_window=24,
         description="a UUID after a word for key that a service's name stands beside, in a language other than "
                     "English (`Panopto nøkkel …`, `\"clé Dataverse\": \"…\"`, `sleutel voor Zenodo: …`): a "
                     "service's API key, as Dataverse, Panopto and Heroku issue theirs; not after a determiner "
                     "(`Votre clé`), nor a key named by what it keys (`partition`, `object`, `cache`)"),
    Rule("email", "EMAIL",
         f"(?:{_MSG_ID_HEADER}|{_URL_SCHEME}|^|[^{_LABEL}._%+-])(?P<v>[{_LABEL}._%+-]{{1,64}}@[{_LABEL}](?:[{_LABEL}-]{{0,61}}[{_LABEL}])?"
         f"(?:\\.[{_LABEL}](?:[{_LABEL}-]{{0,61}}[{_LABEL}])?)*\\.(?:[A-Za-z]{{2,24}}|[{_INTL}]{{2,24}}))"
         f"(?:$|[^{_LABEL}])",
         trigger=f"[{_LABEL}._%+-]@[{_LABEL}]", validator=v.email,
         reject=rf"(?:^|[^\w.%+-])git@[^@\s]+[:/]$|^{_MSG_ID_HEADER}|^{_URL_SCHEME}|"
                rf"^/[^@]+@[A-Z0-9.-]+(?:[^\w.-]|$)",
         reject_label=r"(?i:\b(?:i?cal_?)?uid|placeholder)\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?$", label_window=24,
         description="e-mail addresses, internationalised ones too; not `name@2x.png`, nor the SSH user "
                     "`git@host:path`, `ssh://git@host/path`, nor a message id (`Message-ID: <…@mail.gmail.com>`, "
                     "SIP's `Call-ID: …@host`), nor a URL's userinfo (`https://<key>@o1.ingest.sentry.io/2`), nor a "
                     "Kerberos service principal (`HTTP/web01.corp.lan@CORP.LAN`: a realm in capitals), nor an "
                     "iCalendar UID (`UID:…@google.com`, `\"iCalUID\": …`) or a Google Calendar's id, nor a form "
                     "field's `placeholder` (a hint: `you@example.com`)"),
    Rule("email", "EMAIL",
         r"(?:^|[^A-Za-z0-9._%+-])(?P<v>[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
         rf"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{{0,61}}[A-Za-z0-9])?)*\.[A-Za-z]{{2,24}})\u00fe(?![{_LABEL}])",
         trigger="[A-Za-z0-9]@[A-Za-z0-9.-]+\\.[A-Za-z]+\u00fe", validator=v.email,
         description="an e-mail address that ends a field of a Concordance DAT load file, before its closing "
                     "`\u00fe` qualifier (a letter to the address rule's end)"),
    Rule("email", "EMAIL",
         r"(?:^|[^A-Za-z0-9._%+-])(?P<v>[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
         rf"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{{0,61}}[A-Za-z0-9])?)*\.[A-Za-z]{{2,24}})(?=[{_CJK_GLUED}])",
         trigger=f"[A-Za-z0-9]@[A-Za-z0-9.-]+\\.[A-Za-z]+[{_CJK_GLUED}]", validator=v.email,
         description="an ASCII e-mail address that Japanese, Chinese or Korean text runs on into with no space "
                     "(`メールはname@example.comです`), whose letters the internationalised address would take in"),
    Rule("email", "EMAIL",
         r"(?:^|[\s\"'>(])(?P<v>[A-Za-z0-9._%+-]{1,64}@ [A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
         r"(?:\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,24})(?=$|[\s\"'<),;])",
         trigger=r"[A-Za-z0-9._%+-]@ [A-Za-z0-9]", validator=lambda s: v.email(s.replace(" ", "")),
         description="an e-mail address as OCR of a screenshot reads it, a space after the `@`"),
    Rule("email", "EMAIL",
         r"\bSSR[ \t]+CTCE[ \t]+[A-Z0-9]{2}[ \t]+[A-Z]{2}\d{1,2}(?:[ \t]*/|[ \t]+)"
         r"(?P<v>[A-Z0-9./+-]{1,64}//[A-Z0-9./-]{1,253}\.[A-Z]{2,24})(?![A-Z0-9])",
         trigger=r"SSR[ \t]+CTCE", description="an e-mail address in an airline booking's `SSR CTCE` element "
                                                 "(IATA's encoding: `//` for `@`, `..` for `_`, `./` for `-`)"),
    Rule("email_spoken", "EMAIL",
         rf"(?:^|[^\w.+-])(?P<v>{_SPOKEN_LOCAL}{_AT_MARKED}{_SPOKEN_DOMAIN}{_SPOKEN_TLD})(?:$|[^\w-])",
         trigger=r"(?i:\[at\]|\(at\)|\{at\}|<at>|[a-z0-9] {1,3}@ {1,3}[a-z0-9])",
         description="e-mail addresses written to dodge scrapers: `name [at] domain [dot] com`, "
                     "`name(at)firma.de`, `olena dot koval @ web dot de`"),
    Rule("email_spoken", "EMAIL",
         rf"{_EMAIL_WORDS}[^\n@]{{0,40}}?[ :](?P<v>{_SPOKEN_LOCAL}{_AT_SPOKEN}{_SPOKEN_DOMAIN}{_SPOKEN_TLD})"
         r"(?:$|[^\w-])",
         trigger=rf"{_EMAIL_WORDS}[^\n@]* (?i:at|arroba) [^\n@]* (?i:dot|punto|ponto|punkt|point) ",
         description="e-mail addresses as a transcript writes them spoken, after a word for e-mail: `my email is j "
                     "w e i s s at outlook dot com` (letters spelled out; `dot`, `underscore`, `plus`; `arroba`, "
                     "`punto`, `ponto`, `Punkt`, `point`)"),
    Rule("email_spoken", "EMAIL",
         r"(?:^|[^\w.+-])(?P<v>(?!(?i:me|us|him|her|them|you|it|is|are|was|be)\b)[A-Za-z0-9][A-Za-z0-9_+-]{0,40}"
         rf"(?:\.[A-Za-z0-9_+-]{{1,40}}){{0,4}}{_AT_SPOKEN}{_WEBMAIL}(?:{_DOT_SPOKEN}[A-Za-z]{{2,3}}){{1,2}})"
         r"(?:$|[^\w-])",
         trigger=rf"(?i:[a-z0-9] (?:at|arroba) {_WEBMAIL} (?:dot|punto|ponto|punkt|point) [a-z])",
         description="an address spelt to slip past a chat filter with no word for e-mail before it: a handle, "
                     "`at`, a large webmail provider's name and `dot` (`kim_88 at yahoo dot co dot uk`); not `meet "
                     "me at …`"),
    Rule("iban", "IBAN",
         rf"(?:\b|(?<=\?\d\d))(?P<v>[A-Z]{{2}}\d{{2}}{_GAP}?(?:[A-Z0-9]{{4}}{_GAP}?){{2,7}}[A-Z0-9]{{1,4}})\b",
         trigger=rf"[A-Z]{{2}}\d{{2}}{_GAP}?[A-Z0-9]{{4}}", validator=v.iban,
         description="IBANs (country length, mod-97 checksum); after an MT940 `:86:` subfield code too (`?31…`)"),
    Rule("iban", "IBAN",
         rf"(?:^|[^A-Za-z0-9])(?P<v>[A-Za-z]{{2}}\d{{2}}(?:{_GAP}[A-Za-z0-9]{{4}}){{2,7}}(?:{_GAP}[A-Za-z0-9]{{1,4}})?)"
         r"(?:$|[^A-Za-z0-9])",
         trigger=r"[A-Za-z]{2}\d{2}[ .-][A-Za-z0-9]{4}[ .-][A-Za-z0-9]{4}", validator=v.iban,
         description="IBANs in lower case, printed in groups of four"),
    Rule("iban", "IBAN",
         rf"{_IBAN_WORDS}[^\n]{{0,30}}?[^A-Za-z0-9](?P<v>[A-Za-z]{{2}}\d{{2}}[A-Za-z0-9]{{11,30}})(?:$|[^A-Za-z0-9])",
         trigger=r"[^A-Za-z0-9][A-Za-z]{2}\d{2}[A-Za-z0-9]{11}", validator=v.iban,
         description="compact IBANs in any case after a word like IBAN, account, bank, transfer"),
    Rule("iban", "IBAN", r"(?:^|[^A-Za-z0-9])(?P<v>[a-z]{2}\d{2}[a-z0-9]{11,30})(?:$|[^A-Za-z0-9])",
         trigger=r"[a-z]{2}\d{2}[a-z0-9]{11}", validator=v.iban_structured,
         description="compact IBANs in lower case anywhere, when the country's BBAN structure holds too"),
    Rule("clabe", "BANK_ACCOUNT",
         r"(?:(?<![A-Za-z0-9])(?i:clabe)|(?<=[a-z])Clabe|CLABE)(?![a-z])[^\n0-9]{0,40}?"
         r"(?<![0-9])(?P<v>\d{3}[ .-]?\d{3}[ .-]?\d{11}[ .-]?\d)(?![0-9]|[ .-]\d)",
         trigger=r"(?i:clabe)[^\n0-9]{0,40}\d{3}[ .-]?\d{3}", validator=v.clabe,
         description="a Mexican CLABE (Banxico's 18 digits, 3-7-1 weighted check digit) after the word CLABE, "
                     "compact or grouped bank, plaza, account, check (`002 180 70012345678 9`)"),
    Rule("pix_key", "BANK_ACCOUNT",
         rf"{_PIX_LABEL}[^\n]{{0,30}}?(?<![0-9A-Za-z-])(?P<v>{_PIX_VALUE})(?![0-9A-Za-z-])",
         trigger=r"(?i:pix|chave[ _-]aleat|random[ _-]key)[^\n]{0,40}(?:[0-9a-f]{8}-[0-9a-f]{4}-|\d{11})",
         validator=_pix_key, reject_label=_PIX_NOT_KEY, label_window=16,
         description="a PIX key after a PIX label (DICT: an EVP, a random UUID the Banco Central assigns, or a "
                     "CPF's eleven digits, its check read); never a bare UUID, nor a PIX payment's or charge's id"),
    Rule("bank_account", "BANK_ACCOUNT", rf"{_ROUTING_WORDS}{_ABA}[^0-9]{{0,40}}?{_US_ACCOUNT}",
         trigger=r"(?i:aba|rtn|routing|ruta)[^0-9]{0,16}[0-9]{9}", reject=r"(?i:\bending\b|\blast[ -]?(?:4|four)\b)",
         description="US bank account numbers after their ABA routing number (`ABA 0210… account 1234…`)"),
    Rule("bank_account", "BANK_ACCOUNT", rf"{_US_ACCOUNT}[^0-9]{{0,40}}?{_ROUTING_WORDS}{_ABA}",
         trigger=r"(?i:aba|rtn|routing|ruta)[^0-9]{0,16}[0-9]{9}", reject=r"(?i:\bending\b|\blast[ -]?(?:4|four)\b)",
         description="US bank account numbers before their ABA routing number (`Acct 1234…, routing 0210…`)"),
    Rule("bank_account", "BANK_ACCOUNT", rf"{_BSB}[^0-9]{{0,40}}?{_AU_ACCOUNT}",
         trigger=r"(?i:bsb)[^0-9]{0,16}[0-9]{3}[ -]?[0-9]{3}", validator=v.au_account,
         reject=r"(?i:\bending\b|\blast[ -]?(?:4|four)\b)",
         description="Australian bank account numbers after their BSB (`BSB 062-000, account 1234 5678`)"),
    Rule("bank_account", "BANK_ACCOUNT", rf"{_AU_ACCOUNT}[^0-9]{{0,40}}?{_BSB}",
         trigger=r"(?i:bsb)[^0-9]{0,16}[0-9]{3}[ -]?[0-9]{3}", validator=v.au_account,
         reject=r"(?i:\bending\b|\blast[ -]?(?:4|four)\b)",
         description="Australian bank account numbers before their BSB (`Acct 12345678, BSB 062-000`)"),
    Rule("ssn", "SSN", r"(?:^|[^\w.-])(?P<v>\d{3}-\d{2}-\d{4})(?:$|[^\w-]|\.(?:$|\D))",
         trigger=r"\d{3}-\d{2}-\d{4}", validator=v.ssn, description="US Social Security numbers, 123-45-6789"),
    Rule("ssn", "SSN", rf"{_SSN_OWN}{_SSN_AFTER}", reject=_OTHER_TAX_NUMBER,
         trigger=r"(?i:ssn|ss#|ss[ _-]?n|social[ _-]?sec|soc\.?[ _-]?sec|social[ \t]+(?:is|was|as)|"
                 r"social[ \t]*[:#=]|tin|tax|insured['’]?s[ \t]+i\.?d|"
                 r"taxpayer|sozialversicherung|"
                 r"curit[eé] sociale|guro social|guridad social|previdenza|an[cç]a social)|社会保障|社会安全",
         validator=v.ssn,
         description="US Social Security numbers after SSN, SS number, social security (`Soc. Sec. No.`), TIN or "
                     "tax id"),
    Rule("itin", "ITIN",
         rf"{_ITIN_WORDS}[^\d\n]{{0,30}}(?:{_TAX_FORM}[^\d\n]{{0,30}})?"
         rf"(?<![\d-])(?P<v>9\d{{2}}{_DSEP}?\d{{2}}{_DSEP}?\d{{4}})(?:$|[^\d-])",
         trigger=r"(?i:itin|individual[ _-]taxpayer)", validator=v.itin,
         description="US ITINs after their label (`ITIN`, `Individual Taxpayer Identification Number`): 9, then "
                     "the IRS's ranges for the fourth and fifth digits, dashed or compact"),
    Rule("ssn", "SSN", rf"{_SSN_TRANSLATED}{_SSN_AFTER}", trigger="", translated=_SSN_TRANSLATED, validator=v.ssn,
         description="US Social Security numbers after the words for one in some 20 more languages "
                     "(`หมายเลขประกันสังคม`, `Số an sinh xã hội`)"),
    # Interchange formats name a field by a code their specifications define: X12's NM1 id qualifier `34` and REF
    # qualifier `SY` (Social Security Number), the SSN of an EFW2 `RW` wage record (SSA, positions 3-11).
    Rule("ssn", "SSN",
         r"(?:\bNM1[*|^](?:[^*|^~\n]{0,60}[*|^]){7}34[*|^]|\bREF[*|^]SY[*|^]|(?m:^)RW)(?P<v>\d{9})(?:$|[^\d])",
         trigger=r"NM1[*|^]|REF[*|^]SY[*|^]|RW\d{9}", validator=v.ssn,
         description="SSNs in the fields X12 and EFW2 define for one: an X12 NM1 name whose id qualifier is `34`, "
                     "a `REF*SY` reference, an EFW2 `RW` record's positions 3-11"),
    Rule("ssn", "SSN", r"\bPID\|(?:[^|\r\n]*\|){18}(?P<v>\d{3}-?\d{2}-?\d{4})(?=[|^\r\n]|$)",
         trigger=r"PID\|", validator=v.ssn,
         description="the SSN of an HL7 v2 PID segment's field 19 (SSN Number - Patient)"),
    Rule("ssn", "SSN",
         r"(?:^|[^\w. -]|[^\d.-] )(?P<v>\d{3} \d{2} \d{4})(?:$|[^\w .-]|\.(?:$|\D)|[ ](?:$|[^\d ]))",
         trigger=r"\d{3} \d{2} \d{4}", validator=v.ssn,
         description="US Social Security numbers printed in their groups with spaces, 123 45 6789, standing alone "
                     "(no digit group beside them, as in columns of figures)"),
    Rule("national_id", "NATIONAL_ID",
         r"(?:\[|%5[Bb])(?:personal_)?id_number(?:\]|%5[Dd])(?:=|\\?[\"']?[ \t]*:[ \t]*\\?[\"'])"
         r"(?P<v>[A-Za-z0-9 .-]{4,24}[A-Za-z0-9])(?![A-Za-z0-9])",
         trigger=r"(?:\[|%5[Bb])(?:personal_)?id_number(?:\]|%5[Dd])", validator=lambda s: bool(re.search(r"\d{4}", s)),
         description="a person's government id in a Stripe request (`individual[id_number]=`, `person[id_number]`, "
                     "`representative[personal_id_number]`): an SSN in the US, a SIN in Canada, any country's"),
    Rule("ssn", "SSN", r"(?:^|[^\w.-])(?P<v>\d{3}[ -]?\d{2}[ -]?\d{4})[ \t]*\(?(?i:ssn)\b",
         trigger=r"\d{4}[ \t]*\(?(?i:ssn)", validator=v.ssn,
         description="US Social Security numbers followed by (SSN)"),
    Rule("national_id", "NATIONAL_ID",
         rf"{_NATID_WORDS}(?:[^\n]{{0,30}}?[^A-Za-z0-9\n])?(?P<v>{_NATID})(?:$|[^A-Za-z0-9])",
         trigger=rf"{_NATID_WORDS}[^\n]{{0,30}}[0-9A-Z]{{2}}[ -]?\d", validator=v.national_id,
         description="national ids after their label, each by its public check: UK NINO (HMRC's prefix rules, "
                     "suffix A-D), Spanish DNI/NIF and NIE (the mod-23 letter), Canadian SIN (Luhn)"),
    Rule("national_id", "NATIONAL_ID", rf"(?:^|[^A-Za-z0-9])(?P<v>{_NINO_SPACED})(?:$|[^A-Za-z0-9])",
         trigger=r"[A-Z]{2} \d{2} \d{2} \d{2} [A-D]", validator=v.national_id,
         description="UK National Insurance numbers printed in their pairs (AB 12 34 56 C) anywhere"),
    *_national_rules(),
    Rule("card", "CARD",
         rf"(?:{_PRODUCT_CODE}|^|[^A-Za-z0-9_.+/-])(?<!\d\d\d\d )(?<![A-Z]{{2}}\d\d )(?P<v>\d(?:{_CSEP}?\d){{11,18}})"
         r"(?! \d{4} \d{4}(?!\d))(?:$|[^A-Za-z0-9_]|[._](?:$|\D))",
         trigger=rf"\d(?:{_CSEP}?\d){{11}}", validator=v.card_number, reject=rf"^{_PRODUCT_CODE}",
         description="payment card numbers (issuer ranges and lengths, Luhn); not a product code after its "
                     "label (EAN, GTIN, UPC, ISBN), nor a window of a longer run of groups of four (a Brazilian "
                     "NFC-e's 44-digit access key as a receipt prints it: a group before, or two after), nor the "
                     "groups after an IBAN's head (`LT34 …`: its country code and check digits, the rest its BBAN)"),
    Rule("card", "CARD",
         r"(?:%B|;|(?:^|[^0-9A-F])(?:5A|57)[ \t]*(?:[0-9A-F]{2}[ \t]+)?)(?P<v>\d{12,19})"
         r"(?:F?(?:$|[^\dA-F])|[=D^]\d{4})",
         trigger=r"%B\d|;\d{12}|(?:5A|57)[ \t]*(?:[0-9A-F]{2}[ \t]+)?\d{12}", validator=v.card_number,
         description="card numbers in track data and EMV records: ISO/IEC 7813 track 1 (`%B<PAN>^NAME^YYMM…`) and "
                     "track 2 (`;<PAN>=YYMM…`), EMV tag 5A (Application PAN) and tag 57 (track 2 equivalent, `D` "
                     "between PAN and expiry), its length byte before"),
    Rule("card", "CARD", r"\bFP[ \t]+(?:PAX[ \t]+)?CC[A-Z]{2}(?P<v>\d{12,19})(?![0-9])",
         trigger=r"FP[ \t]+(?:PAX[ \t]+)?CC[A-Z]{2}\d", validator=v.card_number,
         description="a card in an airline booking's form of payment (Amadeus `FP CCVI4111…/0129`: `CC`, the "
                     "brand's two letters, the number)"),
    Rule("card", "CARD",
         r"(?:(?i:card|carte|karte|tarjeta|carta|cart[aã]o|kaart|kort|karta)|卡[号號]|카드|カード)[^\d\n]{0,30}"
         rf"(?P<v>\d(?:{_CSEP}?\d){{11,18}})(?:$|[^\w-]|(?<=\d)[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af])",
         trigger=rf"\d(?:{_CSEP}?\d){{11}}", validator=v.card_number_any_grouping,
         description="payment card numbers after a word naming a card, in any grouping (OCR, hand-typed); the "
                     "Chinese, Korean and Japanese words too (卡号, 卡號, 카드, カード)"),
    Rule("card", "CARD", rf"{_FUEL_CARD}[^\d\n]{{0,24}}(?<![\w.-])(?P<v>7(?:[ -]?\d){{15,18}})(?![ -]?\d)",
         trigger=_FUEL_CARD, validator=v.fuel_card,
         description="a fleet fuel card after its label (ISO/IEC 7812-1 major industry identifier 7, petroleum: "
                     "16-19 digits opening with 7, Luhn, in one run or in fours)"),
    Rule("password", "PASSWORD",
         rf"{_OCPP_FIELD}attributeValue{_OCPP_IS}\\?\"(?P<v>[^\"\\\n]{{1,200}})\\?\"[^\]\n]{{0,200}}?"
         rf"{_OCPP_FIELD}variable{_OCPP_IS}\{{[ \t]*{_OCPP_FIELD}name{_OCPP_IS}\\?\"{_OCPP_SECRET}\\?\"",
         trigger=rf"attributeValue[^\]\n]{{0,250}}{_OCPP_SECRET}",
         description="the value an OCPP 2.0.1 SetVariables request sets (`setVariableData`'s `attributeValue`) on a "
                     "variable that is a credential: SecurityCtrlr's `BasicAuthPassword` (security profiles 1-2), "
                     "a password or secret, the 1.6 `AuthorizationKey`"),
    Rule("phone", "PHONE",
         rf"(?:^|[^\w+.])(?P<v>\+[1-9]\d{{0,2}}{_PSEP}?(?:\(0\) ?)?(?:\(\d{{1,4}}\)(?:{_PSEP}\d)?|\d{{1,4}})"
         rf"(?:{_PSEP}?\d{{2,4}}){{1,4}})"
         r"(?:$|[^\w.]|\.(?:$|\D))",
         trigger=r"\+[1-9]", validator=lambda s: 8 <= len(v.digits_of(s)) <= 15,
         description="phone numbers in international format (+country code)"),
    Rule("phone", "PHONE",
         r"(?:^|[^\w+.])(?P<v>\(\+[1-9]\d{0,2}(?: \d{1,4})?\)[ -]?\d{2,5}(?:[ .-]\d{2,5}){0,3})"
         r"(?:$|[^\w.]|\.(?:$|\D))",
         trigger=r"\(\+[1-9]\d{0,2}(?: \d{1,4})?\)[ -]?\d{2}",
         validator=lambda s: 8 <= len(v.digits_of(s)) <= 15,
         description="phone numbers with the country code (and a mobile or area prefix) in parentheses, as Chile, "
                     "Mexico and Spain write them: (+56 9) 6123-4567, (+52 55) 1234 5678, (+34) 612 345 678"),
    Rule("phone_nanp", "PHONE",
         r"(?:^|[^\w.-])(?P<v>\(\d{3}\)[ .-]?\d{3}[ .-]\d{4}|(?:1[.-])?\d{3}[.-]\d{3}[.-]\d{4})"
         r"(?:$|[^\w.-]|\.(?:$|\D))",
         trigger=r"\d{3}[.-]\d{3}[.-]\d{4}|\(\d{3}\)[ .-]?\d{3}[ .-]\d{4}", validator=v.nanp_written,
         reject_label=_TRACKING_NUMBER, label_window=40,
         description="North American numbers, (555) 123-4567, 1-555-123-4567; not a money transfer's control "
                     "number, which Western Union writes 3-3-4 (`MTCN 250-446-2009`)"),
    Rule("phone_area", "PHONE",
         r"(?:^|[^\w.(-])(?P<v>\(0?\d{1,4}\) ?\d{2,8}(?:[ -]\d{2,5}){0,2})(?:$|[^\w.-]|\.(?:$|\D))",
         trigger=r"\(0?\d{1,4}\) ?\d{2,5}", validator=v.area_code_phone,
         description="numbers in ITU-T E.123 national notation, the area code in parentheses: (020) 7946 0321, "
                     "(07) 3123 4567, (11) 91234-5678, a German subscriber number whole: (030) 2072513"),
    Rule("phone_national", "PHONE",
         rf"(?:(?:\b|[_\d]){_PHONE_LATIN}|{_PHONE_CAMEL}|{_PHONE_CJK})[^\d\n+(]{{0,24}}{_QUALIFIER}(?:\((?=[(+]))?"
         rf"(?P<v>(?:\+|00|0xx)?{_NATIONAL_NUMBER})(?:$|\W)",
         trigger=rf"{_PHONE_WORDS}[^\d\n+(]{{0,24}}{_QUALIFIER}\(?[+(]?\d", validator=v.national_phone,
         reject=rf"{_ID_BETWEEN}|(?i:\b(?:{_COMPANY_NUMBER})\b)|{_CONTACT_RECORD}|{_CONTACT_OBJECT}|{_TOLL_FREE}|"
                rf"{_NAMED_HELPLINE}",
         reject_label=rf"\b10\.\d{{4,9}}/\S*$|[A-Za-z]/?$|{_TOLL_FREE}[^\d\n]{{0,24}}$|{_NUMBER_ATTRIBUTE}",
         label_window=64,
         description="phone numbers in national formats (US/CA, UK, FR, DE, IN, AU, BR) after phone, tel, mobile, "
                     "Handy, celular, my number; not a helpline's whose name opens with the phone word, nor a number "
                     "whose name says it is free to call before the phone word (`gratis nummer …`), nor digits glued "
                     "to the letters of an id's prefix (`número de seguimiento RM…`), nor an XML element's bare "
                     "`Numero=` attribute (`<dte:NumeroAutorizacion Serie=… Numero=…>`: the element names it)"),
    Rule("phone_national", "PHONE",
         r"(?:^|[^\w.])[sS]\.\\?[\"']?[ \t]*[:;=]?[ \t]*(?:\.{3,}[ \t]*)?\\?[\"']?"
         r"(?P<v>(?!80)[4-8]\d{2}[ -]\d{4})(?![\w-]|[ .]\d)",
         trigger=r"[sS]\.[^\n\d]{0,14}[4-8]\d\d[ -]\d{4}",
         description="an Icelandic number after `s.` (sími, as Icelanders abbreviate it in signatures and forms): "
                     "seven digits as Iceland's plan writes them, three and four (geographic 4xx-5xx, mobile "
                     "6xx-8xx; not the free-of-charge 80x)"),
    Rule("phone_national", "PHONE",
         rf"(?i:\bmsisdn|\b(?:destination|source)_addr|\bcall(?:ing|ed)-station-id|{_CALLER_FIELD})"
         r"\\?[\"']?[ \t]*[=:][ \t]*\\?[\"']?"
         r"(?P<v>\+?[1-9]\d{7,14}|\(?0\d[\d ()./-]{6,16}\d|[1-9]\d{2,4}[ ./-]\d{2,5}[ ./-]?\d{2,5})(?:$|[^\d])",
         trigger=rf"(?i:msisdn|(?:destination|source)_addr|call(?:ing|ed)-station-id|{_CALLER_FIELD})",
         validator=v.subscriber_number,
         description="the subscriber number of a telecom record's field: `msisdn=` (3GPP: country code first, no "
                     "`+`), SMPP's `destination_addr=`/`source_addr=`, RADIUS `Calling-Station-Id`/"
                     "`Called-Station-Id` (a national number too), and a caller's number as contact-centre and "
                     "telephony records name it: ANI (Genesys, Five9, Avaya), `caller_id`, `calling_number`, "
                     "`from_number`, `CallerNumber`"),
    Rule("phone_national", "PHONE",
         r"(?im:^[ \t]*(?:item\d+\.)?TEL(?:;[^:\n]{0,80})?:(?:tel:)?)(?P<v>\+?\(?\d[\d ()./-]{4,22}\d)(?:$|[^\d])",
         trigger=r"\b(?i:TEL)[;:]", validator=v.vcard_phone,
         description="a vCard's TEL property (RFC 6350, 2426; Apple's `item1.TEL`): "
                     "`TEL;TYPE=\"cell,voice\";PREF=1:…`, `TEL;CELL:…`, `TEL;VALUE=uri:tel:+…`: the property names a "
                     "phone number, whatever its format"),
    Rule("phone_before_word", "PHONE",
         rf"(?:^|[^\w+.])(?P<v>{_NATIONAL_NUMBER})[ \t]*(?:{_PHONE_AFTER})",
         trigger=rf"\d[ \t]*(?:{_PHONE_AFTER})", validator=v.national_phone,
         description="phone numbers in national formats before the words that follow them in verb-final languages "
                     "(Korean, Japanese, Turkish, Hindi)"),
    Rule("phone_before_word", "PHONE",
         rf"(?:^|[^\w+.])(?P<v>{_NATIONAL_NUMBER})[ \t]+[—–][ \t]+(?:{_PHONE_WORDS})"
         r"(?:[ \t]+(?:(?i:no|nr|number|nummer|num[eé]ro|n[uú]mero)|नंबर|नम्बर))?\.?[ \t]*"
         r"(?:$|\r?\n|\\n|\\?[\"',;)|])",
         trigger=r"\d[ \t]+[—–][ \t]+[^\s\d]", validator=v.national_phone,
         description="a phone number in a national format with its label after a dash ending the line or the "
                     "field, as a note or a contact list writes it (`N — mobile no.`, `N – फ़ोन नंबर`)"),
    Rule("phone_before_word", "PHONE",
         rf"(?:^|[^\w+.])(?P<v>{_NATIONAL_NUMBER})[ \t]*\((?:{_PHONE_WORDS})(?:[ \t]+[^\s()\d]{{1,12}}){{0,2}}\.?\)",
         trigger=r"\d[ \t]*\([^\s\d()]", validator=v.national_phone,
         reject=r"\((?i:contact[oa]?|contato|num[eé]ro|n[uú]mero|numer[a-z]{0,2}|nummer|number|no|nr)\.?\)$",
         description="a phone number in a national format with its label after it in parentheses, as notes and "
                     "remarks write one (`N (mobile no.)`, `N (téléphone)`, `N (joignable au)`, `N (मोबाइल नंबर)`); "
                     "not after a bare `(contact)` or `(number)`, which name a record or a figure of any kind"),
    Rule("phone_national", "PHONE",
         rf"{_WALLET_NUMBER}[ \t]*(?:[:：=][ \t]*|[-–—][ \t]*)?(?P<v>{_NATIONAL_NUMBER})(?:$|\W)|"
         rf"(?:^|[^\w+.])(?P<w>{_NATIONAL_NUMBER})[ \t]*\({_WALLET_NUMBER}\)",
         trigger=_WALLET, validator=v.national_phone, reject=rf"{_TOLL_FREE}",
         description="a mobile-money wallet's number, its owner's phone number in a national format or with its "
                     "country code (`M-PESA number: …`, `bKash number …`, `Easypaisa account …`, `namba ya M-PESA …`, "
                     "`N (JazzCash number)`)"),
    Rule("phone_national", "PHONE",
         rf"(?<![A-Za-z])(?:{_WALLET})(?:[ \t]+{_WALLET_WORD})?\\?[\"']?[ \t]*(?:[:：=]|[-–—]|\.{{2,}})?[ \t]*"
         rf"\\?[\"']?(?P<v>{_NATIONAL_NUMBER})(?:$|\W)",
         trigger=_WALLET, validator=v.wallet_phone, reject=rf"{_TOLL_FREE}",
         description="a mobile-money wallet's number after the wallet's name alone, or as a form's label or a "
                     "JSON field names it (`MoMo : 677 50 05 55`, `Wave 77 123 45 67`, `\"M-Pesa number\": "
                     "\"0712…\"`): a mobile number of a country the wallets run in"),
    Rule("phone_before_word", "PHONE",
         rf"(?:^|[^\w+.])(?P<v>{_NATIONAL_NUMBER})[ \t]*\((?:[^\s()\d]{{1,12}}[ \t]+){{1,2}}(?:{_PHONE_WORDS})"
         r"(?:[ \t]+[^\s()\d]{1,12})?\)",
         trigger=r"\d[ \t]*\([^\s\d()]", validator=v.national_phone, reject=r"\((?i:not|no|non|kein[a-z]*|pas)\b",
         description="a phone number in a national format with its label after it in parentheses, words before "
                     "the phone word (`N (nambari ya simu)`, `N (د موبایل شمېره)`, `N (numéro de téléphone)`)"),
    Rule("phone_grouped", "PHONE",
         r"(?:(?<=\\[nrt])|(?<![\w+./#@$%&-])(?<!\d[ .,:=-])(?<!\d[ .-]{2})(?<!\d[ .-]{3}))"
         r"(?P<v>(?:0\d{1,5}|00[1-9]\d{0,2}[ .-]\d)(?:(?:[ .-]|[ ]?[/-][ ]?)\d{2,8}){1,5}|[6-9]\d{4}[ -]\d{5})"
         r"(?![\w/@]|[./-]\d|[ ]\d)",
         trigger=r"(?:^|[^\w+./#@$%&-]|\\[nrt])(?:0\d{1,5}(?:[ .-]|[ ]?[/-][ ]?)\d{1,8}|[6-9]\d{4}[ -]\d{5})",
         validator=v.grouped_phone, reject_label=_NOT_A_PHONE, label_window=40,
         description="phone numbers with no word beside them, by their grouping and plan (libphonenumber's "
                     "metadata): a trunk 0 and the national format's first group (0176 7009 2866, 0141-330 7834, "
                     "06 71 82 93 04), 00 and a country code (0033 6 86 45 17 34), India's mobiles in two fives; a "
                     "person's numbers, not toll-free or premium-rate ones"),
    Rule("ipv4", "IP", rf"(?:^|[^\w.])(?P<v>{_OCTET}(?:\.{_OCTET}){{3}})(?:$|[^\w.]|\.(?:$|[^\w]))"
         rf"(?:[ \t]*[(,]?[ \t]*{_BUILD_AFTER})?",
         trigger=r"\d\.\d{1,3}\.\d{1,3}\.\d", validator=v.public_ip, reject_label=_VERSION_LABEL, label_window=24,
         reject=_BUILD_AFTER,
         description="public IPv4 addresses (not private, loopback or reserved; not version numbers, nor four "
                     "numbers a word right before or a build number right after names a version: `OPERA PMS "
                     "version 5.6.30.53`, `Opera PMS 5.6.24.1 build 9156`)"),
    Rule("ipv6", "IP", r"(?:^|[^\w:.])(?P<v>[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7})(?:$|[^\w:])",
         trigger=r"[0-9A-Fa-f]:[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]|[0-9A-Fa-f]::[0-9A-Fa-f]|"
                 r"[0-9A-Fa-f]:[0-9A-Fa-f]{1,4}::",
         validator=v.public_ip, description="public IPv6 addresses"),
    Rule("pairing_code", "SECRET",
         rf"(?:{_PAIRING_OWN}|{_PAIRING_TRANSLATED})[^\d\n]{{0,24}}?(?:\b\d{{1,20}}[ \t]+(?=\d{{8}}))?\[?"
         r"(?P<v>\d{4}-?\d{3}-?\d{4}(?:\d{10})?|\d{3}-\d{2}-\d{3})(?![\d-])",
         trigger=rf"{_PAIRING_OWN}[^\d\n]*\d", translated=_PAIRING_TRANSLATED, validator=v.pairing_code,
         description="a device's setup code after its label: Matter's manual pairing code (11 or 21 digits, its "
                     "Verhoeff check digit; chip-tool's `Manual pairing code: [3497-011-2332]`, `pairing code "
                     "<node> <code>`), a HomeKit setup code (`XXX-XX-XXX`)"),
    Rule("wallet_pin", "PASSWORD",
         rf"(?<![A-Za-z0-9_])(?:(?:{_PIN_OWN}|{_PIN_LATIN}|{_PIN_TRANSLATED}){_PIN_GAP}(?P<v>\d{{4,6}})|"
         rf"{_PIN_SECOND}{_PIN_GAP}(?P<w>\d{{5,12}})){_PIN_END}",
         trigger=rf"{_PIN_OWN}|{_PIN_LATIN}", translated=f"{_PIN_TRANSLATED}|{_PIN_SECOND}",
         validator=v.wallet_pin, reject_label=r"(?i:pin[ _-]?code|pincode)|,[ \t]*(?i:pin)\b", label_window=2,
         description="a card's or a mobile-money wallet's PIN after its label (`M-PESA PIN: …`, `UPI PIN …`, "
                     "`(MPIN) …`, `PIN ya M-PESA: …`, the word for PIN or for secret number in the wallets' "
                     "languages), 4 to 6 digits; an Iranian card's second PIN, 5 to 12; not a postal PIN code "
                     "(`Pincode 560001`, `…, PIN 110001`), not a run or one digit repeated"),
    Rule("passport", "PASSPORT",
         r"(?:^|[^A-Z0-9<])(?P<v>[A-Z0-9<]{9}\d[A-Z<]{3}\d{6}\d[MFX<]\d{6}\d[A-Z0-9<]{14}[\d<]\d)(?![A-Z0-9<])",
         trigger=r"\d[A-Z<]{3}\d{7}[MFX<]\d{7}", validator=v.mrz_line,
         description="the second line of a passport's machine-readable zone (ICAO 9303 TD3: the number and its "
                     "check digit, nationality, birth date, sex, expiry, personal number), whole"),
    Rule("passport", "PASSPORT",
         r"\bSSR[ \t]+DOCS[ \t]+[A-Z0-9]{2}[ \t]+[A-Z]{2}\d{1,2}[ \t]*/?[ \t]*[PIAC]?/[A-Z]{3}/"
         r"(?P<v>[A-Z0-9]{5,15})/",
         trigger=r"SSR[ \t]+DOCS", description="a passport's number in an airline booking's `SSR DOCS` element "
                                                 "(`P/FRA/<number>/FRA/<birth date>/…`)"),
    Rule("passport", "PASSPORT",
         r"(?:\b(?i:passport)[ _-]?(?i:no\.?|number|num|nr\.?|#)|\b(?i:passport)\\?[\"']?(?=[ \t]*[:=])|"
         r"(?i:reisepass[ _-]?(?:nummer|nr\.?)|num[eé]ro[ _-]de[ _-]passeport|"
         r"n[uú]mero[ _-]de[ _-]pas(?:aporte|saporte)|numero[ _-]di[ _-]passaporto|paspoort[ _-]?nummer|passnummer|"
         r"n[°º][ \t]?de[ \t]pas(?:seport|aporte|saporte)|\bpasaport(?:[ \t]?no\.?|[ \t]numaras[ıi])))"
         r"\\?[\"']?[ \t]*[:=#]?[ \t]*\\?[\"']?"
         r"(?P<v>[A-Z0-9]{6,9})(?![A-Za-z0-9])",
         trigger=r"(?i:passport|reisepass|passeport|pasaport|passaporte|passaporto|paspoort|passnummer)",
         validator=lambda s: any(c.isdigit() for c in s) and len(set(s)) > 2,
         description="a passport's number after its label (`Passport No. …`, `passport_number: …`, "
                     "`Reisepassnummer`, `numéro de passeport`): 6-9 capitals and digits, a digit among them"),
    Rule("date_of_birth", "DOB",
         rf"(?i:\bdob|date[ _-]?of[ _-]?birth|birth[ _-]?date|birthday|\bborn(?: on)?)(?:[^\n\d]{{0,24}}\n)?"
         rf"[^\n\d]{{0,24}}"
         rf"(?P<v>(?i:{_DATE}))",
         trigger=r"(?i:dob|birth|born)[^\d]{0,50}\d", validator=v.birth_date,
         description="dates of birth next to words like born, DOB, date of birth"),
    # Last: values no label names, in any carrier and language, by their shape alone (every rule above wins where
    # they overlap).
    Rule("random_token", "SECRET",
         r"(?:^|[^A-Za-z0-9_+/.\\-])(?P<v>[A-Za-z0-9][A-Za-z0-9_+/-]{30,126}[A-Za-z0-9](?:={1,2})?)"
         r"(?:$|[^A-Za-z0-9_+/=-])",
         validator=v.random_token, reject_label=_NOT_A_KEY, label_window=80, sweep=True,
         description="a key no label names: 32+ random characters of base62/base64 (both cases and digits, "
                     "the alphabet's entropy) or upper-case groups with digits; not hex, a UUID, an id behind its "
                     "type (`call_…`), words run together, base64 of text or of a certificate or an image, nor "
                     "after a digest's or an id's name"),
    Rule("generated_password", "PASSWORD",
         rf"(?<![{_GENERATED}])(?P<v>[{_GENERATED}]{{0,63}}[!#$%?@~][{_GENERATED}]{{0,63}})(?![{_GENERATED}])",
         validator=v.generated_password, reject_label=_NOT_A_KEY, label_window=80, sweep=True,
         description="a password no label names, as generators and password policies make them: 8-64 "
                     "characters of both cases, digits and a symbol (`!#$%?@~`); not a path, a URL, an address, "
                     "`user@host`, a file's anchor, URL-encoded text or markup"),
)
