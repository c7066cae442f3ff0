# Sourced by harness/setup.sh: the line said before `cargo build --release
# --workspace --quiet`, which builds silently. cargo decides what is stale;
# this only words the wait: nothing when the newest binary is newer than
# every source the release build reads (a no-op build, or one too small to
# announce), the whole workspace's first build, or a rebuild of what changed.

# The workspace members, from Cargo.toml's `members = [ … ]`.
rust_members() {
  sed -n '/^members *= *\[/,/\]/p' "$1/Cargo.toml" | grep -o '"[^"]*"' | tr -d '"'
}

# Prints why the release build will take a while, or nothing. $1: the
# repository; the binaries are the executables of $1/target/release.
rust_build_note() {
  local root=$1 newest member changed
  local members
  members=$(rust_members "$root" | tr '\n' ' ')
  # the newest binary: a binary cargo did not need to relink (its crate
  # unchanged) is older than a change elsewhere and would announce a rebuild
  # on every run
  newest=$(find "$root/target/release" -maxdepth 1 -type f -executable -printf '%T@ %p\n' 2>/dev/null | sort -n | tail -n 1 | cut -d' ' -f2-)
  if [[ -z $newest ]]; then
    echo "building the Rust workspace in release mode (${members% }): the first build takes roughly 4 minutes on 2 cores (more on a busy machine); later ones only rebuild what changed"
    return
  fi
  # what the release build reads: each member's sources and data beside
  # them (not its tests, examples or benches), the workspace's Cargo files
  for member in $(rust_members "$root"); do
    changed=$(find "$root/$member" \( -name tests -o -name examples -o -name benches \) -prune -o \
      -type f \( -name '*.rs' -o -name Cargo.toml -o -name '*.json' \) -newer "$newest" -print -quit)
    [[ -n $changed ]] && break
  done
  [[ -z $changed ]] && changed=$(find "$root/Cargo.toml" "$root/Cargo.lock" -newer "$newest" -print -quit 2>/dev/null)
  if [[ -n $changed ]]; then
    echo "rebuilding the Rust workspace in release mode (${changed#"$root"/} changed): a minute or a few, depending on what changed"
  fi
  return 0
}
