#!/usr/bin/env bash
# A newcomer's first commands, checked on a fresh clone: `npm ci` with an empty cache prints no
# engine or deprecation warning for our own dependencies, `npm start` serves /healthz, and SIGTERM
# to the npm process stops the server (its port is closed within 5 s). Between the two, the
# README's first request and a long prompt (the token thread) work on the bundle npm start runs.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
server=""
cleanup() {
  [ -n "$server" ] && kill -KILL "$server" 2>/dev/null || true
  pkill -KILL -f "$work/gateway/dist/server/main.js" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

git clone -q "$repo" "$work/gateway"
cd "$work/gateway"
echo "== npm ci with an empty cache"
npm_config_cache="$work/npm-cache" npm ci --no-audit --no-fund 2>&1 | tee "$work/install.log"
if grep -q EBADENGINE "$work/install.log"; then
  echo "fresh clone: a dependency does not support this Node version (EBADENGINE)"; exit 1
fi
direct="$(node -e 'const p=require("./package.json"); console.log(Object.keys({...p.dependencies,...p.devDependencies}).join("\n"))')"
deprecated="$(grep -oE 'npm warn deprecated (@[^/ ]+/)?[^@ ]+' "$work/install.log" | awk '{print $4}' | sort -u || true)"
for name in $deprecated; do
  if printf '%s\n' "$direct" | grep -qxF "$name"; then echo "fresh clone: direct dependency $name is deprecated"; exit 1; fi
done

port="$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
echo "== npm start on port $port"
PORT="$port" DATABASE_URL="sqlite:$work/data/gateway.db" npm start > "$work/start.log" 2>&1 &
server=$!
up=""
for _ in $(seq 1 120); do
  if curl -sf "http://127.0.0.1:$port/healthz" > /dev/null; then up=yes; break; fi
  if ! kill -0 "$server" 2>/dev/null; then break; fi
  sleep 0.5
done
if [ -z "$up" ]; then cat "$work/start.log"; echo "fresh clone: npm start did not serve /healthz"; exit 1; fi
# The welcome (with the demo key) is printed once the demo account exists, just after listening.
for _ in $(seq 1 40); do grep -q "A demo account" "$work/start.log" && break; sleep 0.25; done
grep -q "A demo account" "$work/start.log" || { cat "$work/start.log"; echo "fresh clone: no demo key printed"; exit 1; }
key="$(grep -oE 'sk-gw-[A-Za-z0-9_-]+' "$work/start.log" | head -1)"
curl -sf "http://127.0.0.1:$port/v1/balance" -H "Authorization: Bearer $key" | grep -q '"success":true' \
  || { echo "fresh clone: the README's first request failed"; exit 1; }
# A prompt this long is counted on the token thread, which the bundle must be able to start.
node -e 'console.log(JSON.stringify({contents:[{role:"user",parts:[{text:"hello world ".repeat(3000)}]}]}))' > "$work/long.json"
curl -sf -X POST "http://127.0.0.1:$port/v1beta/models/textgen-2.5-flash:countTokens" -H "Authorization: Bearer $key" \
  -H 'content-type: application/json' --data @"$work/long.json" | grep -q '"totalTokens":6001' \
  || { echo "fresh clone: counting a long prompt on the token thread failed"; exit 1; }

echo "== SIGTERM to the npm process"
kill -TERM "$server"
for _ in $(seq 1 50); do
  if ! curl -s -m 1 "http://127.0.0.1:$port/healthz" > /dev/null; then
    echo "fresh clone: port closed after SIGTERM"
    exit 0
  fi
  sleep 0.1
done
echo "fresh clone: the server still answers 5 s after SIGTERM to npm start"; exit 1
