// Stop strings over a stream of text (docs/rules/engines.md "A real llama.cpp engine"): text
// is released as soon as no stop string can still begin in it, so a streamed answer never shows
// part of a stop word and never includes one, as llama.cpp server's partial-stop check does.
export class StopMatcher {
  private held = "";

  constructor(private readonly stops: readonly string[]) {}

  /** Adds generated text: what may be sent now, and the stop word when one completed. */
  push(text: string): { emit: string; word?: string } {
    this.held += text;
    if (this.stops.length === 0) return this.release(this.held.length);
    let at = -1;
    let word: string | undefined;
    for (const s of this.stops) {
      const i = this.held.indexOf(s);
      if (i >= 0 && (at < 0 || i < at)) {
        at = i;
        word = s;
      }
    }
    if (word !== undefined) {
      const emit = this.held.slice(0, at);
      this.held = "";
      return { emit, word };
    }
    return this.release(this.held.length - this.partialSuffix());
  }

  /** What is still held back (the answer ended without a stop word). */
  flush(): string {
    const rest = this.held;
    this.held = "";
    return rest;
  }

  private release(n: number): { emit: string } {
    const emit = this.held.slice(0, n);
    this.held = this.held.slice(n);
    return { emit };
  }

  /** The longest end of the held text that is the start of some stop string. */
  private partialSuffix(): number {
    let keep = 0;
    for (const s of this.stops) {
      for (let k = Math.min(s.length - 1, this.held.length); k > keep; k--) {
        if (this.held.endsWith(s.slice(0, k))) {
          keep = k;
          break;
        }
      }
    }
    return keep;
  }
}
