// Rounding for score terms: half rounds away from zero. The argument is first snapped to nine
// decimals, so a product like 0.7 · 100 = 70.00000000000001 or a half that binary floating
// point lands a hair below (99.49999999999999) rounds as the decimal arithmetic says.

export function roundHalfAwayFromZero(x: number): number {
  const snapped = Math.round(Math.abs(x) * 1e9) / 1e9;
  const r = Math.floor(snapped + 0.5);
  return x < 0 && r !== 0 ? -r : r;
}
