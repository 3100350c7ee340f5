#!/usr/bin/env bash
# Same-machine A/B of two or more builds of one benchmark program, in interleaved rounds, so
# that a drift of the machine (clocks, another tenant) falls on every side alike:
#   AB_RUN=carveout AB_ORDER="base new new base" tools/gpu/ab_rounds.sh RESULT.jsonl \
#       base=build/base/apps/jacobi/apiary-jacobi new=build/release/apps/jacobi/apiary-jacobi \
#       -- --suite configs/jacobi/suite.json --version stages_inline,graph --scheduler megakernel
# Every program named is run with the arguments after `--` and `--json FILE` (apiary-jacobi and
# apiary-bench-runtime both take it); each JSON line it writes is appended to RESULT.jsonl with
# `ab_run` ($AB_RUN), `ab_side` (the name before `=`), `ab_build` ($AB_BUILD_<side>, else the
# program's path) and `ab_round` (the position in $AB_ORDER). Default order: each side once, then
# once more in reverse. What a program prints goes to RESULT.jsonl.<round>.<side>.log.
# Report: python3 tools/ab_report.py RESULT.jsonl.
# Exit status: non-zero if any run failed (its lines are kept).
set -uo pipefail
result=${1:?usage: ab_rounds.sh RESULT.jsonl side=PROGRAM... -- ARGS...}
shift
declare -A program
sides=()
while (($#)) && [ "$1" != "--" ]; do
  case "$1" in
    *=*) sides+=("${1%%=*}"); program[${1%%=*}]=${1#*=} ;;
    *) echo "ab_rounds: expected side=PROGRAM or --, not '$1'" >&2; exit 2 ;;
  esac
  shift
done
[ "${1:-}" = "--" ] && shift
((${#sides[@]} >= 2)) || { echo "ab_rounds: name at least two sides (side=PROGRAM)" >&2; exit 2; }
for s in "${sides[@]}"; do
  [ -x "${program[$s]}" ] || { echo "ab_rounds: side '$s': ${program[$s]} is not an executable" >&2; exit 2; }
done
order=${AB_ORDER:-"${sides[*]} $(printf '%s\n' "${sides[@]}" | tac | tr '\n' ' ')"}
status=0 round=0
for s in $order; do
  [ -n "${program[$s]:-}" ] || { echo "ab_rounds: AB_ORDER names '$s', which is no side" >&2; exit 2; }
  round=$((round + 1))
  tmp=$(mktemp)
  start=$(date +%s)
  "${program[$s]}" "$@" --json "$tmp" > "$result.$round.$s.log" 2>&1 || status=1
  build_var="AB_BUILD_$s"
  AB_SIDE=$s AB_ROUND=$round AB_BUILD=${!build_var:-${program[$s]}} python3 -c '
import json, os, sys
tags = {"ab_run": os.environ.get("AB_RUN", "ab"), "ab_side": os.environ["AB_SIDE"],
        "ab_build": os.environ["AB_BUILD"], "ab_round": int(os.environ["AB_ROUND"])}
with open(sys.argv[1]) as f, open(sys.argv[2], "a") as out:
    for line in f:
        if line.strip():
            out.write(json.dumps({**json.loads(line), **tags}) + "\n")
' "$tmp" "$result" || status=1
  rm -f "$tmp"
  echo "ab_rounds: round $round, $s: $(( $(date +%s) - start )) s"
done
exit $status
