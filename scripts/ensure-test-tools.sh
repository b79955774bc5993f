#!/usr/bin/env bash
# Runs before `npm test`: two suites drive real programs from Debian's packages, which npm does not
# ship: the API reference test drives Chromium (playwright-core ships no browser), and the Redis rate
# limit tests start and stop a private redis-server. Installs what is missing when this user may
# (root or passwordless sudo); otherwise says how.
set -uo pipefail
browser="${CHROMIUM_PATH:-/usr/bin/chromium}"
missing=()
[ -x "$browser" ] || missing+=(chromium)
if [ -z "${REDIS_SERVER_PATH:-}" ] && ! command -v redis-server >/dev/null && [ ! -x /usr/bin/redis-server ]; then
  missing+=(redis-server)
fi
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  echo "note: ${missing[*]} missing and installing needs root; run 'apt-get install ${missing[*]}' to include the tests that use them." >&2
  exit 0
fi
echo "installing Debian's ${missing[*]} for the tests…" >&2
{ "${as_root[@]}" apt-get update -qq &&
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; } ||
  echo "note: installing ${missing[*]} failed; the tests that need them will say so." >&2
exit 0
