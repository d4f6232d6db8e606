// Deterministic colours for models and providers in the web view (docs/web-view.md): the same name
// gets the same colour on every card, chart and browser, with no palette to keep in sync.

/** FNV-1a, 32 bit: cheap, and spreads similar names (qwen3:8b, qwen3:14b) apart. */
function hash(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function hue(name: string): number {
  return hash(name) % 360;
}

/** A resident model's segment colour (comma syntax: canvas and CSS both parse it). */
export function modelColor(model: string, alpha = 1): string {
  const h = hash(model);
  // Two lightness steps from a second hash byte keep neighbouring hues distinguishable.
  const light = 48 + ((h >>> 9) % 2) * 10;
  return `hsla(${h % 360}, 58%, ${light}%, ${alpha})`;
}

/** A provider's series colour in the trend charts. */
export function providerColor(provider: string, alpha = 1): string {
  return `hsla(${hue(`provider:${provider}`)}, 72%, 62%, ${alpha})`;
}

/** Fixed colours of the single-series charts, matching style.css's accents. */
export const accent = {
  calls: "hsla(205, 90%, 65%, 1)",
  wait: "hsla(36, 90%, 60%, 1)",
  loads: "hsla(145, 60%, 55%, 1)",
  unloads: "hsla(350, 75%, 65%, 1)",
} as const;
