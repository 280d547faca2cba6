#!/usr/bin/env bash
# keyhost.card operations through pcscd + vpcd to `keyhost card serve` (a second process), with
# scripts/bench.d/card_ops.lua: APDUs, wall time and keyhost's CPU time per operation.
#   card_ops.sh KEYHOST N  ->  card_ops.lua's lines for the reader "Virtual PCD 00 01"
# Serves an in-memory 3.2 card on port 35964, as apdu_roundtrip.sh does, so the first reader stays free.
set -euo pipefail
keyhost=$1 n=$2
reader="Virtual PCD 00 01"
cd "$(dirname "$0")/../.."
scripts/virtual-reader start
dir=$(mktemp -d)
pid=""
cleanup() { [[ -n $pid ]] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
"$keyhost" card serve --vpcd 127.0.0.1:35964 2>/dev/null &
pid=$!
"$keyhost" card info --reader "$reader" --wait 10 >/dev/null
"$keyhost" run scripts/bench.d/card_ops.lua "$reader" "$n" "$dir"
kill "$pid"; wait "$pid" 2>/dev/null || true
pid=""
sleep 1  # let pcscd see the card go before anything else uses the reader
