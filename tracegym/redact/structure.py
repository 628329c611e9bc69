"""Values whose label stands away from them, found by the structure that ties the two.

A password is a password because of a label, and in structured text that label is often not right before it: a
sibling JSON field (`{"name": "DB_PASSWORD", "value": …}` in Kubernetes env lists and HAR, `{"key": …}` in
Postman, `{"OutputKey": "AdminPassword", "OutputValue": …}` in CloudFormation), the object's own key or a
`"sensitive": true` beside it (Terraform state outputs), the element before it (a Slack block's `"Password: "`
text, then the value in its own code-styled element), a column (`INSERT INTO t (email, phone) VALUES (…)`), or
the line above (`Password:` then the value indented below it, PDF text whose label and value sit in the same
column of adjacent lines). Each function here gives (label, start, end) for such values; the detector reads each
as `label: value`, so every rule's label logic (password, key and phone words, …) applies to it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tracegym.redact.bodies import body_fields
from tracegym.redact.bound import INSERT_HEAD, bound_parameters, sql_row
from tracegym.redact.cookies import cookie_values
from tracegym.redact.dumps import copy_rows
from tracegym.redact.labelled import Labelled
from tracegym.redact.manifests import SECRET_DATA, random_passwords, secret_data

MAX_LABEL = 48
SENSITIVE = ("secret", "password")
"""The labels of a value its structure marks sensitive without naming it (Terraform's `"sensitive": true`)."""

_Q = r"\\{0,15}\""
"""A quote, escaped when the JSON document sits inside a JSON string (twice when in one inside that; up to four
levels): bounded, as `\\*` would scan a run of backslashes from each of its positions (quadratic)."""
_FIELD = re.compile(rf"{_Q}([A-Za-z_][\w.-]{{0,40}}){_Q}[ \t]*:[ \t]*(?:{_Q}((?:[^\"\\\n]|\\[^\"\n])*?){_Q}|(true))")
_FLAT_OBJECT = re.compile(r"\{[^{}]*\}")
_NAME_KEY = re.compile(r"(?i:name|key|id|[a-z]*(?:Key|Name)|label|header|field|designation|element|placeholder|"
                       r"type|title)")
"""A sibling naming its value; `id` as Terraform state's `attributes` hold a parameter's or a variable's name
(`{"id": "twilio_auth_token", "value": …}`); `type` as a multi-valued attribute's (SCIM, RFC 7643 2.4:
`{"value": …, "type": "mobile"}`); `title` as a password manager's field (1Password's `{"title": "social security
number", "value": {"string": …}}`)."""
_URI_KEY = re.compile(r"url|system")
"""A sibling naming its value by a URI whose last segment is the name: a FHIR extension's `url`
(`…/StructureDefinition/db_password`), an identifier's `system` (`http://hl7.org/fhir/sid/us-ssn`)."""
_VALUE_KEY = re.compile(r"(?i:value|[a-z]*_?Value|secret|data|text|number|address|string|concealed)|"
                        r"value[A-Z][a-zA-Z]*")
"""The value's own field; FHIR's typed `value[x]` too (`valueString`, `valueCode`), a qualified one
(`plaintext_value` of a Terraform `github_actions_secret`), a contact list's `number` (`{"label": "work",
"number": …}`), an endpoint's `address` (Amazon Connect's `{"Address": …, "Type": "TELEPHONE_NUMBER"}`), 1Password's
typed `string` and `concealed` (a concealed field is a secret whatever its title)."""
_TEXT_KEY = re.compile(r"(?i:text|content|value|body)")
_PARENT = re.compile(rf"{_Q}([A-Za-z_](?:[\w.-]| (?! )){{0,40}}){_Q}[ \t]*:[ \t]*"
                     r"(?:\[[ \t\r\n]*(?:\{[^{}]*\}[ \t\r\n]*,[ \t\r\n]*)*)?$")
"""The key an object sits under (words apart too: Firestore's `"Client Secret": {"stringValue": …}`), or the list
it is an item of (a multi-valued attribute: `"phoneNumbers": [{…}, {…}]`)."""


def json_siblings(text: str, wanted: Callable[[str], object]) -> Labelled:
    """Values of flat JSON objects labelled by a sibling field, by the key the object sits under, or marked
    `"sensitive": true`; then text elements labelled by the element before them."""
    out: Labelled = []
    for obj in _FLAT_OBJECT.finditer(text):
        fields = {m.group(1): m for m in _FIELD.finditer(obj.group())}
        value = next((m for k, m in fields.items() if _VALUE_KEY.fullmatch(k) and m.group(2)), None)
        if value is not None:
            labels = _labels_of(text, obj.start(), fields) + (list(SENSITIVE) if value.group(1) == "concealed" else [])
            out += [(label, obj.start() + value.start(2), obj.start() + value.end(2))
                    for label in labels if wanted(label)]
    return out + _element_chains(text, wanted)


_ITEM = re.compile(rf"(?P<obj>\{{(?:[^{{}}]|\{{[^{{}}]*\}})*\}})|"
                   rf"(?<=[\[,])[ \t\r\n]*{_Q}(?P<str>(?:[^\"\\\n]|\\[^\"\n])*?){_Q}(?=[ \t\r\n]*[,\]])")
"""An item of a rich-text list: an element, an object holding flat ones at most (`"style": {"code": true}` in
Slack's), or a bare string (Telegram's export writes a message's `text` as plain strings between its styled
entities: `["Password ", {"type": "code", "text": …}]`)."""
_LIST_INSIDE = re.compile(rf"\[[ \t\r\n]*(?:\{{|{_Q})")
"""An object holding a list of items is a container (a Telegram message), not an element: its items are read."""
_CODE_MARK = re.compile(rf"{_Q}(?:code|pre){_Q}")
"""An element styled as code (Slack's `"style": {"code": true}`, Telegram's `"type": "code"` or `"pre"`)."""


def _element_chains(text: str, wanted: Callable[[str], object]) -> Labelled:
    """A list item's text labelled by the item right before it when that one's text ends in `:` or `=` (`{"text":
    "Password: "}, {"text": "…", "style": {"code": true}}`), or, when the item is styled as code, by the end of
    the text before it whatever it ends with (`["mật khẩu ", {"type": "code", "text": "…"}]`)."""
    out: Labelled = []
    previous: tuple[int, str, bool] | None = None  # (end, label, ended with `:`/`=`) of the last item with text
    at = 0
    while (item := _ITEM.search(text, at)) is not None:
        obj = item.group("obj")
        if obj is not None and _LIST_INSIDE.search(obj):
            at, previous = item.start() + 1, None
            continue
        at = item.end()
        span = _item_text(item)
        if span is None:
            previous = None
            continue
        code = obj is not None and _CODE_MARK.search(obj) is not None
        if previous is not None and re.fullmatch(r"[\s,]*", text[previous[0]:item.start()]) \
                and (previous[2] or code) and previous[1] and wanted(previous[1]):
            out.append((previous[1], *span))
        said = text[span[0]:span[1]].strip()
        colon = said.endswith((":", "：", "="))
        previous = (item.end(), (said[:-1] if colon else said).strip()[-MAX_LABEL:], colon)
    return out


def _item_text(item: re.Match[str]) -> tuple[int, int] | None:
    """Where a list item's text lies: a bare string's, or its element's text field."""
    if item.group("str") is not None:
        return (item.start("str"), item.end("str")) if item.group("str") else None
    element = next((m for m in _FIELD.finditer(item.group("obj")) if _TEXT_KEY.fullmatch(m.group(1)) and m.group(2)),
                   None)
    return None if element is None else (item.start() + element.start(2), item.start() + element.end(2))


def _labels_of(text: str, start: int, fields: dict[str, re.Match[str]]) -> list[str]:
    """The labels a flat object gives its value: a name-like sibling's text, the key it sits under, `secret` if
    it is marked sensitive."""
    labels = [m.group(2) for k, m in fields.items() if _NAME_KEY.fullmatch(k) and m.group(2)
              and len(m.group(2)) <= MAX_LABEL]
    labels += [name for k, m in fields.items() if _URI_KEY.fullmatch(k) and m.group(2)
               and len(name := re.split(r"[/#:]", m.group(2).rstrip("/"))[-1]) <= MAX_LABEL]
    if (parent := _PARENT.search(text, max(0, start - 400), start)) is not None:
        labels.append(parent.group(1))
        if _VALUE_KEY.fullmatch(parent.group(1)):
            labels += _outer_key(text, parent.start())
    if "sensitive" in fields and fields["sensitive"].group(3):
        labels += SENSITIVE
    return labels


def _outer_key(text: str, at: int) -> list[str]:
    """The key of the object around a generic wrapper key that ends at `at` (`"SSN": {"shape": "Scalar", "value":
    {…}}`: Amazon Lex's slots, Dialogflow's parameters), its siblings flat, and a name among those siblings
    (1Password's `{"title": "social security number", "value": {"string": …}}`)."""
    brace = text.rfind("{", max(0, at - 200), at)
    if brace < 0 or "}" in text[brace:at]:
        return []
    names = [m.group(2) for m in _FIELD.finditer(text, brace, at) if _NAME_KEY.fullmatch(m.group(1)) and m.group(2)]
    outer = _PARENT.search(text, max(0, brace - 60), brace)
    return names + ([outer.group(1)] if outer is not None else [])


_INSERT = re.compile(INSERT_HEAD)


def sql_columns(text: str, wanted: Callable[[str], object]) -> Labelled:
    """The values of `INSERT INTO t (a, b, …) VALUES (…), (…)` rows, each labelled with its column's name; in a
    key-value table (`(name, value)`, `(key, value)`: settings, entity-attribute-value rows) the value cell with
    its row's name cell."""
    out: Labelled = []
    for insert in _INSERT.finditer(text):
        columns = [c.strip(" \t`\"[]") for c in insert.group(1).split(",")]
        name = next((i for i, c in enumerate(columns) if _NAME_KEY.fullmatch(c)), None)
        value = next((i for i, c in enumerate(columns) if _VALUE_KEY.fullmatch(c)), None)
        pairs = name is not None and value is not None
        if not pairs and not any(wanted(c) for c in columns):
            continue
        at = insert.end()
        while at < len(text) and text[at] == "(":
            at, row = sql_row(text, at + 1)
            out += [(columns[i], s, e) for i, (s, e) in enumerate(row) if i < len(columns) and s < e
                    and wanted(columns[i])]
            if pairs and max(name, value) < len(row) and row[value][0] < row[value][1]:
                label = text[row[name][0]:row[name][1]]
                if len(label) <= MAX_LABEL and wanted(label):
                    out.append((label, *row[value]))
            while at < len(text) and text[at] in ", \t\n":
                at += 1
    return out


_LINE_LABEL = re.compile(r"(?:^|(?<![ \t])[ \t]{2,})([^\s:：](?:[^\s:：]|[ \t](?![ \t])){0,47}?)[ \t]*(?:[:：]| -)"
                         r"[ \t]*$|^[ \t]*([^\W\d_][\w.#/'’-]*(?:[ \t][\w.#/'’-]+){0,3})[ \t]*$")
"""A label ending a line or a column of it (after a gap of 2+ spaces), with `:` or ` -` after it; or a line that
is a label alone, a name of up to four words (`Password`, `Mobile number`, `Employee's social security number`,
with the value on the line below; not code: `password = os.environ[…]`). A gap starts where blanks start: from
each blank of a long run it would be read again to the run's end (quadratic)."""
_TOKEN = re.compile(r"\[ ?(?P<box>[^\s\]]{1,64}) ?\](?=[ \t]*(?:$|\\?\"|\\$))|[+(]?\d[\d ()./-]{5,22}\d(?=[ \t]*$)|\S+")
"""A value below a label: a form's box alone on its line (`[ 89320629Z ]`, its inside), a number written in groups
(a phone number, a card) up to the line's end, or a word."""
_LABEL_LINE_END = re.compile(r"(?:[:：]| -)[ \t]*\\?\n")
"""What a line that `_LINE_LABEL` can match ends with, before the line below it."""
_LABEL_ALONE = re.compile(r"^(?:[^\n]*?\\?\"[ \t]*:[ \t]*\\?\")?[ \t]*([^\W\d_][\w.#/'’-]*(?:[ \t][\w.#/'’-]+){0,3})"
                          r"[ \t]*\\?$", re.MULTILINE)
"""A line that is a name alone (or opens a JSON string with one)."""


_STRING_OPENS = re.compile(r"^.*?\\?\"[ \t]*:[ \t]*\\?\"(?=[^\"\n]*$)")
"""A line's part up to where a JSON string value opens and runs on to the next line (`{"note": "Label`)."""


def _label_alone(line: str) -> bool:
    """A line that is one label ending in `:` and nothing else (`Password:` under `Password:`)."""
    m = _LINE_LABEL.search(line)
    return m is not None and m.group(1) is not None and not line[:m.start(1)].strip()


def previous_line(text: str, wanted: Callable[[str], object]) -> Labelled:
    """A value on the line below its label: `Password:` then the value indented beneath it, or, in text laid out
    in columns (PDF, fixed-width reports), the label ending a column of one line and the value at the same column
    of the next. A line below that is itself a label ending in `:` holds no value (a form's labels one under the
    other)."""
    out: Labelled = []
    for at in _label_lines(text, wanted):
        nxt = text.index("\n", at) + 1
        line = text[at:nxt - 1].removesuffix("\\")
        end = text.find("\n", nxt)
        below = text[nxt:end if end >= 0 else None].removesuffix("\\")
        if (opening := _STRING_OPENS.match(line)) is not None:
            line = line[opening.end():]  # the label starts a JSON string whose next line holds the value
        m = _LINE_LABEL.search(line)
        group = 1 if m is not None and m.group(1) is not None else 2
        if m is not None and wanted(m.group(group)) and not _label_alone(below):
            column = m.start(group)
            for token in _TOKEN.finditer(below):
                if token.start() >= column - 2 or column == 0:
                    if token.start() <= column + 2 or column == 0:
                        value = "box" if token.group("box") is not None else 0
                        out.append((m.group(group).strip(), nxt + token.start(value), nxt + token.end(value)))
                    break
    return out


def _label_lines(text: str, wanted: Callable[[str], object]) -> list[int]:
    """Where each line starts that `_LINE_LABEL` may find a label in and that has a line below: one ending in `:`
    or ` -`, or a wanted name alone. Two searches over the text spare a pass over each of its lines (code and tool
    output hold thousands)."""
    ends = [text.rfind("\n", 0, m.start()) + 1 for m in _LABEL_LINE_END.finditer(text)]
    alone = [m.start() for m in _LABEL_ALONE.finditer(text) if text.startswith("\n", m.end()) and wanted(m.group(1))]
    return sorted({*ends, *alone})


_XML_ELEMENT = re.compile(r"<(?:[\w.-]+:)?([A-Za-z_][\w.-]{0,47})(?:[ \t][^<>]*)?>([^<>\n]{1,512})"
                          r"</(?:[\w.-]+:)?\1>")
"""An XML element holding text (`<pol:ApiSecret>…</pol:ApiSecret>`, SOAP bodies and XML exports)."""
_XML_PAIR = re.compile(r"<[\w:.-]+[ \t][^<>]*?\b(?:key|name)=\\?\"([^\"\\<>]{1,48})\\?\"[^<>]*?"
                       r"\bvalue=\\?\"([^\"\\<>]{1,512})\\?\"")
"""An element naming its value in attributes (`<add key="JwtSecret" value="…"/>` in web.config and app.config)."""
_XML_NAMED = re.compile(r"<[\w:.-]+[ \t][^<>]*?\b(?:[Nn]ame|NAME|[Kk]ey|KEY)=\\?\"([^\"\\<>]{1,48})\\?\"[^<>]*>"
                        r"(?:[ \t\r\n]{0,40}<(?:[\w.-]+:)?AttributeValue(?:[ \t][^<>]*)?>)?([^<>\n]{1,512})</")
"""An element named by its own attribute, the value its text (Windows event XML's `<Data Name="Password">…</Data>`)
or its SAML `AttributeValue`'s (`<saml:Attribute Name="telephoneNumber"><saml:AttributeValue>…`)."""
_XML_KEY_VALUE = re.compile(r"<(?:[\w.-]+:)?(?:[Kk]ey|KEY|[Nn]ame|NAME)>([^<>\n]{1,48})</[\w:.-]{1,64}>[ \t\r\n]{0,200}"
                            r"<(?:[\w.-]+:)?(?:[Vv]alue|VALUE|string|data)(?:[ \t][^<>]*)?>([^<>\n]{1,512})</")
"""A key element, then the value's element beside it: KeePass XML's `<String><Key>Password</Key><Value
ProtectInMemory="True">…</Value></String>`, a property list's `<key>password</key><string>…</string>`."""
_PHP_DUMP = re.compile(r"\[\\?\"([^\"\\\n]{1,48})\\?\"\]=>(?:\\?\n|\\n)[ \t]*"
                       r"string\(\d+\) \\?\"([^\n]*?)\\?\"(?=\\?\n|\\n|$)")
"""PHP `var_dump`: `["password"]=>` and on the next line `string(12) "…"`."""
_PHP_PRINT_R = re.compile(r"\[([^\]\n]{1,48})\] => ([^\n\\]+)")
"""PHP `print_r`: `[password] => …` up to the line's end."""
_GO_FIELD = re.compile(r"(?:(?<!\$)\{| )([A-Za-z_]\w{0,47}):(\S[^\n{}]*?)(?= [A-Za-z_]\w*:|\})")
"""A field of Go's `%+v` dump, `&{Addr::8080 ApiKey:… Timeout:30s}`: a value runs to the next ` Name:` (not the
shell's `${NAME:-default}`)."""
_GO_OPEN = re.compile(r"\{[A-Za-z_]\w{0,47}:\S")
_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def markup_fields(text: str, wanted: Callable[[str], object]) -> Labelled:
    """Values named by the markup or the dump format around them: XML elements, their name attributes, key/value
    attributes and key elements beside value elements, PHP's `var_dump` and `print_r`, Go's `%+v`. An element
    `<Pass>` holds a password (FileZilla's site manager and recent servers files, `<Pass encoding="base64">`: the
    base64 is the secret); a bare `pass` key elsewhere is a test result."""
    out: Labelled = []
    forms = ([_XML_ELEMENT, _XML_PAIR, _XML_NAMED, _XML_KEY_VALUE] if "<" in text else []) \
        + ([_PHP_DUMP, _PHP_PRINT_R] if "=>" in text else []) \
        + ([_GO_FIELD] if _GO_OPEN.search(text) else [])
    for form in forms:
        for m in form.finditer(text):
            name = "password" if form is _XML_ELEMENT and m.group(1).lower() == "pass" else m.group(1)
            if m.end(2) > m.start(2) and wanted(name):
                out.append((words_of(name), m.start(2), m.end(2)))
    return out


def words_of(label: str) -> str:
    """A camelCase or PascalCase name with its humps parted by `_` (`DjangoSecretKey` -> `Django_Secret_Key`), the
    way the rules read names (`DB_PASSWORD`, `contact_phone`)."""
    return _HUMP.sub("_", label)


_HL7_XTN = re.compile(r"(?:^|[|~])([+(]?\d[\d ()./-]{4,22}\d)\^(?:PRN|ORN|WPN|VHN|ASN|EMR|BPN)?\^(?:PH|CP|FX|MD|BP)\b")
"""An HL7 v2 telephone field (XTN, PID-13 and PID-14): the number, its use code (PRN, WPN, …) and its equipment
type (PH phone, CP cellular, FX fax, …) after `^`."""


def hl7_phones(text: str) -> Labelled:
    """The numbers of HL7 v2 XTN fields, labelled `phone`."""
    return [("phone", m.start(1), m.end(1)) for m in _HL7_XTN.finditer(text)]


_HL7_CX_TYPED = re.compile(r"(?:^|[|~])([0-9A-Z][0-9A-Z -]{6,18}[0-9A-Z])(?:\^[^|~^\r\n]{0,64}){3}\^(MC)"
                           r"(?=[|~^\r\n]|$)")
"""An HL7 v2 extended composite id (CX: PID-3, IN1-49) whose identifier type code (component 5, HL7 table 0203)
names the kind of number: `MC`, the patient's Medicare number (`…^^^CMS^MC`)."""
_HL7_ID_TYPES = {"MC": "medicare number"}


def hl7_typed_ids(text: str, wanted: Callable[[str], object]) -> Labelled:
    """The ids of HL7 v2 CX fields, labelled by their identifier type code's name (`MC` -> `medicare number`): the
    national id rules' checks then choose the country's number."""
    return [(label, m.start(1), m.end(1)) for m in _HL7_CX_TYPED.finditer(text)
            if wanted(label := _HL7_ID_TYPES[m.group(2)])]


_PRINTED = re.compile(
    r"(?:\{\.(?:data|stringData)\.([A-Za-z_][\w.-]{0,47})\}|"
    r"\bprintenv[ \t]+([A-Za-z_]\w{0,47})|\becho[ \t]+\"?\$\{?([A-Za-z_]\w{0,47})\}?\"?|"
    r"\bcat[ \t]+(?:[^\s|;&<>]*/)?(\.?[A-Za-z_][\w.-]{0,47})(?=[ \t]*(?:$|\\?\r?\n))|"
    r"\bargocd[ \t]+admin[ \t]+(initial-password)|"
    r"\bvault[ \t]+kv[ \t]+get\b[^\n]{0,1000}?-field=([A-Za-z_][\w.-]{0,47})|"
    r"\b(?:aws[ \t]+configure|heroku[ \t]+config:|doppler[ \t]+secrets)[ \t]*get[ \t]+([A-Za-z_][\w.-]{0,47}))"
    r"[^\n]{0,1000}\n[ \t]*([^\s\"'`<>\\]{4,512})[ \t]*(?:\\?\n|\\?[\"']|$)")
"""A shell command that prints one named value, and the line it printed: a Kubernetes secret's field, decoded or
not (`kubectl get secret … -o jsonpath='{.data.DB_PASSWORD}' | base64 -d`), `printenv NAME`, `echo $NAME`, a
file whose name names it (`cat /var/lib/jenkins/secrets/initialAdminPassword`), `argocd admin initial-password`,
`vault kv get -field=NAME`, `aws configure get NAME`, `heroku config:get NAME`, `doppler secrets get NAME`. The rest
of the command's line is bounded (1,000 characters): unbounded, each of many commands on one long line would read
it to its end (quadratic)."""


_DECODED = re.compile(r"\|[ \t]*base64[ \t]+(?:-d|--decode|-D)\b")
_PRINTER = re.compile(r"\{\.(?:data|stringData)\.|printenv|echo|-field=|configure[ \t]+get|config:get|secrets[ \t]+get|"
                      r"\bcat[ \t]|initial-password")
"""What a text that `_PRINTED` can match holds: the texts without it are not read for it (most)."""


def printed_values(text: str, wanted: Callable[[str], object]) -> Labelled:
    """The output line of a command that prints one named value, labelled with that name."""
    out: Labelled = []
    for m in _PRINTED.finditer(text):
        label = next(g for g in m.groups()[:-1] if g is not None)
        if m.group(1) is not None and not _DECODED.search(m.group()):
            label = SECRET_DATA  # a Secret's field as stored: base64, whatever its name
        if label == SECRET_DATA or wanted(label):
            out.append((label, m.start(m.re.groups), m.end(m.re.groups)))
    return out


_CODE_DEFAULT = re.compile(
    r"(?:\b([A-Za-z_][\w]{0,47})[ \t]*:?=[ \t]*[\w.$\[\]\"'()]{1,100}?[ \t]*(?:\?\?|\|\||\bor\b)|"
    r"\b(?:getenv|environ\.get|env\.get|Getenv|GetEnvironmentVariable|ENV\.fetch|env)\([ \t]*\\?[\"']"
    r"([A-Za-z_][\w.-]{0,47})\\?[\"'][ \t]*,)"
    r"[ \t]*\\?([\"'])([^\"'\\\s]{4,256})\\?\3|"
    r"\$\{([A-Za-z_]\w{0,47}):?-([^\s}\"'$]{4,256})\}")
"""A default written in code for a value read from the environment: `const dbPass = process.env.DB_PASS ?? 'X'`
(`||`, Python's `or`), `os.getenv("DB_PASS", "X")`, `os.environ.get(…)`, Ruby's `ENV.fetch`, Laravel's `env(…)`,
and the shell's `${DB_PASS:-X}`: the literal, labelled with the name it defaults."""


_DEFAULTING = re.compile(r"\?\?|\|\||\bor\b|\$\{|getenv|Getenv|environ\.get|env\.get|EnvironmentVariable|"
                         r"ENV\.fetch|\benv\(")
"""What a text that `_CODE_DEFAULT` can match holds."""


def code_defaults(text: str, wanted: Callable[[str], object]) -> Labelled:
    """Literals that code gives a value read from the environment when it is unset, labelled with its name."""
    out: Labelled = []
    for m in _CODE_DEFAULT.finditer(text):
        label, group = (m.group(1) or m.group(2), 4) if m.group(4) is not None else (m.group(5), 6)
        if label and wanted(words_of(label)):
            out.append((words_of(label), m.start(group), m.end(group)))
    return out


_NAMED_CALL = re.compile(r"\b(?:define|setenv|putenv|Setenv|setdefault|setProperty|SetEnvironmentVariable|option|"
                         r"config|set|put)[ \t]*\([ \t]*"
                         r"\\?(['\"])([A-Za-z_][\w.-]{0,47})\\?\1[ \t]*,[ \t]*\\?(['\"])([^'\"\\\n]{1,512})\\?\3")
"""A call that sets a named value: PHP's `define( 'DB_PASSWORD', '…' )` (wp-config.php), `putenv`, C's and Go's
`setenv`, Python's `os.environ.setdefault`, Java's `System.setProperty`, .NET's `SetEnvironmentVariable`; Spark's
`.option("password", …)` (DataFrameReader and Writer), `SparkSession.builder.config(…)`, `SparkConf().set(…)`,
Java's `Properties.put(…)`."""
_SETTER = re.compile(r"\.(?:set|with)?([A-Za-z_]\w{0,47})[ \t]*\([ \t]*\\?(['\"])([^'\"\\\n]{1,512})\\?\2[ \t]*\)")
"""A builder's or a bean's setter given one literal: `.password("…")`, `.setPassword("…")`, `.withApiKey("…")` (JDBC
data sources, HikariCP, Testcontainers, SDK clients): the method's name, less `set`/`with`, names the value."""


def named_calls(text: str, wanted: Callable[[str], object]) -> Labelled:
    """The value a call sets, labelled with the name it sets it under or the setter's name."""
    named = [(words_of(m.group(2)), m.start(4), m.end(4)) for m in _NAMED_CALL.finditer(text)]
    named += [(words_of(m.group(1)), m.start(3), m.end(3)) for m in _SETTER.finditer(text)]
    return [(label, start, end) for label, start, end in named if wanted(label)]


_YAML_CHILD_VALUE = re.compile(r"^([ \t]*)([A-Za-z_][\w.-]{0,47}):[ \t]*\\?\n(?:\1[ \t][^\n]*\n){0,8}?"
                               r"\1[ \t]+(?:value|secret):[ \t]*\\?[\"']?([^\s\"'\\]{1,512})", re.MULTILINE)
"""A YAML key whose value is a mapping holding it under `value:` (W&B's `config.yaml`: `wandb_api_key:` then
`desc: null` and `value: …` indented below). A child line is the key's indentation and one blank more, then anything:
`[ \t]+[^\n]*` would split a line of blanks in as many ways as it has, and eight such lines would not end."""


def yaml_children(text: str, wanted: Callable[[str], object]) -> Labelled:
    """The `value:` of a YAML mapping, labelled with the key the mapping sits under."""
    return [(m.group(2), m.start(3), m.end(3)) for m in _YAML_CHILD_VALUE.finditer(text) if wanted(m.group(2))]


_YAML_NAMED_ITEM = re.compile(r"^([ \t]*)-[ \t]+(?:name|key):[ \t]*\\?[\"']?([\w./:-]{1,200})\\?[\"']?[ \t]*"
                              r"(?:\\?\n|\\n)\1[ \t]+value:[ \t]*\\?[\"']?([^\s\"'\\]{1,512})", re.MULTILINE)
"""A YAML list item naming its value in a `name:` (or `key:`) line and holding it on the next one under `value:`:
Kubernetes `env:` lists, Argo CD's and Flux's Helm `parameters`, Kustomize and Tekton params (`- name:
secrets.dbPassword` then `value: …`)."""


def yaml_named_items(text: str, wanted: Callable[[str], object]) -> Labelled:
    """The `value:` of a YAML list item, labelled with its `name:`'s last dotted or path segment, humps parted."""
    out: Labelled = []
    for m in _YAML_NAMED_ITEM.finditer(text):
        label = words_of(re.split(r"[./:]", m.group(2).rstrip("./:"))[-1])
        if label and len(label) <= MAX_LABEL and wanted(label):
            out.append((label, m.start(3), m.end(3)))
    return out


_GLOSSED_FIELD = re.compile(r"(?:^|[ \t])[A-Z][A-Z0-9_]{1,29}=([^\s=()]{1,512})[ \t]+\(([^()\n]{1,48})\)")
"""A flat record's field, a technical name (`STCD1`, `TELF1`: SAP IDoc segment fields) then `=` and the value,
followed by the field's description in parentheses (`STCD1=…  (Tax number 1)`): the description labels it."""


def glossed_fields(text: str, wanted: Callable[[str], object]) -> Labelled:
    """The value of a `FIELD=value (description)` field, labelled with its description."""
    return [(m.group(2), m.start(1), m.end(1)) for m in _GLOSSED_FIELD.finditer(text) if wanted(m.group(2))]


_KV_HEADER = re.compile(r"^[ \t]*(?:Key|KEY|Name|NAME|Field|FIELD)[ \t]{2,}(?:Value|VALUE)[ \t]*\r?\n"
                        r"(?:[ \t]*-{2,}[ \t]+-{2,}[ \t]*\r?\n)?", re.MULTILINE)
_KV_ROW = re.compile(r"[ \t]*([^\s=]{1,48})[ \t]{2,}(\S(?:[^\n]{0,510}\S)?)[ \t]*\r?$")


def kv_tables(text: str, wanted: Callable[[str], object]) -> Labelled:
    """The rows of a two-column table headed `Key  Value` (HashiCorp Vault's `vault kv get` and `vault read`
    print one per section): each row's value labelled with the name in its first column, to the first line that
    is not such a row."""
    out: Labelled = []
    for header in _KV_HEADER.finditer(text):
        at = header.end()
        while at < len(text):
            end = text.find("\n", at)
            end = len(text) if end < 0 else end
            row = _KV_ROW.fullmatch(text, at, end)
            if row is None:
                break
            if wanted(row.group(1)):
                out.append((row.group(1), row.start(2), row.end(2)))
            at = end + 1
    return out


_GE_COLUMN = re.compile(rf"{_Q}column{_Q}[ \t]*:[ \t]*{_Q}([^\"\\\n]{{1,48}}){_Q}")
_GE_LIST = re.compile(rf"{_Q}(?:partial_)?unexpected_list{_Q}[ \t]*:[ \t]*\[([^\[\]]*)\]")
_LIST_ITEM = re.compile(rf"{_Q}((?:[^\"\\\n]|\\[^\"\n])+?){_Q}|(-?\d[\d.]*)")


def unexpected_values(text: str, wanted: Callable[[str], object]) -> Labelled:
    """The values a Great Expectations validation result lists as unexpected (`partial_unexpected_list`,
    `unexpected_list`), labelled with the column its expectation's `kwargs` name before them."""
    out: Labelled = []
    columns = list(_GE_COLUMN.finditer(text))
    for found in _GE_LIST.finditer(text):
        column = next((c for c in reversed(columns) if c.start() < found.start()), None)
        if column is None or not wanted(column.group(1)):
            continue
        for item in _LIST_ITEM.finditer(found.group(1)):
            group = 1 if item.group(1) is not None else 2
            out.append((column.group(1), found.start(1) + item.start(group), found.start(1) + item.end(group)))
    return out


_HCL_BLOCK = re.compile(r"\b(?:variable|output)[ \t]+\\?\"([A-Za-z_][\w-]{0,47})\\?\"[ \t]*\{[^{}]*?"
                        r"\b(?:default|value)[ \t]*=[ \t]*\\?\"([^\"\\\n]{1,512})\\?\"")
"""A Terraform (HCL) variable's `default` or an output's `value`, named by the block's label."""


def hcl_blocks(text: str, wanted: Callable[[str], object]) -> Labelled:
    """The value of a Terraform variable or output block, labelled with the block's name."""
    return [(m.group(1), m.start(2), m.end(2)) for m in _HCL_BLOCK.finditer(text) if wanted(m.group(1))]


_HCL_PAIR = re.compile(r"\bname[ \t]*=[ \t]*\\?\"([^\"\\\n]{1,200})\\?\"[^{}]{0,400}?"
                       r"\bvalue[ \t]*=[ \t]*\\?\"([^\"\\\n]{1,512})\\?\"")
"""A block naming its value in a sibling attribute, as a Terraform plan prints a resource (`name = "/prod/DB_PASSWORD"`
then `value = "…"`: an SSM parameter, a Kubernetes env entry, a CI variable); the name's last path segment labels."""
_REDIS_COMMAND = re.compile(r"\"(HSET|HMSET|HSETNX|SET|SETNX|SETEX|PSETEX|GETSET|MSET|AUTH)\""
                            r"((?:[ \t]+\"(?:[^\"\\\n]|\\.)*\")+)", re.IGNORECASE)
_REDIS_ARG = re.compile(r"\"((?:[^\"\\\n]|\\.)*)\"")


_LINE_PAIR = re.compile(r"^[ \t]*name[ \t]*=[ \t]*([^\s\"\\]{1,200})[ \t]*\\?\r?\n"
                        r"[ \t]*value[ \t]*=[ \t]*([^\s\"\\]{1,4096})", re.MULTILINE)
"""A row as sqlite3's `.mode line` prints it, `name = …` above `value = …` (a browser's cookie database)."""


def hcl_pairs(text: str, wanted: Callable[[str], object]) -> Labelled:
    """The value of a block or a row that names it in a `name` attribute, labelled with the name's last path
    segment."""
    out: Labelled = []
    for m in (*_HCL_PAIR.finditer(text), *_LINE_PAIR.finditer(text)):
        label = m.group(1).rstrip("/").rsplit("/", 1)[-1]
        if label and len(label) <= MAX_LABEL and wanted(label):
            out.append((label, m.start(2), m.end(2)))
    return out


def redis_commands(text: str, wanted: Callable[[str], object]) -> Labelled:
    """The values of Redis commands as MONITOR and redis-cli print them, quoted: a hash's fields (`"HSET" key field
    value …`), a key's value (`SET`, `SETEX`, `MSET`), and `AUTH [user] password` as a password."""
    out: Labelled = []
    for m in _REDIS_COMMAND.finditer(text):
        command, at = m.group(1).upper(), m.start(2)
        args = [(a.group(1), at + a.start(1), at + a.end(1)) for a in _REDIS_ARG.finditer(m.group(2))]
        if command == "AUTH":
            pairs = [("password", args[-1])]
        else:
            skip = {"HSET": 1, "HMSET": 1, "HSETNX": 1, "MSET": 0}.get(command)
            if skip is None:  # one key and its value; SETEX and PSETEX put the expiry between
                args = args[:1] + args[2:3] if command in ("SETEX", "PSETEX") else args[:2]
                skip = 0
            rest = args[skip:]
            pairs = [(rest[i][0], rest[i + 1]) for i in range(0, len(rest) - 1, 2)]
        out += [(label, start, end) for label, (_, start, end) in pairs
                if len(label) <= MAX_LABEL and end > start and wanted(label)]
    return out


def labelled_values(text: str, wanted: Callable[[str], object]) -> Labelled:
    """Every value here whose label stands away from it, by structure."""
    out: Labelled = []
    if "{" in text:
        out += json_siblings(text, wanted)
    if "(" in text:
        out += sql_columns(text, wanted)
    if "\n" in text:
        out += previous_line(text, wanted)
    if "<" in text or "=>" in text or "{" in text:
        out += markup_fields(text, wanted)
    if "^" in text and wanted("phone"):
        out += hl7_phones(text)
    if "^MC" in text:
        out += hl7_typed_ids(text, wanted)
    if "\n" in text and _PRINTER.search(text):
        out += printed_values(text, wanted)
    if _DEFAULTING.search(text):
        out += code_defaults(text, wanted)
    if "{" in text and ("variable" in text or "output" in text):
        out += hcl_blocks(text, wanted)
    if "name" in text and "value" in text:
        out += hcl_pairs(text, wanted)
    if "(" in text:
        out += named_calls(text, wanted)
    if "value:" in text or "secret:" in text:
        out += yaml_children(text, wanted)
    if "value:" in text and "- " in text:
        out += yaml_named_items(text, wanted)
    if "Value" in text or "VALUE" in text:
        out += kv_tables(text, wanted)
    if "=" in text and "(" in text:
        out += glossed_fields(text, wanted)
    if "unexpected_list" in text:
        out += unexpected_values(text, wanted)
    if "\"" in text:
        out += redis_commands(text, wanted)
    if "nsert" in text or "NSERT" in text:
        out += bound_parameters(text, wanted)
    if "stdin" in text or "STDIN" in text:
        out += copy_rows(text, wanted)
    if "ookie" in text or "OOKIE" in text or "TRUE" in text or "FALSE" in text or "-b " in text:
        out += cookie_values(text)
    if "ata:" in text or "ata\"" in text or "ata\\\"" in text:  # `data:`, `"data"`, `\"data\"`
        out += secret_data(text)
    if "random_password" in text:
        out += random_passwords(text)
    return out + body_fields(text, wanted)
