# Sourced by the scripts that build a pinned Go tool from the Go module proxy (helm.sh, umoci.sh,
# toxiproxy.sh, promtool.sh). build_go_tool NAME MODULE PACKAGE VERSION LDFLAGS CACHE BINARY HINT
# [TAGS] builds PACKAGE from the tool module in MODULE into CACHE/<key>/BINARY, with the build tags
# TAGS, and prints that path on the last line. The key covers the Go toolchain, the package, the
# version, the link flags, the tags and go.sum, so a cached binary makes it a no-op; concurrent
# callers wait for one build. HINT says how long a build takes.
build_go_tool() {
  local name=$1 module=$2 package=$3 version=$4 ld=$5 cache=$6 binary=$7 hint=$8 tags=${9:-}
  local key dest tmp log
  key=$( { go version; echo "$package $version $ld"; [ -z "$tags" ] || echo "tags $tags"; cat "$module/go.sum"; } | sha256sum | cut -c1-16)
  dest="$cache/$key"
  if [ -x "$dest/$binary" ]; then
    echo "$dest/$binary"
    return 0
  fi
  mkdir -p "$cache"
  # Test files that start at the same time wait for one build instead of each running their own.
  exec 9>"$cache/.$name-build.lock"
  flock 9
  if [ -x "$dest/$binary" ]; then
    echo "$dest/$binary"
    return 0
  fi
  tmp=$(mktemp -d "$cache/tmp.XXXXXX")
  log="$tmp/build.log"
  echo "$name: building $version from the Go module proxy ($hint); later runs reuse $dest" >&2
  if ! (cd "$module" && CGO_ENABLED=0 go build -trimpath -tags "$tags" -ldflags "$ld" -o "$tmp/$binary" "$package") >"$log" 2>&1; then
    echo "$name: build failed; command: (cd $module && go build -trimpath -tags '$tags' -ldflags '$ld' -o <tmp>/$binary $package)" >&2
    tail -n 30 "$log" >&2
    rm -rf "$tmp"
    return 1
  fi
  rm -f "$log"
  rm -rf "$dest"
  mv "$tmp" "$dest"
  echo "$dest/$binary"
}
