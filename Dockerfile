# The Easy Harp Daily service: the `app` image for the ASGI server and its jobs,
# and the `edge` image (nginx with the collected static files) in front of it;
# docker-compose.yml builds each by its target.
FROM python:3.11-slim AS app

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    # Import the project from /app (not the copy pip puts in site-packages), so
    # that BASE_DIR, and with it STATIC_ROOT and LOCALE_PATHS, is /app.
    PYTHONPATH=/app

# gettext: compilemessages needs msgfmt.
RUN apt-get update \
    && apt-get install -y --no-install-recommends gettext fonts-dejavu-core \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
# The whole tree, less what .dockerignore leaves out, so that no app can be
# forgotten (tests/easyharp_site/test_artifact_layout.py checks both lists).
COPY . .
RUN pip install .

# Built into the image, so every replica serves the same files without a
# shared volume. The build needs no secret: these commands touch no database.
RUN python manage.py compilemessages \
    && python manage.py collectstatic --noinput

RUN useradd --system --no-create-home --uid 10001 easyharp
USER easyharp

EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "/app/deploy/healthcheck.py"]
# The server of docker-compose.yml's web service (see the reasons there):
# uvicorn reads the number of processes from WEB_CONCURRENCY (default 1) and the
# proxies it trusts with X-Forwarded-* from FORWARDED_ALLOW_IPS (default: the
# container's own loopback only).
CMD ["uvicorn", "easyharp_site.asgi:application", "--host=0.0.0.0", "--port=8000", \
     "--proxy-headers", "--ws=websockets-sansio", "--ws-max-size=65536", \
     "--ws-per-message-deflate=false", "--http=h11", "--loop=uvloop", "--lifespan=on"]

# The edge: nginx with the site's configuration, rendered from the template at
# each start (deploy/nginx/render.py, with the EDGE_* variables; run by the
# image's entrypoint), and the static files of the app image, served by nginx
# itself. The template is kept out of /etc/nginx/templates, which the image
# would hand to envsubst.
FROM nginx:1.27-alpine AS edge
RUN apk add --no-cache openssl python3 \
    && rm /etc/nginx/conf.d/default.conf
COPY deploy/nginx/nginx.conf /etc/nginx/nginx.conf
COPY deploy/nginx/easyharp.conf.template deploy/nginx/render.py /usr/local/lib/easyharp/
COPY deploy/nginx/self-signed-cert.sh /docker-entrypoint.d/15-self-signed-cert.sh
COPY deploy/nginx/render-site.sh /docker-entrypoint.d/20-render-site.sh
COPY --from=app /app/staticfiles /srv/static
