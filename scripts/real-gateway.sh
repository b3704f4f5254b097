#!/usr/bin/env bash
# scripts/real-gateway.sh: the real gateway (new-api) brought up from a source checkout, configured through its own
# management API, for the suite to be pointed at. Run by hand (new-api's source cannot be fetched in CI); its result
# is recorded in the README ("Against new-api").
#
#   scripts/real-gateway.sh start [NEW_API_SRC] [--env-file FILE]   build, start, configure; print the environment
#   scripts/real-gateway.sh stop                                     stop what `start` started (by PID)
#   scripts/real-gateway.sh env                                      print the environment of the running one again
#
# NEW_API_SRC (argument or variable) is a checkout of new-api (github.com/QuantumNous/new-api or a fork); needs Go
# (1.25 or newer, with its module proxy), Node.js and curl. What `start` does:
#   1. builds the server from a copy of the checkout's Go sources (the checkout is left untouched; the web UI is a
#      one-line page: go:embed needs web/dist, and the relay is what the suite checks) into the state directory;
#   2. starts the project's reference gateway speaking the vendors' own names (specs/profiles/vendor-names.json) on
#      loopback: the upstream stand-in for vendor A (OpenAI), B (Anthropic) and C (Gemini) channels;
#   3. starts new-api on a free port with SQLite in the state directory and no Redis (SQL_DSN and REDIS_CONN_STRING
#      unset: its defaults); new-api binds every interface (`server.Run(":" + port)`), the suite uses 127.0.0.1;
#   4. configures it only through /api/... ({success, message, data}, the New-Api-User header): the root user (first-run
#      setup), login and the root's access token (the management-panel personal access token), model prices, the
#      per-group model-request limit (ModelRequestRateLimit*, group "limited": one request per 24 hours), three
#      channels (OpenAI type: ref-chat-small; Anthropic type: ref-chat-large; Gemini type: ref-chat-gemini, mapped
#      to the stand-in's ref-chat-small), and the keys: valid, expired, disabled, exhausted (remain quota 0, not
#      unlimited), IP-denied (allow list 10.255.255.1, excluding 127.0.0.1), a rate-limited one (a second user
#      in group "limited", its limit used up by one request here), and an account-disabled one (a key valid in
#      itself, of a third user the root then disables);
#   5. prints `export GATEWAY_URL=... GATEWAY_API_KEY=...` (and the other keys, GATEWAY_MODEL) on stdout, or writes
#      them to --env-file FILE (mode 600). Keys are generated at run time by new-api; nothing secret is kept here.
#
# State (PIDs, SQLite, logs, the built binary, the env file) lives in REAL_GATEWAY_STATE (default
# ${TMPDIR:-/tmp}/real-gateway-$(id -u)). Then, from the repository:
#   . <env file>; npm run conformance -- --service gateway --gateway-url "$GATEWAY_URL" \
#       --profile specs/profiles/new-api.json [--known-deviations known-deviations/new-api.json]
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE="${REAL_GATEWAY_STATE:-${TMPDIR:-/tmp}/real-gateway-$(id -u)}"
ROOT_USER=root
LIMITED_USER=limited
DISABLED_USER=disabled

log() { printf 'real-gateway: %s\n' "$*" >&2; }
die() {
  log "$*"
  exit 1
}

# ------------------------------------------------------------------ process control (PIDs in the state directory)

stop_all() {
  local f pid
  for f in "$STATE"/new-api.pid "$STATE"/upstream.pid; do
    [ -f "$f" ] || continue
    pid="$(cat "$f")"
    if kill -0 "$pid" 2>/dev/null; then
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
      log "stopped $(basename "$f" .pid) (pid $pid)"
    fi
    rm -f "$f"
  done
}

free_port() {
  node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
}

# wait_for DESCRIPTION PID COMMAND...: until COMMAND succeeds (at most 60 s), failing early if PID died.
wait_for() {
  local what="$1" pid="$2"
  shift 2
  for _ in $(seq 1 600); do
    "$@" >/dev/null 2>&1 && return 0
    kill -0 "$pid" 2>/dev/null || die "$what exited; see $STATE/*.log"
    sleep 0.1
  done
  die "$what did not come up within 60 s; see $STATE/*.log"
}

# ------------------------------------------------------------------ JSON and the management API

