#!/usr/bin/env bash
# Installs what wdext's tests and demo need on a fresh Debian machine:
# Chromium and chromedriver, WebKitWebDriver (webkit2gtk-driver), Xvfb,
# python3-selenium and jq (the README's examples) from Debian, and the npm
# package wpt-runner (for its testharness.js) into .cache/. Does nothing
# that is already there. When apt-get or npm fails, their own error is
# shown, then what to do.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() {
  printf 'scripts/deps.sh: %s\n' "$@" >&2
  exit 1
}

# apt_install PACKAGES... installs Debian packages, as root or with sudo.
apt_install() {
  local sudo=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 ||
      fail "not root and no sudo: install $* as root (apt-get install $*), then run this again."
    sudo="sudo"
  fi
  $sudo apt-get update -qq ||
    fail "apt-get update failed (its error is above): check the network, a proxy (Acquire::http::Proxy) or /etc/apt/sources.list," \
      "or install $* yourself, then run this again."
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null ||
    fail "apt-get could not install $* (its error is above): install them yourself, then run this again."
}

need=()
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || need+=(chromium)
command -v chromedriver >/dev/null 2>&1 || [ -x /usr/bin/chromedriver ] || need+=(chromium-driver)
# WebKitGTK, the second engine (wdext serve --engine webkitgtk): its
# driver (which pulls in MiniBrowser) and an X server to show it on.
command -v WebKitWebDriver >/dev/null 2>&1 || [ -x /usr/bin/WebKitWebDriver ] || need+=(webkit2gtk-driver)
command -v Xvfb >/dev/null 2>&1 || [ -x /usr/bin/Xvfb ] || need+=(xvfb)
# Selenium's Python client, for the test that checks the extension
# commands' parameter policy with it and for the README's Python example.
/usr/bin/python3 -c 'import selenium' >/dev/null 2>&1 || need+=(python3-selenium)
# The README's curl examples read JSON with jq.
command -v jq >/dev/null 2>&1 || need+=(jq)
if [ ${#need[@]} -gt 0 ]; then
  apt_install "${need[@]}"
fi

# testharness.js for the bundled WPT-style suite: the npm package
# wpt-runner ships it. Only its tarball is fetched (its own dependencies,
# jsdom among them, are not needed).
harness=.cache/wpt-runner/package/testharness/testharness.js
if [ ! -f "$harness" ]; then
  command -v npm >/dev/null 2>&1 || apt_install npm
  mkdir -p .cache/wpt-runner
  # npm's own errors (an unreachable registry, a proxy) go to stderr.
  if ! tgz=$(cd .cache && npm pack --loglevel=error wpt-runner@7.0.0); then
    fail "npm could not fetch the package wpt-runner@7.0.0 (its error is above)." \
      "If npm cannot reach its registry ($(npm config get registry 2>/dev/null || echo https://registry.npmjs.org/)): set a proxy" \
      "(npm config set proxy http://HOST:PORT) or a reachable mirror (npm config set registry URL), then run this again." \
      "Or do without it: testharness.js from a WPT checkout (wdext wpt --testharness FILE, or --wpt-root)."
  fi
  tgz=$(printf '%s\n' "$tgz" | tail -n 1)
  tar -xzf ".cache/$tgz" -C .cache/wpt-runner
  rm -f ".cache/$tgz"
  [ -f "$harness" ] || fail "the npm package wpt-runner@7.0.0 has no $harness: its layout changed."
fi
