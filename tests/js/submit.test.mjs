// Submitting a game (submit.js): one Idempotency-Key per log, retried with
// backoff until the server answers, and what each answer means. fetch and the
// timer are fakes, so every attempt and every wait is seen.
import { test, describe } from "node:test";
import assert from "node:assert/strict";

import {
  RETRY_MAX_DELAY_MS,
  newIdempotencyKey,
  pendingFor,
  retryDelay,
  statusOutcome,
  submissionRequest,
  submitPending,
} from "../../games/static/games/submit.js";

const URL = "/api/games/";
const DEAL = "EH1-N-AAAAAAE";

/** A body that is not JSON (an HTML error page, say). */
const NOT_JSON = Symbol("not JSON");

/** A response as fetch resolves it: a status and a JSON body (or NOT_JSON). */
function answer(status, body = {}, statusText = "") {
  return {
    status,
    statusText,
    ok: status >= 200 && status < 300,
    json: async () => {
      if (body === NOT_JSON)
        throw new SyntaxError("Unexpected token '<', \"<html>\" is not valid JSON");
      return body;
    },
  };
}

const LOST = new TypeError("Failed to fetch");

/**
 * A fake fetch that plays `script` in turn (a response, or an error to
 * throw) and a fake wait; both keep what they were given. A request past the
 * script's end gets a final 418, so a test that sends too much ends and fails.
 */
function fakeNetwork(script) {
  const requests = [];
  const waits = [];
  const fetch = async (url, init) => {
    requests.push({ url, ...init, headers: { ...init.headers }, body: JSON.parse(init.body) });
    const next = script.shift() ?? answer(418, { error: { message: "past the script's end" } });
    if (next instanceof Error) throw next;
    return next;
  };
  const wait = async (ms) => {
    waits.push(ms);
  };
  return { fetch, wait, requests, waits };
}

function submit(network, pending, options = {}) {
  const sends = [];
  const retries = [];
  const current = typeof pending === "function" ? pending : () => pending;
  const result = submitPending({
    current,
    url: URL,
    csrf: "csrf-token",
    deal: DEAL,
    fetch: network.fetch,
    wait: network.wait,
    onSend: (attempt) => sends.push(attempt),
    onRetry: (attempt, ms) => retries.push([attempt, ms]),
    ...options,
  });
  return { result, sends, retries };
}

const PENDING = { key: "0123456789abcdef0123456789abcdef", log: "S 37 WF" };

describe("keys", () => {
  test("a key is 32 hex digits of 16 random bytes", () => {
    const bytes = (n) => Uint8Array.from({ length: n }, (_, i) => i * 17);
    assert.equal(newIdempotencyKey(bytes), "00112233445566778899aabbccddeeff");
    const key = newIdempotencyKey();
    assert.match(key, /^[0-9a-f]{32}$/);
    assert.notEqual(newIdempotencyKey(), key);
  });

  test("a log keeps its key: a second submission of the same log reuses the pending one", () => {
    let made = 0;
    const newKey = () => `key-${++made}`;
    const first = pendingFor(null, "S 37", newKey);
    assert.deepEqual(first, { key: "key-1", log: "S 37" });
    assert.equal(pendingFor(first, "S 37", newKey), first);
    assert.equal(made, 1);
  });

  test("a ranked attempt's submission carries its per-action times, and keeps them with its key", () => {
    const first = pendingFor(null, "S 37", () => "key-1", [0, 850]);
    assert.deepEqual(first, { key: "key-1", log: "S 37", times: [0, 850] });
    assert.equal(
      pendingFor(first, "S 37", () => "key-2", [0, 900]),
      first,
    );
  });

  test("a game outside the ranked attempt is marked practice, and keeps the mark with its key", () => {
    const first = pendingFor(null, "S 37", () => "key-1", null, true);
    assert.deepEqual(first, { key: "key-1", log: "S 37", practice: true });
    assert.equal(
      pendingFor(first, "S 37", () => "key-2"),
      first,
    );
    assert.deepEqual(
      pendingFor(null, "S 37", () => "key-3", null, false),
      {
        key: "key-3",
        log: "S 37",
      },
    );
  });

  test("another log gets a new key", () => {
    const first = pendingFor(null, "S 37");
    const second = pendingFor(first, "S 37 WF");
    assert.equal(second.log, "S 37 WF");
    assert.notEqual(second.key, first.key);
    assert.match(second.key, /^[0-9a-f]{32}$/);
  });
});