# json EXPR: evaluate EXPR (JavaScript, `d` is the parsed stdin) and print it.
json() { node -e "let s='';process.stdin.on('data',c=>s+=c).on('end',()=>{const d=JSON.parse(s);const v=($1);process.stdout.write(typeof v==='string'?v:JSON.stringify(v))})"; }

BASE=""
AUTH=()

# api METHOD PATH [BODY]: a management call; fails unless {success: true}; prints the body.
api() {
  local method="$1" path="$2" body="${3:-}" out
  out="$(curl -sS -X "$method" "$BASE$path" -H 'content-type: application/json' "${AUTH[@]}" ${body:+--data "$body"})" ||
    die "$method $path: no answer"
  [ "$(printf '%s' "$out" | json 'String(d.success)')" = true ] || die "$method $path: $out"
  printf '%s' "$out"
}

login_as() {
  local user="$1" password="$2" jar="$STATE/cookies-$1" id token
  AUTH=()
  id="$(curl -sS -c "$jar" -X POST "$BASE/api/user/login" -H 'content-type: application/json' \
    --data "{\"username\":\"$user\",\"password\":\"$password\"}" | json 'd.success ? String(d.data.id) : ""')"
  [ -n "$id" ] || die "login as $user failed"
  token="$(curl -sS -b "$jar" "$BASE/api/user/token" -H "New-Api-User: $id" | json 'd.success ? d.data : ""')"
  [ -n "$token" ] || die "no access token for $user"
  rm -f "$jar"
  AUTH=(-H "Authorization: $token" -H "New-Api-User: $id")
  ACCESS_TOKEN="$token"
  USER_ID="$id"
}

# token VAR NAME JSON-FIELDS: create a key for the logged-in user; VAR gets it with its sk- prefix, TOKEN_ID its id.
token() {
  local name="$2" fields="$3" key
  api POST /api/token/ "{\"name\":\"$name\",$fields}" >/dev/null
  TOKEN_ID="$(api GET '/api/token/?p=1&page_size=100' | json "String(d.data.items.find(t=>t.name==='$name').id)")"
  key="$(api POST /api/token/batch/keys "{\"ids\":[$TOKEN_ID]}" | json "d.data.keys['$TOKEN_ID']")"
  [ -n "$key" ] || die "no key for token $name"
  printf -v "$1" 'sk-%s' "$key"
}

channel() {
  local type="$1" name="$2" models="$3" mapping="${4:-}"
  local m=""
  [ -n "$mapping" ] && m=",\"model_mapping\":$(printf '%s' "$mapping" | json 'JSON.stringify(JSON.stringify(d))')"
  api POST /api/channel/ "{\"mode\":\"single\",\"channel\":{\"type\":$type,\"name\":\"$name\",\"key\":\"$UPSTREAM_KEY\",\"base_url\":\"$UPSTREAM_URL\",\"models\":\"$models\",\"group\":\"default,$LIMITED_USER\"$m}}" >/dev/null
}

option() { api PUT /api/option/ "$(node -e 'console.log(JSON.stringify({key:process.argv[1],value:process.argv[2]}))' "$1" "$2")" >/dev/null; }

# ------------------------------------------------------------------ start

build() {
  local src="$1" tree="$STATE/src" version
  [ -f "$src/main.go" ] && [ -f "$src/go.mod" ] || die "$src is not a new-api checkout (no main.go, go.mod)"
  command -v go >/dev/null || die "Go is needed to build new-api"
  version="$(git -C "$src" rev-parse --short=8 HEAD 2>/dev/null || echo unknown)"
  [ -s "$src/VERSION" ] && version="$(tr -d '[:space:]' <"$src/VERSION")-$version"
  rm -rf "$tree" && mkdir -p "$tree"
  tar -C "$src" --exclude=./.git --exclude=./web -cf - . | tar -C "$tree" -xf -
  mkdir -p "$tree/web/dist"
  if [ -f "$src/web/dist/index.html" ]; then cp -r "$src/web/dist/." "$tree/web/dist/"; else
    printf '<!doctype html><title>new-api</title><p>API only: built without its web UI.\n' >"$tree/web/dist/index.html"
  fi
  log "building new-api $version (go build; the first build downloads modules, a few minutes)"
  (cd "$tree" && go build -ldflags "-s -w -X 'github.com/QuantumNous/new-api/common.Version=$version'" -o "$STATE/new-api" .) ||
    die "go build failed"
  printf '%s' "$version" >"$STATE/version"
}

