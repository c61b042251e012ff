#!/usr/bin/env bash
# Installs what wdext's tests and demo need on a fresh Debian machine:
# Chromium and chromedriver, WebKitWebDriver (webkit2gtk-driver), Xvfb,
# Firefox ESR,
# python3-selenium and jq (the README's examples), python3-pytest, Java 17 (the Selenium
# Grid test) from Debian; from npm, wpt-runner (for its testharness.js)
# into .cache/, the Node.js clients the client helpers are tested with
# (selenium-webdriver, webdriverio, and clients/js itself) into
# .cache/node/, and Selenium Grid's jar (@nightwatch/selenium-server ships
# it) into .cache/selenium-server/. Does nothing that is already there. When apt-get or npm fails, their own error is
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
# Firefox, the third engine (wdext serve --engine firefox): wdext drives
# it through Marionette itself (there is no geckodriver to install).
command -v firefox-esr >/dev/null 2>&1 || [ -x /usr/bin/firefox-esr ] || need+=(firefox-esr)
# Selenium's Python client, for the test that checks the extension
# commands' parameter policy with it and for the README's Python example.
/usr/bin/python3 -c 'import selenium' >/dev/null 2>&1 || need+=(python3-selenium)
# pytest, for the leak-check plugin's test (clients/python/pytest_wdext.py).
/usr/bin/python3 -c 'import pytest' >/dev/null 2>&1 || need+=(python3-pytest)
# The README's curl examples read JSON with jq.
command -v jq >/dev/null 2>&1 || need+=(jq)
# Selenium Grid 4 (the Grid e2e test, cmd/wdext TestGrid) runs on Java.
command -v java >/dev/null 2>&1 || need+=(openjdk-17-jre-headless)
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

# npm_fail PACKAGE explains an npm failure (npm's own error is above).
npm_fail() {
  fail "npm could not fetch $1 (its error is above)." \
    "If npm cannot reach its registry ($(npm config get registry 2>/dev/null || echo https://registry.npmjs.org/)): set a proxy" \
    "(npm config set proxy http://HOST:PORT) or a reachable mirror (npm config set registry URL), then run this again."
}

# The Node.js clients that clients/js is tested with (cmd/wdext
# TestClientJS), and clients/js itself as a project would add it (npm
# install /path/to/clients/js), in .cache/node/ (git-ignored). Install
# scripts are not run: nothing here downloads a browser or a driver.
node_pkgs=(selenium-webdriver@4.35.0 webdriverio@9.32.0 ../../clients/js)
if [ "$(cat .cache/node/.installed 2>/dev/null)" != "${node_pkgs[*]}" ]; then
  command -v npm >/dev/null 2>&1 || apt_install npm
  # selenium-webdriver 4.35 needs Node.js 20 (Debian 12's nodejs is 18):
  # say so now rather than fail in TestClientJS.
  node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  [ "$node_major" -ge 20 ] ||
    fail "Node.js $(node --version 2>/dev/null || echo '(none)') is too old for selenium-webdriver@4.35.0 (needs 20 or later):" \
      "install Node.js 20+ (e.g. from nodejs.org or NodeSource) and run this again."
  mkdir -p .cache/node
  [ -f .cache/node/package.json ] || echo '{"private": true}' >.cache/node/package.json
  (cd .cache/node && npm install --loglevel=error --no-audit --no-fund --ignore-scripts "${node_pkgs[@]}") ||
    npm_fail "${node_pkgs[*]}"
  echo "${node_pkgs[*]}" >.cache/node/.installed
fi

# Selenium Grid 4's server jar, which the npm package
# @nightwatch/selenium-server ships (only its tarball is fetched).
grid_jar=.cache/selenium-server/package/lib/selenium-server-4.20.0.jar
if [ ! -f "$grid_jar" ]; then
  command -v npm >/dev/null 2>&1 || apt_install npm
  mkdir -p .cache/selenium-server
  tgz=$(cd .cache && npm pack --loglevel=error @nightwatch/selenium-server@4.20.0) ||
    npm_fail @nightwatch/selenium-server@4.20.0
  tgz=$(printf '%s\n' "$tgz" | tail -n 1)
  tar -xzf ".cache/$tgz" -C .cache/selenium-server
  rm -f ".cache/$tgz"
  [ -f "$grid_jar" ] || fail "the npm package @nightwatch/selenium-server@4.20.0 has no $grid_jar: its layout changed."
fi
