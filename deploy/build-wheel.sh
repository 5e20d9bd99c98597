#!/bin/sh
# The wheel of the project, into the folder given (dist/ by default), with the
# Spanish and Dutch catalogues compiled first so that the wheel carries them
# (their .mo files are made, not kept in git). Run from the project's root, by
# the Dockerfile's build stage, `make wheel` and tests/deploy/test_artifact.py;
# further arguments go to `pip wheel`. Needs gettext's msgfmt.
set -eu
dist="${1:-dist}"
[ $# -gt 0 ] && shift
command -v msgfmt >/dev/null || {
    echo "build-wheel: gettext's msgfmt is needed for the translations: apt-get install gettext" >&2
    exit 1
}
for po in easyharp_site/locale/*/LC_MESSAGES/django.po; do
    # As Django's compilemessages does it.
    msgfmt --check-format -o "${po%.po}.mo" "$po"
done
# A build folder left by an earlier build could bring back files since removed.
rm -rf build
"${PYTHON:-python3}" -m pip wheel --no-deps --disable-pip-version-check --quiet \
    --wheel-dir "$dist" "$@" .
