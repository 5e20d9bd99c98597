#!/bin/sh
# Run by the nginx image's entrypoint before nginx starts: writes the site's
# configuration from its template and the EDGE_* variables (render.py).
set -eu
exec python3 /usr/local/lib/easyharp/render.py \
    /usr/local/lib/easyharp/easyharp.conf.template /etc/nginx/conf.d/easyharp.conf
