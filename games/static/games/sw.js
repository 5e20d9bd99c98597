/**
 * The service worker (served at /sw.js, so that it controls every page): the
 * site keeps working offline with what it last had. Static files and a few
 * pages come from the network when it answers and are kept as they come;
 * without a network the kept copy answers, so the day's deal, once loaded, is
 * played offline (the game lives in localStorage). The API is never kept: a game
 * finished offline is submitted by the page itself, with its Idempotency-Key,
 * once the network is back (submit.js retries until the server answers).
 *
 * /sw.js puts `self.PRECACHE` (the static files) and `self.VERSION` (a hash of
 * them) before this file; a new version drops the old copies.
 */
const CACHE = `easyharp-${self.VERSION}`;

self.addEventListener("install", (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(self.PRECACHE))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) =>
        Promise.all(names.filter((name) => name !== CACHE).map((name) => caches.delete(name))),
      )
      .then(() => self.clients.claim()),
  );
});

/**
 * What is kept: the static files, and the pages a player opens offline (home,
 * the day's deal, the rules), each one copy, so the cache stays small. Never
 * the API, the accounts pages or another deal's page.
 */
const KEPT_PAGES = new Set(["/", "/play/", "/rules/"]);

function keepable(request) {
  if (request.method !== "GET") return false;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return false;
  if (url.pathname.startsWith("/static/")) return true;
  return KEPT_PAGES.has(url.pathname) && url.search === "";
}

async function networkFirst(request) {
  const cache = await caches.open(CACHE);
  try {
    const response = await fetch(request);
    if (response.ok) await cache.put(request, response.clone());
    return response;
  } catch (error) {
    const kept = await cache.match(request);
    if (kept) return kept;
    throw error;
  }
}

self.addEventListener("fetch", (event) => {
  if (!keepable(event.request)) return;
  event.respondWith(networkFirst(event.request));
});