start_upstream() {
  (cd "$REPO" && exec node --import tsx fixtures/serve-reference.ts --profile specs/profiles/vendor-names.json) \
    >"$STATE/upstream.log" 2>&1 &
  echo $! >"$STATE/upstream.pid"
  wait_for "the upstream stand-in" "$(cat "$STATE/upstream.pid")" grep -q '^export GATEWAY_API_KEY=' "$STATE/upstream.log"
  UPSTREAM_URL="$(awk '/^gateway reference/ {print $3}' "$STATE/upstream.log")"
  UPSTREAM_KEY="$(sed -n 's/^export GATEWAY_API_KEY=//p' "$STATE/upstream.log")"
  log "upstream stand-in (vendor A, B, C) at $UPSTREAM_URL"
}

start_new_api() {
  local port
  port="$(free_port)"
  mkdir -p "$STATE/logs"
  (cd "$STATE" && exec env -u SQL_DSN -u REDIS_CONN_STRING -u LOG_SQL_DSN PORT="$port" GIN_MODE=release \
    SQLITE_PATH="$STATE/new-api.db?_busy_timeout=30000" SESSION_SECRET="$(head -c 24 /dev/urandom | base64)" \
    ./new-api --log-dir "$STATE/logs") >"$STATE/new-api.log" 2>&1 &
  echo $! >"$STATE/new-api.pid"
  BASE="http://127.0.0.1:$port"
  wait_for "new-api" "$(cat "$STATE/new-api.pid")" curl -sf "$BASE/api/status"
  log "new-api $(cat "$STATE/version") at $BASE (SQLite $STATE/new-api.db, no Redis)"
}

configure() {
  local password limited_password disabled_password expired
  password="$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | cut -c1-16)"
  limited_password="$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | cut -c1-16)"
  disabled_password="$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | cut -c1-16)"
  api POST /api/setup "{\"username\":\"$ROOT_USER\",\"password\":\"$password\",\"confirmPassword\":\"$password\",\"SelfUseModeEnabled\":false,\"DemoSiteEnabled\":false}" >/dev/null
  login_as "$ROOT_USER" "$password"
  local root_auth=("${AUTH[@]}") management="$ACCESS_TOKEN"

  # The overload guard (on by default) answers every relay request 503 system_cpu_overloaded while the host's CPU is
  # over 90%: on a shared or busy machine that is most of a run. Off, as a team does on a busy host.
  option performance_setting.monitor_enabled false
  option ModelRatio '{"ref-chat-small":1,"ref-chat-large":1,"ref-chat-gemini":1}'
  option GroupRatio "{\"default\":1,\"$LIMITED_USER\":1}"
  option ModelRequestRateLimitDurationMinutes 1440
  option ModelRequestRateLimitSuccessCount 100000
  option ModelRequestRateLimitGroup "{\"$LIMITED_USER\":[1,1]}"
  option ModelRequestRateLimitEnabled true

  channel 1 vendor-a-openai ref-chat-small
  channel 14 vendor-b-anthropic ref-chat-large
  channel 24 vendor-c-gemini ref-chat-gemini '{"ref-chat-gemini":"ref-chat-small"}'

  token API_KEY valid '"expired_time":-1,"unlimited_quota":true'
  expired=$(($(date +%s) - 3600))
  token EXPIRED_KEY expired "\"expired_time\":$expired,\"unlimited_quota\":true"
  token DISABLED_KEY disabled '"expired_time":-1,"unlimited_quota":true'
  api PUT '/api/token/?status_only=true' "{\"id\":$TOKEN_ID,\"status\":2}" >/dev/null
  token EXHAUSTED_KEY exhausted '"expired_time":-1,"unlimited_quota":false,"remain_quota":0'
  token IP_DENIED_KEY ip-denied '"expired_time":-1,"unlimited_quota":true,"allow_ips":"10.255.255.1"'

  api POST /api/user/ "{\"username\":\"$LIMITED_USER\",\"password\":\"$limited_password\",\"display_name\":\"$LIMITED_USER\"}" >/dev/null
  local lid
  lid="$(api GET '/api/user/search?keyword=limited' | json "String((d.data.items ?? d.data).find(u=>u.username==='$LIMITED_USER').id)")"
  api PUT /api/user/ "{\"id\":$lid,\"username\":\"$LIMITED_USER\",\"display_name\":\"$LIMITED_USER\",\"group\":\"$LIMITED_USER\",\"quota\":100000000}" >/dev/null
  login_as "$LIMITED_USER" "$limited_password"
  token RATE_LIMITED_KEY rate-limited '"expired_time":-1,"unlimited_quota":true'
  AUTH=("${root_auth[@]}")
  # Use up the limit (one request in the window): the next request with this key answers 429.
  local status
  for attempt in first second; do
    status="$(curl -sS -o "$STATE/limited.out" -w '%{http_code}' "$BASE/v1/chat/completions" -H "Authorization: Bearer $RATE_LIMITED_KEY" \
      -H 'content-type: application/json' --data '{"model":"ref-chat-small","messages":[{"role":"user","content":"hi"}],"max_tokens":4}')"
    [ "$attempt" = first ] && [ "$status" != 200 ] && die "the rate-limited key's first request answered $status: $(cat "$STATE/limited.out")"
  done
  [ "$status" = 429 ] || die "the rate-limited key's second request answered $status, where 429 was expected: $(cat "$STATE/limited.out")"

  # A key valid in itself whose account is disabled: a third user's key, then the root disables that user.
  api POST /api/user/ "{\"username\":\"$DISABLED_USER\",\"password\":\"$disabled_password\",\"display_name\":\"$DISABLED_USER\"}" >/dev/null
  local did
  did="$(api GET "/api/user/search?keyword=$DISABLED_USER" | json "String((d.data.items ?? d.data).find(u=>u.username==='$DISABLED_USER').id)")"
  login_as "$DISABLED_USER" "$disabled_password"
  token ACCOUNT_DISABLED_KEY account-disabled '"expired_time":-1,"unlimited_quota":true'
  AUTH=("${root_auth[@]}")
  api POST /api/user/manage "{\"id\":$did,\"action\":\"disable\"}" >/dev/null
  MANAGEMENT_TOKEN="$management"
  log "configured: root user, 3 channels, keys valid/expired/disabled/exhausted/ip-denied/rate-limited/account-disabled, access token"
}

