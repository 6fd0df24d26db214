"""A self-signed certificate for 127.0.0.1, made with openssl as a researcher would make one."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest


def self_signed(tmp_path: Path) -> tuple[str, str]:
    """``(certificate, key)`` PEM files in ``tmp_path``; skips when openssl is missing."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    argv = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2"]
    argv += ["-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1"]
    argv += ["-addext", "subjectAltName=IP:127.0.0.1"]
    subprocess.run(argv, check=True, capture_output=True)
    return str(cert), str(key)
