#!/bin/sh
# Replays one recorded GPU landscape (../shared/landscapes beside the
# checkout) with kforge's default strategy at one budget and fails when the
# median over 20 seeds reaches less of the optimum than required. Exits 77
# (ctest SKIP_RETURN_CODE) when the landscapes are not there.
#   landscape_replay.sh REPLAY LANDSCAPE.json.gz WORK.json BUDGET REQUIRE
replay=$1 landscape=$2 work=$3 budget=$4 require=$5
if [ ! -f "$landscape" ]; then
  echo "SKIP: $landscape is absent (the shared GPU landscapes are not beside this checkout)"
  exit 77
fi
python3 "$(dirname "$landscape")/to_kforge.py" "$landscape" -o "$work" || exit 1
exec "$replay" "$work" --seeds 20 --strategy default --budgets "$budget" --require "$require" --guesses 0
