#!/usr/bin/env bash
# Entry point of the npm scripts: set up what is missing, then run.
#   run.sh test         lint and format checks (eslint, prettier, cargo fmt,
#                       clippy), then every test: cargo's, then Mocha's
#   run.sh lint         the lint and format checks alone (no root needed)
#   run.sh node FILE ARGS...  a Node script of the project (the satbench
#                             command is harness/cli.js)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/harness/setup.sh"
local_node="$root/.tools/node/node_modules/node/bin/node"
[[ -x $local_node ]] && export PATH="$(dirname "$local_node"):$PATH"
cd "$root"
lint() {
  node node_modules/eslint/bin/eslint.js --max-warnings 0 .
  node node_modules/prettier/bin/prettier.cjs --check --log-level warn '**/*.{js,cjs,mjs}'
  cargo fmt --all --check
  cargo clippy --release --workspace --all-targets --quiet -- -D warnings
}
what=${1:-}; shift || true
case "$what" in
  lint)
    lint
    ;;
  test)
    # Lint and format checks first: they fail in seconds, the tests in
    # minutes, and they need no root.
    lint
    # Every integration test builds namespaces: without root they could only
    # skip, and a skipped check is one a user never ran.
    if [[ $(id -u) -ne 0 ]]; then
      echo "npm test needs root: the integration tests build network namespaces (sudo npm test)" >&2
      exit 2
    fi
    # The tests' folders (os.tmpdir(), std::env::temp_dir()) go in one folder
    # of this run's, removed when it ends.
    TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/satbench-test.XXXXXX")
    export TMPDIR
    trap 'rm -rf "$TMPDIR"' EXIT
    cargo test --release --workspace --quiet
    # No spec in .mocharc.json, so that `mocha FILE` runs only FILE.
    (($#)) || set -- 'test/**/*.test.js'
    node node_modules/mocha/bin/mocha.js "$@"
    ;;
  node)
    exec node "$@"
    ;;
  *)
    echo "usage: harness/run.sh test | lint | node FILE [ARGS...]" >&2
    exit 2
    ;;
esac
