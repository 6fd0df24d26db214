#!/usr/bin/env bash
# The system programs the test suite drives for real: Debian's Chromium (the participants' page,
# tests/study/), Xvfb and Openbox (window geometry on a real X server, tests/ui/test_window_fit.py).
# Installed with apt-get when missing and this user may (root); otherwise says what to install.
set -euo pipefail
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v Xvfb >/dev/null || missing+=(xvfb xauth)
command -v openbox >/dev/null || missing+=(openbox)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "Installing ${missing[*]} (apt-get)…" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null \
      || { apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null; }
  else
    echo "Missing system packages: ${missing[*]} (install them with your package manager)." >&2
    exit 1
  fi
fi
