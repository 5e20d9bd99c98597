# The Easy Harp Daily service: the `app` image (the project's wheel, built in
# the `build` stage, installed) for the ASGI server and its jobs, and the `edge`
# image (nginx with the collected static files) in front of it;
# docker-compose.yml builds each by its target.

# The wheel, built from the whole tree less what .dockerignore leaves out (so
# that no app can be forgotten: tests/easyharp_site/test_artifact_layout.py
# checks both lists), with the translations compiled into it.
FROM python:3.11-slim AS build
RUN apt-get update \
    && apt-get install -y --no-install-recommends gettext \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN sh deploy/build-wheel.sh /dist

# The app: the wheel installed, and nothing of the tree but the health checks.
FROM python:3.11-slim AS app

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    # Where collectstatic gathers the static files; the edge image copies them.
    STATIC_ROOT=/app/staticfiles

# The share pictures' font.
RUN apt-get update \
    && apt-get install -y --no-install-recommends fonts-dejavu-core \
    && rm -rf /var/lib/apt/lists/*

COPY --from=build /dist/ /tmp/dist/
RUN pip install /tmp/dist/*.whl && rm -rf /tmp/dist

WORKDIR /app
COPY deploy/healthcheck.py deploy/worker_healthcheck.py /app/deploy/
# Built into the image, so every replica serves the same files without a
# shared volume. The build needs no secret: this command touches no database.
RUN easyharp collectstatic --noinput

RUN useradd --system --no-create-home --uid 10001 easyharp
USER easyharp

EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "/app/deploy/healthcheck.py"]
# The server of docker-compose.yml's web service, with production's flags
# (easyharp_site/cli.py): uvicorn reads the number of processes from
# WEB_CONCURRENCY (default 1) and the proxies it trusts with X-Forwarded-* from
# FORWARDED_ALLOW_IPS (default: the container's own loopback only).
CMD ["easyharp", "web", "--host=0.0.0.0", "--port=8000"]

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
