#!/usr/bin/env bash
# APDU round trip through pcscd + vpcd to `keyhost card serve`, with and without the latency settings.
#   apdu_roundtrip.sh KEYHOST MEASURE_BIN  ->  "apdu_us=<median> p90_us=<p90> nagle_us=<median>"
# Serves on the second virtual reader (port 35964, "Virtual PCD 00 01") so the first stays free.
set -euo pipefail
keyhost=$1 measure=$2
reader="Virtual PCD 00 01"
cd "$(dirname "$0")/../.."
scripts/virtual-reader start
pid=""
serve() {  # serve [ENV=VALUE…]: start a card on 35964 and wait until pcscd sees it
  env "$@" "$keyhost" card serve --vpcd 127.0.0.1:35964 2>/dev/null &
  pid=$!
  "$keyhost" card info --reader "$reader" --wait 10 >/dev/null
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; sleep 1; }  # let pcscd see the card go
trap '[[ -n $pid ]] && kill "$pid" 2>/dev/null || true' EXIT
serve KEYHOST_VPCD_NAGLE=0
fast=$("$measure" "$reader" 3000)
stop
serve KEYHOST_VPCD_NAGLE=1
slow=$("$measure" "$reader" 20)
stop
pid=""
apdu=${fast#*apdu_us=}; apdu=${apdu%% *}
p90=${fast##*p90_us=}
nagle=${slow#*apdu_us=}; nagle=${nagle%% *}
echo "apdu_us=$apdu p90_us=$p90 nagle_us=$nagle"
