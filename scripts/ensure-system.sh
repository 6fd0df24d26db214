#!/usr/bin/env bash
# The system programs the test suite drives for real: Debian's Chromium (the participants' page,
# tests/study/), Xvfb and Openbox (window geometry on a real X server, tests/ui/test_window_fit.py).
# Installed with apt-get when missing and this user may (root); otherwise says what to install.
set -euo pipefail
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v Xvfb >/dev/null || missing+=(xvfb xauth)
command -v openbox >/dev/null || missing+=(openbox)
# Qt's X11 platform plugin (the window-fit tests run the window on Xvfb) needs these libraries;
# a machine with Xvfb may still lack them ("xcb-cursor0 … is needed", which misnames the culprit).
for lib in libxcb-icccm.so.4:libxcb-icccm4 libxcb-keysyms.so.1:libxcb-keysyms1 \
  libxcb-cursor.so.0:libxcb-cursor0 libxkbcommon-x11.so.0:libxkbcommon-x11-0; do
  ldconfig -p 2>/dev/null | grep -q "${lib%%:*}" || missing+=("${lib##*:}")
done
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
