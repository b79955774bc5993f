#!/usr/bin/env bash
# Runs before `npm test`: the API reference test drives Debian's Chromium (playwright-core ships no
# browser). Installs it when missing and this user may (root or passwordless sudo); otherwise says how.
set -uo pipefail
browser="${CHROMIUM_PATH:-/usr/bin/chromium}"
[ -x "$browser" ] && exit 0
if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  echo "note: $browser is missing and installing it needs root; run 'apt-get install chromium' (or set CHROMIUM_PATH) to include the browser test." >&2
  exit 0
fi
echo "installing Debian's chromium for the browser test…" >&2
{ "${as_root[@]}" apt-get update -qq &&
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; } ||
  echo "note: installing chromium failed; the browser test will say so." >&2
exit 0
