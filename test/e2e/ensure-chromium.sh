#!/usr/bin/env bash
# Makes sure Debian's Chromium is installed for the browser tests (playwright-core drives it through
# its executablePath; Playwright's own browser download cannot work on machines without internet).
# Installs it with apt-get when missing, as root; one installer at a time (test files run in parallel).
# Prints the browser's path. CHROMIUM_PATH names another browser and skips the install.
set -euo pipefail
if [[ -n ${CHROMIUM_PATH:-} ]]; then
  echo "$CHROMIUM_PATH"
  exit 0
fi
find_chromium() { command -v chromium || command -v chromium-browser || true; }
found=$(find_chromium)
if [[ -z $found ]]; then
  if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
    echo "Chromium is missing: install Debian's chromium package (apt-get install chromium) or set CHROMIUM_PATH" >&2
    exit 1
  fi
  exec 9>"${TMPDIR:-/tmp}/booking-chromium-install.lock"
  flock 9
  found=$(find_chromium)
  if [[ -z $found ]]; then
    echo 'Installing Debian chromium for the browser tests (apt-get)...' >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >&2
    found=$(find_chromium)
  fi
fi
echo "$found"
