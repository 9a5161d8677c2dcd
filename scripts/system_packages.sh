#!/usr/bin/env bash
# Install the Debian packages (system-packages.txt) that a make target needs, when they are missing.
#   scripts/system_packages.sh run|class|test
# A package is there when its command is on PATH (or, with "-", when dpkg says so; without dpkg it is taken as
# there). Missing ones are installed with apt-get when it exists (it needs root); this script always exits 0 and
# the caller decides whether what is still missing is fatal (.ci/run does for the browser and the class tests;
# `make run` falls back to the Python path without g++).
set -uo pipefail
target="${1:?usage: scripts/system_packages.sh run|class|test}"
list="$(dirname "$0")/../system-packages.txt"
missing=()
while read -r package check rest; do
  case "$package" in ''|'#'*) continue ;; esac
  targets="${rest#\#}"
  targets="${targets%%:*}"
  [[ " $targets " == *" $target "* ]] || continue
  if [ "$check" != "-" ]; then
    command -v "$check" >/dev/null 2>&1 || missing+=("$package")
  elif command -v dpkg >/dev/null 2>&1; then
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
  fi
done < "$list"
[ ${#missing[@]} -eq 0 ] && exit 0
if command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian packages for make $target: ${missing[*]}"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null) \
    || echo "warning: apt-get could not install ${missing[*]}" >&2
else
  echo "make $target wants these Debian packages, which are missing: ${missing[*]} (apt-get install them)" >&2
fi
exit 0
