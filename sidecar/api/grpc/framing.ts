// gRPC's length-prefixed messages on an HTTP/2 stream: one flag byte (1 = compressed), a
// 4-byte big-endian length, the message. DATA frames cut messages anywhere, so the reader
// keeps what it has until a whole message is in.
import { GrpcCode, GrpcStatusError } from "./status.js";

const HEADER_BYTES = 5;

/** Frames one message (never compressed: this server offers only the identity encoding). */
export function frameMessage(message: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(HEADER_BYTES + message.length);
  out[0] = 0;
  out.writeUInt32BE(message.length, 1);
  out.set(message, HEADER_BYTES);
  return out;
}

/** Reassembles messages from DATA chunks; refuses one larger than `maxBytes` before buffering it. */
export class MessageReader {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** Adds a chunk and returns every message it completed (in order). */
  push(chunk: Buffer): Buffer[] {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    const out: Buffer[] = [];
    while (this.pendingBytes >= HEADER_BYTES) {
      const head = this.peek(HEADER_BYTES);
      if (head[0] !== 0) {
        throw new GrpcStatusError(
          GrpcCode.UNIMPLEMENTED,
          "compressed message: this server accepts only the identity encoding",
        );
      }
      const length = head.readUInt32BE(1);
      if (length > this.maxBytes) {
        throw new GrpcStatusError(
          GrpcCode.RESOURCE_EXHAUSTED,
          `request message of ${length} bytes exceeds the limit of ${this.maxBytes}`,
        );
      }
      if (this.pendingBytes < HEADER_BYTES + length) break;
      const all = this.peek(HEADER_BYTES + length);
      out.push(all.subarray(HEADER_BYTES, HEADER_BYTES + length));
      this.consume(HEADER_BYTES + length);
    }
    return out;
  }

  /** True when a message was begun and not finished (the stream ended mid-message). */
  get partial(): boolean {
    return this.pendingBytes > 0;
  }

  private peek(n: number): Buffer {
    if (this.pending[0]!.length < n) this.pending = [Buffer.concat(this.pending)];
    return this.pending[0]!;
  }

  private consume(n: number): void {
    const first = this.pending[0]!;
    if (first.length === n) this.pending.shift();
    else this.pending[0] = first.subarray(n);
    this.pendingBytes -= n;
  }
}
