"""Cookies wherever HTTP clients and browsers write them, whatever their names.

A site's session cookie may be called anything (`li_at`, `CAKEPHP`, `pomerium`, `MOD_AUTH_CAS`): a list of names
misses most of them. Where the structure says a value is a cookie's (a `Cookie` or `Set-Cookie` header, curl's
`-b`, `document.cookie`, a Netscape cookie jar, Python's cookie jar, a cookie object with its domain or path), the
value is read as a cookie's, and the cookie rule takes a random one. Cookies whose published names say they hold
no credential (analytics, consent, load balancing, preferences) are not read.
"""

from __future__ import annotations

import re

from tracegym.redact.labelled import Labelled
from tracegym.redact.rules import TAB

LABEL = "cookie"
"""The label a cookie's value is read under: the cookie rule's."""

_PUBLIC = re.compile(
    r"_ga(?:_\w+)?|_gid|_gat\w*|_gcl_\w+|_fbp|_fbc|__utm\w+|_hj\w+|ajs_\w+|mp_\w+|amplitude_\w+|AMP_\w+|_uet\w+|"
    r"_clck|_clsk|_pk_\w+|optimizely\w*|Optanon\w*|CookieConsent|cookieconsent_\w+|euconsent(?:-v2)?|"
    r"AWSALB\w*|AWSELB\w*|BIGipServer\w*|__cf_bm|_cfuvid|ROUTEID|SERVERID|wp-settings(?:-time)?-\d+|"
    r"(?i:theme|lang|language|locale|tz|timezone|currency|country|region|dark_mode)", re.ASCII)
"""Published names of cookies that hold no credential: Google Analytics and Ads, Meta pixel, Hotjar, Segment,
Mixpanel, Amplitude, Bing, Clarity, Matomo, Optimizely, OneTrust, Cookiebot and IAB TCF consent, AWS, F5 and
Cloudflare load balancing and bot scores, user preferences (WordPress's `wp-settings-<n>`)."""
_SETTINGS = re.compile(r"[A-Za-z_]+(?:%3[Dd]|=)[A-Za-z_]*(?:(?:%26|&)[A-Za-z_]+(?:%3[Dd]|=)[A-Za-z_]*)*")
"""A cookie holding settings as URL-encoded words (`libraryContent%3Dbrowse`), no token."""
_ATTRIBUTES = frozenset({"path", "domain", "expires", "max-age", "samesite", "secure", "httponly", "priority",
                         "partitioned", "version", "comment"})
"""`Set-Cookie` attributes (RFC 6265 5.2): the pairs after a cookie's own."""

_PAIRS = (r"(?P<pairs>[^\n\"'`\\]{3,8192})")
_HEADER = re.compile(r"(?<![\w-])(?i:(?:set-)?cookie)\\?[\"']?[ \t]*[:=][ \t]*(?:\\?[\"'`])?" + _PAIRS)
"""A `Cookie:`/`Set-Cookie:` header, a header map's `"Cookie": "…"`, `document.cookie = '…'`."""
_CURL = re.compile(r"\bcurl\b[^\n]{0,400}?[ \t](?:-b|--cookie)[ \t]+(?:\\?[\"'])?" + _PAIRS)
_PAIR = re.compile(r"(?:^|;)[ \t]*([!#$%&*+.^_|~0-9A-Za-z-]{1,128})=([^;\s]{1,4096})")
_JAR_LINE = re.compile(rf"(?m:^)[^\t\n\\]{{1,253}}{TAB}(?:TRUE|FALSE){TAB}[^\t\n\\]{{0,200}}{TAB}(?:TRUE|FALSE)"
                       rf"{TAB}\d{{1,12}}{TAB}([^\t\n\\]{{1,128}}){TAB}([^\t\n\\]{{1,4096}})")
"""A Netscape cookie jar's line (curl's `-c`, browsers' exports): domain, subdomains, path, secure, expiry, name,
value."""
_PY_JAR = re.compile(r"<Cookie ([^\s=]{1,128})=([^\s]{1,4096}) for [^\s>]{1,253}>|"
                     r"\bCookie\(version=\d+, name='([^'\n]{1,128})', value='([^'\n]{1,4096})'")
"""Python's cookie jar as printed (`<RequestsCookieJar[<Cookie name=value for domain/>]>`, `Cookie(version=0, name=
'…', value='…', …)`)."""
_OBJECT = re.compile(r"\{[^{}]{0,2000}\}")
_Q = r"\\{0,7}[\"']"
_NAME = re.compile(rf"{_Q}name{_Q}[ \t]*:[ \t]*{_Q}([^\"'\\\n]{{1,128}}){_Q}")
_VALUE = re.compile(rf"{_Q}value{_Q}[ \t]*:[ \t]*{_Q}([^\"'\\\n]{{1,4096}}){_Q}")
_COOKIE_KEY = re.compile(rf"{_Q}(?:domain|path|httpOnly|http_only|secure|expires|expiry|expirationDate|sameSite|"
                         rf"hostOnly|session){_Q}[ \t]*:")
"""A field only a cookie object holds beside its name and value (Playwright's storage state, Selenium's
`get_cookies()`, HAR's `cookies`, browser extensions' exports)."""


def cookie_values(text: str) -> Labelled:
    """The values of the cookies in `text` whose names are not public ones, each labelled a cookie's."""
    out: Labelled = []
    for m in (*_HEADER.finditer(text), *_CURL.finditer(text)):
        set_cookie = m.group().lower().startswith("set-")
        for i, pair in enumerate(_PAIR.finditer(m.group("pairs"))):
            if set_cookie and (i > 0 or pair.group(1).lower() in _ATTRIBUTES):
                break
            if not _SETTINGS.fullmatch(pair.group(2)):
                out += _value(pair.group(1), m.start("pairs") + pair.start(2), m.start("pairs") + pair.end(2))
    for m in _JAR_LINE.finditer(text):
        out += _value(m.group(1), m.start(2), m.end(2))
    for m in _PY_JAR.finditer(text):
        name, value = (1, 2) if m.group(1) is not None else (3, 4)
        out += _value(m.group(name), m.start(value), m.end(value))
    if "name" in text and "value" in text:
        out += _objects(text)
    return out


def _objects(text: str) -> Labelled:
    """Values of objects that are cookies by their fields, in JSON or a Python repr."""
    out: Labelled = []
    for obj in _OBJECT.finditer(text):
        body = obj.group()
        if "value" not in body or not _COOKIE_KEY.search(body):
            continue
        name, value = _NAME.search(body), _VALUE.search(body)
        if name is not None and value is not None:
            out += _value(name.group(1), obj.start() + value.start(1), obj.start() + value.end(1))
    return out


def _value(name: str, start: int, end: int) -> Labelled:
    return [] if _PUBLIC.fullmatch(name) else [(LABEL, start, end)]
