"""Values that infrastructure's own formats mark secret whatever their names: a Kubernetes Secret's `data`, a
Terraform `random_password`'s `result`.

A Secret's `data` holds each value base64-encoded (`DATABASE_URL: cG9zdGdyZXM6Ly9…`, `.dockerconfigjson: eyJh…`):
its key names what the value is for, not that it is secret, and the value reads as random base64. Under a `data:`
key in YAML (a manifest, `kubectl get secret -o yaml`, `kustomize build`, `helm get manifest`) or a `"data"`
object in a JSON text that names a Secret, a value that decodes to text is given the label `SECRET_DATA` (a
ConfigMap's `data` holds plain text, which does not decode), which a rule of its own takes whole. Terraform's
state and plan print a `random_password`'s value as its `result` attribute. Each function gives (label, start,
end), as tracegym/redact/structure.py's do.
"""

from __future__ import annotations

import base64
import binascii
import re

from tracegym.redact.labelled import Labelled

SECRET_DATA = "kubernetes_secret_data"
"""The label a Secret's value is read under (`kubernetes_secret_data: "…"`)."""
SECRET_VALUE = r"(?=[A-Za-z0-9+/=]{8})[A-Za-z0-9+/]{4,65536}={0,2}"
"""Base64 of at least 8 characters, padding included."""

_YAML_DATA = re.compile(r"^([ \t]*)(?:data|stringData):[ \t]*\\?\r?\n", re.MULTILINE)
_YAML_ITEM = re.compile(rf"^([ \t]++)[\"']?[\w.-]{{1,253}}[\"']?:[ \t]*\\?[\"']?({SECRET_VALUE})\\?[\"']?"
                        r"[ \t]*(?:\\?\r?\n|$|(?=\\?\"))", re.MULTILINE)
"""An item of a `data:` block from its line's start, to its line's end (or the end of the JSON string the manifest
is printed in). Each item pattern starts only where an item can (a line's start; after `{` or `,`): a run of
blanks is not read again from each of its positions."""
_JSON_DATA = re.compile(r"\\?\"(?:data|stringData)\\?\"[ \t]*:[ \t]*\{")
_JSON_ITEM = re.compile(r"(?<=[{,])(?:[ \t]|\\?\r?\n)*+\\?\"[\w.-]{1,253}\\?\"[ \t]*+:[ \t]*+"
                        rf"\\?\"({SECRET_VALUE})\\?\"(?:[ \t]|\\?\r?\n)*+,?")
_RANDOM_PASSWORD = re.compile(r"random_password")
_RESULT = re.compile(r"\\?\"result\\?\"[ \t]*:[ \t]*\\?\"((?:[^\"\\\n]|\\[^\"\n]){1,512}?)\\?\"")
_REACH = 2000
"""Characters after `random_password` where its `result` is looked for."""
_ITEMS = 256


def secret_data(text: str) -> Labelled:
    """The values of `data:` blocks (YAML) and of `"data"` objects (JSON, beside `Secret`) that decode from base64
    to text."""
    out: Labelled = []
    for block in _YAML_DATA.finditer(text):
        at, indent = block.end(), len(block.group(1).expandtabs())
        for _ in range(_ITEMS):
            item = _YAML_ITEM.match(text, at)
            if item is None or len(item.group(1).expandtabs()) <= indent:
                break
            if _decodes(item.group(2)):
                out.append((SECRET_DATA, item.start(2), item.end(2)))
            at = item.end()
    for block in _JSON_DATA.finditer(text) if "Secret" in text else ():
        at = block.end()
        for _ in range(_ITEMS):
            item = _JSON_ITEM.match(text, at)
            if item is None:
                break
            if _decodes(item.group(1)):
                out.append((SECRET_DATA, item.start(1), item.end(1)))
            at = item.end()
    return out


def random_passwords(text: str) -> Labelled:
    """The `result` of each Terraform `random_password` (state JSON, plan output), labelled `password`."""
    out: Labelled = []
    for m in _RANDOM_PASSWORD.finditer(text):
        result = _RESULT.search(text, m.end(), m.end() + _REACH)
        if result is not None:
            out.append(("password", result.start(1), result.end(1)))
    return out


def _decodes(value: str) -> bool:
    """Whether base64 `value` decodes to printable UTF-8 text (a Secret's value; `true`, `8080` decode to bytes)."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return False
    return all(c.isprintable() or c in "\r\n\t" for c in decoded)
