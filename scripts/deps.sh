#!/usr/bin/env bash
# Installs what wdext's tests and demo need on a fresh Debian machine:
# Chromium and chromedriver from Debian, and the npm package wpt-runner
# (its testharness.js) into ./node_modules. Does nothing that is already
# there.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || need+=(chromium)
command -v chromedriver >/dev/null 2>&1 || [ -x /usr/bin/chromedriver ] || need+=(chromium-driver)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi

if [ -f package.json ] && [ ! -f node_modules/wpt-runner/testharness/testharness.js ] && command -v npm >/dev/null 2>&1; then
  npm install --no-audit --no-fund --silent
fi