describe("answers", () => {
  test("the wait after each failed attempt doubles from a second up to 30 seconds", () => {
    assert.deepEqual(
      Array.from({ length: 8 }, (_, attempt) => retryDelay(attempt)),
      [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000],
    );
    assert.equal(retryDelay(60), RETRY_MAX_DELAY_MS);
  });

  test("a server error or a throttle is tried again, a lost session asks to sign in, other answers are final", () => {
    const outcomes = Object.fromEntries(
      [200, 201, 400, 404, 409, 413, 401, 403, 429, 500, 502, 503, 504].map((status) => [
        status,
        statusOutcome(status),
      ]),
    );
    assert.deepEqual(outcomes, {
      200: "stored",
      201: "stored",
      400: "refused",
      404: "refused",
      409: "refused",
      413: "refused",
      401: "sign_in",
      403: "sign_in",
      429: "retry",
      500: "retry",
      502: "retry",
      503: "retry",
      504: "retry",
    });
  });

  test("the request posts the deal and log as JSON with the key, the CSRF token and the session", () => {
    const [url, init] = submissionRequest({
      url: URL,
      csrf: "csrf-token",
      deal: DEAL,
      pending: PENDING,
    });
    assert.equal(url, URL);
    assert.deepEqual(init, {
      method: "POST",
      credentials: "same-origin",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json",
        "X-CSRFToken": "csrf-token",
        "Idempotency-Key": PENDING.key,
      },
      body: JSON.stringify({ deal: DEAL, log: "S 37 WF" }),
    });
  });

  test("a submission with times sends them along", () => {
    const [, init] = submissionRequest({
      url: URL,
      csrf: "csrf-token",
      deal: DEAL,
      pending: { key: "k", log: "S 37", times: [0, 850] },
    });
    assert.deepEqual(JSON.parse(init.body), { deal: DEAL, log: "S 37", times: [0, 850] });
  });

  test("a practice game says so in its request", () => {
    const [, init] = submissionRequest({
      url: URL,
      csrf: "csrf-token",
      deal: DEAL,
      pending: { key: "k", log: "S 37", practice: true },
    });
    assert.deepEqual(JSON.parse(init.body), { deal: DEAL, log: "S 37", practice: true });
  });
});

