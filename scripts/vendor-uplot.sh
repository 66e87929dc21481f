#!/bin/sh
# Re-fetches the charting library report.html inlines (uPlot, MIT) from the npm registry into
# python/lasthop/report/vendor/: the minified script and style sheet, its LICENSE, and VERSION
# (version and the registry's integrity hash, checked against the tarball before anything is
# copied). Run from the repository's root; `UPLOT_VERSION=1.6.32 scripts/vendor-uplot.sh`.
set -eu
VERSION="${UPLOT_VERSION:-1.6.32}"
DEST="python/lasthop/report/vendor"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
integrity="$(npm view "uplot@$VERSION" dist.integrity)"
(cd "$work" && npm pack --silent "uplot@$VERSION" > /dev/null)
tarball="$work/uplot-$VERSION.tgz"
actual="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
if [ "$actual" != "$integrity" ]; then
    echo "uplot-$VERSION.tgz: integrity $actual, the registry says $integrity" >&2
    exit 1
fi
tar -xzf "$tarball" -C "$work"
cp "$work/package/dist/uPlot.iife.min.js" "$work/package/dist/uPlot.min.css" "$DEST/"
cp "$work/package/LICENSE" "$DEST/uPlot.LICENSE"
printf 'uPlot %s (npm: uplot@%s, MIT License, Copyright (c) 2022 Leon Sorokin)\nintegrity %s\n' \
    "$VERSION" "$VERSION" "$integrity" > "$DEST/VERSION"
echo "vendored uPlot $VERSION into $DEST"
