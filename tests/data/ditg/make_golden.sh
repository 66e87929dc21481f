#!/usr/bin/env bash
# Re-creates the golden D-ITG logs of this directory with the real ITGSend/ITGRecv/ITGDec
# (Debian's d-itg 2.8.1-r1023), on loopback only. The logs differ on every run (they hold real
# timestamps); the tests compare lasthop against ITGDec's output for whatever logs are here.
#   usage: tests/data/ditg/make_golden.sh [OUT_DIR [NAME...]]   (default: this directory;
#          NAME: multi loss tail rtt, default all)
set -euo pipefail
out=$(cd "${1:-$(dirname "$0")}" && pwd)
shift || true
names=${*:-multi loss tail rtt}
want() { [[ " $names " == *" $1 "* ]]; }
work=$(mktemp -d /tmp/lh-$$-ditg.XXXX)
sig=$((20000 + $$ % 20000))     # the signalling port: ITGRecv's default 9000 may be in use
cd "$work"
ITGRecv -Si lo -a 127.0.0.1 -Sp "$sig" >recv.out 2>&1 &
recv=$!
trap 'kill -9 $recv 2>/dev/null || true; rm -rf "$work"' EXIT
sleep 1

# multi: three flows at once, two UDP and one TCP, constant and exponential IDT, constant and
# uniform sizes; no loss on loopback.
if want multi; then
cat >multi.flows <<FLOWS
-a 127.0.0.1 -Sdp $sig -rp 9501 -T UDP -C 100 -c 512 -t 2000
-a 127.0.0.1 -Sdp $sig -rp 9502 -T TCP -C 50 -c 1000 -t 2000
-a 127.0.0.1 -Sdp $sig -rp 9503 -T UDP -E 200 -u 64 1200 -t 2000
FLOWS
ITGSend multi.flows -l multi-send.log -x multi-recv.log >/dev/null 2>&1
fi

# loss: two UDP flows at 1500 pkt/s and a TCP flow; ITGRecv is stopped (SIGSTOP) for 250 ms
# in the middle, so its socket buffers overflow and the UDP flows lose a burst each.
if want loss; then
cat >loss.flows <<FLOWS
-a 127.0.0.1 -Sdp $sig -rp 9511 -T UDP -C 1500 -c 64 -t 900
-a 127.0.0.1 -Sdp $sig -rp 9512 -T UDP -C 1500 -c 200 -t 900
-a 127.0.0.1 -Sdp $sig -rp 9513 -T TCP -C 200 -c 300 -t 900
FLOWS
ITGSend loss.flows -l loss-send.log -x loss-recv.log >/dev/null 2>&1 &
send=$!
sleep 0.35; kill -STOP $recv; sleep 0.25; kill -CONT $recv
wait $send
fi

# tail: one UDP flow at 2000 pkt/s; ITGRecv is stopped over the flow's end, so the packets
# sent last are lost. ITGDec reports 0 dropped (it never compares with the sender's count).
if want tail; then
ITGSend -a 127.0.0.1 -Sdp $sig -rp 9521 -T UDP -C 2000 -c 64 -t 700 \
  -l tail-send.log -x tail-recv.log >/dev/null 2>&1 &
send=$!
sleep 0.45; kill -STOP $recv; sleep 0.4; kill -CONT $recv
wait $send
fi

# rtt: round-trip mode (-m rttm: ITGRecv echoes every packet; the sender's log holds one record
# per echo, its receive time the echo's arrival). One UDP flow at 500 pkt/s for 1.2 s; ITGRecv
# is stopped for 200 ms from 0.4 s, so a burst of packets (or their echoes) is lost.
if want rtt; then
ITGSend -a 127.0.0.1 -Sdp $sig -rp 9531 -T UDP -C 500 -c 300 -t 1200 -m rttm \
  -l rtt-send.log -x rtt-recv.log >/dev/null 2>&1 &
send=$!
sleep 0.4; kill -STOP $recv; sleep 0.2; kill -CONT $recv
wait $send
fi

sleep 0.5
for name in $names; do
  for side in send recv; do
    log=$name-$side.log
    cp "$log" "$out/$log"
    # ITGDec writes a spinner to stderr; its summary goes to stdout.
    ITGDec "$log" 2>/dev/null >"$out/$log.itgdec.txt"
    ITGDec "$log" -c 100 "$out/$log.combined_100.dat" >/dev/null 2>&1
  done
done
echo "wrote $(ls "$out"/*.log | wc -l) logs to $out"
