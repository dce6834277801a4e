#!/usr/bin/env bash
# install-deps.sh: install the Debian packages Burrow builds and tests with, when missing.
#
# Prints one summary line when everything is present. As root, installs what is missing
# with non-interactive apt-get. Not root and something missing: prints the exact command
# to run and exits 1.
set -euo pipefail

pkgs=(
  build-essential pkg-config
  libmetis-dev metis
  liburing-dev
  libopenblas-dev
  zlib1g-dev
  libzip-dev
  libcurl4-openssl-dev
  libcjson-dev
  libopenmpi-dev openmpi-bin
  libcriterion-dev
  chromium           # tests only: renders burrow report's HTML headless (tests/test_report.c)
  python3 python3-venv
)

missing=()
for p in "${pkgs[@]}"; do
  st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$st" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#pkgs[@]} packages present"
  exit 0
fi

cmd="apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    echo "install-deps: installing ${missing[*]} (sudo)" >&2
    sudo -n sh -c "$cmd" >&2
  else
    echo "install-deps: missing packages: ${missing[*]}" >&2
    echo "install-deps: run as root:  $cmd" >&2
    exit 1
  fi
else
  echo "install-deps: installing ${missing[*]}" >&2
  sh -c "$cmd" >&2
fi
echo "install-deps: installed ${#missing[@]} package(s): ${missing[*]}"
