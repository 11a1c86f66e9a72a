#!/usr/bin/env bash
# The report's browser test needs headless Chromium and its driver: Debian's packages, installed if absent.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
  exit 0
fi
echo "ci: installing chromium and chromium-driver from Debian's packages"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium chromium-driver >/dev/null
chromium --version