describe("sending", () => {
  test("a game the server stores at once is sent once", async () => {
    const network = fakeNetwork([answer(201, { id: 7, score: 25, moves: 3 })]);
    const { result, sends, retries } = submit(network, PENDING);
    assert.deepEqual(await result, {
      outcome: "stored",
      pending: PENDING,
      body: { id: 7, score: 25, moves: 3 },
    });
    assert.equal(network.requests.length, 1);
    assert.deepEqual(network.requests[0].body, { deal: DEAL, log: "S 37 WF" });
    assert.deepEqual(sends, [0]);
    assert.deepEqual(retries, []);
    assert.deepEqual(network.waits, []);
  });

  test("network failures, server errors and throttles are retried with backoff and the same key", async () => {
    const network = fakeNetwork([
      LOST,
      LOST,
      answer(503),
      answer(429),
      answer(500),
      answer(200, { id: 7 }),
    ]);
    const { result, sends, retries } = submit(network, PENDING);
    assert.deepEqual(await result, { outcome: "stored", pending: PENDING, body: { id: 7 } });
    assert.equal(network.requests.length, 6);
    for (const request of network.requests) {
      assert.equal(request.headers["Idempotency-Key"], PENDING.key);
      assert.deepEqual(request.body, { deal: DEAL, log: PENDING.log });
      assert.equal(request.method, "POST");
    }
    assert.deepEqual(network.waits, [1000, 2000, 4000, 8000, 16000]);
    assert.deepEqual(sends, [0, 1, 2, 3, 4, 5]);
    assert.deepEqual(retries, [
      [0, 1000],
      [1, 2000],
      [2, 4000],
      [3, 8000],
      [4, 16000],
    ]);
  });

  test("a long outage is retried every 30 seconds until the server answers", async () => {
    const network = fakeNetwork([...Array(9).fill(LOST), answer(201, { id: 1 })]);
    const { result } = submit(network, PENDING);
    assert.equal((await result).outcome, "stored");
    assert.deepEqual(network.waits, [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000, 30000]);
    assert.equal(
      new Set(network.requests.map((request) => request.headers["Idempotency-Key"])).size,
      1,
    );
  });

  test("a game whose answer was lost is stored once: the retry gets the stored game back", async () => {
    // A server that stores a key's game once, like POST /api/games/.
    const stored = new Map();
    let answersLost = 1;
    const server = async (url, init) => {
      const key = init.headers["Idempotency-Key"];
      const created = !stored.has(key);
      if (created) stored.set(key, { id: stored.size + 1, log: JSON.parse(init.body).log });
      if (answersLost-- > 0) throw LOST;
      return answer(created ? 201 : 200, stored.get(key));
    };
    const waits = [];
    const { result } = submit({ fetch: server, wait: async (ms) => waits.push(ms) }, PENDING);
    assert.deepEqual(await result, {
      outcome: "stored",
      pending: PENDING,
      body: { id: 1, log: "S 37 WF" },
    });
    assert.equal(stored.size, 1);
    assert.deepEqual(waits, [1000]);
  });

  test("a refused game is not retried, and the refusal's body comes back", async () => {
    const error = { code: "illegal_action", index: 2, token: "37", reason_code: "column_refuses" };
    const network = fakeNetwork([answer(400, { error }, "Bad Request")]);
    const { result, retries } = submit(network, PENDING);
    assert.deepEqual(await result, {
      outcome: "refused",
      pending: PENDING,
      body: { error },
      status: 400,
      statusText: "Bad Request",
    });
    assert.deepEqual(network.waits, []);
    assert.deepEqual(retries, []);
  });

  test("a ceiling of the day is a refusal, not a throttle to wait out", async () => {
    for (const code of ["too_many_games", "too_many_actions"]) {
      const body = { error: { code, message: "play on tomorrow", limit: 200, wait: 3600 } };
      const network = fakeNetwork([answer(429, body, "Too Many Requests")]);
      const { result, retries } = submit(network, PENDING);
      assert.deepEqual(await result, {
        outcome: "refused",
        pending: PENDING,
        body,
        status: 429,
        statusText: "Too Many Requests",
      });
      assert.equal(network.requests.length, 1);
      assert.deepEqual(retries, []);
    }
  });

  test("a refusal without a JSON body comes back with an empty body", async () => {
    const network = fakeNetwork([answer(409, NOT_JSON, "Conflict")]);
    const { result } = submit(network, PENDING);
    assert.deepEqual(await result, {
      outcome: "refused",
      pending: PENDING,
      body: {},
      status: 409,
      statusText: "Conflict",
    });
  });

  test("a lost session stops the sending and keeps the submission for after signing in", async () => {
    for (const status of [401, 403]) {
      const network = fakeNetwork([LOST, answer(status)]);
      const { result } = submit(network, PENDING);
      assert.deepEqual(await result, { outcome: "sign_in", pending: PENDING });
      assert.equal(network.requests.length, 2);
      assert.deepEqual(network.waits, [1000]);
    }
  });

  test("nothing is sent when nothing is pending", async () => {
    const network = fakeNetwork([]);
    const { result, sends } = submit(network, null);
    assert.deepEqual(await result, { outcome: "dropped" });
    assert.deepEqual(sends, []);
    assert.equal(network.requests.length, 0);
  });

  test("a submission dropped while waiting (a restarted game) stops the retries", async () => {
    let pending = PENDING;
    const network = fakeNetwork([LOST]);
    const wait = async (ms) => {
      await network.wait(ms);
      pending = null;
    };
    const { result } = submit({ ...network, wait }, () => pending);
    assert.deepEqual(await result, { outcome: "dropped" });
    assert.equal(network.requests.length, 1);
  });

  test("each attempt sends the submission pending at that moment", async () => {
    let pending = PENDING;
    const later = { key: "fedcba9876543210fedcba9876543210", log: "S 37 WF S" };
    const network = fakeNetwork([answer(502), answer(201, { id: 3 })]);
    const wait = async (ms) => {
      await network.wait(ms);
      pending = later;
    };
    const { result } = submit({ ...network, wait }, () => pending);
    assert.deepEqual(await result, { outcome: "stored", pending: later, body: { id: 3 } });
    assert.deepEqual(
      network.requests.map((request) => [request.headers["Idempotency-Key"], request.body.log]),
      [
        [PENDING.key, "S 37 WF"],
        [later.key, "S 37 WF S"],
      ],
    );
  });

  test("the retries wait for real: nothing is sent again before the wait is over", async () => {
    const network = fakeNetwork([LOST, answer(201, { id: 1 })]);
    let release;
    const wait = (ms) => {
      network.waits.push(ms);
      return new Promise((resolve) => {
        release = resolve;
      });
    };
    const { result } = submit({ ...network, wait }, PENDING);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(network.requests.length, 1);
    assert.deepEqual(network.waits, [1000]);
    release();
    assert.equal((await result).outcome, "stored");
    assert.equal(network.requests.length, 2);
  });
});

test("loading the module touches no network and no timer", async () => {
  const saved = { fetch: globalThis.fetch, setTimeout: globalThis.setTimeout };
  const touched = [];
  globalThis.fetch = () => touched.push("fetch");
  globalThis.setTimeout = () => touched.push("setTimeout");
  try {
    await import(`../../games/static/games/submit.js?fresh=${Date.now()}`);
    await import(`../../games/static/games/gestures.js?fresh=${Date.now()}`);
  } finally {
    Object.assign(globalThis, saved);
  }
  assert.deepEqual(touched, []);
  assert.equal(typeof globalThis.document, "undefined"); // and they loaded without a DOM
});
