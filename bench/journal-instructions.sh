#!/bin/sh
# The change journal's instructions per recorded change, counted by callgrind: one daemon with
# the journal on and one with it off each take a 10,000-set burst to a fresh domain, and the
# instructions of DefaultsStore.apply (the store's write path, recording included) are divided by
# the burst's changes. Unlike the timed bursts of `defaultsd-bench --journal-only`, this count
# does not move with the machine's load, so it shows changes to recording of a few percent.
#
#   swift build -c release --static-swift-stdlib --product defaultsd
#   bench/journal-instructions.sh [.build/release/defaultsd]
#
# Needs valgrind, callgrind_annotate, strip, socat and swift-demangle (make bench installs them).
# valgrind cannot read the debugging information Swift writes, so the daemon runs as a copy
# stripped of it (the same code).
set -eu
binary=${1:-.build/release/defaultsd}
changes=10000
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
strip --strip-debug -o "$work/defaultsd" "$binary"

# A burst of `changes` pipelined sets to one domain (50 keys), read to its last answer.
burst() {
    i=0
    while [ $i -lt $changes ]; do
        printf '{"op":"set","domain":"%s","key":"k%d","value":%d}\n' "$2" $((i % 50)) $i
        i=$((i + 1))
    done > "$work/burst"
    socat -t 30 -T 60 "UNIX-CONNECT:$1" - < "$work/burst" | head -n $changes | grep -c '"ok":true' > "$work/answers"
    [ "$(cat "$work/answers")" -eq $changes ] || { echo "a burst was not answered in full" >&2; exit 1; }
}

count() {
    dir="$work/$1"
    mkdir -p "$dir"
    printf '{ "settingsBundleDirectories": [], "journal.enabled": %s }\n' "$2" > "$dir/config.json"
    valgrind --tool=callgrind --callgrind-out-file="$dir/callgrind.out" "$work/defaultsd" --config "$dir/config.json" \
        --socket "$dir/socket" --storage-dir "$dir/storage" --state-dir "$dir/state" 2> "$dir/log" &
    pid=$!
    tries=0
    until grep -q "start-up settled" "$dir/log" 2>/dev/null; do
        tries=$((tries + 1))
        [ $tries -lt 240 ] || { echo "the daemon did not start" >&2; cat "$dir/log" >&2; exit 1; }
        sleep 0.25
    done
    # Two bursts warm the daemon up; the journal's hand-over and its memory's give-back, a
    # second after each, are done before the counted burst.
    burst "$dir/socket" com.bench.warm-1
    burst "$dir/socket" com.bench.warm-2
    sleep 3
    callgrind_control --zero $pid > /dev/null 2>&1
    burst "$dir/socket" com.bench.counted
    callgrind_control --dump $pid > /dev/null 2>&1
    kill $pid
    wait $pid || true
    callgrind_annotate --inclusive=yes --threshold=100 "$dir/callgrind.out.1" | swift-demangle --simplified \
        | grep -m1 'DefaultsStore.apply(_:origin:at:checked:)' | awk '{ gsub(",", "", $1); print $1 }'
}

on=$(count on true)
off=$(count off false)
echo "DefaultsStore.apply per change: $((on / changes)) instructions with the journal, $((off / changes)) without;" \
    "the journal's: $(((on - off) / changes))"