write_env() {
  local file="$STATE/env"
  umask 077
  cat >"$file" <<EOF
# new-api $(cat "$STATE/version") from scripts/real-gateway.sh (state: $STATE); keys generated at this start
export GATEWAY_URL=$BASE
export GATEWAY_MODEL=ref-chat-small
export GATEWAY_REALTIME_PATH=/v1/realtime
export GATEWAY_API_KEY=$API_KEY
export GATEWAY_EXPIRED_KEY=$EXPIRED_KEY
export GATEWAY_DISABLED_KEY=$DISABLED_KEY
export GATEWAY_EXHAUSTED_KEY=$EXHAUSTED_KEY
export GATEWAY_IP_DENIED_KEY=$IP_DENIED_KEY
export GATEWAY_ACCOUNT_DISABLED_KEY=$ACCOUNT_DISABLED_KEY
export GATEWAY_RATE_LIMITED_KEY=$RATE_LIMITED_KEY
export GATEWAY_MANAGEMENT_TOKEN=$MANAGEMENT_TOKEN
EOF
}

start() {
  local src="" env_file=""
  while [ $# -gt 0 ]; do
    case "$1" in
      --env-file) env_file="$2"; shift 2 ;;
      -*) die "unknown option $1" ;;
      *) src="$1"; shift ;;
    esac
  done
  src="${src:-${NEW_API_SRC:-}}"
  [ -n "$src" ] || die "give the new-api source checkout (argument or NEW_API_SRC)"
  src="$(cd "$src" && pwd)"
  mkdir -p "$STATE"
  stop_all
  rm -f "$STATE"/new-api.db* "$STATE/env"
  build "$src"
  trap 'log "start failed: stopping what it started"; stop_all' EXIT
  start_upstream
  start_new_api
  configure
  trap - EXIT
  write_env
  if [ -n "$env_file" ]; then
    (umask 077 && cp "$STATE/env" "$env_file")
    log "environment written to $env_file; stop with: $0 stop"
  else
    cat "$STATE/env"
    log "stop with: $0 stop"
  fi
}

case "${1:-}" in
  start) shift; start "$@" ;;
  stop) stop_all ;;
  env) cat "$STATE/env" ;;
  *) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
