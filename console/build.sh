#!/bin/sh
# Builds the Grafton console (GraphiQL) into console/dist/ from the pinned npm
# packages in package-lock.json. The output is deterministic: the same lockfile
# and sources give the same bytes. Usage: sh console/build.sh
#
# dist/ is committed and embedded in the binary by crates/server/src/console.rs
# (include_bytes!): cargo build needs no npm and no network. The bundles are
# stored gzipped (gzip -9n: no name, no time stamp), as they are served.
set -eu

cd "$(dirname "$0")"
out=dist

# A clean install of exactly what the lockfile pins (node_modules is gitignored).
# esbuild's postinstall only swaps its JS launcher for the native binary; the
# JS API and CLI work without it, so lifecycle scripts are not needed.
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error

rm -rf "$out"
mkdir -p "$out"

# One IIFE bundle; the CSS it imports is written beside it as graphiql.css.
# The fonts GraphiQL ships are already inlined as data: URLs in its CSS.
./node_modules/.bin/esbuild src/index.jsx \
  --bundle \
  --minify \
  --format=iife \
  --platform=browser \
  --target=es2020 \
  --jsx=automatic \
  --define:process.env.NODE_ENV='"production"' \
  --legal-comments=eof \
  --charset=ascii \
  --log-level=warning \
  --outfile="$out/graphiql.js"

cp index.html "$out/index.html"

# Refuse anything that would reach outside the server when the page loads.
if grep -Eo '@import|url\((["'"'"']?)(https?:)?//[^)]*' "$out/graphiql.css" | grep -q .; then
  echo "build.sh: graphiql.css references an external resource:" >&2
  grep -Eo '@import[^;]*|url\((["'"'"']?)(https?:)?//[^)]*' "$out/graphiql.css" >&2
  exit 1
fi
if grep -Eiq '(src|href)="(https?:)?//' "$out/index.html"; then
  echo "build.sh: index.html references an external resource" >&2
  exit 1
fi

unexpected=$(ls "$out" | grep -Ev '^(index\.html|graphiql\.js|graphiql\.css)$' || true)
if [ -n "$unexpected" ]; then
  echo "build.sh: unexpected output files: $unexpected" >&2
  exit 1
fi

echo "console/dist:"
for f in graphiql.js graphiql.css; do
  raw=$(wc -c < "$out/$f")
  gzip -9 -n -c "$out/$f" > "$out/$f.gz"
  rm "$out/$f"
  gz=$(wc -c < "$out/$f.gz")
  sum=$(sha256sum "$out/$f.gz" | cut -d' ' -f1)
  printf '  %-16s %9d bytes, %8d gzipped  sha256 %s\n' "$f.gz" "$raw" "$gz" "$sum"
done
printf '  %-16s %9d bytes\n' index.html "$(wc -c < "$out/index.html")"
