/**
 * Follow buttons: every element with `data-follow="username"` gets a button
 * that follows or stops following that player (`POST` or `DELETE`
 * `/api/players/{username}/follow/`), for a signed-in visitor and anyone but
 * themselves. Whom the visitor follows is read once per page
 * (`/api/following/`). Boards call `followButtons` again after each render.
 */
import { config, t } from "./ui.js";

let following = null;

async function followed() {
  if (following === null) {
    following = (async () => {
      const response = await fetch("/api/following/", {
        credentials: "same-origin",
        headers: { Accept: "application/json" },
      });
      if (!response.ok) return new Set();
      const body = await response.json();
      return new Set(body.players ?? []);
    })();
  }
  return following;
}

function show(button, player, isFollowed) {
  button.textContent = isFollowed ? t("unfollow") : t("follow");
  button.setAttribute(
    "aria-label",
    t(isFollowed ? "unfollow_player" : "follow_player", { player }),
  );
  button.setAttribute("aria-pressed", String(isFollowed));
}

async function toggle(button, player) {
  const names = await followed();
  const wasFollowed = names.has(player);
  button.disabled = true;
  try {
    const response = await fetch(`/api/players/${encodeURIComponent(player)}/follow/`, {
      method: wasFollowed ? "DELETE" : "POST",
      credentials: "same-origin",
      headers: { Accept: "application/json", "X-CSRFToken": config.csrf },
    });
    if (!response.ok) {
      const body = await response.json().catch(() => ({}));
      button.title = body.error?.message ?? t("follow_failed");
      return;
    }
    if (wasFollowed) names.delete(player);
    else names.add(player);
    document.querySelectorAll("button.follow").forEach((other) => {
      if (other.dataset.player === player) show(other, player, !wasFollowed);
    });
  } finally {
    button.disabled = false;
  }
}

/** Give every `[data-follow]` element under `root` its button (once). */
export async function followButtons(root = document) {
  if (!config.user) return;
  const places = [...root.querySelectorAll("[data-follow]")].filter(
    (place) => place.dataset.follow !== config.user && !place.querySelector("button.follow"),
  );
  if (places.length === 0) return;
  const names = await followed();
  for (const place of places) {
    if (place.querySelector("button.follow")) continue;
    const player = place.dataset.follow;
    const button = document.createElement("button");
    button.type = "button";
    button.className = "follow";
    button.dataset.player = player;
    show(button, player, names.has(player));
    button.addEventListener("click", () => toggle(button, player));
    place.append(" ", button);
  }
}

followButtons();
