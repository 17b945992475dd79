#!/usr/bin/env bash
# Print the Debian archive URI this machine's apt already uses for the given suite (default: the
# running codename), so lab builds use the machine's configured mirror and never a hard-coded host.
set -euo pipefail
suite=${1:-$(awk -F= '$1 == "VERSION_CODENAME" { print $2 }' /etc/os-release)}

deb822_uri() {
  # deb822 stanzas: pick the first one whose Suites field lists the suite itself.
  awk -v suite="$suite" '
    BEGIN { RS=""; FS="\n" }
    {
      uri=""; has=0
      for (i = 1; i <= NF; i++) {
        if ($i ~ /^URIs:/)   { sub(/^URIs:[ \t]*/, "", $i); split($i, u, /[ \t]+/); uri=u[1] }
        if ($i ~ /^Suites:/) { n=split($i, s, /[ \t]+/); for (j = 2; j <= n; j++) if (s[j] == suite) has=1 }
      }
      if (has && uri != "") { print uri; exit }
    }' /etc/apt/sources.list.d/*.sources 2>/dev/null || true
}

oneline_uri() {
  awk -v suite="$suite" '$1 == "deb" && $0 !~ /\[/ && $3 == suite { print $2; exit }
                         $1 == "deb" && $0 ~ /\]/ { for (i = 2; i <= NF; i++) if ($i ~ /\]$/) { if ($(i+2) == suite) { print $(i+1); exit } } }' \
    /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true
}

uri=$(deb822_uri)
[ -n "$uri" ] || uri=$(oneline_uri | head -n 1)
if [ -z "$uri" ]; then
  echo "debian-mirror: no apt source for suite '$suite' in /etc/apt/sources.list{,.d}" >&2
  exit 1
fi
echo "$uri"
