import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { frameMessage, MessageReader } from "./framing.js";
import { GrpcCode } from "./status.js";

describe("MessageReader", () => {
  it("reassembles messages however the bytes are cut into chunks", () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 8 }),
        fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 20 }),
        (messages, cuts) => {
          const wire = Buffer.concat(messages.map(frameMessage));
          const reader = new MessageReader(1 << 20);
          const got: Buffer[] = [];
          let at = 0;
          let i = 0;
          while (at < wire.length) {
            const n = cuts[i++ % cuts.length]!;
            got.push(...reader.push(wire.subarray(at, at + n)));
            at += n;
          }
          expect(got.map((b) => [...b])).toEqual(messages.map((m) => [...m]));
          expect(reader.partial).toBe(false);
        },
      ),
    );
  });

  it("knows when the stream stopped inside a message", () => {
    const reader = new MessageReader(100);
    expect(reader.push(frameMessage(new Uint8Array([1, 2, 3])).subarray(0, 6))).toEqual([]);
    expect(reader.partial).toBe(true);
  });

  it("refuses a message above the limit from its length prefix, before buffering it", () => {
    const reader = new MessageReader(10);
    const head = Buffer.from([0, 0, 0, 0, 11]);
    expect(() => reader.push(head)).toThrow(expect.objectContaining({ code: GrpcCode.RESOURCE_EXHAUSTED }));
  });

  it("refuses a compressed message (only the identity encoding is offered)", () => {
    const reader = new MessageReader(10);
    expect(() => reader.push(Buffer.from([1, 0, 0, 0, 1, 7]))).toThrow(
      expect.objectContaining({ code: GrpcCode.UNIMPLEMENTED }),
    );
  });
});
