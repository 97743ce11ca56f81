#!/usr/bin/env bash
# attn-viz's tokenizer.json reader against @huggingface/tokenizers (npm, pure JavaScript) on every
# tokenizer.json under SHARED/models: tokenizer_crosscheck.mjs says what is compared.
#
#   tests/tokenizers/tokenizer_crosscheck.sh BIN SHARED CACHE   (ctest: tokenizer-crosscheck)
# The package is installed once into CACHE (under the build tree). Exits 77 (ctest: skipped) with a
# "skipped:" line when node, npm, the registry or the model files are unavailable, or 1 for the
# first three with ATTN_VIZ_REQUIRE_NPM=1 (CI, which has the registry).
set -euo pipefail
bin=$(realpath "${1:?usage: tokenizer_crosscheck.sh BIN SHARED CACHE}")
shared=${2:?usage: tokenizer_crosscheck.sh BIN SHARED CACHE}
cache=${3:?usage: tokenizer_crosscheck.sh BIN SHARED CACHE}
package_version=0.2.0  # pinned: a new release is a deliberate update

unavailable() {
  if [[ ${ATTN_VIZ_REQUIRE_NPM:-0} == 1 ]]; then echo "error: $1 (required: ATTN_VIZ_REQUIRE_NPM=1)"; exit 1; fi
  echo "skipped: $1"
  exit 77
}
[[ -d $shared/models ]] || { echo "skipped: no model files at $shared/models"; exit 77; }
command -v node >/dev/null || unavailable "node not found (scripts/setup.sh installs nodejs and npm)"
command -v npm >/dev/null || unavailable "npm not found (scripts/setup.sh installs nodejs and npm)"

# npm keeps its cache inside CACHE (nothing written under HOME, which CI may not set); the machine's
# npm configuration (registry, proxy, certificates) applies as to any npm install.
mkdir -p "$cache"
export npm_config_cache=$cache/npm-cache npm_config_update_notifier=false
# Node trusts its own list of certificate authorities, not the system's: where the registry is reached
# through a locally installed authority, npm needs the system bundle (CI may start without the
# NODE_EXTRA_CA_CERTS that interactive shells here have).
if [[ -z ${NODE_EXTRA_CA_CERTS:-} && -r /etc/ssl/certs/ca-certificates.crt ]]; then
  export NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
fi
installed=$cache/node_modules/@huggingface/tokenizers/package.json
if ! grep -qs "\"version\": \"$package_version\"" "$installed"; then
  [[ -f $cache/package.json ]] || echo '{"private": true}' >"$cache/package.json"
  timeout 300 npm install --prefix "$cache" --no-audit --no-fund --loglevel=error --fetch-retries=1 \
    "@huggingface/tokenizers@$package_version" >"$cache/npm-install.log" 2>&1 \
    || unavailable "npm could not install @huggingface/tokenizers@$package_version ($(grep -v "complete log" "$cache/npm-install.log" | tail -n 1))"
fi

scratch=$(mktemp -d /tmp/attn-viz-tokenizer-crosscheck.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
node "$(dirname "$0")/tokenizer_crosscheck.mjs" "$bin" "$shared" "$cache" "$scratch"
