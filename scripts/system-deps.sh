#!/usr/bin/env bash
# Debian packages some tests use: Chromium (the report renders in a real browser), tshark
# (pcap files read back by Wireshark's dissectors), d-itg (ITGSend/ITGRecv/ITGDec, the oracle
# for lasthop's D-ITG compatibility), ping and iperf3 (lasthop emu). Installed when we can (root with apt-get);
# otherwise those tests are skipped and say why. Never fails the build by itself.
set -u
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v tshark >/dev/null 2>&1 || need+=(tshark)
command -v ITGDec >/dev/null 2>&1 || need+=(d-itg)
# lasthop emu's tests ping across the emulated network; its benchmark loads it with iperf3.
command -v ping >/dev/null 2>&1 || need+=(iputils-ping)
command -v iperf3 >/dev/null 2>&1 || need+=(iperf3)
# lasthop emu and the generator's netns test bed configure namespaces with ip, tc and sysctl.
command -v ip >/dev/null 2>&1 && command -v tc >/dev/null 2>&1 || need+=(iproute2)
command -v sysctl >/dev/null 2>&1 || need+=(procps)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing ${need[*]} with apt-get (for the report, pcap, D-ITG, generator and emulator tests)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null 2>&1 || true
  # One package at a time: a package this distribution lacks must not keep the others out.
  for pkg in "${need[@]}"; do
    apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null 2>&1 \
      || echo "could not install $pkg: the tests that need it will be skipped"
  done
else
  echo "not root or no apt-get: ${need[*]} missing, the tests that need them will be skipped"
fi
exit 0
