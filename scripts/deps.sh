#!/usr/bin/env bash
# Installs what wdext's tests and demo need on a fresh Debian machine:
# Chromium and chromedriver, WebKitWebDriver (webkit2gtk-driver), Xvfb and
# python3-selenium from Debian, and the npm package wpt-runner (for its testharness.js)
# into .cache/. Does nothing that is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || need+=(chromium)
command -v chromedriver >/dev/null 2>&1 || [ -x /usr/bin/chromedriver ] || need+=(chromium-driver)
# WebKitGTK, the second engine (wdext serve --engine webkitgtk): its
# driver (which pulls in MiniBrowser) and an X server to show it on.
command -v WebKitWebDriver >/dev/null 2>&1 || [ -x /usr/bin/WebKitWebDriver ] || need+=(webkit2gtk-driver)
command -v Xvfb >/dev/null 2>&1 || [ -x /usr/bin/Xvfb ] || need+=(xvfb)
# Selenium's Python client, for the test that checks the extension
# commands' parameter policy with it.
/usr/bin/python3 -c 'import selenium' >/dev/null 2>&1 || need+=(python3-selenium)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi

# testharness.js for the bundled WPT-style suite: the npm package
# wpt-runner ships it. Only its tarball is fetched (its own dependencies,
# jsdom among them, are not needed).
harness=.cache/wpt-runner/package/testharness/testharness.js
if [ ! -f "$harness" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq npm >/dev/null
  fi
  mkdir -p .cache/wpt-runner
  tgz=$(cd .cache && npm pack --silent wpt-runner@7.0.0 2>/dev/null | tail -n 1)
  tar -xzf ".cache/$tgz" -C .cache/wpt-runner
  rm -f ".cache/$tgz"
fi
