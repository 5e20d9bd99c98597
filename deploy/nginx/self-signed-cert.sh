#!/bin/sh
# Makes a self-signed certificate for EDGE_SERVER_NAME when EDGE_CERTS holds
# none, so the edge starts (and a trial on localhost answers on HTTPS, with the
# browser's warning). In production, mount the real fullchain.pem and
# privkey.pem there, and this leaves them alone.
set -eu
dir="${EDGE_CERTS:-/etc/nginx/certs}"
name="${EDGE_SERVER_NAME:-localhost}"
if [ -s "$dir/fullchain.pem" ] && [ -s "$dir/privkey.pem" ]; then
    exit 0
fi
mkdir -p "$dir"
openssl req -x509 -newkey rsa:2048 -nodes -days 365 -subj "/CN=$name" \
    -addext "subjectAltName=DNS:$name" \
    -keyout "$dir/privkey.pem" -out "$dir/fullchain.pem" 2>/dev/null
echo "self-signed-cert.sh: made a self-signed certificate for $name in $dir"
