"""Redaction of secrets and personal data: detectors (named rules), typed pseudonyms, and the runs that apply
them at ingest, over a stored store, and as a check. See docs/redaction.md."""
